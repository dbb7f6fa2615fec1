from fractions import Fraction

import pytest

from gpulint.kube.quantity import (
    QuantityError,
    amount_or_none,
    amounts,
    format_amount,
    parse_quantity,
    quantity_from_yaml,
)


# Vectors from k8s.io/apimachinery quantity docs and the Kubernetes CEL quantity library docs.
@pytest.mark.parametrize(
    "text, value",
    [
        ("1", 1),
        ("1000m", 1),
        ("500m", Fraction(1, 2)),
        ("0.5", Fraction(1, 2)),
        ("1e-1", Fraction(1, 10)),
        ("1e3", 1000),
        ("1E3", 1000),
        ("1k", 1000),
        ("1M", 10**6),
        ("1Ki", 1024),
        ("1Mi", 2**20),
        ("80Gi", 80 * 2**30),
        (".5", Fraction(1, 2)),
        ("5.", 5),
        ("+2", 2),
        ("-1", -1),
        ("200M", 200 * 10**6),
        ("0.2G", 200 * 10**6),
        ("1n", Fraction(1, 10**9)),
        ("2u", Fraction(2, 10**6)),
    ],
)
def test_parses_kubernetes_quantities_exactly(text, value):
    assert parse_quantity(text).value == value


@pytest.mark.parametrize(
    "text", ["", "abc", "1K", "200K", "1 Gi", "1.2.3", "--1", "1Gib", "0x10", "-e-100", ".e-10", "e-10", "+Pi", "Ei"]
)
def test_rejects_what_kubernetes_rejects(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


# Counterexamples the oracle (tests/upstream/test_oracle.py) found, with apimachinery v0.37.2's answers.
@pytest.mark.parametrize(
    "text, value",
    [
        # parseQuantityString reads no digits as 0; only the empty string is refused
        ("e3", 0),
        ("+", 0),
        ("-", 0),
        (".", 0),
        ("M", 0),
        ("Ki", 0),
        # a value finer than 1n is rounded up, away from zero, to a whole n (ParseQuantity's inf.RoundUp)
        ("560.9321n", Fraction(561, 10**9)),
        ("+5.3E-14", Fraction(1, 10**9)),
        ("-0.0000000001", Fraction(-1, 10**9)),
        ("9223372036854775807E-100", Fraction(1, 10**9)),
        # binary SI is capped at int64's maximum; decimal SI and exponents are not
        ("55438491865Ei", 2**63 - 1),
        ("-99999999999999999999Ei", -(2**63 - 1)),
        ("-1e+65", -(10**65)),
        ("945301.0e+100", 945301 * 10**100),
    ],
)
def test_reads_edge_quantities_as_apimachinery_does(text, value):
    assert parse_quantity(text).value == value


def test_quantities_below_a_nano_compare_equal_as_kubernetes_stores_them():
    assert parse_quantity("382E-22").value == parse_quantity("78.705162E-64").value


def test_50M_is_less_than_50Mi():
    assert parse_quantity("50M").value < parse_quantity("50Mi").value


@pytest.mark.parametrize(
    "text, integer",
    [
        ("1", True),
        ("1000m", True),
        ("2000m", True),
        ("500m", False),
        ("1.5", False),
        ("1e-1", False),
        ("1.0001", False),
        # MilliValue() rounds up to a whole milli-unit, so the API server's "% 1000" test passes this one:
        ("0.9999999", True),
    ],
)
def test_integer_test_is_the_api_servers(text, integer):
    assert parse_quantity(text).is_integer() is integer


@pytest.mark.parametrize("value, expected", [(2, 2), (0.5, Fraction(1, 2)), ("3", 3), (" 4 ", 4), (1e20, 10**20)])
def test_yaml_values(value, expected):
    assert quantity_from_yaml(value).value == expected


@pytest.mark.parametrize("value", [True, None, float("nan"), [], {}])
def test_yaml_values_that_are_not_quantities(value):
    with pytest.raises(QuantityError):
        quantity_from_yaml(value)


# ParseQuantity (apimachinery v0.37.2 quantity.go) has no length limit: a 121-digit amount is a quantity
# (the oracle's quantity family checks these against it; gpulint refused text past 100 characters)
@pytest.mark.parametrize(
    "text, value",
    [
        ("1" * 121, int("1" * 121)),
        ("9" * 150 + "Ei", min(int("9" * 150) * 2**60, 2**63 - 1)),  # binary SI: capped at int64's maximum
        ("-" + "7" * 200 + ".25m", -Fraction(int("7" * 200) * 100 + 25, 100_000)),
        ("1" * 3999, int("1" * 3999)),
    ],
    ids=["121-digits", "150-digits-Ei", "negative-milli", "3999-digits"],
)
def test_long_quantities_are_read_as_kubernetes_reads_them(text, value):
    assert parse_quantity(text).value == value


# the trap: a tiny exponent on a long number is not under 1n (Kubernetes reads 1 and 10)
@pytest.mark.parametrize("text, value", [("1" + "0" * 250 + "e-250", 1), ("1" + "0" * 251 + "e-250", 10)])
def test_a_long_number_scaled_down_keeps_its_value(text, value):
    assert parse_quantity(text).value == value


@pytest.mark.parametrize("text", ["1" + "0" * 250 + "e-260", "0." + "0" * 300 + "1"])
def test_a_long_number_under_a_nano_rounds_up_to_one(text):
    assert parse_quantity(text).value == Fraction(1, 10**9)


def test_text_past_the_bound_is_refused_with_a_message():
    with pytest.raises(QuantityError, match="longer than 4000 characters"):
        parse_quantity("1" * 4001)


@pytest.mark.parametrize(
    "value, shown",
    [(Fraction(int("1" * 400), 3), "3.7037e+398"), (Fraction(-(10**400), 7), "-1.42857e+399"), (Fraction(3, 2), "1.5")],
)
def test_amounts_past_floats_range_are_shown(value, shown):
    assert format_amount(value) == shown


# ParseQuantity reads an exponent as an int64 and converts it to int32, which wraps (apimachinery v0.37.2
# resource/suffix.go interpret); answers from the oracle's quantity family (tests/oracle_families.py _EXPONENTS)
@pytest.mark.parametrize(
    "text, value",
    [
        ("1e4294967297", 10),  # 2^32 + 1: gpulint refused it ("out of range")
        ("1e-4294967295", 10),  # -2^32 + 1 wraps to 1: gpulint read a tiny value, 1n
        ("2.5e8589934594", 250),  # 2 x 2^32 + 2
        ("1e-4294967306", Fraction(1, 10**9)),  # wraps to -10: under 1n, rounded up
        ("1e2147483647", None),  # int32's maximum itself: 10^(2^31 - 1), past gpulint's bound
        ("1e-2147483647", Fraction(1, 10**9)),  # no wrap: tiny
    ],
)
def test_an_exponent_past_int32_wraps_as_in_kubernetes(text, value):
    if value is None:
        with pytest.raises(QuantityError, match="out of range"):
            parse_quantity(text)
    else:
        assert parse_quantity(text).value == value


@pytest.mark.parametrize(
    "text",
    [
        "1e9223372036854775808",  # past int64: strconv.ParseInt fails, ErrSuffix
        "1e-9223372036854775809",  # gpulint read 1n (a tiny value)
        "1.5e-2147483647",  # the scale less the fraction's digit wraps: 10^(2^31), past the bound
        "1e-2147483648",  # int32's minimum: its negation wraps, 10^(2^31)
    ],
)
def test_an_exponent_past_int64_or_whose_scale_wraps_is_refused(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_a_resource_list_keeps_the_quantities_and_leaves_the_rest_out():
    assert amount_or_none("1500m") == Fraction(3, 2)
    assert amount_or_none(True) is None and amount_or_none(None) is None and amount_or_none("${GPUS}") is None
    assert amounts({"cpu": "500m", "memory": 1024, "nvidia.com/gpu": "two", "pods": None}) == {
        "cpu": Fraction(1, 2),
        "memory": Fraction(1024),
    }
    assert amounts(["cpu", "1"]) == {}
