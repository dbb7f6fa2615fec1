"""Every rule's home: tests/rules/<rule-id>.md holds its cases (tests/rule_cases.py says how they read), and
each runs with that rule alone against the whole list of findings its comments mark."""

from __future__ import annotations

import pytest
from rule_cases import CASES, CaseFileError, check, parse

from gpulint.lint.registry import all_rules

FILES = sorted(CASES.glob("*.md"))
PARSED = {path.stem: parse(path) for path in FILES}


@pytest.mark.parametrize(
    ("rule", "index"),
    [(rule, index) for rule, cases in PARSED.items() for index in range(len(cases.cases))],
    ids=[f"{rule}:{case.title}" for rule, cases in PARSED.items() for case in cases.cases],
)
def test_case(rule, index):
    check(rule, PARSED[rule].cases[index])


def test_every_rule_has_its_case_file():
    missing = sorted(set(all_rules()) - set(PARSED))
    assert not missing, "rules without tests/rules/<rule-id>.md (scripts/new_rule.py writes one): " + ", ".join(missing)


@pytest.mark.parametrize("rule", sorted(PARSED))
def test_a_case_file_names_its_rule_and_holds_a_failing_and_a_clean_case(rule):
    cases = PARSED[rule]
    assert cases.rule == rule, f"tests/rules/{rule}.md begins with '# {cases.rule}'"
    assert rule in all_rules(), f"tests/rules/{rule}.md: no rule {rule}"
    marked = [case for case in cases.cases if any(e.rule == rule for e in case.expected())]
    clean = [case for case in cases.cases if not case.expected()]
    assert marked, f"tests/rules/{rule}.md: no case where {rule} reports"
    assert clean, f"tests/rules/{rule}.md: no clean case (a twin or a trap that must stay silent)"


def test_a_malformed_case_file_says_where(tmp_path):
    bad = tmp_path / "gpu-non-integer.md"
    bad.write_text("# gpu-non-integer\n\n```yaml\nkind: Pod\n```\n", encoding="utf-8")
    with pytest.raises(CaseFileError, match=r"gpu-non-integer.md:3: a yaml block before the first '## case'"):
        parse(bad)
