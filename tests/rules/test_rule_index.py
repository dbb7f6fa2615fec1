"""The rule index (gpulint/lint/rule_index.py) against the rule modules: the registry lists rules from the
index and imports a rule's module only when an object of a kind it reads reaches it, so the index must say
exactly what the modules' SPECs say. When this fails, run ``python scripts/generate_rule_index.py``."""

import subprocess
import sys

import pytest
from conftest import REPO

from gpulint.lint.findings import Severity
from gpulint.lint.registry import DeferredCheck, all_rules, resolved, rule_modules
from gpulint.lint.rule_index import RULE_INDEX
from gpulint.lint.rule_spec import Need, RuleSpec, Scope


def test_the_index_says_what_the_rule_modules_say():
    from_modules = tuple(
        (module.__name__.rsplit(".", 1)[1], module.SPEC, module.check is not None)
        for _, module in sorted(rule_modules().items())
    )
    assert RULE_INDEX == from_modules


@pytest.mark.slow
def test_the_generator_writes_the_committed_index(tmp_path):
    """The script's output, formatted, is the file in the repository (so regenerating it changes nothing)."""
    target = tmp_path / "rule_index.py"
    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "generate_rule_index.py"), str(target)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert target.read_text(encoding="utf-8") == (REPO / "gpulint" / "lint" / "rule_index.py").read_text(
        encoding="utf-8"
    )


@pytest.mark.parametrize("rule_id", sorted(all_rules()))
def test_a_rule_runs_its_modules_check(rule_id):
    rule, module = all_rules()[rule_id], rule_modules()[rule_id]
    if module.check is None:
        assert rule.check is None
    else:
        assert isinstance(rule.check, DeferredCheck) and resolved(rule.check) is module.check


def test_a_stale_index_entry_is_refused_when_its_check_is_imported():
    stale = DeferredCheck("gpu_non_integer", RuleSpec("gpu-non-integer", Severity.WARNING))
    with pytest.raises(RuntimeError, match="rule_index.py is out of date for gpu_non_integer"):
        stale.resolve()
    needs_changed = DeferredCheck("gpu_unschedulable", RuleSpec("gpu-unschedulable", Severity.ERROR))
    with pytest.raises(RuntimeError, match="generate_rule_index.py"):
        needs_changed.resolve()
    current = DeferredCheck(
        "gpu_unschedulable",
        RuleSpec(
            "gpu-unschedulable", Severity.ERROR, needs=frozenset({Need.NODES}), scope=Scope.POD_TEMPLATE, of_pods=True
        ),
    )
    assert current.resolve() is rule_modules()["gpu-unschedulable"].check
