"""Formatters: a Report in, text out. They never judge: severities and exit codes are decided elsewhere."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from gpulint.lint.findings import Report, StreamedReport
from gpulint.lint.rule import Rule
from gpulint.report.escaping import encode, encode_pieces
from gpulint.report.options import FormatOptions

__all__ = [
    "FORMATS",
    "FormatOptions",
    "Formatter",
    "Pieces",
    "encode",
    "encode_pieces",
    "get_formatter",
    "get_pieces",
    "get_streamed",
]

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


Pieces = Callable[[Report, dict[str, Rule], FormatOptions], Iterable[str]]


def get_pieces(name: str) -> Pieces:
    """The formatter as pieces of its text, made as they are written (the report's text is never whole in
    memory: 55 MB of JSON for 50,000 documents); the formats that have no such writer give their text whole."""
    if name == "json":
        from gpulint.report.json_format import pieces as json_pieces

        return json_pieces
    if name == "text":
        from gpulint.report.text import pieces as text_pieces

        return text_pieces
    if name == "sarif":
        from gpulint.report.sarif import body as sarif_pieces

        return sarif_pieces
    render = get_formatter(name)

    def whole(report: Report, rules: dict[str, Rule], options: FormatOptions) -> Iterable[str]:
        return (render(report, rules, options),)

    return whole


StreamedPieces = Callable[[Report | StreamedReport, dict[str, Rule], FormatOptions], Iterable[str]]


def get_streamed(name: str) -> tuple[StreamedPieces, StreamedPieces] | None:
    """For a format whose findings are written in file order with all else before them or after them (json,
    text, SARIF): its text up to the end of the findings, and the rest, so that a report can be written as its
    files are checked (StreamedReport) and the notes made once they are all known. None for the other
    formats: they are made whole, from a whole report."""
    if name == "json":
        from gpulint.report import json_format

        return json_format.body, json_format.tail
    if name == "text":
        from gpulint.report import text

        return text.body, text.tail
    if name == "sarif":
        from gpulint.report import sarif

        return sarif.body, sarif.tail
    return None


FORMATS = ("text", "json", "sarif", "github", "junit", "gitlab", "markdown")
