"""JupyterHub's user pods from zero-to-jupyterhub's Helm values (gpulint/kube/jupyterhub.py): each profile of
``singleuser.profileList`` (and each choice of its ``profile_options``) is the pod KubeSpawner makes, judged by
the pod rules and placed at the profile's lines."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml
from conftest import check_json
from rule_harness import findings_of

from gpulint.kube.jupyterhub import values_of
from gpulint.kube.workloads import pod_spec_sites
from gpulint.lint.inputs.loader import load_text

# Shaped like the z2jh config.yaml of a university or a lab hub (the z2jh docs' "Using multiple profiles",
# 2i2c's and NERSC's hubs): a CPU default and GPU profiles that override the spawner.
CONFIG = """\
    hub:
      config:
        JupyterHub:
          authenticator_class: github
    singleuser:
      image:
        name: quay.io/jupyter/scipy-notebook
        tag: "2024-05-27"
      memory:
        limit: 8G
        guarantee: 4G
      nodeSelector:
        hub.jupyter.org/node-purpose: user
      profileList:
        - display_name: "CPU only"
          default: true
        - display_name: "1 GPU"
          kubespawner_override:
            image: quay.io/jupyter/pytorch-notebook:cuda12-2024-05-27
            extra_resource_guarantees:
              nvidia.com/gpu: "1"
            extra_resource_limits:
              nvidia.com/gpu: "1"
            tolerations:
              - key: nvidia.com/gpu
                operator: Exists
                effect: NoSchedule
        - display_name: "4 GPUs for training"
          kubespawner_override:
            image: quay.io/jupyter/pytorch-notebook:cuda12-2024-05-27
            extra_resource_limits:
              nvidia.com/gpu: "4"
            tolerations:
              - key: nvidia.com/gpu
                operator: Exists
                effect: NoSchedule
"""
# z2jh docs, "Customizing User Resources": a memory-backed emptyDir at /dev/shm for every user pod
SHM = """\
      storage:
        extraVolumes:
          - name: shm-volume
            emptyDir:
              medium: Memory
        extraVolumeMounts:
          - name: shm-volume
            mountPath: /dev/shm
