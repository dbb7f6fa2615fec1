"""Every rule: one docs file, one check (or the loader), docs with every part, printable."""
import pytest

from conftest import REPO, run_cli
from gpulint.checks import OBJECT_CHECKS
from gpulint.registry import all_rules

RULES = sorted(all_rules())


def test_every_check_has_docs_and_every_doc_a_check_or_the_loader():
    assert set(OBJECT_CHECKS) <= set(RULES)
    assert set(RULES) - set(OBJECT_CHECKS) == {"yaml-invalid"}  # reported by the loader
    assert sorted(p.stem for p in (REPO / "rules").glob("*.yaml")) == RULES


@pytest.mark.parametrize("rule_id", RULES)
def test_rule_docs_are_complete(rule_id):
    rule = all_rules()[rule_id]
    assert rule.summary and rule.what.strip() and rule.why.strip() and rule.kubernetes
    assert rule.example.strip() and rule.use_instead.strip() and rule.example != rule.use_instead
    printed = run_cli("rule", rule_id)
    assert printed.exit_code == 0 and printed.stdout.startswith(f"# {rule_id} ({rule.severity})")
