"""Kubernetes name and label syntax, with the messages the API server gives.

Translated from k8s.io/apimachinery pkg/api/validate/content (kube.go, dns.go, identifier.go,
errors.go), which pkg/util/validation re-exports: each function returns the list of problems
(empty: valid), worded as Kubernetes words them.
"""

from __future__ import annotations

import re

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_KEY_NAME_MAX = 63
LABEL_VALUE_MAX = 63

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"

_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL = re.compile(_DNS1035_LABEL_FMT)
_LABEL_KEY = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)
_C_IDENTIFIER = re.compile(_C_IDENTIFIER_FMT)
# A valid qualified name in one match (the common case; the problems are then found step by step). Its
# characters are ASCII, so its length in characters is its length in bytes.
_QUALIFIED_NAME = re.compile(f"(?:{_DNS1123_SUBDOMAIN_FMT}/)?{_LABEL_KEY_FMT}")

_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character"
)
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_C_IDENTIFIER_MSG = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_'"
)


def regex_error(message: str, regex: str, *examples: str) -> str:
    """content.RegexError."""
    if not examples:
        return f"{message} (regex used for validation is '{regex}')"
    # as Kubernetes builds it, with its double space: "(e.g. 'my-name',  or '123-abc', regex used ...)"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{regex}')"


def max_len_error(length: int) -> str:
    return f"must be no more than {length} bytes"


def _bytes(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def dns1123_label(value: str) -> list[str]:
    if len(value) <= DNS1123_LABEL_MAX and _DNS1123_LABEL.fullmatch(value):
        return []  # ASCII: as many bytes as characters
    errors = []
    if _bytes(value) > DNS1123_LABEL_MAX:
        errors.append(max_len_error(DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL.fullmatch(value):
        if _DNS1123_SUBDOMAIN.fullmatch(value):
            errors.append("must not contain dots")
        else:
            errors.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errors


def dns1123_subdomain(value: str) -> list[str]:
    if len(value) <= DNS1123_SUBDOMAIN_MAX and _DNS1123_SUBDOMAIN.fullmatch(value):
        return []  # ASCII: as many bytes as characters
    errors = []
    if _bytes(value) > DNS1123_SUBDOMAIN_MAX:
        errors.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errors.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errors


def dns1035_label(value: str) -> list[str]:
    errors = []
    if _bytes(value) > DNS1123_LABEL_MAX:  # DNS1035LabelMaxLength is 63 too
        errors.append(max_len_error(DNS1123_LABEL_MAX))
    if not _DNS1035_LABEL.fullmatch(value):
        errors.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errors


def mask_trailing_dash(name: str) -> str:
    """apimachinery api/validation maskTrailingDash, for names used as a generateName prefix: as upstream
    writes it, a trailing '-' and the character before it become one 'a'."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def qualified_name(value: str) -> list[str]:
    """IsQualifiedName (= IsLabelKey): ``name`` or ``dns.subdomain/name``."""
    if _QUALIFIED_NAME.fullmatch(value):
        prefix, _, name = value.rpartition("/")
        if len(name) <= LABEL_KEY_NAME_MAX and len(prefix) <= DNS1123_SUBDOMAIN_MAX:
            return []
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + message for message in dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part must be non-empty")
    elif _bytes(name) > LABEL_KEY_NAME_MAX:
        errors.append("name part " + max_len_error(LABEL_KEY_NAME_MAX))
    if not _LABEL_KEY.fullmatch(name):
        errors.append("name part " + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return errors


label_key = qualified_name


def label_value(value: str) -> list[str]:
    if len(value) <= LABEL_VALUE_MAX and _LABEL_VALUE.fullmatch(value):
        return []  # ASCII: as many bytes as characters
    errors = []
    if _bytes(value) > LABEL_VALUE_MAX:
        errors.append(max_len_error(LABEL_VALUE_MAX))
    if not _LABEL_VALUE.fullmatch(value):
        errors.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errors


def c_identifier(value: str) -> list[str]:
    if not _C_IDENTIFIER.fullmatch(value):
        return [regex_error(_C_IDENTIFIER_MSG, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")]
    return []


DECIMAL_INTEGER = re.compile(r"0|-?[1-9][0-9]*")  # content.IsDecimalInteger: canonical form
SIGNED_DIGITS = re.compile(r"[+-]?[0-9]+")  # what strconv.ParseInt(text, 10, 64) reads


def decimal_integer(text: str) -> int | None:
    """content.IsDecimalInteger then strconv.ParseInt: canonical form ("0", "-5", no "+5", "05" or "-0"), int64."""
    if not DECIMAL_INTEGER.fullmatch(text):
        return None
    return parse_int64(text)


def parse_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): an optional sign and decimal digits, within int64."""
    if not SIGNED_DIGITS.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


# --------------------------------------------------------------------------- node selector requirements

NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def selector_requirement_errors(key: str, operator: str, values: list[str]) -> list[str]:
    """Why the scheduler cannot parse a matchExpressions entry (labels.NewRequirement, as
    component-helpers nodeaffinity calls it): a term holding one matches no node."""
    if operator not in NODE_SELECTOR_OPERATORS:
        supported = ", ".join(f'"{op}"' for op in NODE_SELECTOR_OPERATORS)
        return [f'operator: Unsupported value: "{operator}": supported values: {supported}']
    errors = [f"key: Invalid value: {key!r}: {message}" for message in label_key(key)]
    if operator in ("In", "NotIn") and not values:
        errors.append("values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty")
    if operator in ("Exists", "DoesNotExist") and values:
        errors.append("values: Invalid value: values set must be empty for exists and does not exist")
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            errors.append("values: Invalid value: for 'Gt', 'Lt' operators, exactly one value is required")
        for index, value in enumerate(values):
            if parse_int64(value) is None:
                errors.append(
                    f"values[{index}]: Invalid value: {value!r}: for 'Gt', 'Lt' operators, the value must be an integer"
                )
    for index, value in enumerate(values):
        errors.extend(f"values[{index}][{key}]: Invalid value: {value!r}: {message}" for message in label_value(value))
    return errors


def field_requirement_errors(operator: str, values: list[str]) -> list[str]:
    """The same for a matchFields entry (nodeSelectorRequirementsAsFieldSelector)."""
    if operator not in ("In", "NotIn"):
        return [f'operator: Unsupported value: "{operator}": supported values: "In", "NotIn"']
    if len(values) != 1:
        return ["values: Invalid value: must have one element"]
    return []
