"""Go's quoting of text in messages, as Kubernetes prints values (``%q``, ``strconv.Quote``).

Translated from Go 1.26 ``strconv/quote.go`` (``appendQuotedWith`` and ``appendEscapedRune`` with
``ASCIIonly`` and ``graphicOnly`` false): printable characters stay as they are, so a message shows
``"né"`` where JSON would show ``"n\\u00e9"``. Go's ``unicode.IsPrint`` (categories L, M, N, P, S and
the ASCII space) is Python's ``str.isprintable`` for one character; the two differ only on characters
assigned after Python's Unicode release, which Go prints and this escapes.
"""

from __future__ import annotations

_LETTER_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def quote(text: str) -> str:
    """strconv.Quote(text): a double-quoted Go string literal."""
    return '"' + "".join(_escaped(char) for char in text) + '"'


def _escaped(char: str) -> str:
    if char in '"\\':
        return "\\" + char
    if char.isprintable():
        return char
    if char in _LETTER_ESCAPES:
        return _LETTER_ESCAPES[char]
    code = ord(char)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by surrogateescape: Go writes the byte
        return f"\\x{code - 0xDC00:02x}"
    if 0xD800 <= code <= 0xDFFF:  # not a rune: Go's JSON decoder made it utf8.RuneError, which prints
        return "\ufffd"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
