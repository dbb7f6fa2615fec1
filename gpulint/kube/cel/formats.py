"""The named formats of Kubernetes' CEL format library, validated as the API server validates them.

Translated from k8s.io/apiserver pkg/cel/library/format.go (ConstantFormats): the Kubernetes name
formats call apimachinery's validation (gpulint.kube.names), the CRD formats call kube-openapi's
strfmt (pkg/validation/strfmt: govalidator's base64 pattern, the UUID pattern, ``time.Parse`` with
``2006-01-02`` for dates, IsDateTime) and, for ``uri``, Go's ``url.ParseRequestURI`` (net/url
parse with viaRequest), whose error text is the message. Each validator returns the list of
problems (empty: valid), worded as Kubernetes words them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gpulint.kube import names
from gpulint.kube.go_text import quote as go_quote

# --------------------------------------------------------------------------- net/url, as Go parses a request URI


class URLError(ValueError):
    pass


_HEX = "0123456789abcdefABCDEF"
_HOST_PUNCTUATION = "!$&'()*+,;=:[]<>\"-_.~"  # shouldEscape(c, encodeHost) is false for these (and alphanumerics)


def _ascii_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _unescape(text: str, host: bool) -> None:
    """net/url unescape's checks (the decoded text is not needed): bad %-escapes; in a host, a %-escape
    of an ASCII byte other than %25 and characters that must be escaped."""
    i = 0
    while i < len(text):
        char = text[i]
        if char == "%":
            if i + 2 >= len(text) or text[i + 1] not in _HEX or text[i + 2] not in _HEX:
                raise URLError(f"invalid URL escape {go_quote(text[i : i + 3])}")
            if host and int(text[i + 1], 16) < 8 and text[i : i + 3] != "%25":
                raise URLError(f"invalid URL escape {go_quote(text[i : i + 3])}")
            i += 3
            continue
        if host and char.isascii() and not _ascii_alnum(char) and char not in _HOST_PUNCTUATION:
            raise URLError(f"invalid character {go_quote(char)} in host name")
        i += 1


def _valid_optional_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all("0" <= c <= "9" for c in port[1:]))


def _parse_host(host: str) -> None:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise URLError("missing ']' in host")
        if not _valid_optional_port(host[end + 1 :]):
            raise URLError(f"invalid port {go_quote(host[end + 1 :])} after host")
        zone = host.find("%25", 0, end)
        if zone >= 0:  # the zone may hold characters a host may not
            _unescape(host[:zone], True)
            _unescape(host[end:], True)
            return
    elif ":" in host:
        port = host[host.rfind(":") :]
        if not _valid_optional_port(port):
            raise URLError(f"invalid port {go_quote(port)} after host")
    _unescape(host, True)


_USERINFO = set("-._:~!$&'()*+,;=%@")


def _parse_authority(authority: str) -> None:
    at = authority.rfind("@")
    _parse_host(authority[at + 1 :])
    if at < 0:
        return
    userinfo = authority[:at]
    if not all(_ascii_alnum(c) or c in _USERINFO for c in userinfo):
        raise URLError("net/url: invalid userinfo")
    for part in userinfo.split(":", 1):
        _unescape(part, False)


def _scheme(raw: str) -> tuple[str, str]:
    """getScheme: (scheme, rest); no scheme when a character before ':' cannot be in one."""
    for index, char in enumerate(raw):
        if char.isascii() and char.isalpha():
            continue
        if char.isascii() and char.isdigit() or char in "+-.":
            if index == 0:
                return "", raw
            continue
        if char == ":":
            if index == 0:
                raise URLError("missing protocol scheme")
            return raw[:index], raw[index + 1 :]
        return "", raw
    return "", raw


def _parse_request_uri(raw: str) -> None:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise URLError("net/url: invalid control character in URL")
    if raw == "":
        raise URLError("empty url")
    if raw == "*":
        return
    scheme, rest = _scheme(raw)
    if rest.endswith("?") and rest.count("?") == 1:
        rest = rest[:-1]
    else:
        rest = rest.partition("?")[0]
    if not rest.startswith("/"):
        if scheme:
            return  # opaque
        raise URLError("invalid URI for request")
    if scheme and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        _parse_authority(authority)
        rest = slash + path
    _unescape(rest, False)


def uri(value: str) -> list[str]:
    """url.ParseRequestURI's error, as *url.Error prints it."""
    try:
        _parse_request_uri(value)
    except URLError as exc:
        return [f"parse {go_quote(value)}: {exc}"]
    return []


# --------------------------------------------------------------------------- kube-openapi strfmt

_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.IGNORECASE | re.ASCII)
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})")
_DATETIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _go_atoi(text: str) -> int | None:
    """time's atoi: an optional sign, then digits (none: 0)."""
    sign, digits = (-1, text[1:]) if text[:1] == "-" else (1, text[1:] if text[:1] == "+" else text)
    if not all("0" <= c <= "9" for c in digits):
        return None
    return sign * int(digits or "0")


def _two_digits(text: str) -> int | None:
    return int(text[:2]) if len(text) >= 2 and all("0" <= c <= "9" for c in text[:2]) else None


def is_date(value: str) -> bool:
    """time.Parse("2006-01-02", value) succeeds (strfmt IsDate)."""
    year = _go_atoi(value[:4]) if len(value) >= 4 else None
    if year is None or value[4:5] != "-":
        return False
    month = _two_digits(value[5:])
    if month is None or not 1 <= month <= 12 or value[7:8] != "-":
        return False
    day = _two_digits(value[8:])
    if day is None or len(value) != 10:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= day <= _DAYS[month - 1] + (1 if month == 2 and leap else 0)


def is_datetime(value: str) -> bool:
    """strfmt IsDateTime: a date, 't', and a time of day with a zone (compared as text)."""
    if len(value) < 4:
        return False
    parts = value.lower().split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    found = _DATETIME.fullmatch(parts[1])
    return found is not None and found[1] <= "23" and found[2] <= "59" and found[3] <= "59"


def _check(valid: Callable[[str], bool], message: str) -> Callable[[str], list[str]]:
    return lambda value: [] if valid(value) else [message]


# format.go ConstantFormats: the name format.<name>() has, and what its validate() runs
VALIDATORS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": names.dns1123_label,
    "dns1123Subdomain": names.dns1123_subdomain,
    "dns1035Label": names.dns1035_label,
    "qualifiedName": names.qualified_name,
    "dns1123LabelPrefix": lambda value: names.dns1123_label(names.mask_trailing_dash(value)),
    "dns1123SubdomainPrefix": lambda value: names.dns1123_subdomain(names.mask_trailing_dash(value)),
    "dns1035LabelPrefix": lambda value: names.dns1035_label(names.mask_trailing_dash(value)),
    "labelValue": names.label_value,
    "uri": uri,
    "uuid": _check(lambda value: _UUID.fullmatch(value) is not None, "does not match the UUID format"),
    "byte": _check(lambda value: _BASE64.fullmatch(value) is not None, "invalid base64"),
    "date": _check(is_date, "invalid date"),
    "datetime": _check(is_datetime, "invalid datetime"),
}
