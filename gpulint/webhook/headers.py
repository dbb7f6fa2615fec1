"""Header blocks the stdlib reads leniently, and framings gpulint does not read, refused (RFC 9110, RFC 9112).

http.server's header parser ends the headers at a name with a space before its colon, and what follows
becomes the body: a proxy in front and gpulint would frame such a request differently. Each such block is
answered 400 instead.
"""

from __future__ import annotations

import re
from email.message import Message

Fields = tuple[tuple[str, str], ...]  # header fields of an answer, in order

# RFC 9110 section 5.1: a field name is a token (tchar); section 5.5: a field value is visible characters,
# obs-text, spaces and tabs - no NUL, CR, LF or other control character.
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
# A whole block of well-formed lines, in one match: the common case costs one call, not one per line.
_WELL_FORMED = re.compile(rb"(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[^\x00-\x08\x0a-\x1f\x7f]*\r?\n)*")


class Refused(Exception):
    """A request answered with an error status: raised where it is found, answered in one place."""

    def __init__(self, status: int, message: str, headers: Fields = (), close: bool = True) -> None:
        super().__init__(message)
        self.status, self.headers, self.close = status, headers, close


def field_problem(lines: list[bytes]) -> str | None:
    """Why a header block (the lines as read, up to the blank line) is malformed under RFC 9112, or None."""
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


def body_length(headers: Message) -> int:
    """A POST's body length from its headers; Refused (400, 411) for a framing gpulint does not read."""
    if headers.get("Transfer-Encoding") is not None:
        if headers.get("Content-Length") is not None:  # both: a request-smuggling shape
            raise Refused(400, "both Transfer-Encoding and Content-Length")
        raise Refused(411, "Content-Length required (chunked bodies are not accepted)")
    values = headers.get_all("Content-Length") or []
    if not values:
        raise Refused(411, "Content-Length required")
    text = values[0].strip()
    if len({v.strip() for v in values}) != 1 or not text.isascii() or not text.isdigit() or len(text) > 18:
        raise Refused(400, f"Content-Length {values[0][:40]!r} is not a byte count")
    return int(text)
