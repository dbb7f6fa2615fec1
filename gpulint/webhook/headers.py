"""A request's header lines read as the stdlib's http.client.parse_headers reads them, without its cost.

The stdlib hands the header block to the email package's feed parser: about as much CPU as the rest
of a /healthz answer. Header blocks as HTTP clients write them - one ``Name: value`` per line, the name
made of the characters the email parser accepts in a name - are split here into the same
``HTTPMessage`` the parser would build (``set_raw`` with the value as its compat32 policy stores it).
Anything else (folded lines, a line without a colon, a last line without its newline) goes to the
email parser as before, so every request gets the stdlib's headers, and the stdlib's bounds hold:
a line over 65,536 bytes raises LineTooLong, more than 100 lines HTTPException.
"""

from __future__ import annotations

import email.parser
import re
from http.client import HTTPException, HTTPMessage, LineTooLong
from typing import Protocol

MAX_LINE = 65536  # http.client._MAXLINE
MAX_HEADERS = 100  # http.client._MAXHEADERS

# The email parser's header name characters (feedparser.headerRE: printable ASCII but the colon), at
# least one, a colon, then a value with no line break of the kinds it splits lines at (CR, LF).
_PLAIN = re.compile(r"[\x21-\x39\x3b-\x7e]+:[^\r\n]*\r?\n")


# RFC 9110 section 5.1: a field name is a token (tchar); section 5.5: a field value is visible characters,
# obs-text, spaces and tabs - no NUL, CR, LF or other control character.
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
# A whole block of well-formed lines, in one match: the common case costs one call, not one per line.
_WELL_FORMED = re.compile(rb"(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[^\x00-\x08\x0a-\x1f\x7f]*\r?\n)*")


def field_problem(lines: list[bytes]) -> str | None:
    """Why a header block is malformed under RFC 9112, or None. The stdlib reads such blocks leniently (a
    name with a space before its colon ends the headers there, and what follows becomes the body), so that a
    proxy in front and gpulint would frame the request differently: each is refused with 400 instead."""
    end = next((i for i, line in enumerate(lines) if line in (b"\r\n", b"\n", b"")), len(lines))
    if _WELL_FORMED.fullmatch(b"".join(lines[:end])):
        return None
    for line in lines:
        if line in (b"\r\n", b"\n", b""):
            break
        if line[:1] in (b" ", b"\t"):
            return "obsolete line folding in a header (RFC 9112 section 5.2)"
        name, colon, value = line.partition(b":")
        if not colon:
            return "a header line without a colon"
        if not _TOKEN.fullmatch(name):
            if name.rstrip(b" \t") != name:
                return "whitespace between a header name and its colon (RFC 9112 section 5.1)"
            return "a header name that is not a token (RFC 9110 section 5.1)"
        if _CONTROL.search(value.removesuffix(b"\n").removesuffix(b"\r")):
            return "a control character (NUL, CR, LF...) in a header value (RFC 9110 section 5.5)"
    return None


class _Lines(Protocol):
    def readline(self, limit: int = ..., /) -> bytes: ...


def read_headers(fp: _Lines) -> HTTPMessage:
    """The headers up to the blank line (or the end of the stream), as http.client.parse_headers."""
    lines = []
    while True:
        line = fp.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise LineTooLong("header line")
        lines.append(line)
        if len(lines) > MAX_HEADERS:
            raise HTTPException(f"got more than {MAX_HEADERS} headers")
        if line in (b"\r\n", b"\n", b""):
            break
    text = b"".join(lines).decode("iso-8859-1")
    decoded = [raw.decode("iso-8859-1") for raw in lines[:-1]]  # the last: the blank line, or the end
    if not all(_PLAIN.fullmatch(field) for field in decoded):
        return email.parser.Parser(_class=HTTPMessage).parsestr(text)
    message = HTTPMessage()
    for field in decoded:
        name, _, value = field.partition(":")
        message.set_raw(name, value.lstrip(" \t").rstrip("\r\n"))
    return message
