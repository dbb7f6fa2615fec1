"""Reports cannot be forged (issue #33, medium).

The text report printed file names, object names and messages raw: a value or a file name that begins a
line with `::error`/`::add-mask::` forged GitHub workflow commands, ESC and BEL reached the terminal (OSC 52
writes the clipboard), and the markdown report let a backtick end its code span (live @mentions, links,
fake headings in a bot's comment). Every format now escapes every character it did not write itself; the
oracle is scripts/fuzz_atheris.py's report_is_safe, which the atheris `check` target applies too.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from gpulint.lint.findings import FileReport, Finding, Fix, FixSafety, ObjectRef, Report, Severity
from gpulint.report import FORMATS, FormatOptions, encode, get_formatter

_SPEC = importlib.util.spec_from_file_location(
    "fuzz_atheris", Path(__file__).resolve().parents[2] / "scripts" / "fuzz_atheris.py"
)
assert _SPEC is not None and _SPEC.loader is not None
fuzz_atheris = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("fuzz_atheris", fuzz_atheris)
_SPEC.loader.exec_module(fuzz_atheris)
report_is_safe = fuzz_atheris.report_is_safe

ATTACKS = [
    "::error file=.github/workflows/ci.yml,line=1::pwned",
    "::add-mask::ghp_token",
    "x\n::stop-commands::abc",
    "x\r::error::carriage return",
    "  ##[error]old style",
    "##vso[task.setvariable variable=x]1",
    "\x1b]52;c;cHduZWQ=\x07",  # OSC 52: write the clipboard
    "\x1b[2J\x1b[31mred",
    "\u009b31m",  # C1 CSI
    "\udc9b",  # the byte 0x9b in a file name that is not UTF-8
    "\udcff",
    "\u202egpj.yaml",  # right-to-left override
    "`@admin` [click](https://evil.example) ![x](https://evil.example/p.png)",
    "``\n# fake heading\n```",
    "<img src=x onerror=alert(1)>",
    "line\u2028separator",
]
# Any character, and the lone surrogates a file name that is not UTF-8 becomes (PEP 383: a byte as U+DC80-U+DCFF);
# other lone surrogates come from no file system or parser gpulint reads.
CHARACTERS = st.characters(codec=None, exclude_categories=("Cs",)) | st.integers(0xDC80, 0xDCFF).map(chr)
HOSTILE = st.sampled_from(ATTACKS) | st.text(CHARACTERS, max_size=16)


def finding(text: st.DrawFn) -> Finding:
    return Finding(
        rule=text(HOSTILE),
        severity=text(st.sampled_from(Severity)),
        message=text(HOSTILE),
        file=text(HOSTILE),
        line=text(st.integers(min_value=1, max_value=999)),
        column=text(st.integers(min_value=1, max_value=99)),
        obj=ObjectRef(text(HOSTILE), text(st.sampled_from(["Pod", "Job", ""]) | HOSTILE), text(HOSTILE), text(HOSTILE)),
        fix=text(
            st.none()
            | st.builds(Fix, document=st.just(0), path=st.just(("spec",)), value=st.none(), description=HOSTILE)
        ),
        notes=tuple(text(st.lists(HOSTILE, max_size=2))),
    )


@st.composite
def reports(draw: st.DrawFn) -> tuple[Report, tuple[str, ...]]:
    files = []
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        found = [finding(draw) for _ in range(draw(st.integers(min_value=0, max_value=3)))]
        path = draw(HOSTILE)
        found = [replace(f, file=path) for f in found]
        excerpts = {f.line: draw(HOSTILE) for f in found}
        files.append(FileReport(path, found, documents=1, objects=1, excerpts=excerpts))
    notes = tuple(draw(st.lists(HOSTILE, max_size=2)))
    return Report(files), notes


def _x(text: str) -> str:
    return "x" if text else ""


def _placeholders(report: Report, notes: tuple[str, ...]) -> tuple[Report, tuple[str, ...]]:
    """The same report with every text gpulint did not write replaced by "x" (an empty one kept empty)."""

    def plain(f: Finding) -> Finding:
        fix = replace(f.fix, description=_x(f.fix.description)) if f.fix else None
        obj = ObjectRef(_x(f.obj.api_version), _x(f.obj.kind), _x(f.obj.namespace), _x(f.obj.name))
        return replace(
            f, rule=_x(f.rule), message=_x(f.message), file=_x(f.file), obj=obj, fix=fix, notes=tuple(map(_x, f.notes))
        )

    files = [
        FileReport(_x(file.path), [plain(f) for f in file.findings], 1, 1, excerpts=dict.fromkeys(file.excerpts, "x"))
        for file in report.files
    ]
    # a run note is gpulint's first line and its details, one per line (findings.run_note): the same lines
    return Report(files), tuple("\n".join(map(_x, note.split("\n"))) for note in notes)


_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)")
_FENCED = re.compile(r"^  (`{3,})yaml\n.*?\n  \1$", re.M | re.S)


def _skeleton(markdown: str) -> str:
    """The markdown with its code spans and fenced excerpts taken out: what GitHub renders as markup."""
    return _SPAN.sub("C", _FENCED.sub("F", markdown))


def _check_all_formats(report: Report, notes: tuple[str, ...]) -> None:
    plain_report, plain_notes = _placeholders(report, notes)
    for name in FORMATS:
        options = FormatOptions(notes=notes, annotate_from=Severity.INFO)
        output = encode(get_formatter(name)(report, {}, options), name)
        report_is_safe(name, output)
        plain = encode(
            get_formatter(name)(plain_report, {}, FormatOptions(notes=plain_notes, annotate_from=Severity.INFO)), name
        )
        if name in ("text", "github", "junit", "markdown"):  # no text of theirs added a line
            assert output.count(b"\n") == plain.count(b"\n"), name
        if name == "markdown":  # and in markdown, none of it is markup
            text = output.decode("utf-8", "surrogateescape")
            assert _skeleton(text) == _skeleton(plain.decode()), text
        if name in ("json", "gitlab", "sarif"):
            document = json.loads(output.decode("utf-8"))
            if name == "json":
                assert [f["message"] for f in document["findings"]] == [f.message for f in report.findings]


@settings(max_examples=300, deadline=None)
@given(reports())
def test_no_report_prints_what_a_terminal_or_ci_runner_acts_on(drawn):
    _check_all_formats(*drawn)


@pytest.mark.parametrize("attack", ATTACKS)
def test_each_attack_in_every_field_of_every_format(attack):
    obj = ObjectRef("v1", "Pod", attack, attack)
    fix = Fix(document=0, path=("spec",), value=1, description=attack, safety=FixSafety.SAFE)
    found = Finding(attack, Severity.ERROR, attack, attack, 1, 1, obj, fix, notes=(attack,))
    _check_all_formats(Report([FileReport(attack, [found], 1, 1, excerpts={1: attack})]), (attack,))


def test_a_forged_workflow_command_through_the_cli(tmp_path, monkeypatch):
    """The attack as found: a manifest value that starts a line of the text report with `::add-mask::`
    and a file name that starts one with `::error`, through the real CLI."""
    monkeypatch.chdir(tmp_path)
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n"
        '  name: "x\\n::add-mask::\\e]52;c;aGk=\\a"\n'  # YAML escapes: a newline, ESC and BEL in the name
        "spec: {containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 1}, "
        "requests: {nvidia.com/gpu: 2}}}]}\n"
    )
    (tmp_path / "::error file=ci.yml::forged.yaml").write_text(pod)
    for name in FORMATS:
        result = run_cli("check", ".", "--format", name, "--output", "report")
        output = (tmp_path / "report").read_bytes()
        assert result.exit_code == 1, result.stderr
        report_is_safe(name, output)
