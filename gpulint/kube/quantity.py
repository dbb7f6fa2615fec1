"""Kubernetes resource quantities, parsed as k8s.io/apimachinery/pkg/api/resource does.

Grammar (apimachinery ``quantity.go``)::

    <quantity>        ::= <signedNumber><suffix>
    <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
    <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
    <decimalExponent> ::= "e" <signedInteger> | "E" <signedInteger>

Values are exact (``fractions.Fraction``): ``1000m`` is exactly 1, ``0.1`` is 1/10; as ParseQuantity
stores them, a value finer than ``1n`` is rounded up (away from zero) to a whole ``n``, a binary-SI value
past the int64 maximum is capped there, and a missing number reads as 0 (``+``, ``.``, ``Mi``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Any

_NUMBER = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?")
_DECIMAL_SI = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SI = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)")
_SUFFIX_CHARS = re.compile(r"[eEinumkKMGTP]*[-+]?[0-9]*")
# ParseQuantity itself has no length limit (nor has the API server's validation of resource quantities);
# this bound keeps the work on hostile input small and every amount's digits under Python's int/str limit
# (4,300 digits: 4,000 digits times 10^MAX_EXPONENT stay below it)
MAX_TEXT = 4000
MAX_EXPONENT = 200  # bounds the Fraction arithmetic (Kubernetes reads exponents up to 2^31)
_MAX_BINARY = 2**63 - 1  # maxAllowed: a binary-SI quantity is capped at int64's maximum
_NANO_PER_UNIT = 10**9
FORMAT_HINT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


class QuantityError(ValueError):
    pass


@dataclass(frozen=True)
class Quantity:
    value: Fraction
    text: str

    def milli_value(self) -> int:
        """apimachinery's MilliValue(): rounded up to a whole milli-unit."""
        return math.ceil(self.value * 1000)

    def is_integer(self) -> bool:
        """The API server's integer test for extended resources: MilliValue() % 1000 == 0."""
        return self.milli_value() % 1000 == 0

    def __str__(self) -> str:
        return self.text


@lru_cache(maxsize=4096)  # manifests and inventories repeat the same few values thousands of times
def parse_quantity(text: str) -> Quantity:
    if not text:
        raise QuantityError("quantity is empty")
    if len(text) > MAX_TEXT:
        raise QuantityError(f"quantity is longer than {MAX_TEXT} characters")
    number = _NUMBER.match(text)
    assert number is not None  # the pattern matches the empty prefix
    sign, whole, fraction = number.group(1), number.group(2), number.group(3)
    # parseQuantityString reads no digits at all as 0: "+", "." and "Mi" are quantities (of 0)
    magnitude = Fraction(int(whole or "0"))
    if fraction:
        magnitude += Fraction(int(fraction), 10 ** len(fraction))
    suffix = text[number.end() :]
    if suffix in _DECIMAL_SI:
        magnitude *= Fraction(10) ** _DECIMAL_SI[suffix]
    elif suffix in _BINARY_SI:
        if not whole and not fraction and _BINARY_SI[suffix] >= 50:
            # Pi and Ei take ParseQuantity's decimal path (past int64's fast one): no digits is ErrNumeric
            raise QuantityError("unable to parse numeric part of quantity")
        magnitude = min(magnitude * 2 ** _BINARY_SI[suffix], _MAX_BINARY)  # ParseQuantity's cap (binary SI only)
    else:
        exponent = _EXPONENT.fullmatch(suffix)
        if exponent is None:
            # ParseQuantity: outside the suffix alphabet it is ErrFormatWrong, inside it ErrSuffix
            wellformed = suffix.strip() and _SUFFIX_CHARS.fullmatch(suffix)
            raise QuantityError(f"unable to parse quantity's suffix {suffix!r}" if wellformed else FORMAT_HINT)
        power = _int32(int(exponent.group(1)))
        if power is None:  # strconv.ParseInt(suffix[1:], 10, 64) fails: ErrSuffix
            raise QuantityError(f"unable to parse quantity's suffix {suffix!r}")
        if not whole and not fraction and power < -9:
            # past the nano scale ParseQuantity parses the digits as a decimal: none is ErrNumeric
            raise QuantityError("unable to parse numeric part of quantity")
        if power - len(fraction or "") <= -(1 << 31):
            # ParseQuantity's scale (the exponent less the fraction's digits) is an int32 too, and wraps: the
            # value becomes 10^(about 2^31), past MAX_EXPONENT (quantity.go ParseQuantity, both of its paths)
            power += 1 << 32
        if power > MAX_EXPONENT:  # keeps Fraction math bounded (Kubernetes reads up to 10^(2^31))
            raise QuantityError(f"quantity exponent {power} is out of range")
        # below 10^-(whole digits + 10) any number is under 1n: rounded to 1n all the same
        magnitude *= Fraction(10) ** max(power, -(len(whole) + 10))
    # ParseQuantity rounds a non-zero value up to a whole nano ("if you want some resources, you should get some")
    if magnitude.denominator != 1 and (magnitude * _NANO_PER_UNIT).denominator != 1:
        magnitude = Fraction(math.ceil(magnitude * _NANO_PER_UNIT), _NANO_PER_UNIT)
    return Quantity(-magnitude if sign == "-" else magnitude, text)