"""
WITH_SHM = CONFIG.replace("      profileList:\n", SHM + "      profileList:\n")


def _line(text: str, needle: str, *after: str) -> int:
    """The line of the first ``needle`` past each of ``after`` in turn."""
    lines = textwrap.dedent(text).splitlines()
    start = 0
    for word in (*after, needle):
        start = next(i for i, line in enumerate(lines[start:], start + 1) if word in line)
    return start


def _sites(text: str):
    data = load_text("config.yaml", textwrap.dedent(text)).documents[0].data
    values = values_of(data)
    return [] if values is None else list(pod_spec_sites(values))


def _inventory(tmp_path: Path, gpus: int = 4) -> str:
    """Two GPU nodes as `kubectl get nodes -o yaml` shows an EKS GPU group: tainted for GPU pods only."""
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"gpu-{i}",
                "labels": {
                    "node.kubernetes.io/instance-type": "g5.12xlarge",
                    "hub.jupyter.org/node-purpose": "user",
                    "nvidia.com/gpu.product": "NVIDIA-A10G",
                },
            },
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"cpu": "47", "memory": "180Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}},
        }
        for i in range(2)
    ]
    path = tmp_path / "nodes.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": nodes}), encoding="utf-8")
    return str(path)


def test_each_profile_is_a_pod_kubespawner_makes():
    sites = _sites(CONFIG)
    assert [s.role for s in sites] == [
        "profile CPU only",
        "profile 1 GPU",
        "profile 4 GPUs for training",
    ]
    cpu, one, four = (s.spec for s in sites)
    assert cpu["containers"][0]["image"] == "quay.io/jupyter/scipy-notebook:2024-05-27"
    # z2jh's own tolerations of its user nodes, unless a profile replaces the list (a list is set, not merged)
    assert [t["key"] for t in cpu["tolerations"]] == ["hub.jupyter.org/dedicated", "hub.jupyter.org_dedicated"]
    assert [t["key"] for t in four["tolerations"]] == ["nvidia.com/gpu"]
    assert one["containers"][0]["resources"] == {
        "requests": {"memory": "4G", "nvidia.com/gpu": "1"},
        "limits": {"memory": "8G", "nvidia.com/gpu": "1"},
    }
    assert four["nodeSelector"] == {"hub.jupyter.org/node-purpose": "user"}


def test_a_training_profile_without_dev_shm_is_found_at_the_profile():
    found = findings_of("dev-shm-missing", CONFIG)
    # at the profile: the container is KubeSpawner's, built from the profile's fields
    assert [(f.line, f.severity) for f in found] == [(_line(CONFIG, "4 GPUs"), "warning")]
    assert "container 'notebook' (4 nvidia.com/gpu)" in found[0].message


def test_extra_volumes_at_dev_shm_clear_it_for_every_profile():
    assert findings_of(None, WITH_SHM) == []


def test_a_gpu_guarantee_without_a_limit_is_refused_at_the_guarantee():
    """KubeSpawner puts extra_resource_guarantees in requests: an extended resource requested without its
    limit makes the API server refuse the pod (the spawn fails with a 422)."""
    text = CONFIG.replace('            extra_resource_limits:\n              nvidia.com/gpu: "1"\n', "", 1)
    found = findings_of("gpu-request-without-limit", text)
    assert [(f.severity, f.line) for f in found] == [("error", _line(text, 'nvidia.com/gpu: "1"', "1 GPU"))], found
    assert "spec.containers[0].resources.limits: Required value" in found[0].message


def test_a_refused_toleration_in_an_override_is_an_error_at_its_line():
    text = CONFIG.replace(
        "                operator: Exists\n", '                operator: Exists\n                value: "present"\n', 1
    )
    found = findings_of("api-rejected", text)
    assert [(f.severity, f.line) for f in found] == [("error", _line(text, "operator: Exists", "1 GPU"))]
    assert "singleuser.profileList[1].kubespawner_override.tolerations[0].operator" in found[0].message


def test_a_gpu_profile_without_the_gpu_nodes_toleration_does_not_fit(tmp_path: Path):
    """The GPU nodes are tainted; the profile's tolerations replace z2jh's list, so it must tolerate the taint."""
    inventory = _inventory(tmp_path)
    untolerated = CONFIG.replace(
        "            tolerations:\n              - key: nvidia.com/gpu\n                operator: Exists\n"
        "                effect: NoSchedule\n",
        "",
    )
    found = findings_of("gpu-unschedulable", untolerated, inventory=inventory)
    # at each profile's GPU limit
    assert sorted(f.line for f in found) == [
        _line(untolerated, "nvidia.com/gpu", "1 GPU", "extra_resource_limits"),
        _line(untolerated, "nvidia.com/gpu", "4 GPUs", "extra_resource_limits"),
    ], found
    assert findings_of("gpu-unschedulable", CONFIG, inventory=inventory) == []


def test_extra_tolerations_reach_every_profile_that_keeps_the_list(tmp_path: Path):
    """singleuser.extraTolerations joins z2jh's own tolerations for each profile that does not set its own."""
    inventory = _inventory(tmp_path)
    text = CONFIG.replace(
        "            tolerations:\n              - key: nvidia.com/gpu\n                operator: Exists\n"
        "                effect: NoSchedule\n",
        "",
    ).replace(
        "      profileList:\n",
        "      extraTolerations:\n        - key: nvidia.com/gpu\n          operator: Exists\n"
        "          effect: NoSchedule\n      profileList:\n",
    )
    assert findings_of("gpu-unschedulable", text, inventory=inventory) == []


def test_a_node_selector_no_node_matches_is_placed_at_the_override(tmp_path: Path):
    inventory = _inventory(tmp_path)
    text = CONFIG.replace(
        '            extra_resource_limits:\n              nvidia.com/gpu: "4"\n',
        '            extra_resource_limits:\n              nvidia.com/gpu: "4"\n            node_selector:\n'
        "              cloud.google.com/gke-accelerator: nvidia-tesla-t4\n",
    )
    found = findings_of(None, text, inventory=inventory)
    selector = [f for f in found if f.rule == "over-tight-affinity"]
    assert [f.line for f in selector] == [_line(text, "cloud.google.com/gke-accelerator")], found
    # merged into singleuser.nodeSelector (a dict trait is merged, not replaced): both keys are required
    assert _sites(text)[2].spec["nodeSelector"] == {
        "hub.jupyter.org/node-purpose": "user",
        "cloud.google.com/gke-accelerator": "nvidia-tesla-t4",
    }


