"""Header blocks the stdlib reads leniently, refused (RFC 9110, RFC 9112).

http.server's header parser ends the headers at a name with a space before its colon, and what follows
becomes the body: a proxy in front and gpulint would frame such a request differently. Each such block is
answered 400 instead.
"""

from __future__ import annotations

import re

# RFC 9110 section 5.1: a field name is a token (tchar); section 5.5: a field value is visible characters,
# obs-text, spaces and tabs - no NUL, CR, LF or other control character.
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
# A whole block of well-formed lines, in one match: the common case costs one call, not one per line.
_WELL_FORMED = re.compile(rb"(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[^\x00-\x08\x0a-\x1f\x7f]*\r?\n)*")


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
