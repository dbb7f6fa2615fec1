"""Formatters: a Report in, text out. They never judge: severities and exit codes are decided elsewhere."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpulint.engine import Report
from gpulint.registry import Rule


@dataclass(frozen=True)
class FormatOptions:
    color: bool = False
    notes: tuple[str, ...] = ()  # run-level notes for the summary (e.g. "inventory rules skipped")


Formatter = Callable[[Report, dict[str, Rule], FormatOptions], str]


def get_formatter(name: str) -> Formatter:
    # Imported on demand: a text run never loads the XML or SARIF code.
    if name == "text":
        from gpulint.formatters.text import render
    elif name == "json":
        from gpulint.formatters.json_format import render
    elif name == "sarif":
        from gpulint.formatters.sarif import render
    elif name == "github":
        from gpulint.formatters.github import render
    elif name == "junit":
        from gpulint.formatters.junit import render
    else:
        raise ValueError(f"unknown format {name!r}")
    return render


FORMATS = ("text", "json", "sarif", "github", "junit")
