"""Spies that count calls made in whichever process makes them (a run's workers are forked processes)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def calls_by_process(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, log: Path) -> Callable[[], list[str]]:
    """Replace ``module.name`` with a wrapper that appends the calling process's id to ``log``; the function
    returned gives the ids logged since it was last called (and clears them)."""
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        with open(log, "a", encoding="utf-8") as out:  # appended from whichever process calls
            out.write(f"{os.getpid()}\n")
        return real(*args, **kwargs)

    def taken() -> list[str]:
        pids = log.read_text().split() if log.exists() else []
        log.unlink(missing_ok=True)
        return pids

    monkeypatch.setattr(module, name, counted)
    return taken