def _int32(exponent: int) -> int | None:
    """The exponent as ParseQuantity uses it (apimachinery v0.37.2 resource/suffix.go interpret): parsed as an
    int64 (None past it), then converted to int32, which wraps (``1e4294967297`` is ``1e1``)."""
    if not -(1 << 63) <= exponent < 1 << 63:
        return None
    return (exponent + (1 << 31)) % (1 << 32) - (1 << 31)


def quantity_from_yaml(value: Any) -> Quantity:
    """A quantity as written in a manifest: a YAML string or number (never a bool or null)."""
    if isinstance(value, bool) or value is None:
        raise QuantityError(f"{_yaml_repr(value)} is not a quantity")
    if isinstance(value, int):
        return Quantity(Fraction(value), str(value))
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise QuantityError(f"{value} is not a quantity")
        text = repr(value)
        return parse_quantity(text.replace("e+", "e"))
    if isinstance(value, str):  # Quantity.UnmarshalJSON trims surrounding white space
        return parse_quantity(value.strip())
    raise QuantityError(f"a {type(value).__name__} is not a quantity")


def amount_or_none(value: Any) -> Fraction | None:
    """The value of a quantity as written in a manifest, or None where it is not one."""
    try:
        return quantity_from_yaml(value).value
    except QuantityError:
        return None


def amounts(raw: Any, read: Callable[[Any], Fraction | None] = amount_or_none) -> dict[str, Fraction]:
    """A ResourceList (name -> quantity) as ``read`` reads each value; those that are not quantities are left
    out, and so is all of ``raw`` when it is not a mapping."""
    out: dict[str, Fraction] = {}
    if isinstance(raw, dict):
        for name, value in raw.items():
            amount = read(value)
            if amount is not None:
                out[str(name)] = amount
    return out


def _yaml_repr(value: Any) -> str:
    return "null" if value is None else ("true" if value else "false")


def format_amount(value: Fraction) -> str:
    """An amount as messages show it: ``8``, ``0.5``, ``1.5e+09`` (whole numbers exactly)."""
    if value.denominator == 1:
        return str(value.numerator)
    try:
        return f"{float(value):g}"
    except OverflowError:  # past float's range (a long quantity): the same six significant digits
        exact = Decimal(value.numerator) / value.denominator
        return f"{float(exact.scaleb(-exact.adjusted())):g}e{exact.adjusted():+d}"


_SUFFIXES = (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("T", 10**12), ("G", 10**9), ("M", 10**6))


def format_bytes(value: Fraction) -> str:
    """A memory amount in the largest unit that divides it (``128G``, ``14162Mi``), else in Gi."""
    if value.denominator == 1:
        for suffix, size in _SUFFIXES:
            if value and value.numerator % size == 0:
                return f"{value.numerator // size}{suffix}"
    return f"{float(value) / 2**30:.1f}Gi"


_GO_DURATION = re.compile(r"([0-9]*\.?[0-9]+|[0-9]+\.)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def go_duration(text: str) -> float | None:
    """Seconds in a Go duration ("5s", "2500ms", "1m30s"), or None when it is not one."""
    sign, body = (-1.0, text[1:]) if text.startswith("-") else (1.0, text.lstrip("+"))
    if body == "0":
        return 0.0
    total, position = 0.0, 0
    for match in _GO_DURATION.finditer(body):
        if match.start() != position:
            return None
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    return sign * total if body and position == len(body) else None
