"""Formatters: a Report in, text out. They never judge: severities and exit codes are decided elsewhere."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gpulint.lint.findings import Report, Severity
from gpulint.lint.rule import Rule


@dataclass(frozen=True)
class FormatOptions:
    color: bool = False
    notes: tuple[str, ...] = ()  # run-level notes for the summary (e.g. "inventory rules skipped")
    # The lowest severity the CI formats flag (GitHub annotations, JUnit failures): warning, or info
    # with --fail-on info. An annotation or a failed test for every info finding buries the ones that matter.
    annotate_from: Severity = Severity.WARNING


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


# A file name that is not valid UTF-8 reaches Python as lone surrogates (PEP 383: b"\xff" -> "\udcff").
# Patterns, not compiled ones: their wide character sets take milliseconds to compile, which a run that
# needs none of them (text output of valid UTF-8, the pre-commit hook's case) does not pay; re caches them.
_SURROGATES = "[\ud800-\udfff]"
_NOT_ESCAPABLE = "[\ud800-\udc7f\udd00-\udfff]"  # surrogates surrogateescape cannot turn into bytes
_NOT_XML = "[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"


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
    if output_format in ("text", "github", "markdown"):
        try:
            return rendered.encode("utf-8")  # no surrogate at all: the same bytes, without the scan
        except UnicodeEncodeError:
            return re.sub(_NOT_ESCAPABLE, "\ufffd", rendered).encode("utf-8", "surrogateescape")
    return rendered.encode("utf-8", "backslashreplace")
