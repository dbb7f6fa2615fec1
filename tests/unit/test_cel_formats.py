"""The CEL format library evaluated offline: the validators as Kubernetes defines them, and the rewritten
program that builds ``validate``'s and ``format.named``'s optionals from cel-cpp's own."""

import pytest

from gpulint.kube.cel import formats
from gpulint.kube.cel.engine import CelEngine, CelOptional, CelProblem, Compiled, device_value
from gpulint.kube.cel.library import FORMATS

POLICY = CelEngine(variables=("object",), version="1.37")
SELECTORS = CelEngine(version="1.37")


def run(expression: str, data: dict | None = None):
    compiled = POLICY.compile(expression)
    assert isinstance(compiled, Compiled), compiled
    return POLICY.run(compiled, {"object": data or {}})


# --------------------------------------------------------------------------- the validators (boundary pairs)


@pytest.mark.parametrize(
    ("name", "valid", "invalid"),
    [
        ("dns1123Label", "a" * 63, "a" * 64),
        ("dns1123Label", "my-name", "my-name-"),
        ("dns1123Subdomain", "example.com", "example..com"),
        ("dns1035Label", "abc-123", "123-abc"),
        ("qualifiedName", "example.com/MyName", "example.com/"),
        # generateName prefixes: a trailing '-' is allowed (maskTrailingDash)
        ("dns1123LabelPrefix", "my-prefix-", "-my-prefix-"),
        ("dns1123LabelPrefix", "my-prefix--", "my_prefix-"),  # upstream masks the last two characters
        ("dns1123SubdomainPrefix", "mysubdomain.prefix.-", "-prefix-"),
        ("dns1035LabelPrefix", "my-prefix-", "1-prefix-"),
        ("labelValue", "", "-a"),
        ("uri", "http://example.com/a%20b?q=1", "http://example.com/%zz"),
        ("uri", "/relative/path", "relative/path"),
        ("uri", "mailto:someone@example.com", "http://exa mple.com/"),
        ("uri", "http://[::1]:8080/", "http://example.com:80a/"),
        ("uuid", "123E4567E89B12D3A456426614174000", "123e4567-e89b-12d3-a456-42661417400"),
        ("byte", "aGk=", "aGk"),
        ("byte", "aGVsbG8h", ""),
        ("date", "2024-02-29", "2023-02-29"),
        ("date", "2020-12-31", "2020-12-31 "),
        ("datetime", "2020-01-01T23:59:59.5+01:00", "2020-01-01T24:00:00Z"),
        ("datetime", "2020-01-01t00:00:00z", "2020-01-01T00:00:00"),
    ],
)
def test_each_format_accepts_and_refuses_as_kubernetes(name, valid, invalid):
    validate = formats.VALIDATORS[name]
    assert validate(valid) == []
    assert validate(invalid) != []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", 'parse "": empty url'),
        ("relative", 'parse "relative": invalid URI for request'),
        (":x", 'parse ":x": missing protocol scheme'),
        ("http://example.com/%zz", 'parse "http://example.com/%zz": invalid URL escape "%zz"'),
        ("http://a b/", 'parse "http://a b/": invalid character " " in host name'),
        ("http://h:8x/", 'parse "http://h:8x/": invalid port ":8x" after host'),
        ("http://[::1/", "parse \"http://[::1/\": missing ']' in host"),
        ("http://a\tb", 'parse "http://a\\tb": net/url: invalid control character in URL'),
    ],
)
def test_uri_errors_are_go_url_errors(value, message):
    assert formats.uri(value) == [message]


def test_the_library_names_every_format_it_validates():
    assert FORMATS == tuple(formats.VALIDATORS)


# --------------------------------------------------------------------------- the rewritten program


def test_validate_returns_none_or_the_problems():
    assert run('format.dns1123Label().validate("my-name")') == (CelOptional(False), "")
    value, error = run('format.dns1035Label().validate("1abc")')
    assert not error and value.present and value.value[0].startswith("a DNS-1035 label must consist")


def test_optionals_work_with_ceL_cpp_optional_functions():
    assert run('format.uuid().validate(object.id).orValue(["ok"])', {"id": "nope"}) == (
        ["does not match the UUID format"],
        "",
    )
    assert run('format.uuid().validate(object.id).orValue(["ok"])', {"id": "0" * 32}) == (["ok"], "")
    assert run('format.date().validate("2020-01-01") == optional.none()') == (True, "")


