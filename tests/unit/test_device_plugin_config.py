"""device-plugin-config: the NVIDIA device plugin's configuration in ConfigMaps, and the GPU operator's references to it.

The clean cases are shaped like NVIDIA's own examples (the k8s-device-plugin README and the GPU
operator's time-slicing guide); the failing ones like the slips users report.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from conftest import REPO, by_rule, lint_text, run_cli, said

from gpulint.kube.device_plugin_config import ERROR, WARNING, looks_like_config, sharing_settings, validate
from gpulint.lint.findings import Severity
from gpulint.lint.world.inventory import load_inventory

RULE = "device-plugin-config"


def lint(text: str, inventory=None):
    return by_rule(lint_text(text, "cm.yaml", inventory=inventory), RULE)


def config_map(configs: dict[str, str], name: str = "time-slicing-config") -> str:
    out = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: gpu-operator}}\ndata:\n"
    for key, body in configs.items():
        out += f"  {key}: |-\n" + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"
    return out


def problems(text: str) -> list[tuple[tuple, str, str]]:
    import yaml

    return [(p.path, p.level, p.message) for p in validate(yaml.safe_load(textwrap.dedent(text)))]


TIME_SLICING = """
version: v1
flags:
  migStrategy: none
sharing:
  timeSlicing:
    renameByDefault: false
    failRequestsGreaterThanOne: false
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""
MPS = """
version: v1
sharing:
  mps:
    resources:
    - name: nvidia.com/gpu
      replicas: 10
"""
FLAGS = """
version: v1
flags:
  migStrategy: "none"
  failOnInitError: true
  nvidiaDriverRoot: "/"
  plugin:
    passDeviceSpecs: false
    deviceListStrategy: [envvar, cdi-cri]
    deviceIDStrategy: uuid
  gfd:
    oneshot: false
    noTimestamp: false
    outputFile: /etc/kubernetes/node-feature-discovery/features.d/gfd
    sleepInterval: 60s
"""


# ----------------------------------------------------------------- the schema, clean


@pytest.mark.parametrize("text", [TIME_SLICING, MPS, FLAGS, "version: v1\nimex: {channelIDs: [0], required: true}"])
def test_nvidias_examples_are_clean(text):
    assert problems(text) == []


def test_keys_differing_in_case_match_where_go_json_decodes_the_struct():
    assert problems("version: v1\nFlags: {MigStrategy: single, Plugin: {DeviceIDStrategy: index}}") == []


def test_mig_resources_and_all_devices_are_fine():
    text = """
    version: v1
    flags: {migStrategy: mixed}
    sharing:
      timeSlicing:
        renameByDefault: true
        resources:
        - {name: nvidia.com/gpu, replicas: 2}
        - {name: nvidia.com/mig-1g.5gb, replicas: 2, devices: all}
    """
    assert problems(text) == []


# ----------------------------------------------------------------- the schema, failing


def test_misplaced_keys_are_ignored_by_the_plugin_and_said_where_they_belong():
    found = problems(
        """
        version: v1
        migStrategy: mixed
        timeSlicing:
          resources: [{name: nvidia.com/gpu, replicas: 4}]
        """
    )
    assert [(path, level) for path, level, _ in found] == [(("migStrategy",), WARNING), (("timeSlicing",), WARNING)]
    assert "it belongs at flags.migStrategy" in found[0][2]
    assert "it belongs at sharing.timeSlicing" in found[1][2]


def test_the_sharing_sections_read_exact_keys():
    ((path, level, message),) = problems(
        """
        version: v1
        sharing:
          timeSlicing:
            failrequestsgreaterthanone: true
            resources: [{name: nvidia.com/gpu, replicas: 4}]
        """
    )
    assert level == WARNING and path == ("sharing", "timeSlicing", "failrequestsgreaterthanone")
    assert "read by exact key: write failRequestsGreaterThanOne" in message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version: v2\nflags: {}", "unknown version: v2"),
        ("version: v1\nflags: {migStrategy: Single}", "unknown MIG strategy: Single"),
        ("version: v1\nflags: {plugin: {deviceListStrategy: [envvar, bogus]}}", "invalid strategy: bogus"),
        ("version: v1\nflags: {plugin: {deviceIDStrategy: serial}}", "invalid --device-id-strategy option: serial"),
        ("version: v1\nflags: {failOnInitError: 'true'}", "failOnInitError must be true or false, not a string"),
        ("version: v1\nflags: {gfd: {sleepInterval: 1 minute}}", 'time: invalid duration "1 minute"'),
        ("version: v1\nsharing: {timeSlicing: {renameByDefault: true}}", "no resources specified"),
        ("version: v1\nsharing: {timeSlicing: {resources: []}}", "no resources specified"),
        ("version: v1\nsharing: {timeSlicing: {resources: [{replicas: 4}]}}", "no resource name specified"),
        ("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu}]}}", "no replicas specified"),
        ("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 1}]}}", ">= 2"),
        ("version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: '4'}]}}", "whole number"),
        (
            "version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2, devices: some}]}}",
            "the only valid string input is 'all'",
        ),
        ("version: v1\nimex: {channelIDs: [1, 2]}", "channelIDs must be [] or [0]"),
        (
            "version: v1\nflags: {migStrategy: mixed}\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}",
            "using --mig-strategy=mixed is not supported with MPS",
        ),
    ],
)
def test_what_the_plugin_refuses_is_an_error(text, message):
    found = problems(text)
    assert any(level == ERROR and message in text_ for _, level, text_ in found), found


