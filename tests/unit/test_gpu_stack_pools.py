"""The GPU stack reaches the nodes a pool adds exactly as the DaemonSet controller decides (issue #29 section 6):
every NoSchedule/NoExecute taint of the pool's nodes must be tolerated by key, value, operator and effect."""

from __future__ import annotations

from pathlib import Path

from conftest import DATA, by_rule, lint_text

from gpulint.lint.config import Config
from gpulint.lint.findings import Severity
from gpulint.lint.world.inventory import load_inventory

RULE = "daemonset-coverage"
SYSTEM_NODES = str(DATA / "elastic" / "system-nodes.yaml")

# Shaped like the AKS node auto-provisioning docs' GPU NodePool: AKS GPU pools are tainted sku=gpu:NoSchedule.
AKS_GPU_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: gpu}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [Standard_NC24ads_A100_v4, Standard_NC48ads_A100_v4]}
      taints:
      - {key: sku, value: gpu, effect: NoSchedule}
"""

# NVIDIA/k8s-device-plugin deployments/static/nvidia-device-plugin.yml (v0.17.0): it tolerates nvidia.com/gpu only.
DEVICE_PLUGIN = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
  namespace: kube-system
spec:
  selector:
    matchLabels:
      name: nvidia-device-plugin-ds
  updateStrategy:
    type: RollingUpdate
  template:
    metadata:
      labels:
        name: nvidia-device-plugin-ds
    spec:
      tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
EXTRA      priorityClassName: "system-node-critical"
      containers:
      - image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
        name: nvidia-device-plugin-ctr
        env:
        - name: FAIL_ON_INIT_ERROR
          value: "false"
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: ["ALL"]
        volumeMounts:
        - name: device-plugin
          mountPath: /var/lib/kubelet/device-plugins
      volumes:
      - name: device-plugin
        hostPath:
          path: /var/lib/kubelet/device-plugins
"""


def _found(pool: str, extra: str = "", inventory: bool = True, plugin: str = DEVICE_PLUGIN) -> list:
    text = pool + "---\n" + plugin.replace("EXTRA", extra)
    cluster = load_inventory([SYSTEM_NODES]) if inventory else None
    return by_rule(lint_text(text, "gpu-stack.yaml", Config(), cluster), RULE)


def test_a_device_plugin_that_does_not_tolerate_the_pools_taint_never_advertises_its_gpus():
    (finding,) = _found(AKS_GPU_POOL)
    assert finding.severity == Severity.ERROR
    assert finding.message == (
        "this DaemonSet (NVIDIA device plugin) cannot run on the nodes Karpenter NodePool gpu adds: they carry the "
        "untolerated taint sku=gpu:NoSchedule"
    )
    assert "no GPU there is ever advertised" in finding.notes[0]
    assert finding.line == 17 + AKS_GPU_POOL.count("\n") + 1  # the DaemonSet's tolerations


def test_without_an_inventory_the_pool_is_only_assumed_to_be_the_clusters():
    (finding,) = _found(AKS_GPU_POOL, inventory=False)
    assert finding.severity == Severity.WARNING
    assert any("assumed to be this cluster's" in note for note in finding.notes)


def test_a_toleration_must_match_value_and_effect_as_the_taint_manager_matches_them():
    wrong_value = "      - {key: sku, operator: Equal, value: cpu, effect: NoSchedule}\n"
    assert len(_found(AKS_GPU_POOL, wrong_value)) == 1
    wrong_effect = "      - {key: sku, operator: Exists, effect: NoExecute}\n"
    assert len(_found(AKS_GPU_POOL, wrong_effect)) == 1
    assert _found(AKS_GPU_POOL, "      - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}\n") == []
    assert _found(AKS_GPU_POOL, "      - {key: sku, operator: Exists}\n") == []
    assert _found(AKS_GPU_POOL, "      - {operator: Exists}\n") == []


def test_trap_a_cpu_pool_a_startup_taint_and_a_pool_the_selection_excludes():
    cpu = AKS_GPU_POOL.replace("Standard_NC24ads_A100_v4, Standard_NC48ads_A100_v4", "Standard_D8s_v5")
    assert _found(cpu) == []
    startup = AKS_GPU_POOL.replace("      taints:\n", "      startupTaints:\n")
    assert _found(startup) == []
    elsewhere = "      nodeSelector: {karpenter.sh/nodepool: other-gpu}\n"
    assert _found(AKS_GPU_POOL, elsewhere) == []


