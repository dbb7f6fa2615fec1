"""The webhook's HTTP framing, fuzzed over TLS against a real `gpulint serve` (issue #33).

Requests are built from the pieces that frame them - the request line, header lines as clients, proxies and
attackers write them (whitespace around the colon, folded lines, control characters, repeated or missing
Host, Content-Length and Transfer-Encoding together, Expect) - and a body that may hold another request.
What must hold for every one: each answer is a whole HTTP/1.1 response with a status the server documents,
a header block RFC 9112 refuses is answered 400 first, a request that is not a POST never has its body
answered as a request of its own (no desync), and the server logs JSON lines only and stays up.
"""

from __future__ import annotations

import json
import os
import re
import ssl
from collections.abc import Iterator
from typing import Any

import pytest
from fuzz_support import bounded, collecting
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from webhook_helpers import GOOD_POD, ResponseReader, Server, review

EXAMPLES = int(os.environ.get("GPULINT_FUZZ_EXAMPLES") or 0)
STATUSES = {100, 200, 400, 404, 405, 408, 411, 413, 414, 431, 501, 503, 505}
SMUGGLED = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")

NAMES = (b"Host", b"Content-Length", b"Transfer-Encoding", b"Expect", b"Connection", b"Content-Type", b"X-A")
VALUES = (
    b"x",
    b"0",
    b"5",
    b"chunked",
    b"gzip, chunked",
    b"100-continue",
    b"close",
    b"keep-alive",
    b"4194304",
    b"-1",
    b"5, 5",
    b"a\x00b",
    b"a\x1bb",
    b"caf\xc3\xa9",
)
COLONS = (b":", b": ", b" :", b"\t:", b":\t", b"  :  ")


@st.composite
def header_line(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(("field", "field", "field", "folded", "no colon")))
    value = draw(st.one_of(st.sampled_from(VALUES), st.binary(max_size=12).map(lambda b: b.replace(b"\n", b""))))
    if kind == "folded":
        return b" " + value + b"\r\n"
    if kind == "no colon":
        return draw(st.sampled_from(NAMES)) + b" " + value + b"\r\n"
    return draw(st.sampled_from(NAMES)) + draw(st.sampled_from(COLONS)) + value + b"\r\n"


@st.composite
def http_request(draw: st.DrawFn) -> tuple[bytes, bytes, list[bytes], bytes]:
    """(method, version, header lines, the whole request as sent)."""
    method = draw(st.sampled_from((b"GET", b"POST", b"HEAD", b"PUT", b"OPTIONS")))
    path = draw(st.sampled_from((b"/healthz", b"/validate", b"/validate?timeout=5s", b"/metrics", b"/x")))
    version = draw(st.sampled_from((b"HTTP/1.1", b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0")))
    lines = draw(st.lists(header_line(), max_size=6))
    if draw(st.booleans()):
        lines.insert(0, b"Host: x\r\n")
    body = draw(
        st.sampled_from((b"", SMUGGLED, json.dumps(review(GOOD_POD)).encode(), b"5\r\nhello\r\n0\r\n\r\n" + SMUGGLED))
    )
    if draw(st.booleans()):  # a Content-Length that matches the body
        lines.append(b"Content-Length: %d\r\n" % len(body))
    return method, version, lines, method + b" " + path + b" " + version + b"\r\n" + b"".join(lines) + b"\r\n" + body


def malformed(version: bytes, lines: list[bytes]) -> bool:
    """Does RFC 9112 refuse this header block (the oracle, written apart from the server's checks)?"""
    hosts = 0
    for line in lines:
        if line[:1] in (b" ", b"\t"):
            return True
        name, colon, value = line.partition(b":")
        if not colon or not TOKEN.fullmatch(name) or CONTROL.search(value[:-2]):
            return True
        hosts += name.lower() == b"host"
    return version == b"HTTP/1.1" and hosts != 1


def answers(server: Server, data: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    tls = server.raw()
    got: list[tuple[int, dict[str, str], bytes]] = []
    try:
        tls.sendall(data)
        reader = ResponseReader(tls)
        while True:
            got.append(reader.read(1.5, head=data.startswith(b"HEAD ") and not got))
    except (ConnectionError, TimeoutError, ssl.SSLError, OSError, ValueError, IndexError):
        pass
    finally:
        tls.close()
    return got


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("framing"))
    yield running
    running.stop()


@settings(
    max_examples=EXAMPLES or 25,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(request=http_request())
@collecting
def test_http_framing(server: Any, request: tuple[bytes, bytes, list[bytes], bytes]) -> None:
    method, version, lines, data = request
    with bounded("HTTP request"):
        seen_lines = len(server.raw_lines)
        got = answers(server, data)
        statuses = [status for status, _, _ in got]
        assert set(statuses) <= STATUSES, statuses
        if version != b"HTTP/2.0" and malformed(version, lines):
            assert statuses[:1] == [400], (statuses, data[:300])
        fields = [(name.strip().lower(), value.strip()) for name, _, value in (line.partition(b":") for line in lines)]
        framed = any(
            name == b"transfer-encoding" or (name == b"content-length" and value != b"0") for name, value in fields
        )
        if method != b"POST" and framed:
            assert len(statuses) <= 1, (statuses, data[:300])  # its body is never answered as a request
        assert all(line.startswith("{") for line in server.raw_lines[seen_lines:])  # never a traceback
        assert server.get("/healthz")[0] == 200