def test_unsupported_fields_the_plugin_drops_are_warnings():
    found = problems(
        """
        version: v1
        resources:
          gpus: [{pattern: "*A100*", name: a100}]
        sharing:
          timeSlicing:
            resources:
            - {name: nvidia.com/gpu, rename: gpu-shared, devices: [0, 1], replicas: 2}
        """
    )
    assert [level for _, level, _ in found] == [WARNING, WARNING, WARNING]
    assert "'resources' is not yet supported" in found[-1][2] or "'resources' is not yet supported" in found[0][2]


def test_sharing_settings_follow_the_plugin_defaults():
    import yaml

    assert sharing_settings(yaml.safe_load(MPS)) == ("mps", True)  # MPS defaults failRequestsGreaterThanOne to true
    assert sharing_settings(yaml.safe_load(TIME_SLICING)) == ("time-slicing", False)
    assert sharing_settings(yaml.safe_load(FLAGS)) == ("none", None)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"version": "v1", "sharing": {}}, True),
        ({"version": "v1", "name": "my-app", "replicas": 3}, False),  # an app's own config file
        ({"flags": {"migStrategy": "none"}}, False),  # no version: not claimed without a reference
        ("version: v1", False),
    ],
)
def test_what_counts_as_a_plugin_configuration(data, expected):
    assert looks_like_config(data) is expected


# ----------------------------------------------------------------- ConfigMaps in files


def test_findings_point_inside_the_embedded_yaml():
    text = config_map(
        {
            "any": """
            version: v1
            sharing:
              timeSlicing:
                replicas: 4
                resources:
                - name: nvidia.com/gpu
            """
        }
    )
    found = lint(text)
    assert [(f.line, f.column, f.severity) for f in found] == [(9, 9, Severity.WARNING), (11, 11, Severity.ERROR)]
    assert "it belongs at sharing.timeSlicing.resources[].replicas" in said(found[0])


def test_operator_time_slicing_configmap_with_per_node_keys_is_clean():
    text = config_map(
        {
            "a100-40gb": """
            version: v1
            flags:
              migStrategy: mixed
            sharing:
              timeSlicing:
                resources:
                - name: nvidia.com/gpu
                  replicas: 8
                - name: nvidia.com/mig-1g.5gb
                  replicas: 2
            """,
            "tesla-t4": TIME_SLICING,
        }
    )
    assert lint(text) == []


def test_other_configmaps_are_left_alone():
    text = config_map({"app.yaml": "version: v1\nname: my-app\nreplicas: 3\n", "notes": "flags: [a, b]\n"}, "app")
    assert lint(text) == []


# ----------------------------------------------------------------- the GPU operator's ClusterPolicy

CLUSTER_POLICY = """
---
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  devicePlugin:
    enabled: true
    config:
      name: time-slicing-config
      default: DEFAULT
"""


def test_default_must_be_a_key_of_the_configmap():
    text = config_map({"any": TIME_SLICING}) + CLUSTER_POLICY.replace("DEFAULT", "all")
    (finding,) = lint(text)
    assert finding.severity == Severity.ERROR
    assert said(finding) == (
        "devicePlugin.config.default is 'all', which is not a key of ConfigMap time-slicing-config: the device plugin "
        "has no configuration to start with\nkeys: any"
    )
    assert lint(config_map({"any": TIME_SLICING}) + CLUSTER_POLICY.replace("DEFAULT", "any")) == []


def test_every_value_of_the_referenced_configmap_is_read_as_a_configuration():
    text = config_map(
        {"any": "sharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: 4}]\nmigStrategy: none"}
    )
    text += CLUSTER_POLICY.replace("DEFAULT", "any")
    (finding,) = lint(text)  # no version, but the operator points at it
    assert "it belongs at flags.migStrategy" in finding.message


def test_a_missing_configmap_is_reported_only_when_the_inventory_lists_configmaps(tmp_path):
    policy = CLUSTER_POLICY.replace("DEFAULT", "any").lstrip("-\n")
    assert lint(policy) == []
    inventory = tmp_path / "inventory.json"
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "1"}}}
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": "gpu-operator"}}
    inventory.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node, other]}))
    (finding,) = lint(policy, load_inventory([str(inventory)]))
    assert "names ConfigMap time-slicing-config, which neither the linted files nor the inventory holds" in (
        finding.message
    )