def test_trap_another_device_plugin_daemonset_serves_the_pool():
    aks = DEVICE_PLUGIN.replace("nvidia-device-plugin-daemonset", "nvidia-device-plugin-aks").replace(
        "EXTRA", "      - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}\n"
    )
    assert _found(AKS_GPU_POOL + "---\n" + aks) == []


CLUSTER_POLICY = """\
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  daemonsets:
    tolerations:
    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  devicePlugin: {enabled: true}
"""


def test_the_gpu_operators_daemonsets_tolerations_are_held_to_the_pools_taints(tmp_path: Path):
    text = AKS_GPU_POOL + "---\n" + CLUSTER_POLICY
    (finding,) = by_rule(lint_text(text, "gpu-operator.yaml", Config(), load_inventory([SYSTEM_NODES])), RULE)
    assert finding.message.startswith(
        "this ClusterPolicy's DaemonSets (the GPU operator's device plugin, GFD, DCGM exporter and validator) cannot "
        "run on the nodes Karpenter NodePool gpu adds"
    )
    fixed = text.replace(
        "effect: NoSchedule}\n  devicePlugin", "effect: NoSchedule}\n    - {key: sku, operator: Exists}\n  devicePlugin"
    )
    assert by_rule(lint_text(fixed, "gpu-operator.yaml", Config(), load_inventory([SYSTEM_NODES])), RULE) == []


# ----------------------------------------------------------------- charts installed by GitOps objects

# A Flux HelmRelease of the device plugin chart (NVIDIA's Helm repository), its tolerations set for GKE's taint.
FLUX_DEVICE_PLUGIN = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: nvidia-device-plugin
  namespace: nvidia-device-plugin
spec:
  interval: 1h
  chart:
    spec:
      chart: nvidia-device-plugin
      version: "0.17.0"
      sourceRef:
        kind: HelmRepository
        name: nvdp
  values:
    gfd:
      enabled: true
TOLERATIONS"""

# An Argo CD Application of the GPU operator, its DaemonSets told to tolerate nvidia.com/gpu=present.
ARGO_GPU_OPERATOR = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: gpu-operator
  namespace: argocd
spec:
  project: default
  destination:
    server: https://kubernetes.default.svc
    namespace: gpu-operator
  source:
    repoURL: https://helm.ngc.nvidia.com/nvidia
    chart: gpu-operator
    targetRevision: v24.9.0
    helm:
      valuesObject:
        driver:
          enabled: false
        daemonsets:
          tolerations:
          - key: nvidia.com/gpu
            operator: Equal
            value: present
            effect: NoSchedule
  syncPolicy:
    automated: {prune: true}
"""


def _tainted_gpu_nodes(tmp_path: Path, taint: dict) -> str:
    import json

    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"gpu-{i}", "labels": {"nvidia.com/gpu.present": "true"}},
            "spec": {"taints": [taint]},
            "status": {"allocatable": {"cpu": "96", "memory": "1Ti", "pods": "110"}},
        }
        for i in range(3)
    ]
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}))
    return str(path)


