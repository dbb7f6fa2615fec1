"""A large `.gitignore` (issue #33, medium).

5,000 plain patterns exceeded RE2's memory budget for one set, and the fallback compiled the same set again,
uncaught: exit 3. Plain paths are now looked up by name, the other patterns compiled into RE2 sets of at most
1,000 (split further when one is over the budget), and a pattern RE2 cannot compile on its own is left out,
as git leaves out a pattern it cannot parse. Generated monorepo ignore files of 100,000 lines work.
"""

from __future__ import annotations

import json
from pathlib import Path

import pathspec
from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

BROKEN = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: [unterminated\n"


def repository(tmp_path: Path, ignore: str) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text(ignore)
    for name in ("generated/module-4999/out-4999.yaml", "generated/module-5000/out-5000.yaml", "cache/x.tmp4999.yaml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(BROKEN)
    return tmp_path


def linted(tmp_path: Path) -> list[str]:
    result = run_cli("check", ".", "--format", "json")
    assert result.exit_code == 1, result.stderr  # not 3
    return sorted({finding["path"] for finding in json.loads(result.stdout)["findings"]})


def test_five_thousand_plain_patterns(tmp_path, monkeypatch):
    """The attack as found."""
    repo = repository(tmp_path, "".join(f"generated/module-{i}/out-{i}.yaml\n" for i in range(5000)))
    monkeypatch.chdir(repo)
    assert linted(repo) == ["cache/x.tmp4999.yaml", "generated/module-5000/out-5000.yaml"]


def test_five_thousand_glob_patterns_and_one_re2_cannot_compile(tmp_path, monkeypatch):
    """One more of the class: patterns that are no plain paths (they need the RE2 sets), among them one
    over RE2's budget on its own, which is left out; the patterns after it still apply."""
    patterns = [f"*.tmp{i}.yaml" for i in range(5000)]
    patterns.insert(10, "a" + "?" * 20000)
    patterns.append("generated/module-4999/")
    repo = repository(tmp_path, "\n".join(patterns) + "\n")
    monkeypatch.chdir(repo)
    assert linted(repo) == ["generated/module-5000/out-5000.yaml"]


def test_a_generated_ignore_file_of_100k_lines(tmp_path, monkeypatch):
    lines = [f"services/team{i % 300}/module-{i}/generated/" for i in range(99_990)]
    lines += ["*.tmp*.yaml", "!cache/x.tmp4999.yaml", "generated/module-4999/"]  # a glob, a negation
    repo = repository(tmp_path, "\n".join(lines) + "\n")
    monkeypatch.chdir(repo)
    assert linted(repo) == ["cache/x.tmp4999.yaml", "generated/module-5000/out-5000.yaml"]


# Patterns and paths over a small alphabet, so that they meet: plain names and paths, globs, negations,
# anchors, directory patterns, `**`.
NAME = st.sampled_from(["a", "b", "ab", "a.b", "x-1"])
PATTERN = st.builds(
    lambda negated, anchor, parts, directory: f"{negated}{anchor}{'/'.join(parts)}{directory}",
    st.sampled_from(["", "!"]),
    st.sampled_from(["", "/"]),
    st.lists(NAME | st.sampled_from(["*", "a*", "?b", "**", "[ab]"]), min_size=1, max_size=3),
    st.sampled_from(["", "/"]),
)
PATH = st.builds(
    lambda parts, directory: "/".join(parts) + directory,
    st.lists(NAME, min_size=1, max_size=4),
    st.sampled_from(["", "/"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(PATTERN, max_size=8), st.lists(PATH, min_size=1, max_size=5))
def test_the_verdicts_are_pathspecs(patterns, paths):
    """The trap: plain paths looked up and the rest matched in split sets decide as pathspec's gitignore
    matcher decides (its reference backend, which takes the patterns in order; the RE2 backend gpulint used
    before takes RE2's matches in no set order, so a negation could decide either way)."""
    from gpulint.lint.inputs.gitignore import layer_of

    ours = layer_of(patterns)
    theirs = pathspec.GitIgnoreSpec.from_lines(patterns, backend="simple")
    for path in paths:
        assert ours.verdict(path) == theirs.check_file(path).include, (patterns, path)
