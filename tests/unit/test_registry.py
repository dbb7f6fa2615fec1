"""Every rule: one docs file, one check (or the loader), docs with every part, printed whole;
the doc keys that make the docs runnable are parsed strictly (tests/rules/test_rule_docs.py runs them)."""

import copy
import os

import pytest
import yaml
from conftest import REPO, run_cli

from gpulint.lint.data import data_dir
from gpulint.lint.registry import (
    _policy_rules,
    _rule_from,
    all_rules,
    policy_rules,
    resolved,
    rule_modules,
    shipped_inventory,
)
from gpulint.lint.rule_spec import RuleSpec

RULES = sorted(all_rules())


def raw_doc(rule_id: str) -> dict:
    return yaml.safe_load((data_dir("rules") / f"{rule_id}.yaml").read_text(encoding="utf-8"))


def test_every_rule_module_has_docs_and_every_doc_a_rule_module():
    modules = rule_modules()
    assert sorted(modules) == RULES
    # reported by the engine: the loader's and the renderers' problems, and the suppressions'
    assert sorted(rule_id for rule_id, module in modules.items() if module.check is None) == [
        "not-rendered",
        "suppression-invalid",
        "suppression-unused",
        "yaml-invalid",
    ]
    assert sorted(p.stem for p in (REPO / "rules").glob("*.yaml")) == RULES
    assert sorted(p.stem for p in data_dir("rules").glob("*.yaml")) == RULES  # what an installed gpulint reads


@pytest.mark.parametrize("rule_id", RULES)
def test_rule_docs_are_complete(rule_id):
    rule, raw = all_rules()[rule_id], raw_doc(rule_id)
    spec = rule_modules()[rule_id].SPEC
    assert isinstance(spec, RuleSpec) and spec.id == rule_id
    assert (None if rule.check is None else resolved(rule.check)) is rule_modules()[rule_id].check
    assert (rule.severity, rule.kinds, rule.needs) == (spec.severity, spec.kinds, spec.needs)
    assert "severity" not in raw  # one place: the spec beside the check
    assert "\n" not in rule.summary and rule.summary.endswith(".") and len(rule.summary.split()) >= 6
    assert len(rule.what.split()) >= 15 and len(rule.why.split()) >= 15
    assert rule.kubernetes and all(len(line.split()) >= 3 for line in rule.kubernetes)
    assert rule.example.strip() and rule.use_instead.strip() and rule.example != rule.use_instead
    lines = rule.example.splitlines()
    for line, column, fragment in rule.example_findings:  # each documented position is inside the example
        assert 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]) + 1, (line, column, fragment)


@pytest.mark.parametrize("rule_id", RULES)
def test_the_rule_command_prints_the_whole_doc(rule_id):
    rule = all_rules()[rule_id]
    printed = run_cli("rule", rule_id)
    assert printed.exit_code == 0 and printed.stdout == rule.markdown()
    assert printed.stdout.startswith(f"# {rule_id} ({rule.severity})\n\n{rule.summary}\n")
    example = printed.stdout.split("## Example\n\n```yaml\n", 1)[1]
    assert example.startswith(rule.example.rstrip() + "\n```\n")
    use_instead = printed.stdout.split("## Use instead\n\n```yaml\n", 1)[1]
    assert use_instead.startswith(rule.use_instead.rstrip() + "\n```")
    assert all(f"- {line}\n" in printed.stdout for line in rule.kubernetes)
    where = ", ".join(f"{line}:{column}" for line, column, _ in rule.example_findings)
    assert f"gpulint reports it at {where} (line:column)." in example
    assert ("Assumes the cluster inventory" in example) == bool(rule.example_inventory)


def test_the_doc_names_the_inventory_and_configuration_of_its_examples():
    claims = all_rules()["claim-unsatisfiable"]
    assert claims.example_inventory == "h100-dra"
    assert claims.inventory_path() == data_dir("rules") / "inventories" / "h100-dra"
    assert (
        "Assumes the cluster inventory `h100-dra` (`--inventory`; shipped with gpulint as "
        "rules/inventories/h100-dra/), for this example and the one below." in claims.markdown()
    )
    racks = all_rules()["gpu-unschedulable"]
    assert racks.inventory_path() == data_dir("rules") / "inventories" / "h100-racks.yaml"
    assert "as rules/inventories/h100-racks.yaml)" in racks.markdown()
    gates = all_rules()["feature-gate-required"]
    assert gates.example_config == {} and gates.use_instead_config == {"feature-gates": {"GenericWorkload": True}}
    printed = gates.markdown()
    assert printed.index("## Use instead") < printed.index(
        "Linted with the configuration `{feature-gates: {GenericWorkload: true}}` (.gpulint.yaml keys)."
    )


# ------------------------------------------------------------------ the doc keys, parsed strictly


def parse(changes: dict, drop: tuple[str, ...] = ()) -> object:
    raw = copy.deepcopy(raw_doc("gpu-non-integer"))
    raw.update(changes)
    for key in drop:
        raw.pop(key)
    module = rule_modules()["gpu-non-integer"]
    return _rule_from(raw, "rules/gpu-non-integer.yaml", module.SPEC, module.check)


def test_a_valid_doc_parses_with_sorted_findings_and_its_run_settings():
    rule = parse(
        {
            "example-findings": [[14, 29, "b"], [3, 1, "a"]],
            "example-inventory": "h100-racks",
            "example-config": {"feature-gates": {"GenericWorkload": False}},
            "use-instead-allow": {"gpu-resource-unknown": "the MIG profile is not in this inventory"},
        }
    )
    assert rule.example_findings == ((3, 1, "a"), (14, 29, "b"))
    assert rule.example_inventory == "h100-racks"
    assert rule.example_config == {"feature-gates": {"GenericWorkload": False}} and rule.use_instead_config == {}
    assert rule.use_instead_allow == {"gpu-resource-unknown": "the MIG profile is not in this inventory"}


