"""Kubernetes' CEL libraries beyond quantity and semver, as the API server declares them per version.

Translated from k8s.io/apiserver pkg/cel/environment/base.go (which library from which release)
and pkg/cel/library (ip.go, cidr.go, lists.go, regex.go, format.go), with cel-go's strings
extension at the version Kubernetes pins (``ext.StringsVersion(0)`` before 1.29, ``2`` since).

Each function is a row: its overload id (as upstream names it), parameter and result types
written as type codes, whether it is a member, and the implementation this engine runs (None:
declared for the type check and the cost estimate only). Type codes resolve differently in the
two environments the engine keeps: the *typed* one the API server checks with (``net.IP`` is its
own type) and the *untyped* one that evaluates, where an IP or a CIDR travels as the bytes of its
canonical text (``string(ip(x))`` then is that text, ``==`` compares addresses) and a named format
as a tagged string.

``<Format>.validate`` and ``format.named`` return optionals, which the binding cannot return from
Python: the evaluating program is rewritten around two helpers (gpulint.kube.cel.rewrite). The lists library's ``indexOf``/``lastIndexOf`` share their names with the
strings extension, which the evaluating environment cannot extend.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpulint.kube.cel import formats, rewrite
from gpulint.kube.go_text import quote as _go_quote

# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Fn:
    name: str
    overload: str
    result: str  # a type code (see _TYPED)
    params: tuple[str, ...]
    member: bool = False
    impl: Callable[..., Any] | None = None
    typed: bool = True  # declared for the type check (False: a helper only the evaluating program calls)


@dataclass(frozen=True)
class Library:
    name: str
    introduced: tuple[int, int]  # base.go IntroducedVersion
    removed: tuple[int, int] | None  # base.go RemovedVersion
    functions: tuple[Fn, ...]
    evaluable: bool = True  # False: declared only (the evaluating environment has its own)
    type_names: tuple[str, ...] = ()  # identifiers naming its types (``type(x) == net.IP``)

    def available(self, version: tuple[int, int]) -> bool:
        return self.introduced <= version and (self.removed is None or version < self.removed)


# --------------------------------------------------------------------------- net/netip, as Go parses


class ParseError(ValueError):
    pass


def _addr_error(raw: str, message: str, at: str | None = None) -> ParseError:
    where = f" (at {_go_quote(at)})" if at is not None else ""
    return ParseError(f"ParseAddr({_go_quote(raw)}): {message}{where}")


def _ipv4_fields(raw: str, text: str) -> bytes:
    fields: list[int] = []
    value, digits = 0, 0
    for index, char in enumerate(text):
        if "0" <= char <= "9":
            if digits == 1 and value == 0:
                raise _addr_error(raw, "IPv4 field has octet with leading zero")
            value, digits = value * 10 + int(char), digits + 1
            if value > 255:
                raise _addr_error(raw, "IPv4 field has value >255")
        elif char == ".":
            if index == 0 or index == len(text) - 1 or text[index - 1] == ".":
                raise _addr_error(raw, "IPv4 field must have at least one digit", text[index:])
            if len(fields) == 3:
                raise _addr_error(raw, "IPv4 address too long")
            fields.append(value)
            value, digits = 0, 0
        else:
            raise _addr_error(raw, "unexpected character", text[index:])
    if len(fields) < 3:
        raise _addr_error(raw, "IPv4 address too short")
    return bytes([*fields, value])


def _ipv6(raw: str) -> tuple[bytes, str]:
    text, zone = raw, ""
    if "%" in text:
        text, zone = text.split("%", 1)
        if not zone:
            raise _addr_error(raw, "zone must be a non-empty string")
    groups = bytearray(16)
    ellipsis, i = -1, 0
    if text.startswith("::"):
        ellipsis, text = 0, text[2:]
        if not text:
            return bytes(groups), zone
    while i < 16:
        off, acc = 0, 0
        while off < len(text) and text[off] in "0123456789abcdefABCDEF":
            acc = (acc << 4) + int(text[off], 16)
            if off > 3:
                raise _addr_error(raw, "each colon-separated field must have at most four hex digits", text)
            if acc > 0xFFFF:
                raise _addr_error(raw, "IPv6 field has value >=2^16", text)
            off += 1
        if off == 0:
            raise _addr_error(raw, "each colon-separated field must have at least one digit", text)
        if off < len(text) and text[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _addr_error(raw, "embedded IPv4 address must replace the final 2 fields of the address", text)
            if i + 4 > 16:
                raise _addr_error(raw, "too many hex fields to fit an embedded IPv4 at the end of the address", text)
            groups[i : i + 4] = _ipv4_fields(raw, text)
            text, i = "", i + 4
            break
        groups[i], groups[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        text = text[off:]
        if not text:
            break
        if text[0] != ":":
            raise _addr_error(raw, "unexpected character, want colon", text)
        if len(text) == 1:
            raise _addr_error(raw, "colon must be followed by more characters", text)
        text = text[1:]
        if text[0] == ":":
            if ellipsis >= 0:
                raise _addr_error(raw, "multiple :: in address", text)
            ellipsis, text = i, text[1:]
            if not text:
                break
    if text:
        raise _addr_error(raw, "trailing garbage after address", text)
    if i < 16:
        if ellipsis < 0:
            raise _addr_error(raw, "address string too short")
        n = 16 - i
        groups[ellipsis + n : 16] = groups[ellipsis:i]
        groups[ellipsis : ellipsis + n] = bytes(n)
    elif ellipsis >= 0:
        raise _addr_error(raw, "the :: must expand to at least one field of zeros", text)
    return bytes(groups), zone


def parse_addr(raw: str) -> tuple[bytes, str]:
    """netip.ParseAddr: (4 or 16 bytes, zone), or ParseError worded as Go words it."""
    for char in raw:
        if char == ".":
            return _ipv4_fields(raw, raw), ""
        if char == ":":
            return _ipv6(raw)
        if char == "%":
            raise _addr_error(raw, "missing IPv6 address")
    raise _addr_error(raw, "unable to parse IP")


def _is_4in6(address: bytes) -> bool:
    return len(address) == 16 and address[:12] == bytes(10) + b"\xff\xff"


def format_addr(address: bytes) -> str:
    """netip.Addr.String: dotted IPv4; RFC 5952 IPv6 (the longest run of two or more zero groups as ::)."""
    if len(address) == 4:
        return ".".join(str(b) for b in address)
    groups = [address[i] << 8 | address[i + 1] for i in range(0, 16, 2)]
    best, best_len, start = -1, 1, -1
    for index, group in enumerate([*groups, 1]):
        if group == 0 and start < 0:
            start = index
        elif group != 0 and start >= 0:
            if index - start > best_len:
                best, best_len = start, index - start
            start = -1
    if best < 0:
        return ":".join(f"{g:x}" for g in groups)
    head = ":".join(f"{g:x}" for g in groups[:best])
    tail = ":".join(f"{g:x}" for g in groups[best + best_len :])
    return f"{head}::{tail}"


def _ip(raw: str) -> bytes:
    """parseIPAddr in ip.go: no zones, no IPv4-mapped IPv6."""
    try:
        address, zone = parse_addr(raw)
    except ParseError as exc:
        raise ValueError(f"IP Address {_go_quote(raw)} parse error during conversion from string: {exc}") from None
    if zone:
        raise ValueError(f"IP address {_go_quote(raw)} with zone value is not allowed")
    if _is_4in6(address):
        raise ValueError(f"IPv4-mapped IPv6 address {_go_quote(raw)} is not allowed")
    return address


def _prefix(raw: str) -> tuple[bytes, int]:
    """netip.ParsePrefix, then parseCIDR in cidr.go."""
    prefix = "network address parse error during conversion from string: "
    slash = raw.rfind("/")
    try:
        if slash < 0:
            raise ParseError(f"netip.ParsePrefix({_go_quote(raw)}): no '/'")
        address, zone = parse_addr(raw[:slash])
        if zone:
            raise ParseError(f"netip.ParsePrefix({_go_quote(raw)}): IPv6 zones cannot be present in a prefix")
        bits_text = raw[slash + 1 :]
        if not bits_text.isdigit() or not bits_text.isascii() or (len(bits_text) > 1 and bits_text[0] == "0"):
            raise ParseError(f"netip.ParsePrefix({_go_quote(raw)}): bad bits after slash: {_go_quote(bits_text)}")
        bits = int(bits_text)
        if bits > len(address) * 8:
            raise ParseError(f"netip.ParsePrefix({_go_quote(raw)}): prefix length out of range")
    except ParseError as exc:
        message = str(exc)
        if message.startswith("ParseAddr("):
            message = f"netip.ParsePrefix({_go_quote(raw)}): {message}"
        raise ValueError(prefix + prefix + message) from None
    if _is_4in6(address):
        raise ValueError(prefix + f"IPv4-mapped IPv6 address {_go_quote(raw)} is not allowed")
    return address, bits


# IPs and CIDRs in the evaluating environment: the bytes of their canonical text.


def ip_value(address: bytes) -> bytes:
    return format_addr(address).encode()


def cidr_value(address: bytes, bits: int) -> bytes:
    return f"{format_addr(address)}/{bits}".encode()


def _addr_of(value: Any) -> bytes:
    if not isinstance(value, (bytes, bytearray)) or b"/" in value:
        raise ValueError("no such overload")
    return parse_addr(bytes(value).decode())[0]


def _prefix_of(value: Any) -> tuple[bytes, int]:
    if not isinstance(value, (bytes, bytearray)) or b"/" not in value:
        raise ValueError("no such overload")
    text, _, bits = bytes(value).decode().rpartition("/")
    return parse_addr(text)[0], int(bits)


def _masked(address: bytes, bits: int) -> bytes:
    number = int.from_bytes(address, "big")
    width = len(address) * 8
    mask = ((1 << bits) - 1) << (width - bits) if bits else 0
    return (number & mask).to_bytes(len(address), "big")


def _in(address: bytes, prefix: tuple[bytes, int]) -> bool:
    network, bits = prefix
    return len(address) == len(network) and _masked(address, bits) == _masked(network, bits)


def _contains_cidr(outer: tuple[bytes, int], inner: tuple[bytes, int]) -> bool:
    """cidrContainsCIDR: the inner address masked to the outer length equals the outer network."""
    return len(outer[0]) == len(inner[0]) and _in(inner[0], outer) and outer[1] <= inner[1]


def _family(value: Any) -> int:
    return 4 if len(_addr_of(value)) == 4 else 6


def _in_net(address: bytes, network: str, bits: int) -> bool:
    base = parse_addr(network)[0]
    return len(address) == len(base) and _in(address, (base, bits))


def _is_global_unicast(value: Any) -> bool:
    """netip.Addr.IsGlobalUnicast."""
    address = _addr_of(value)
    if len(address) == 4 and address in (bytes(4), b"\xff\xff\xff\xff"):
        return False
    return not (
        address == bytes(16)
        or _is_loopback(value)
        or _in_net(address, "224.0.0.0", 4)
        or _in_net(address, "ff00::", 8)
        or _is_link_local_unicast(value)
    )


def _is_loopback(value: Any) -> bool:
    address = _addr_of(value)
    return _in_net(address, "127.0.0.0", 8) or address == bytes(15) + b"\x01"


def _is_link_local_unicast(value: Any) -> bool:
    address = _addr_of(value)
    return _in_net(address, "169.254.0.0", 16) or _in_net(address, "fe80::", 10)


def _is_link_local_multicast(value: Any) -> bool:
    address = _addr_of(value)
    return _in_net(address, "224.0.0.0", 24) or _in_net(address, "ff02::", 16)


def _valid(function: Callable[[str], Any], text: str) -> bool:
    try:
        function(text)
    except ValueError:
        return False
    return True


def _is_canonical(text: str) -> bool:
    return format_addr(_ip(text)) == text


# string(<IP or CIDR>): the binding cannot add overloads to string(), so the type check sees this name
# (as long as "string") where the checker refused string() of an IP or a CIDR
CONVERSION = "_k8str"

IP = Library(
    "kubernetes.net.ip",
    (1, 30),
    None,
    (
        Fn("ip", "string_to_ip", "IP", ("string",), False, lambda s: ip_value(_ip(s))),
        Fn("family", "ip_family", "int", ("IP",), True, _family),
        Fn("ip.isCanonical", "ip_is_canonical", "bool", ("string",), False, _is_canonical),
        Fn("isUnspecified", "ip_is_unspecified", "bool", ("IP",), True, lambda v: not any(_addr_of(v))),
        Fn("isLoopback", "ip_is_loopback", "bool", ("IP",), True, _is_loopback),
        Fn("isLinkLocalMulticast", "ip_is_link_local_multicast", "bool", ("IP",), True, _is_link_local_multicast),
        Fn("isLinkLocalUnicast", "ip_is_link_local_unicast", "bool", ("IP",), True, _is_link_local_unicast),
        Fn("isGlobalUnicast", "ip_is_global_unicast", "bool", ("IP",), True, _is_global_unicast),
        Fn("isIP", "is_ip", "bool", ("string",), False, lambda s: _valid(_ip, s)),
        Fn(CONVERSION, "ip_to_string", "string", ("IP",)),
    ),
    type_names=("net.IP",),
)

CIDR = Library(
    "net.cidr",
    (1, 30),
    None,
    (
        Fn("cidr", "string_to_cidr", "CIDR", ("string",), False, lambda s: cidr_value(*_prefix(s))),
        Fn(
            "containsIP",
            "cidr_contains_ip_string",
            "bool",
            ("CIDR", "string"),
            True,
            lambda c, s: _in(_ip(s), _prefix_of(c)),
        ),
        Fn(
            "containsIP",
            "cidr_contains_ip_ip",
            "bool",
            ("CIDR", "IP"),
            True,
            lambda c, i: _in(_addr_of(i), _prefix_of(c)),
        ),
        Fn(
            "containsCIDR",
            "cidr_contains_cidr_string",
            "bool",
            ("CIDR", "string"),
            True,
            lambda c, s: _contains_cidr(_prefix_of(c), _prefix(s)),
        ),
        Fn(
            "containsCIDR",
            "cidr_contains_cidr",
            "bool",
            ("CIDR", "CIDR"),
            True,
            lambda c, o: _contains_cidr(_prefix_of(c), _prefix_of(o)),
        ),
        Fn("ip", "cidr_ip", "IP", ("CIDR",), True, lambda c: ip_value(_prefix_of(c)[0])),
        Fn("prefixLength", "cidr_prefix_length", "int", ("CIDR",), True, lambda c: _prefix_of(c)[1]),
        Fn(
            "masked",
            "cidr_masked",
            "CIDR",
            ("CIDR",),
            True,
            lambda c: cidr_value(_masked(*_prefix_of(c)), _prefix_of(c)[1]),
        ),
        Fn("isCIDR", "is_cidr", "bool", ("string",), False, lambda s: _valid(_prefix, s)),
        Fn(CONVERSION, "cidr_to_string", "string", ("CIDR",)),
    ),
    type_names=("net.CIDR",),
)

# --------------------------------------------------------------------------- lists (library.Lists)

_COMPARABLE = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
_SUMMABLE = ("int", "uint", "double", "duration")
INT64 = (-(2**63), 2**63 - 1)


def _is_sorted(items: list[Any]) -> bool:
    return all(not (b < a) for a, b in zip(items, items[1:]))


def _sum(items: list[Any]) -> Any:
    """The list's sum (0 for an empty list; the evaluating environment sees one list type, so the
    element kind is read from the elements)."""
    if not items:
        return 0
    value = items[0]
    for item in items[1:]:
        value = value + item
    if isinstance(value, int) and not isinstance(value, bool) and not INT64[0] <= value <= INT64[1]:
        raise ValueError("integer overflow")
    return value


def _extreme(name: str, pick: Callable[..., Any]) -> Callable[[list[Any]], Any]:
    def choose(items: list[Any]) -> Any:
        if not items:
            raise ValueError(f"{name} called on empty list")
        return pick(items)

    return choose


def _list_functions() -> tuple[Fn, ...]:
    rows: list[Fn] = []
    for kind in _COMPARABLE:
        rows.append(Fn("isSorted", f"list_{kind}_is_sorted_bool", "bool", (f"list({kind})",), True, _is_sorted))
        rows.append(Fn("max", f"list_{kind}_max_{kind}", kind, (f"list({kind})",), True, _extreme("max", max)))
        rows.append(Fn("min", f"list_{kind}_min_{kind}", kind, (f"list({kind})",), True, _extreme("min", min)))
    for kind in _SUMMABLE:
        rows.append(Fn("sum", f"list_{kind}_sum_{kind}", kind, (f"list({kind})",), True, _sum))
    return tuple(rows)


LISTS = Library("kubernetes.lists", (1, 0), None, _list_functions())

# indexOf/lastIndexOf on lists: one declaration with the strings extension's (the evaluating
# environment keeps cel-cpp's strings extension and cannot add overloads to its functions).
LIST_INDEX = (
    Fn("indexOf", "list_a_index_of_int", "int", ("list(A)", "A"), True),
    Fn("lastIndexOf", "list_a_last_index_of_int", "int", ("list(A)", "A"), True),
)

# --------------------------------------------------------------------------- regex (library.Regex)


def _re2() -> Any:
    import re2  # google-re2 (a pathspec[re2] dependency): Go's regexp syntax, linear time

    return re2


def regex(pattern: str) -> Any:
    """``pattern`` compiled by RE2 (ValueError: Go's regexp would refuse it too, with this message)."""
    return _compiled(pattern)


def _compiled(regex: str) -> Any:
    re2 = _re2()
    options = re2.Options()
    options.log_errors = False  # the error is the result, not a line on stderr
    try:
        return re2.compile(regex, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        text = detail.decode(errors="replace") if isinstance(detail, bytes) else str(detail)
        raise ValueError(f"Illegal regex: error parsing regexp: {text}") from None


def _find_all(text: str, regex: str, limit: int = -1) -> list[str]:
    """regexp.FindAllString: successive non-overlapping matches; an empty match right after a match
    is skipped."""
    if limit == 0:
        return []
    found: list[str] = []
    last_end = -1
    for match in _compiled(regex).finditer(text):
        if match.start() == match.end() and match.start() == last_end:
            continue
        found.append(match.group(0))
        last_end = match.end()
        if 0 < limit <= len(found):
            break
    return found


def _find(text: str, regex: str) -> str:
    match = _compiled(regex).search(text)
    return match.group(0) if match else ""


REGEX = Library(
    "kubernetes.regex",
    (1, 0),
    None,
    (
        Fn("find", "string_find_string", "string", ("string", "string"), True, _find),
        Fn("findAll", "string_find_all_string", "list(string)", ("string", "string"), True, _find_all),
        Fn("findAll", "string_find_all_string_int", "list(string)", ("string", "string", "int"), True, _find_all),
    ),
)

# --------------------------------------------------------------------------- format (library.Format)

FORMATS = tuple(formats.VALIDATORS)  # format.go ConstantFormats
FORMAT_TAG = "\ue000f:"


def _validate_format(tagged: str, value: str) -> list[str]:
    """formatValidate: the named format's problems with ``value`` (the rewrite makes them an optional)."""
    name = tagged[len(FORMAT_TAG) :] if isinstance(tagged, str) and tagged.startswith(FORMAT_TAG) else ""
    validator = formats.VALIDATORS.get(name)
    if validator is None:
        raise ValueError("no such overload: validate")
    return validator(value)


def _named_format(name: str) -> str:
    """format.named: the format, or "" (none) for a name format.go does not define."""
    return FORMAT_TAG + name if name in formats.VALIDATORS else ""


FORMAT = Library(
    "format",
    (1, 31),
    None,
    (
        *(
            Fn(f"format.{name}", f"format.{name}", "Format", (), False, lambda n=name: FORMAT_TAG + n)
            for name in FORMATS
        ),
        # optional results: declared as dyn (the binding cannot declare optional_type); evaluated through
        # the helpers below, which the rewritten program calls
        Fn("validate", "format-validate", "dyn", ("Format", "string"), True),
        Fn("format.named", "format-named", "dyn", ("string",), False),
        Fn(
            rewrite.VALIDATE,
            "format_validate_list",
            "list(string)",
            ("Format", "string"),
            False,
            _validate_format,
            False,
        ),
        Fn(rewrite.NAMED, "format_named_or_empty", "string", ("string",), False, _named_format, False),
    ),
)

# --------------------------------------------------------------------------- strings (cel-go ext.Strings)


def _strings(version: int) -> tuple[Fn, ...]:
    """The declarations for the type check (the evaluating environment uses cel-cpp's extension)."""
    rows = [
        Fn("charAt", "string_char_at_int", "string", ("string", "int"), True),
        Fn("indexOf", "string_index_of_string", "int", ("string", "string"), True),
        Fn("indexOf", "string_index_of_string_int", "int", ("string", "string", "int"), True),
        Fn("lastIndexOf", "string_last_index_of_string", "int", ("string", "string"), True),
        Fn("lastIndexOf", "string_last_index_of_string_int", "int", ("string", "string", "int"), True),
        Fn("lowerAscii", "string_lower_ascii", "string", ("string",), True),
        Fn("replace", "string_replace_string_string", "string", ("string", "string", "string"), True),
        Fn("replace", "string_replace_string_string_int", "string", ("string", "string", "string", "int"), True),
        Fn("split", "string_split_string", "list(string)", ("string", "string"), True),
        Fn("split", "string_split_string_int", "list(string)", ("string", "string", "int"), True),
        Fn("substring", "string_substring_int", "string", ("string", "int"), True),
        Fn("substring", "string_substring_int_int", "string", ("string", "int", "int"), True),
        Fn("trim", "string_trim", "string", ("string",), True),
        Fn("upperAscii", "string_upper_ascii", "string", ("string",), True),
    ]
    if version >= 1:
        rows.append(Fn("format", "string_format", "string", ("string", "list(dyn)"), True))
        rows.append(Fn("strings.quote", "strings_quote", "string", ("string",), False))
    if version >= 2:
        rows.append(Fn("join", "list_join", "string", ("list(string)",), True))
        rows.append(Fn("join", "list_join_string", "string", ("list(string)", "string"), True))
    return tuple(rows)


STRINGS_V0 = Library("strings", (1, 0), (1, 29), (*_strings(0), *LIST_INDEX), evaluable=False)
STRINGS_V2 = Library("strings", (1, 29), None, (*_strings(2), *LIST_INDEX), evaluable=False)

# The base environment's libraries this module declares, in base.go's order.
LIBRARIES = (LISTS, REGEX, STRINGS_V0, STRINGS_V2, IP, CIDR, FORMAT)


# The base environment's libraries the engine declares itself (gpulint.kube.cel.engine), by a word of
# their overload ids: base.go adds quantity in 1.28, semver (SemverVersion 1) in 1.33 and the lists
# library's includes (ListsVersion 1) in 1.37. A DRA selector's environment has them whatever the version.
BASE_FUNCTIONS = (("quantity", (1, 28)), ("semver", (1, 33)), ("includes", (1, 37)))
# their function names, for the version that brings a name into the base environment
BASE_NAMES = {
    **dict.fromkeys(
        ("quantity", "isQuantity", "compareTo", "isGreaterThan", "isLessThan", "add", "sub", "asInteger"), (1, 28)
    ),
    **dict.fromkeys(("isInteger", "asApproximateFloat", "sign"), (1, 28)),
    **dict.fromkeys(("semver", "isSemver", "major", "minor", "patch"), (1, 33)),
    "includes": (1, 37),
}


def base_function_available(overload: str, version: tuple[int, int]) -> bool:
    """Whether the base environment at ``version`` declares the engine's overload ``overload``."""
    return all(introduced <= version for word, introduced in BASE_FUNCTIONS if word in overload)


def minor(version: str) -> tuple[int, int]:
    major, _, rest = version.partition(".")
    return int(major), int(rest.split(".")[0] or 0)


def compatibility_version(version: str) -> tuple[int, int]:
    """environment.DefaultCompatibilityVersion: the release before the binary's (n-1), the version
    whose libraries a new expression may use."""
    major, minor_version = minor(version)
    return major, max(minor_version - 1, 0)


def available(version: tuple[int, int]) -> tuple[Library, ...]:
    return tuple(library for library in LIBRARIES if library.available(version))


_TYPE_CODE = re.compile(r"list\((\w+)\)")


def cel_type(cel: Any, code: str, typed: bool) -> Any:
    """A type code as a cel.Type: ``net.IP``/``net.CIDR``/``kubernetes.NamedFormat`` when typed;
    bytes/bytes/string when evaluating."""
    t = cel.Type
    nested = _TYPE_CODE.fullmatch(code)
    if nested:  # evaluating: one list type (the runtime dispatches on kinds, not element types)
        return t.List(cel_type(cel, nested.group(1), typed) if typed else t.DYN)
    opaque = {"IP": "net.IP", "CIDR": "net.CIDR", "Format": "kubernetes.NamedFormat"}
    if code in opaque:
        if typed:
            return t.AbstractType(opaque[code])
        return t.STRING if code == "Format" else t.BYTES
    simple = {
        "string": t.STRING,
        "bool": t.BOOL,
        "int": t.INT,
        "uint": t.UINT,
        "double": t.DOUBLE,
        "bytes": t.BYTES,
        "duration": t.DURATION,
        "timestamp": t.TIMESTAMP,
        "dyn": t.DYN,
        "A": t.DYN,  # list(A) with A: the binding declares no type parameters (lenient: never a false error)
    }
    return simple[code]


_UNDECLARED_NAME = re.compile(r"undeclared reference to '([^']+)'|no matching overload for '([^']+)'")


_FORMAT_NAMESPACE = re.compile(r"(?<![\w.])format\s*\.\s*\w+\s*\(")


def introduced(message: str, code: str) -> tuple[int, int] | None:
    """The version that introduced the library function a compile error of ``code`` (string literals
    blanked) names; None: not a library's."""
    found = _UNDECLARED_NAME.search(message)
    if found is None:
        return None
    name = found.group(1) or found.group(2)
    if name == "format" and _FORMAT_NAMESPACE.search(code):  # format.dns1123Label(): the format library
        return FORMAT.introduced
    versions = [lib.introduced for lib in LIBRARIES for fn in lib.functions if fn.name == name]
    if name in BASE_NAMES:
        versions.append(BASE_NAMES[name])
    return min(versions) if versions else None


def declared_names(version: tuple[int, int]) -> frozenset[str]:
    """The function names the type check declares at ``version``."""
    return frozenset(fn.name for fn in rows(version, typed=True))


def type_names(version: tuple[int, int]) -> tuple[str, ...]:
    return tuple(name for library in available(version) for name in library.type_names)


def rows(version: tuple[int, int], typed: bool) -> list[Fn]:
    """The function rows of the libraries available at ``version`` (the evaluating environment gets
    those it can run)."""
    out: list[Fn] = []
    for library in available(version):
        if typed:
            out.extend(fn for fn in library.functions if fn.typed)
        elif library.evaluable:
            out.extend(fn for fn in library.functions if fn.impl is not None)
    return out