def test_the_gpu_operators_values_tolerate_nvidia_gpu_present_but_the_nodes_are_tainted_true(tmp_path: Path):
    nodes = _tainted_gpu_nodes(tmp_path, {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"})
    (finding,) = by_rule(
        lint_text(ARGO_GPU_OPERATOR, "apps/gpu-operator.yaml", Config(), load_inventory([nodes])), RULE
    )
    assert finding.severity == Severity.ERROR
    assert finding.message.startswith(
        "the gpu-operator chart's DaemonSets select 0 of 3 NVIDIA GPU nodes: all carry the untolerated taint "
        "nvidia.com/gpu=true:NoSchedule"
    )
    assert finding.line == ARGO_GPU_OPERATOR.splitlines().index("          tolerations:") + 1
    assert any("3 of them advertise no GPU resource" in note for note in finding.notes)
    # the same nodes tainted nvidia.com/gpu=present: tolerated
    present = _tainted_gpu_nodes(tmp_path, {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
    assert (
        by_rule(lint_text(ARGO_GPU_OPERATOR, "apps/gpu-operator.yaml", Config(), load_inventory([present])), RULE) == []
    )


def test_a_chart_without_tolerations_in_its_values_keeps_the_charts_default(tmp_path: Path):
    nodes = _tainted_gpu_nodes(tmp_path, {"key": "sku", "value": "gpu", "effect": "NoSchedule"})
    release = FLUX_DEVICE_PLUGIN.replace("TOLERATIONS", "")
    found = by_rule(lint_text(release, "infra/nvidia.yaml", Config(), load_inventory([nodes])), RULE)
    # gfd.enabled brings the chart's NFD worker, which tolerates nvidia.com/gpu=present only: kept off too
    assert sorted(f.message.split(" select")[0] for f in found) == [
        "the nvidia-device-plugin chart's DaemonSets",
        "the nvidia-device-plugin chart's NFD worker",
    ]
    (finding,) = [f for f in found if "chart's DaemonSets" in f.message]
    assert "the nvidia-device-plugin chart's DaemonSets select 0 of 3" in finding.message
    assert finding.line == release.splitlines().index("  values:") + 2  # the values, where the list goes
    assert any("the chart's default list is replaced" in note for note in finding.notes)
    fixed = FLUX_DEVICE_PLUGIN.replace(
        "TOLERATIONS",
        "    tolerations:\n    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
        "    - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}\n",
    )
    found = by_rule(lint_text(fixed, "infra/nvidia.yaml", Config(), load_inventory([nodes])), RULE)
    assert [f.message.split(" selects")[0] for f in found] == ["the nvidia-device-plugin chart's NFD worker"]


def test_a_chart_release_against_a_tainted_gpu_pool():
    release = FLUX_DEVICE_PLUGIN.replace(
        "TOLERATIONS", "    tolerations:\n    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
    )
    found = by_rule(lint_text(AKS_GPU_POOL + "---\n" + release, "infra.yaml", Config()), RULE)
    (finding,) = [f for f in found if "chart's DaemonSets" in f.message]
    assert finding.severity == Severity.WARNING  # the pool is only assumed to be the cluster's
    assert "cannot run on the nodes Karpenter NodePool gpu adds: they carry the untolerated taint sku=gpu" in (
        finding.message
    )


def test_trap_values_from_elsewhere_leave_the_tolerations_unknown(tmp_path: Path):
    nodes = _tainted_gpu_nodes(tmp_path, {"key": "sku", "value": "gpu", "effect": "NoSchedule"})
    release = FLUX_DEVICE_PLUGIN.replace("TOLERATIONS", "").replace(
        "  values:\n", "  valuesFrom:\n  - {kind: ConfigMap, name: nvidia-device-plugin-values}\n  values:\n"
    )
    assert by_rule(lint_text(release, "infra/nvidia.yaml", Config(), load_inventory([nodes])), RULE) == []
    other_chart = FLUX_DEVICE_PLUGIN.replace("chart: nvidia-device-plugin", "chart: dcgm-exporter").replace(
        "TOLERATIONS", ""
    )
    assert by_rule(lint_text(other_chart, "infra/nvidia.yaml", Config(), load_inventory([nodes])), RULE) == []


def test_the_device_plugin_charts_nfd_worker_tolerates_only_nvidia_gpu_present(tmp_path: Path):
    # gfd.enabled turns the chart's node-feature-discovery dependency on; its worker tolerates
    # nvidia.com/gpu=present:NoSchedule, not the nodes' nvidia.com/gpu=true:NoSchedule
    nodes = _tainted_gpu_nodes(tmp_path, {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"})
    release = FLUX_DEVICE_PLUGIN.replace("TOLERATIONS", "")
    (finding,) = by_rule(lint_text(release, "infra/nvidia.yaml", Config(), load_inventory([nodes])), RULE)
    assert finding.message.startswith(
        "the nvidia-device-plugin chart's NFD worker selects 0 of 3 GPU nodes: all carry the untolerated taint "
        "nvidia.com/gpu=true:NoSchedule"
    )
    without_gfd = release.replace("    gfd:\n      enabled: true\n", "    gfd:\n      enabled: false\n")
    assert by_rule(lint_text(without_gfd, "infra/nvidia.yaml", Config(), load_inventory([nodes])), RULE) == []
    fixed = (
        release + "    nfd:\n      worker:\n        tolerations:\n        - {key: nvidia.com/gpu, operator: Exists}\n"
    )
    assert by_rule(lint_text(fixed, "infra/nvidia.yaml", Config(), load_inventory([nodes])), RULE) == []
