"""The sandbox's worker process: ``python -m gpulint.kube.cel.sandbox_worker VARIABLES MEMORY``.

It loads the CEL engine, limits its own address space, then answers one pickled request at a time
on stdin/stdout, framed as gpulint.kube.cel.sandbox writes and reads them. Its own module so that
the parent's side (sandbox.py, imported by the engine) does not import the engine back.
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import Any

from gpulint.kube.cel.engine import CelEngine, Compiled
from gpulint.kube.cel.sandbox import FRAME_HEADER, MAX_REPLY_BYTES, READY


def _limit_memory(extra: int) -> None:
    try:
        import resource

        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[0])
        resource.setrlimit(resource.RLIMIT_AS, (pages * os.sysconf("SC_PAGE_SIZE") + extra,) * 2)
    except (ImportError, OSError, ValueError):
        pass  # no /proc or no rlimits: the parent's timeout still stops it


def _read_exactly(stream: Any, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise EOFError
    return data


def _serve(variables: tuple[str, ...], memory: int) -> None:
    engine = CelEngine(variables, guarded=False)
    engine.compile("true")  # load the engine before the limit applies to what comes next
    _limit_memory(memory)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    stdout.write(FRAME_HEADER.pack(len(READY)) + READY)  # the parent's clock starts with the first request
    stdout.flush()
    while True:
        try:
            (size,) = FRAME_HEADER.unpack(_read_exactly(stdin, FRAME_HEADER.size))
            expression, data, device = pickle.loads(_read_exactly(stdin, size))
        except EOFError:
            return
        try:
            compiled = engine.compile(expression)
            if not isinstance(compiled, Compiled):
                answer: tuple[str, Any] = ("error", compiled.message)
            elif device:
                result = engine.evaluate(compiled, data)
                answer = ("ok", result) if isinstance(result, bool) else ("error", result)
            else:
                value, error = engine.run(compiled, data)
                answer = ("ok", value) if not error else ("error", error)
            if isinstance(answer[1], str) and "bad_alloc" in answer[1]:
                answer = ("memory", "")
            reply = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
            if len(reply) > MAX_REPLY_BYTES:  # e.g. a message expression that built a huge string
                reply = pickle.dumps(("memory", ""))
        except MemoryError:
            reply = pickle.dumps(("memory", ""))
        stdout.write(FRAME_HEADER.pack(len(reply)) + reply)
        stdout.flush()


if __name__ == "__main__":
    _serve(tuple(sys.argv[1].split(",")), int(sys.argv[2]))