def test_nodes_labelled_with_a_config_the_configmap_lacks(tmp_path):
    def node(name, config):
        labels = {"nvidia.com/device-plugin.config": config} if config else {}
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}

    inventory = tmp_path / "nodes.json"
    items = [node("t4-0", "tesla-t4"), node("t4-1", "tesla-t4"), node("a100-0", "a100-80gb"), node("cpu", "")]
    inventory.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    text = config_map({"any": TIME_SLICING, "tesla-t4": TIME_SLICING}) + CLUSTER_POLICY.replace("DEFAULT", "any")
    (finding,) = lint(text, load_inventory([str(inventory)]))
    assert finding.severity == Severity.WARNING
    assert finding.message.startswith("1 node carries the label nvidia.com/device-plugin.config=a100-80gb")
    assert "nodes: a100-0; keys: any, tesla-t4" in finding.notes


def test_cli_exit_codes(write):
    bad = write(
        "bad.yaml",
        config_map({"any": "version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 1}]}}"}),
    )
    good = write("good.yaml", config_map({"any": TIME_SLICING}))
    assert run_cli("check", str(bad), "--select", RULE).exit_code == 1
    assert run_cli("check", str(good), "--select", RULE).exit_code == 0


# ----------------------------------------------------------------- renameByDefault and the pods' resource names

INFERENCE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: inference, namespace: serving}
spec:
  replicas: 4
  selector: {matchLabels: {app: inference}}
  template:
    metadata: {labels: {app: inference}}
    spec:
      containers:
      - name: server
        image: nvcr.io/nvidia/tritonserver:24.05-py3
        resources:
          limits:
            RESOURCE: 1
"""


def served(resource: str) -> str:
    return INFERENCE.replace("RESOURCE", resource)


def test_a_pod_asking_for_the_name_time_slicing_renamed():
    renamed = config_map({"any": TIME_SLICING.replace("renameByDefault: false", "renameByDefault: true")})
    (finding,) = lint(renamed + "---\n" + served("nvidia.com/gpu"))
    assert finding.severity is Severity.WARNING
    assert (
        "asks for nvidia.com/gpu, but every linted device plugin configuration shares it as nvidia.com/gpu.shared"
        in (finding.message)
    )
    assert finding.line == renamed.count("\n") + 1 + 15  # the resource's key in the Deployment
    assert lint(renamed + "---\n" + served("nvidia.com/gpu.shared")) == []  # the fixed twin


def test_a_pod_asking_for_a_shared_name_nothing_renames():
    plain = config_map({"any": TIME_SLICING})  # renameByDefault: false
    (finding,) = lint(plain + "---\n" + served("nvidia.com/gpu.shared"))
    assert "no linted device plugin configuration renames nvidia.com/gpu" in finding.message
    assert lint(plain + "---\n" + served("nvidia.com/gpu")) == []
    assert lint(config_map({"mps": MPS}) + "---\n" + served("nvidia.com/gpu")) == []


def test_rename_traps():
    renamed = TIME_SLICING.replace("renameByDefault: false", "renameByDefault: true")
    # one configuration of several renames: nodes labelled for the other still advertise nvidia.com/gpu
    several = config_map({"a100": FLAGS, "t4": renamed})
    assert lint(several + "---\n" + served("nvidia.com/gpu")) == []
    assert lint(several + "---\n" + served("nvidia.com/gpu.shared")) == []
    # no plugin configuration among the files: nothing is known
    assert lint(served("nvidia.com/gpu.shared")) == []
    # with nodes, what they advertise decides (gpu-resource-unknown)
    nodes = load_inventory([str(REPO / "examples" / "inventory")])
    assert lint(config_map({"any": renamed}) + "---\n" + served("nvidia.com/gpu"), nodes) == []
    # a resource the configuration does not share keeps its name
    assert lint(config_map({"any": renamed}) + "---\n" + served("nvidia.com/mig-1g.5gb")) == []


MIG_POLICY = """\
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  operator: {defaultRuntime: containerd}
  mig:
    strategy: STRATEGY
  devicePlugin:
    enabled: true
"""


def test_a_mig_profile_resource_under_the_single_strategy():
    single = MIG_POLICY.replace("STRATEGY", "single")
    (finding,) = lint(single + "---\n" + served("nvidia.com/mig-1g.10gb"))
    assert "asks for nvidia.com/mig-1g.10gb, but the linted ClusterPolicy sets mig.strategy: single" in finding.message
    assert finding.severity is Severity.WARNING
    assert lint(single + "---\n" + served("nvidia.com/gpu")) == []  # the fixed twin under single
    assert lint(MIG_POLICY.replace("STRATEGY", "mixed") + "---\n" + served("nvidia.com/mig-1g.10gb")) == []
    # a plugin configuration that sets its own MIG strategy: the nodes using it may differ
    mixed = config_map({"a100": "version: v1\nflags:\n  migStrategy: mixed\n"})
    assert lint(single + "---\n" + mixed + "---\n" + served("nvidia.com/mig-1g.10gb")) == []