def test_named_resolves_literal_and_computed_names():
    assert run('format.named("datetime").value() == format.datetime()') == (True, "")
    assert run('format.named("portNumber").hasValue()') == (False, "")
    assert run("format.named(object.f).value().validate(object.v).hasValue()", {"f": "date", "v": "2020-13-01"}) == (
        True,
        "",
    )
    assert run("format.named(object.f).hasValue()", {"f": ""}) == (False, "")


def test_calls_inside_macros_maps_and_lists_are_rewritten():
    data = {"names": ["ok", "Not_OK", "fine"]}
    assert run("object.names.filter(n, format.dns1123Label().validate(n).hasValue())", data) == (["Not_OK"], "")
    assert run('{"k": format.byte().validate("aGk=").hasValue()}["k"]') == ({"k": False}["k"], "")
    assert run('[format.named("x"), format.named("uri")].map(o, o.hasValue())') == ([False, True], "")
    assert run('cel.bind(f, format.named("labelValue"), f.value().validate("a b").hasValue())') == (True, "")


def test_each_operand_is_evaluated_once():
    # a failing operand fails once, with its own error; a value reaches the validator as is
    value, error = run("format.labelValue().validate(object.missing).hasValue()")
    assert value is None and "no such key" in error


def test_validate_on_a_value_that_is_not_a_format_is_no_such_overload():
    value, error = run('object.f.validate("x")', {"f": "dns1123Label"})
    assert value is None and error == "no such overload"
    assert "@kubernetes" not in error


def test_fields_named_like_the_functions_are_untouched():
    assert run('object.validate == "x" && object.format.named == 1', {"validate": "x", "format": {"named": 1}}) == (
        True,
        "",
    )


def test_device_selectors_validate_attributes():
    device = {
        "driver": "gpu.example.com",
        "attributes": {"gpu.example.com": {"uuid": device_value({"string": "GPU-1234"})}},
        "capacity": {},
        "allowMultipleAllocations": False,
    }
    compiled = SELECTORS.compile('format.uuid().validate(device.attributes["gpu.example.com"].uuid).hasValue()')
    assert isinstance(compiled, Compiled), compiled
    assert SELECTORS.evaluate(compiled, device) is True
    clean = SELECTORS.compile('!format.dns1123Label().validate(device.driver.split(".")[0]).hasValue()')
    assert isinstance(clean, Compiled) and SELECTORS.evaluate(clean, device) is True
    # the optional itself as the selector: refused when compiled, as the API server types validate()
    optional = SELECTORS.compile("format.uuid().validate(device.driver)")
    assert isinstance(optional, CelProblem) and optional.evaluable
    assert optional.message == "must evaluate to bool or the unknown type, not optional_type(list(string))"


def test_the_check_and_the_cost_use_the_expression_as_written():
    problem = POLICY.compile("format.dns1123Label().validate(1)")
    assert isinstance(problem, CelProblem) and problem.evaluable
    assert "found no matching overload for 'validate'" in problem.message
    checked = POLICY.checked('format.dns1123Label().validate("x")')
    assert not isinstance(checked, CelProblem)


# format.go ConstantFormats: the same 13 names from 1.31 (kubernetes/apiserver v0.31.0) to its master of
# 2026-07-23; no release added one (there is no portName format: `git log --all -S portName` finds no
# commit in the repository)
FORMAT_GO_NAMES = (
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
)


def test_the_named_formats_are_format_go_s():
    assert sorted(FORMATS) == sorted(FORMAT_GO_NAMES)


@pytest.mark.parametrize("engine", [POLICY, SELECTORS], ids=["policy", "selector"])
def test_a_format_kubernetes_lacks_is_a_compile_error_not_unevaluable(engine):
    """cel-go resolves format.portName() as a namespaced function, finds none, then checks `format` as an
    identifier: "undeclared reference to 'format'". An error, as the API server refuses it."""
    problem = engine.compile('!format.portName().validate("http").hasValue()')
    assert isinstance(problem, CelProblem) and problem.evaluable
    assert problem.message == "compilation failed: undeclared reference to 'format' (in container '')"
    assert problem.offset == 1
    # the boundary twin: a format format.go has
    assert isinstance(engine.compile('!format.labelValue().validate("http").hasValue()'), Compiled)


def test_format_named_of_a_missing_format_is_none():
    assert run('format.named("portName").hasValue()') == (False, "")
    assert run('format.named("labelValue").hasValue()') == (True, "")
