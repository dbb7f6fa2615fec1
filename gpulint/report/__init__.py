"""Formatters: a Report in, text out. They never judge: severities and exit codes are decided elsewhere."""

from __future__ import annotations

from collections.abc import Callable

from gpulint.lint.findings import Report
from gpulint.lint.rule import Rule
from gpulint.report.escaping import encode
from gpulint.report.options import FormatOptions

__all__ = ["FORMATS", "FormatOptions", "Formatter", "encode", "get_formatter"]

Formatter = Callable[[Report, dict[str, Rule], FormatOptions], str]


def get_formatter(name: str) -> Formatter:
    # Imported on demand: a text run never loads the XML or SARIF code.
    if name == "text":
        from gpulint.report.text import render
    elif name == "json":
        from gpulint.report.json_format import render
    elif name == "sarif":
        from gpulint.report.sarif import render
    elif name == "github":
        from gpulint.report.github import render
    elif name == "junit":
        from gpulint.report.junit import render
    elif name == "gitlab":
        from gpulint.report.gitlab import render
    elif name == "markdown":
        from gpulint.report.markdown import render
    else:
        raise ValueError(f"unknown format {name!r}")
    return render


FORMATS = ("text", "json", "sarif", "github", "junit", "gitlab", "markdown")
