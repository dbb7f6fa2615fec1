from fractions import Fraction

import pytest

from gpulint.kube.quantity import QuantityError, parse_quantity, quantity_from_yaml


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


@pytest.mark.parametrize("text", ["", "abc", "1K", "200K", "1 Gi", "e3", "1.2.3", "--1", "1Gib", "0x10"])
def test_rejects_what_kubernetes_rejects(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


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