@pytest.mark.parametrize(
    "changes, drop, message",
    [
        (
            {},
            ("example-findings",),
            "a rule file needs the keys id, summary, what, why, kubernetes, example, use-instead, example-findings",
        ),
        ({"example-finding": [[1, 1, "x"]]}, (), "unknown key(s) example-finding (optional keys: fix-safety, "),
        ({"example-findings": [[0, 1, "x"]]}, (), "'example-findings' entry [0, 1, 'x'] is not [line, column"),
        ({"example-findings": [[1, 1, ""]]}, (), "'example-findings' entry [1, 1, ''] is not [line, column"),
        ({"example-findings": [[1, 1]]}, (), "'example-findings' entry [1, 1] is not [line, column"),
        ({"example-findings": [[1, True, "x"]]}, (), "'example-findings' entry [1, True, 'x'] is not [line, column"),
        ({"example-findings": "14:29"}, (), "'example-findings' must be a list of [line, column"),
        (
            {"example-inventory": "../../etc/passwd"},
            (),
            "example-inventory '../../etc/passwd' must be the name of a file",
        ),
        ({"example-inventory": "h100-rack"}, (), "example-inventory 'h100-rack': neither "),
        ({"example-config": ["feature-gates"]}, (), "'example-config' must be a mapping"),
        ({"use-instead-allow": {"gang-missing": ""}}, (), "every rule in 'use-instead-allow' needs a reason"),
    ],
)
def test_a_malformed_doc_is_refused_with_the_key_at_fault(changes, drop, message):
    with pytest.raises(ValueError) as raised:
        parse(changes, drop)
    assert str(raised.value).startswith("rules/gpu-non-integer.yaml: ") and message in str(raised.value)


def test_shipped_inventories_resolve_to_a_file_or_a_folder_of_the_data_dir():
    base = data_dir("rules") / "inventories"
    assert shipped_inventory("h100-racks") == base / "h100-racks.yaml"
    assert shipped_inventory("h100-dra") == base / "h100-dra"
    assert sorted(p.name for p in (base / "h100-dra").iterdir()) == [
        "deviceclasses.yaml",
        "nodes.yaml",
        "resourceclaimtemplates.yaml",
        "resourceslices.yaml",
    ]


POLICY = """\
apiVersion: gpulint.io/v1alpha1
kind: Policy
metadata: {name: gpu-pods-need-memory}
spec:
  severity: warning
  validations:
  - expression: "!has(object.spec.containers) || object.spec.containers.all(c, has(c.resources.limits.memory))"
    message: a GPU container needs a memory limit
  docs:
    summary: GPU pods set a memory limit.
    example: "apiVersion: v1\\nkind: Pod\\n"
    exampleFindings: %s
    useInsteadAllow: {gang-missing: "a reason"}
"""


def test_policy_docs_carry_the_same_run_keys_and_a_malformed_one_is_left_out(tmp_path):
    good, bad = tmp_path / "good.yaml", tmp_path / "bad" / "bad.yaml"
    bad.parent.mkdir()
    good.write_text(POLICY % '[[2, 1, "memory"], [1, 1, "limit"]]')
    bad.write_text(POLICY % '"line 2"')
    rule = policy_rules((str(good),))["gpu-pods-need-memory"]
    assert rule.example_findings == ((1, 1, "limit"), (2, 1, "memory"))
    assert rule.use_instead_allow == {"gang-missing": "a reason"}
    assert "gpulint reports it at 1:1, 2:1 (line:column)." in rule.markdown()
    left_out = policy_rules((str(bad),))["gpu-pods-need-memory"]
    assert left_out.example_findings == () and left_out.use_instead_allow == {"gang-missing": "a reason"}
    printed = run_cli("rule", "gpu-pods-need-memory", "--policy", str(bad))
    assert printed.exit_code == 0 and printed.stdout == left_out.markdown()
    assert "gpulint reports it at" not in printed.stdout


def test_policies_changed_again_and_again_are_remembered_a_bounded_number_of_times(tmp_path):
    """A webhook runs for months and builds its rules again when the policy files change (a ConfigMap update):
    the policies and their rules are remembered per signature of the files, a bounded number of them, not one
    set (compiled CEL and all) per change for the life of the process."""
    from gpulint.lint.policies.loading import _cached_policies

    path, changes = tmp_path / "policy.yaml", 12
    path.write_text(POLICY % "[]")
    for change in range(changes):
        os.utime(path, ns=(change * 10**9, change * 10**9))
        assert "gpu-pods-need-memory" in policy_rules((str(path),))
    assert _policy_rules.cache_info().currsize < changes and _cached_policies.cache_info().currsize < changes


def test_library_policies_document_a_full_example():
    library = sorted(p.stem for p in (data_dir("rules") / "policies").glob("*.yaml"))
    rules = policy_rules(tuple(f"gpulint:{name}" for name in library))
    for name in library:
        example = yaml.safe_load(rules[name].example)
        assert set(example) >= {"apiVersion", "kind", "metadata", "spec"}, name
        assert rules[name].example_findings, name
    assert "limits: {nvidia.com/gpu: 1, memory: 64Gi}" in rules["require-gpu-memory-limit"].use_instead