def test_each_choice_of_a_profile_option_is_a_pod():
    """profile_options: the default choice makes the profile's pod; each other choice a pod of its own,
    placed at the choice."""
    text = CONFIG + textwrap.indent(
        textwrap.dedent(
            """\
            - display_name: "GPU server"
              kubespawner_override:
                image: quay.io/jupyter/pytorch-notebook:cuda12-2024-05-27
                tolerations:
                  - key: nvidia.com/gpu
                    operator: Exists
                    effect: NoSchedule
              profile_options:
                gpus:
                  display_name: GPUs
                  choices:
                    one:
                      display_name: "1 GPU"
                      default: true
                      kubespawner_override:
                        extra_resource_limits:
                          nvidia.com/gpu: "1"
                    eight:
                      display_name: "8 GPUs"
                      kubespawner_override:
                        extra_resource_limits:
                          nvidia.com/gpu: "8"
            """
        ),
        "        ",
    )
    roles = [s.role for s in _sites(text)]
    assert roles[3:] == ["profile GPU server", "profile GPU server, gpus 8 GPUs"]
    found = findings_of("dev-shm-missing", text)
    assert [f.line for f in found] == [_line(text, "4 GPUs"), _line(text, "eight:")], found


def test_code_in_hub_extra_config_leaves_the_pod_not_all_known():
    """hub.extraConfig is Python the hub runs after the values (a modify_pod_hook may mount /dev/shm): the rules
    that need the whole pod stay silent; what is written is still judged."""
    text = CONFIG.replace(
        "    hub:\n",
        "    hub:\n      extraConfig:\n        shm: |\n          c.KubeSpawner.modify_pod_hook = add_shm\n",
    )
    assert all("hub.extraConfig" in s.completed_by for s in _sites(text))
    assert findings_of("dev-shm-missing", text) == []


@pytest.mark.parametrize(
    "document",
    [
        # a chart's values with a `singleuser` section of its own (no z2jh section beside it, no profiles)
        "singleuser:\n  enabled: true\nreplicaCount: 1\n",
        # an object that happens to hold such keys is read as the object it is
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nhub: {}\nsingleuser: {profileList: []}\n",
        # z2jh values with nothing on GPUs: the default pod, no finding
        "hub: {}\nsingleuser:\n  image: {name: jupyter/base-notebook, tag: latest}\n",
    ],
)
def test_traps_other_values_are_not_jupyterhub_pods(document: str):
    assert findings_of(None, document) == []
    data = load_text("values.yaml", document).documents[0].data
    assert (values_of(data) is None) == (not document.startswith("hub:"))


def test_an_object_of_kind_jupyterhub_keeps_every_rule():
    """Only values documents are read as pods alone: a manifest whose kind is JupyterHub is an object (a kind
    a CRD of the linted files serves, so its missing apiVersion is one kubectl refuses)."""
    crd = (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: jupyterhubs.example.com}\n"
        "spec:\n  group: example.com\n  scope: Namespaced\n"
        "  names: {kind: JupyterHub, plural: jupyterhubs, singular: jupyterhub}\n"
        "  versions:\n  - name: v1\n    served: true\n    storage: true\n"
        "    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n---\n"
    )
    found = findings_of("schema-invalid", crd + "kind: JupyterHub\nmetadata: {name: lab}\n")
    assert [f.message for f in found] == ["JupyterHub has no apiVersion: kubectl refuses it (apiVersion not set)"]


def test_a_chart_depending_on_z2jh_keeps_its_values_under_jupyterhub():
    text = "jupyterhub:\n" + textwrap.indent(textwrap.dedent(CONFIG), "  ")
    found = findings_of("dev-shm-missing", text)
    assert [f.line for f in found] == [_line(text, "4 GPUs")]


def test_a_values_file_by_its_name_is_read_too(tmp_path: Path):
    """`jhub-values.yaml` is a Helm values file by its name (read only for whole objects until now)."""
    (tmp_path / "jhub-values.yaml").write_text(textwrap.dedent(CONFIG), encoding="utf-8")
    found = [f for f in check_json(str(tmp_path)) if f["rule"] == "dev-shm-missing"]
    assert [(Path(f["path"]).name, f["line"]) for f in found] == [("jhub-values.yaml", _line(CONFIG, "4 GPUs"))]


def test_a_hostile_profile_list_is_bounded():
    """Pods are read for at most MAX_PROFILES profiles and choices; the document is shared, not copied per pod."""
    from gpulint.kube.jupyterhub import MAX_PROFILES

    profile = '  - display_name: "p"\n    kubespawner_override: {extra_resource_limits: {nvidia.com/gpu: "8"}}\n'
    big = "{" + ", ".join(f"k{i}: {i}" for i in range(20_000)) + "}"
    text = f"hub: {{}}\nsingleuser:\n  extraPodConfig: {{annotations: {big}}}\n  profileList:\n" + profile * 500
    assert len(_sites(text)) == MAX_PROFILES


