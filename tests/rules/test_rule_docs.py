"""The rule docs run as tests: every rule's `example` produces exactly the findings its doc lists,
its `use-instead` produces none - from that rule alone, and (errors and warnings) from every rule.

Runs go through the CLI's pipeline (tests/rule_harness.py), against the inventory the doc names
(shipped in rules/inventories/, found the way `gpulint rule` finds it) and the configuration it
gives. The shipped policy library (rules/policies/) is held to the same standard.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from rule_harness import assert_findings, findings_of

from gpulint.lint.data import data_dir
from gpulint.lint.registry import Rule, all_rules, policy_rules
from gpulint.lint.world.inventory import load_inventory

BUILTIN = sorted(all_rules())
LIBRARY = sorted(path.stem for path in (data_dir("rules") / "policies").glob("*.yaml"))


def _rule(rule_id: str) -> tuple[Rule, dict[str, Any]]:
    """The rule and the configuration that enables it (a library policy is loaded with --policy gpulint:NAME)."""
    if rule_id in all_rules():
        return all_rules()[rule_id], {}
    policy = f"gpulint:{rule_id}"
    return policy_rules((policy,))[rule_id], {"policies": [policy]}


def _inventory(rule: Rule) -> str | None:
    path = rule.inventory_path()
    return str(path) if path is not None else None


ALL = [*BUILTIN, *LIBRARY]


@pytest.mark.parametrize("rule_id", ALL)
def test_example_produces_exactly_the_documented_findings(rule_id):
    rule, base = _rule(rule_id)
    assert rule.example_findings, f"{rule_id}: the doc lists no example-findings"
    found = assert_findings(
        rule_id, rule.example, rule.example_findings, inventory=_inventory(rule), config={**base, **rule.example_config}
    )
    assert {f.rule for f in found} == {rule_id}


@pytest.mark.parametrize("rule_id", ALL)
def test_use_instead_is_clean_for_its_rule(rule_id):
    rule, base = _rule(rule_id)
    assert rule.use_instead.strip() and rule.use_instead != rule.example
    assert_findings(
        rule_id, rule.use_instead, [], inventory=_inventory(rule), config={**base, **rule.use_instead_config}
    )


@pytest.mark.parametrize("rule_id", ALL)
def test_use_instead_has_no_error_or_warning_from_any_rule(rule_id):
    rule, base = _rule(rule_id)
    found = findings_of(None, rule.use_instead, inventory=_inventory(rule), config={**base, **rule.use_instead_config})
    serious = [f for f in found if f.severity in ("error", "warning")]
    unexpected = [f.brief() for f in serious if f.rule not in rule.use_instead_allow]
    assert unexpected == [], f"{rule_id}: use-instead is not clean"
    stale = sorted(set(rule.use_instead_allow) - {f.rule for f in serious})
    assert stale == [], f"{rule_id}: use-instead-allow lists rules that report nothing: {stale}"


def test_every_rule_has_its_docs_and_every_doc_its_rule():
    """Derived, not counted: a rule added or removed with its docs needs no number changed here."""
    docs = {path.stem for path in data_dir("rules").glob("*.yaml")}
    assert docs == set(all_rules())
    assert LIBRARY and all(policy_rules((f"gpulint:{name}",)) for name in LIBRARY)


@pytest.mark.parametrize("name", sorted({r.example_inventory for r in all_rules().values() if r.example_inventory}))
def test_shipped_inventories_are_found_through_the_data_dir_and_load(name):
    rule = next(r for r in all_rules().values() if r.example_inventory == name)
    path = rule.inventory_path()
    assert path is not None and path.is_relative_to(data_dir("rules") / "inventories")
    inventory = load_inventory([str(path)])
    assert inventory.has_nodes and any(
        node.labels.get("nvidia.com/gpu.product", "").startswith("NVIDIA-")
        or node.labels.get("cloud.google.com/gke-accelerator", "").startswith("nvidia-")  # GKE runs no GFD
        for node in inventory.nodes
    )


@pytest.mark.slow
def test_the_rule_command_names_the_inventory_and_configuration_the_example_assumes():
    printed = subprocess.run(
        [sys.executable, "-m", "gpulint", "rule", "claim-unsatisfiable"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert printed.returncode == 0, printed.stderr
    assert (
        "Assumes the cluster inventory `h100-dra` (`--inventory`; shipped with gpulint as "
        "rules/inventories/h100-dra/), for this example and the one below."
    ) in printed.stdout
    gates = subprocess.run(
        [sys.executable, "-m", "gpulint", "rule", "feature-gate-required"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert gates.returncode == 0, gates.stderr
    use_instead = gates.stdout.split("## Use instead", 1)[1]
    assert "Linted with the configuration `{feature-gates: {GenericWorkload: true}}`" in use_instead


@pytest.mark.parametrize("key", ["kubernetes", "false-positives-avoided"])
def test_a_list_of_lines_written_as_one_block_string_is_refused(key):
    """A block string (``key: |``) read as a list gives one bullet per character in SARIF and rule help."""
    import yaml

    from gpulint.lint.registry import _rule_from
    from gpulint.lint.rule_index import RULE_INDEX

    path = data_dir("rules") / "gpu-unschedulable.yaml"
    raw = yaml.safe_load(path.read_text())
    raw[key] = "one line\nanother line\n"
    (spec,) = [spec for _, spec, _ in RULE_INDEX if spec.id == "gpu-unschedulable"]
    with pytest.raises(ValueError, match=f"'{key}' must be a list of lines"):
        _rule_from(raw, str(path), spec, None)


def test_every_shipped_rule_lists_its_look_alikes_line_by_line():
    for rule in all_rules().values():
        assert all(len(line) > 1 for line in rule.false_positives_avoided), rule.id
        assert all(len(line) > 1 for line in rule.kubernetes), rule.id
