"""Text a report did not write, made safe to print: no terminal control, no CI command, valid Unicode
and XML where the format needs it, and the bytes each format writes."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

# A file name that is not valid UTF-8 reaches Python as lone surrogates (PEP 383: b"\xff" -> "\udcff").
# Patterns, not compiled ones: their wide character sets take milliseconds to compile, which a run that
# needs none of them (text output of valid UTF-8, the pre-commit hook's case) does not pay; re caches them.
_SURROGATES = "[\ud800-\udfff]"
_NOT_ESCAPABLE = "[\ud800-\udc7f\udd00-\udfff]"  # surrogates surrogateescape cannot turn into bytes
_NOT_XML = "[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


# What a terminal or a CI log acts on when a report prints it raw: C0 controls (ESC starts ANSI and OSC
# sequences - OSC 52 writes the clipboard; CR and LF start a line), DEL, C1 controls (U+009B is CSI), the
# same bytes in a file name that is not UTF-8, line and paragraph separators, bidirectional overrides
# (Trojan Source) and the byte order mark. Every text a report did not write itself is passed through shown().
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\udc80-\udc9f]"
# JSON escapes C0 itself: the rest is written as \uXXXX, which leaves the document's value unchanged
_UNSAFE_IN_JSON = "[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
# A line a CI runner reads as a command, after leading blanks: GitHub Actions `::error ...::`,
# `::add-mask::`, `::stop-commands::`, and the older `##[error]`, Azure Pipelines' `##vso[...]`.
_COMMAND = r"\A(\s*)([:#])(?=[:#])"


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDC9F:  # a file name's undecodable byte (PEP 383), a C1 control as a byte
        code -= 0xDC00
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str) -> str:
    """Text a report did not write (a file name, an object's name, a value in a message), safe to print:
    each control character, separator and override as a visible escape (``\\x1b``, ``\\n``, ``\\u202e``).
    It can then neither start a line nor reach the terminal."""
    return re.sub(_UNSAFE, _escape, text)


def line_start(text: str) -> str:
    """shown(), for text that begins a line: a leading ``::`` or ``##`` (a CI runner's command) has its first
    character escaped, so a file named ``::add-mask::x`` prints as ``\\x3a:add-mask::x``."""
    return re.sub(_COMMAND, lambda m: f"{m.group(1)}\\x{ord(m.group(2)):02x}", shown(text))


def valid_unicode(text: str) -> str:
    """``text`` with lone surrogates shown as U+FFFD, for formats that must be valid Unicode."""
    return re.sub(_SURROGATES, "\ufffd", text)


def valid_xml(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot hold (control characters, surrogates) as U+FFFD."""
    return re.sub(_NOT_XML, "\ufffd", text)


def encode(rendered: str, output_format: str) -> bytes:
    """The report as the bytes to write.

    The human formats (text, github) give a file name back as the bytes the file system has, as
    ``ls`` does; JSON keeps it lossless and valid UTF-8 as a ``\\udcff`` escape, which json.loads
    turns back into the same name; SARIF and JUnit have already made it valid Unicode.
    """
    if output_format in ("json", "sarif", "gitlab"):
        rendered = re.sub(_UNSAFE_IN_JSON, lambda m: f"\\u{ord(m.group()):04x}", rendered)
    if output_format in ("text", "github", "markdown"):
        try:
            return rendered.encode("utf-8")  # no surrogate at all: the same bytes, without the scan
        except UnicodeEncodeError:
            return re.sub(_NOT_ESCAPABLE, "\ufffd", rendered).encode("utf-8", "surrogateescape")
    return rendered.encode("utf-8", "backslashreplace")


ENCODED_BLOCK = 1 << 20  # characters encoded and written at a time


def encode_pieces(pieces: Iterable[str], output_format: str, block_size: int = ENCODED_BLOCK) -> Iterator[bytes]:
    """encode() of the pieces' text, a block of about ``block_size`` characters at a time: the same bytes as
    ``encode("".join(pieces), output_format)``, since encode() reads one character at a time (a piece
    never splits one)."""
    block: list[str] = []
    size = 0
    for piece in pieces:
        block.append(piece)
        size += len(piece)
        if size >= block_size:
            yield encode("".join(block), output_format)
            block, size = [], 0
    if block:
        yield encode("".join(block), output_format)