def test_explain_shows_the_profiles_pod_and_the_same_cause(tmp_path: Path):
    """`gpulint explain` names the profile's pod and gives the check's finding at the same place."""
    from conftest import run_cli

    inventory = _inventory(tmp_path)
    untolerated = CONFIG.replace(
        "            tolerations:\n              - key: nvidia.com/gpu\n                operator: Exists\n"
        "                effect: NoSchedule\n",
        "",
    )
    (tmp_path / "config.yaml").write_text(textwrap.dedent(untolerated), encoding="utf-8")
    args = (str(tmp_path / "config.yaml"), "--inventory", inventory, "--format", "json")
    explained = run_cli("explain", *args).json()["explanations"]
    checked = [f for f in run_cli("check", *args).json()["findings"] if f["rule"] == "gpu-unschedulable"]
    heading = [e for e in explained if "'profile 1 GPU' pod template" in e["heading"]]
    assert len(heading) == 1 and len(checked) == 2
    lines = [line for step in heading[0]["steps"] if step["title"] == "gpulint check" for line in step["lines"]]
    placed = {f"{f['path']}:{f['line']}:{f['column']}:" for f in checked}
    assert [line.split(" ", 1)[0] for line in lines if "gpu-unschedulable" in line and "'profile 1 GPU'" in line] == [
        next(p for p in placed if f":{_line(untolerated, 'nvidia.com/gpu', '1 GPU', 'extra_resource_limits')}:" in p)
    ]


@pytest.mark.parametrize("alias", ["", "hub-chart"])
def test_a_chart_depending_on_z2jh_has_its_profiles_read_from_its_values(tmp_path: Path, helm: Path, alias: str):
    """An umbrella chart (as 2i2c's basehub): its values.yaml gives z2jh's values under the dependency's name or
    alias. The dependency is not vendored here (helm cannot render it offline): the values are read all the
    same, and the finding is in values.yaml at the profile."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    chart = tmp_path / "lab-hub"
    chart.mkdir()
    (chart / "Chart.yaml").write_text(
        "apiVersion: v2\nname: lab-hub\nversion: 0.1.0\ndependencies:\n  - name: jupyterhub\n    version: 4.4.0\n"
        f"    repository: https://hub.jupyter.org/helm-chart/\n{f'    alias: {alias}' if alias else ''}\n",
        encoding="utf-8",
    )
    section = alias or "jupyterhub"
    values = f"{section}:\n" + textwrap.indent(textwrap.dedent(CONFIG), "  ")
    (chart / "values.yaml").write_text(values, encoding="utf-8")
    found = [f for f in check_json(str(tmp_path), "--helm", str(helm)) if f["rule"] == "dev-shm-missing"]
    assert [(Path(f["path"]).name, f["line"]) for f in found] == [("values.yaml", _line(values, "4 GPUs"))]
    # values given for the chart are the release's: the chart's own are not what the hub reads
    other = tmp_path / "release.yaml"
    other.write_text("replicas: 1\n", encoding="utf-8")
    config = tmp_path / ".gpulint.yaml"
    config.write_text(f"render:\n  charts:\n    lab-hub:\n      values: [{other}]\n", encoding="utf-8")
    found = [
        f
        for f in check_json(str(chart), "--helm", str(helm), "--config", str(config))
        if f["rule"] == "dev-shm-missing"
    ]
    assert found == []


def test_a_profiles_environment_joins_extra_env_and_is_placed_at_its_variable():
    """singleuser.extraEnv is the environment trait; a profile's `environment` dict is merged into it."""
    text = CONFIG.replace(
        "      nodeSelector:\n", '      extraEnv:\n        JUPYTER_ENABLE_LAB: "yes"\n      nodeSelector:\n'
    )
    text = text.replace(
        '              nvidia.com/gpu: "4"\n',
        '              nvidia.com/gpu: "4"\n            environment:\n              CUDA_VISIBLE_DEVICES: "0"\n',
    )
    env = _sites(text)[2].spec["containers"][0]["env"]
    assert env == [{"name": "CUDA_VISIBLE_DEVICES", "value": "0"}, {"name": "JUPYTER_ENABLE_LAB", "value": "yes"}]
    found = findings_of("gpu-visibility-override", text)
    assert [f.line for f in found] == [_line(text, "CUDA_VISIBLE_DEVICES")], found
    assert "holds 4 GPUs but CUDA_VISIBLE_DEVICES=0" in found[0].message
