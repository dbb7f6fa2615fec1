"""Node pools as the nodes that can exist: Karpenter, cluster-api + Cluster Autoscaler, GKE, EKS, AKS.

Every verdict has its boundary pair: the largest request that fits, and one more.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import DATA, DEVICE_CLASSES, inventory_args, lint_text, said
from conftest import run_cli as _run_cli
from support.pools import AKS, CAPI, EKS, ELASTIC, GKE, KARPENTER, findings, gpu_job, only, volcano_job

from gpulint.lint.world.inventory import load_inventory


def run_cli(*args: str, **kwargs):  # these tests are about what node pools can schedule, not /dev/shm
    if args and args[0] == "check":
        args = (*args, "--ignore", "dev-shm-missing")
    return _run_cli(*args, **kwargs)


def gpu_deployment(replicas: int, *, spec: str = "") -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: serve, namespace: ml}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: serve}}}}
  template:
    metadata: {{labels: {{app: serve}}}}
    spec:
{spec}      containers:
      - name: serve
        image: registry.example.com/serve:1.0
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""


TOLERATE_GPU = "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"


# --------------------------------------------------------------------------- Karpenter


def test_karpenter_fits_after_scale_up_on_the_largest_type_and_never_past_it(write):
    # g5.12xlarge has 4 GPUs: 4 fits after a scale-up (no finding), 5 never fits
    assert findings(write, gpu_job(4, spec=TOLERATE_GPU), KARPENTER) == []
    never = only(findings(write, gpu_job(5, spec=TOLERATE_GPU), KARPENTER), "gpu-unschedulable")
    assert never["severity"] == "error"
    assert (never["line"], never["column"]) == (13, 36)
    assert (
        "Karpenter NodePool gpu: every instance type it allows has at most 4 nvidia.com/gpu (g5.12xlarge); "
        "the pod asks for 5" in said(never)
    )
    assert "Karpenter NodePool default: none of the instance types it allows offers nvidia.com/gpu" in said(never)


def test_karpenter_pool_limits_count_replicas(write):
    # limits nvidia.com/gpu: 4 -> 4 one-GPU replicas fit, the 5th stays Pending
    assert findings(write, gpu_deployment(4, spec=TOLERATE_GPU), KARPENTER) == []
    warning = only(findings(write, gpu_deployment(5, spec=TOLERATE_GPU), KARPENTER), "gpu-unschedulable")
    assert warning["severity"] == "warning"
    assert "its node pools may add room for 4 more" in said(warning)
    assert "limit nvidia.com/gpu 4, 0 in use" in said(warning)
    assert "the other 1 would stay Pending" in said(warning)


def test_karpenter_limits_count_what_already_runs(write, tmp_path):
    running = write(
        "inv/gpu-node.yaml",
        """
        apiVersion: v1
        kind: Node
        metadata:
          name: ip-192-168-77-1.us-west-2.compute.internal
          labels: {karpenter.sh/nodepool: gpu, node.kubernetes.io/instance-type: g5.12xlarge}
          # the GPU node is still starting: its device plugin has not published the GPUs yet
        spec:
          taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]
        status:
          capacity: {cpu: "48", memory: 196608Mi, pods: "234", nvidia.com/gpu: "4"}
          allocatable: {cpu: 47810m, memory: 180000Mi, pods: "234", nvidia.com/gpu: "4"}
        """,
    )
    small = TOLERATE_GPU + "      nodeSelector: {node.kubernetes.io/instance-type: g5.xlarge}\n"
    # without the running node the pool adds a g5.xlarge: no finding
    assert findings(write, gpu_job(1, spec=small), KARPENTER) == []
    # with it, 4 of the 4 GPUs the limit allows are in use: no type fits under the limit
    limited = only(findings(write, gpu_job(1, spec=small), KARPENTER, str(running)), "gpu-unschedulable")
    assert limited["severity"] == "warning"
    assert (
        "Karpenter NodePool gpu: all available instance types exceed limits for nodepool "
        "(limits: nvidia.com/gpu 4 (4 in use))" in said(limited)
    )


def test_karpenter_limit_exhausted_is_a_warning_naming_the_limit(write):
    busy = write(
        "inv/busy.yaml",
        """
        apiVersion: v1
        kind: Node
        metadata:
          name: ip-192-168-77-2.us-west-2.compute.internal
          labels: {karpenter.sh/nodepool: gpu, node.kubernetes.io/instance-type: g5.12xlarge, workload-type: gpu}
        spec:
          taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]
        status:
          capacity: {cpu: "48", memory: 196608Mi, pods: "234", nvidia.com/gpu: "4"}
          allocatable: {cpu: 47810m, memory: 180000Mi, pods: "234", nvidia.com/gpu: "4"}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: holder, namespace: ml}
        spec:
          nodeName: ip-192-168-77-2.us-west-2.compute.internal
          containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 4}}}]
        status: {phase: Running}
        """,
    )
    spec = TOLERATE_GPU + "      nodeSelector: {workload-type: gpu}\n"
    warning = only(findings(write, gpu_job(1, spec=spec), KARPENTER, str(busy)), "gpu-unschedulable")
    assert warning["severity"] == "warning"
    assert "fits on the empty cluster" in said(warning)


def test_karpenter_taints_must_be_tolerated_but_startup_taints_need_not(write):
    # the gpu pool's startupTaint (gpu-driver-not-ready) is not tolerated, and need not be
    assert findings(write, gpu_job(1, spec=TOLERATE_GPU), KARPENTER) == []
    untolerated = only(findings(write, gpu_job(1), KARPENTER), "gpu-unschedulable")
    assert "Karpenter NodePool gpu: did not tolerate taint (taint=nvidia.com/gpu=true:NoSchedule)" in said(untolerated)


def test_karpenter_label_the_pool_does_not_define(write):
    good = TOLERATE_GPU + "      nodeSelector: {workload-type: gpu}\n"
    assert findings(write, gpu_job(1, spec=good), KARPENTER) == []
    bad = TOLERATE_GPU + "      nodeSelector: {NodeGroupType: gpu-node-pool}\n"
    error = only(findings(write, gpu_job(1, spec=bad), KARPENTER), "over-tight-affinity")
    assert error["severity"] == "error"
    assert (
        'Karpenter NodePool gpu: incompatible requirements, label "NodeGroupType" does not have known values'
        in (error["notes"][0])
    )


def test_karpenter_well_known_and_instance_type_labels(write):
    # the pool allows g5 xlarge..12xlarge: a10g GPUs; asking for another GPU name rules every type out
    a10g = (
        TOLERATE_GPU
        + "      nodeSelector: {karpenter.k8s.aws/instance-gpu-name: a10g, topology.kubernetes.io/zone: us-west-2a}\n"
    )
    assert findings(write, gpu_job(1, spec=a10g), KARPENTER) == []
    h100 = TOLERATE_GPU + "      nodeSelector: {karpenter.k8s.aws/instance-gpu-name: h100}\n"
    error = only(findings(write, gpu_job(1, spec=h100), KARPENTER), "gpu-unschedulable")
    assert "no instance type it allows matches the pod's node requirements" in said(error)


def test_resource_names_are_proven_by_karpenter_pools(write):
    typo = gpu_job(1, spec=TOLERATE_GPU).replace("nvidia.com/gpu: 1", "nvidia.com/gpus: 1")
    classes = str(write("deviceclasses.yaml", DEVICE_CLASSES))
    error = only(findings(write, typo, KARPENTER, classes), "gpu-resource-unknown")
    assert error["severity"] == "error"
    assert "no node pool's instance types offer (2 pools)" in said(error)
    assert error["message"].endswith("; did you mean nvidia.com/gpu?")


def test_a_pool_without_named_types_is_unknown_not_never(write):
    open_pool = write(
        "open/nodepool.yaml",
        """
        apiVersion: karpenter.sh/v1
        kind: NodePool
        metadata: {name: gpu-any}
        spec:
          template:
            spec:
              nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
              requirements:
              - {key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: ["0"]}
        """,
    )
    # 16 GPUs: no catalogued AWS type has them, but the pool names no type or family: unknown
    info = only(findings(write, gpu_job(16), str(open_pool)), "gpu-unschedulable")
    assert info["severity"] == "info"
    assert "at most 8 nvidia.com/gpu" in said(info)
    assert "may launch instance types the node catalog does not describe" in said(info)


def test_a_linted_nodepool_counts_like_an_inventory_one(write, tmp_path):
    pools = (ELASTIC / "karpenter" / "nodepools.yaml").read_text()
    manifest = pools + "---\n" + gpu_job(5, spec=TOLERATE_GPU)
    found = findings(write, manifest, str(ELASTIC / "system-nodes.yaml"))
    assert "at most 4 nvidia.com/gpu" in said(only(found, "gpu-unschedulable"))


def test_a_verdict_on_a_pod_shape_is_kept_per_inventory_but_never_past_linted_pools(monkeypatch):
    """The webhook reviews every pod against one inventory: over-tight-affinity judges a pod shape once for
    it. A linted NodePool changes the answer (its nodes carry the label), so with one the shape is judged
    afresh, and the inventory's own verdict is back for the next object without it."""
    import gpulint.lint.checks.over_tight_affinity as rule

    judged: list[object] = []
    real = rule._judge
    monkeypatch.setattr(rule, "_judge", lambda pod, *rest: judged.append(pod) or real(pod, *rest))
    inventory = load_inventory([str(ELASTIC / "system-nodes.yaml")])
    job = gpu_job(1, spec=TOLERATE_GPU + "      nodeSelector: {workload-type: gpu}\n")
    pools = (ELASTIC / "karpenter" / "nodepools.yaml").read_text()

    def affinity(text: str) -> list[str]:
        return [f.message for f in lint_text(text, "w.yaml", inventory=inventory) if f.rule == "over-tight-affinity"]

    (first,) = affinity(job)
    assert first.startswith("the required node affinity/selector matches none of the")
    assert affinity(pools + "---\n" + job) == [] and len(judged) == 2  # the linted pool adds such nodes
    assert affinity(job.replace("name: train", "name: train-2")) == [first] and len(judged) == 2  # kept


# --------------------------------------------------------------------------- cluster-api + Cluster Autoscaler


CAPI_TOLERATION = "      tolerations: [{key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}]\n"


def test_capi_scale_from_zero_annotations(write):
    assert findings(write, gpu_job(2, spec=CAPI_TOLERATION), CAPI) == []
    never = only(findings(write, gpu_job(3, spec=CAPI_TOLERATION), CAPI), "gpu-unschedulable")
    assert "MachineDeployment gpu-md-0: its nodes have 2 nvidia.com/gpu; the pod asks for 3" in said(never)


def test_capi_max_size_bounds_the_replicas(write):
    # max-size 5 nodes x 2 GPUs: 10 one-GPU replicas fit, 11 do not
    assert findings(write, gpu_deployment(10, spec=CAPI_TOLERATION), CAPI) == []
    warning = only(findings(write, gpu_deployment(11, spec=CAPI_TOLERATION), CAPI), "gpu-unschedulable")
    assert warning["severity"] == "warning"
    assert "MachineDeployment gpu-md-0: 10 pods (max 5 nodes, 0 now)" in said(warning)


def test_capi_template_labels_from_the_annotation(write):
    selector = CAPI_TOLERATION + "      nodeSelector: {cluster-api/accelerator: a100}\n"
    assert findings(write, gpu_job(1, spec=selector), CAPI) == []
    wrong = CAPI_TOLERATION + "      nodeSelector: {cluster-api/accelerator: h100}\n"
    error = only(findings(write, gpu_job(1, spec=wrong), CAPI), "over-tight-affinity")
    assert "its nodes carry cluster-api/accelerator In [a100]" in error["notes"][0]  # the pools' reasons


def test_capi_memory_from_the_annotation(write):
    fits = gpu_job(1, spec=CAPI_TOLERATION).replace("limits:", "requests: {memory: 128G}\n          limits:")
    assert findings(write, fits, CAPI) == []
    too_much = fits.replace("memory: 128G", "memory: 129G")
    never = only(findings(write, too_much, CAPI), "gpu-unschedulable")
    assert "MachineDeployment gpu-md-0: its nodes have 128G memory; the pod asks for 129G" in said(never)


# --------------------------------------------------------------------------- managed node pools (the clouds' JSON)


L4 = "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"


def test_gke_node_pool_json_with_extended_resource_toleration(write):
    # GKE taints GPU pools nvidia.com/gpu=present:NoSchedule and its ExtendedResourceToleration admission
    # plugin adds the toleration: a pod without one is fine (the plugin is detected from the GKE pools)
    assert findings(write, gpu_job(2, spec=L4), GKE) == []
    never = only(findings(write, gpu_job(3, spec=L4), GKE), "gpu-unschedulable")
    assert never["severity"] == "error"
    assert "GKE node pool default-pool: nodeSelector cloud.google.com/gke-accelerator=nvidia-l4" in said(never)
    assert "GKE node pool l4-pool: its instance type g2-standard-24 has 2 nvidia.com/gpu; the pod asks for 3" in said(
        never
    )


def test_extended_resource_toleration_can_be_switched_off(write):
    # The Cluster Autoscaler runs the scheduler's filters, so the pool's reason is worded as that
    # release's TaintToleration words it: the taint named up to 1.33, a fixed text from 1.34 (#134740).
    config = write(".gpulint.yaml", "extended-resource-toleration: false\n")
    found = findings(write, gpu_job(1, spec=L4), GKE, extra=("--config", str(config)))
    assert "GKE node pool l4-pool: node(s) had untolerated taint(s)" in said(only(found, "gpu-unschedulable"))
    old = findings(write, gpu_job(1, spec=L4), GKE, extra=("--config", str(config), "--kubernetes-version", "1.33"))
    assert "GKE node pool l4-pool: node(s) had untolerated taint {nvidia.com/gpu: present}" in (
        said(only(old, "gpu-unschedulable"))
    )


def test_a_gke_pool_of_an_uncatalogued_machine_type_has_the_gpus_its_json_lists(write):
    # default-pool (e2-standard-4, absent from the catalog) lists no accelerators: it has no GPU
    (error,) = [f for f in findings(write, gpu_job(3), GKE) if f["rule"] == "gpu-unschedulable"]
    assert "GKE node pool default-pool: its instance type e2-standard-4 has 0 nvidia.com/gpu" in said(error)


def test_inventory_summarises_the_pools():
    run = run_cli("inventory", "--inventory", KARPENTER, "--inventory", CAPI, "--inventory", GKE, "--format", "json")
    assert run.exit_code == 0, run.stderr
    pools = {(p["system"], p["name"]): p for p in run.json()["summary"]["nodePools"]}
    gpu = pools[("Karpenter NodePool", "gpu")]
    assert gpu["instanceTypes"] == ["g5.xlarge", "g5.2xlarge", "g5.12xlarge"]
    assert gpu["acceleratorsPerNode"] == {"nvidia.com/gpu": {"min": 1, "max": 4}}
    assert gpu["limits"] == {"nvidia.com/gpu": {"limit": 4, "inUse": 0}}
    assert pools[("MachineDeployment", "gpu-md-0")]["maxSize"] == 5
    l4 = pools[("GKE node pool", "l4-pool")]
    assert (l4["minSize"], l4["maxSize"], l4["nodes"]) == (0, 2, 0)
    assert pools[("GKE node pool", "default-pool")]["nodes"] == 1
    text = run_cli("inventory", "--inventory", KARPENTER)
    assert (
        "  Karpenter NodePool gpu: ?..? nodes, 0 now; per node: 1-4 nvidia.com/gpu; limits: nvidia.com/gpu 4 (0 in use)"
        in (text.stdout)
    )


def test_explain_shows_the_pool_view(write):
    path = write("job.yaml", gpu_job(4, spec=TOLERATE_GPU))
    run = run_cli("explain", str(path), "--inventory", KARPENTER, "--format", "json")
    assert run.exit_code == 0, run.stderr
    (explanation,) = run.json()["explanations"]
    steps = {step["title"]: step for step in explanation["steps"]}
    assert steps["Node pools"]["status"] == "ok"
    assert (
        "Karpenter NodePool gpu adds a node (g5.12xlarge); room for 1 more of these pods: fits after a scale-up"
        in (steps["Node pools"]["lines"])
    )
    assert "Then Karpenter NodePool gpu adds a node (g5.12xlarge)" in explanation["scheduler"]
    never = write("never.yaml", gpu_job(5, spec=TOLERATE_GPU))
    checked = run_cli("check", str(never), "--inventory", KARPENTER, "--format", "json")
    explained = run_cli("explain", str(never), "--inventory", KARPENTER, "--format", "json")
    assert checked.exit_code == explained.exit_code == 1
    (explanation,) = explained.json()["explanations"]
    steps = {step["title"]: step for step in explanation["steps"]}
    assert steps["Node pools"]["status"] == "FAIL"
    assert any(
        "Karpenter NodePool gpu: never fits: every instance type it allows has at most 4" in line
        for line in steps["Node pools"]["lines"]
    )


def test_gke_spot_and_nodepool_labels(write):
    spot = '      nodeSelector: {cloud.google.com/gke-spot: "true", cloud.google.com/gke-nodepool: l4-pool}\n'
    assert findings(write, gpu_job(1, spec=spot), GKE) == []
    other = "      nodeSelector: {cloud.google.com/gke-nodepool: a100-pool}\n"
    assert only(findings(write, gpu_job(1, spec=other), GKE), "over-tight-affinity")["severity"] == "error"


def test_eks_nodegroup_json(write):
    # g5.12xlarge: 4 GPUs; max size 2 -> 8 one-GPU pods
    assert findings(write, gpu_job(4, spec=TOLERATE_GPU), EKS, str(ELASTIC / "system-nodes.yaml")) == []
    never = only(findings(write, gpu_job(5, spec=TOLERATE_GPU), EKS), "gpu-unschedulable")
    assert "EKS node group gpu-a10g: its instance type g5.12xlarge has 4 nvidia.com/gpu; the pod asks for 5" in said(
        never
    )
    assert findings(write, gpu_deployment(8, spec=TOLERATE_GPU), EKS) == []
    warning = only(findings(write, gpu_deployment(9, spec=TOLERATE_GPU), EKS), "gpu-unschedulable")
    assert "EKS node group gpu-a10g: 8 pods (max 2 nodes, 0 now)" in said(warning)


def test_eks_nodegroup_with_an_instance_type_the_catalog_lacks_is_unknown(write, tmp_path):
    data = json.loads((ELASTIC / "eks" / "nodegroup-gpu.json").read_text())
    data["nodegroup"]["instanceTypes"] = ["p7.48xlarge"]
    group = write("eks2/nodegroup.json", json.dumps(data))
    found = findings(write, gpu_job(8, spec=TOLERATE_GPU), str(group))
    assert [f["severity"] for f in found] == ["warning"]
    assert "EKS node group gpu-a10g may add nodes whose instance types the node catalog does not describe" in (
        said(only(found, "gpu-resource-unknown"))
    )


def test_aks_nodepool_json(write):
    sku = "      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n"
    assert findings(write, gpu_job(1, spec=sku), AKS) == []
    never = only(findings(write, gpu_job(2, spec=sku), AKS), "gpu-unschedulable")
    assert "AKS node pool gpunp: its instance type Standard_NC24ads_A100_v4 has 1 nvidia.com/gpu" in said(never)


# --------------------------------------------------------------------------- the user's catalog


def test_node_catalog_extends_and_overrides(write):
    catalog = write(
        "catalog.yaml",
        """
        provider: aws
        source: https://example.com/our-instance-types
        instance-types:
        - name: p7.48xlarge
          gpu: {model: NVIDIA B300, memory: 288Gi}
          capacity: {cpu: "192", memory: 2Ti, nvidia.com/gpu: "8"}
        """,
    )
    data = json.loads((ELASTIC / "eks" / "nodegroup-gpu.json").read_text())
    data["nodegroup"]["instanceTypes"] = ["p7.48xlarge"]
    group = write("eks2/nodegroup.json", json.dumps(data))
    extra = ("--node-catalog", str(catalog))
    assert findings(write, gpu_job(8, spec=TOLERATE_GPU), str(group), extra=extra) == []
    never = only(findings(write, gpu_job(9, spec=TOLERATE_GPU), str(group), extra=extra), "gpu-unschedulable")
    assert never["severity"] == "error"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("instance-types: 3\n", "'instance-types' must be a list"),
        ("instance-types:\n- name: x1\n  capacity: {cpu: lots}\n", "capacity[cpu]"),
        ("instance-types:\n- {capacity: {cpu: 1}}\n", "needs a name"),
    ],
)
def test_a_bad_node_catalog_is_a_usage_error_with_its_position(write, text, message):
    catalog = write("bad-catalog.yaml", text)
    path = write("workload.yaml", gpu_job(1))
    run = run_cli("check", str(path), "--inventory", EKS, "--node-catalog", str(catalog))
    assert run.exit_code == 2
    assert f"{catalog}:" in run.stderr and message in run.stderr
    assert "Traceback" not in run.stderr


# --------------------------------------------------------------------------- gangs


def test_a_gang_must_fit_within_the_pools_maximum(write):
    # the gpu NodePool's limit of 4 GPUs: a gang of 4 one-GPU workers fits, 5 can never be placed at once
    assert [f for f in findings(write, volcano_job(4), KARPENTER) if f["severity"] == "error"] == []
    error = only(findings(write, volcano_job(5), KARPENTER), "gang-unsatisfiable")
    assert error["severity"] == "error"
    assert "needs 5 pods placed at once" in error["message"]
    assert "hold at most 4" in error["message"]


def test_a_scale_from_zero_cluster_lints_its_gpu_workloads_with_no_false_finding():
    run = run_cli("check", str(ELASTIC / "scale-from-zero"), "--inventory", KARPENTER, "--format", "json")
    assert run.exit_code == 0, run.stdout
    assert run.json()["findings"] == []


def test_memory_is_judged_against_karpenter_allocatable(write):
    # g5.12xlarge: 196608 MiB of memory, 173400Mi allocatable once Karpenter's overhead is subtracted
    fits = gpu_job(4, spec=TOLERATE_GPU).replace("limits:", "requests: {memory: 173400Mi}\n          limits:")
    assert findings(write, fits, KARPENTER) == []
    too_much = fits.replace("173400Mi", "173401Mi")
    never = only(findings(write, too_much, KARPENTER), "gpu-unschedulable")
    assert "memory" in said(never) and never["severity"] == "error"


# --------------------------------------------------------------------------- the webhook


def _admit(pod_spec: dict, inventory: str) -> tuple[bool, str]:
    from gpulint.lint.config import Config
    from gpulint.lint.review import ReviewSnapshot
    from gpulint.lint.world.inventory import load_configured_inventory
    from gpulint.webhook.admission_review import decide

    config = Config(inventory=(inventory,))
    reviewer = ReviewSnapshot.build(config, load_configured_inventory(config))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": pod_spec}
    decision = decide({"uid": "u", "operation": "CREATE", "namespace": "ml", "object": pod}, reviewer)
    return decision.allowed, decision.message


def test_the_webhook_admits_a_pod_a_pool_would_serve_and_denies_one_none_can():
    import yaml

    def spec(gpus: int) -> dict:
        return yaml.safe_load(gpu_job(gpus, spec=TOLERATE_GPU))["spec"]["template"]["spec"]

    allowed, message = _admit(spec(4), KARPENTER)
    assert allowed, message
    allowed, message = _admit(spec(5), KARPENTER)
    assert not allowed
    assert "every instance type it allows has at most 4 nvidia.com/gpu" in message


GKE_GPU_NODE = """
apiVersion: v1
kind: Node
metadata:
  name: gke-ml-l4-pool-3c1f0a2b-7xkq
  labels:
    cloud.google.com/gke-nodepool: l4-pool
    cloud.google.com/gke-accelerator: nvidia-l4
    node.kubernetes.io/instance-type: g2-standard-24
spec:
  taints:
  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
status:
  capacity: {cpu: "24", memory: 98Gi, pods: "110", nvidia.com/gpu: "2"}
  allocatable: {cpu: 23830m, memory: 90Gi, pods: "110", nvidia.com/gpu: "2"}
"""


def test_extended_resource_toleration_on_existing_gke_nodes(write):
    node = write("gke-node/node.yaml", GKE_GPU_NODE)
    assert findings(write, gpu_job(2), str(node)) == []  # detected from the GKE labels
    config = write(".gpulint.yaml", "extended-resource-toleration: false\n")
    error = only(findings(write, gpu_job(2), str(node), extra=("--config", str(config))), "gpu-unschedulable")
    assert "1 node(s) had untolerated taint(s)" in error["notes"][0]  # the scheduler's summary
    assert "carry the taint {nvidia.com/gpu: present}" in " ".join(error["notes"])
    # off by default elsewhere: the same node without GKE labels keeps its taint
    plain = write("plain-node/node.yaml", GKE_GPU_NODE.replace("cloud.google.com/gke-", "example.com/"))
    assert only(findings(write, gpu_job(2), str(plain)), "gpu-unschedulable")["severity"] == "error"


def test_extended_resource_toleration_setting_is_validated(write):
    config = write(".gpulint.yaml", "extended-resource-toleration: sometimes\n")
    path = write("workload.yaml", gpu_job(1))
    run = run_cli("check", str(path), "--config", str(config))
    assert run.exit_code == 2
    assert "'extended-resource-toleration' must be true, false or auto" in run.stderr


# --------------------------------------------------------------------------- DaemonSet overhead

AGENT = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-agent, namespace: monitoring}
spec:
  selector: {matchLabels: {app: node-agent}}
  template:
    metadata: {labels: {app: node-agent}}
    spec:
      tolerations: [{operator: Exists}]
      containers:
      - name: agent
        image: registry.example.com/agent:3.2
        resources:
          requests: {cpu: 200m, memory: 512Mi}
          limits: {memory: 512Mi}
---
"""


def test_daemonset_overhead_is_taken_before_the_pod_as_karpenter_does(write):
    # g5.12xlarge: 173400Mi allocatable; a DaemonSet that runs on every node takes 512Mi of it first
    job = gpu_job(4, spec=TOLERATE_GPU).replace("limits:", "requests: {memory: 172888Mi}\n          limits:")
    assert findings(write, AGENT + job, KARPENTER) == []
    over = job.replace("172888Mi", "172889Mi")
    never = only(findings(write, AGENT + over, KARPENTER), "gpu-unschedulable")
    assert (
        "every instance type it allows has at most 172888Mi memory left after the DaemonSets' requests "
        "(g5.12xlarge); the pod asks for 172889Mi" in said(never)
    )
    # a DaemonSet that does not tolerate the GPU pool's taint never runs there: no overhead
    picky = AGENT.replace("tolerations: [{operator: Exists}]", "tolerations: []")
    assert findings(write, picky + over, KARPENTER) == []


def launcher_and_workers(workers: int, worker: str, launcher: str, toleration: str) -> str:
    """An MPI-style Volcano Job: one launcher and ``workers`` workers, all needed at once."""
    task = """\
  - name: {name}
    replicas: {replicas}
    template:
      spec:
        restartPolicy: OnFailure
        tolerations: [{toleration}]
        containers:
        - name: {name}
          image: registry.example.com/mpi:1.0
          resources:
            limits: {limits}
"""
    return (
        f"apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: mpi-train, namespace: ml}}\n"
        f"spec:\n  minAvailable: {workers + 1}\n  schedulerName: volcano\n  tasks:\n"
        + task.format(name="launcher", replicas=1, toleration=toleration, limits=launcher)
        + task.format(name="worker", replicas=workers, toleration=toleration, limits=worker)
    )


KARPENTER_TOLERATION = "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}"
CAPI_GANG_TOLERATION = "{key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}"


def test_a_gang_whose_members_together_exceed_the_pools_limit_is_unsatisfiable(write):
    # each member alone fits under the gpu NodePool's 4-GPU limit; the launcher and the workers together
    # need 1 + 3 = 4 GPUs (fits), 1 + 4 = 5 (never: Karpenter's limit counts every node it adds)
    fits = launcher_and_workers(3, "{nvidia.com/gpu: 1}", "{nvidia.com/gpu: 1, cpu: 1}", KARPENTER_TOLERATION)
    assert [f for f in findings(write, fits, KARPENTER) if f["rule"] == "gang-unsatisfiable"] == []
    over = launcher_and_workers(4, "{nvidia.com/gpu: 1}", "{nvidia.com/gpu: 1, cpu: 1}", KARPENTER_TOLERATION)
    error = only(findings(write, over, KARPENTER), "gang-unsatisfiable")
    assert error["severity"] == "error" and (error["line"], error["column"]) == (5, 17)
    assert error["message"].startswith(
        "Volcano Job needs 5 nvidia.com/gpu at once, but the nodes and the nodes its pools "
        "can still add offer at most 4"
    )
    assert "Karpenter NodePool gpu: 4 under its limit 4 (0 in use)" in error["notes"]


def test_a_gang_is_packed_onto_the_nodes_a_pool_can_add(write):
    # gpu-md-0 may grow to 5 nodes of 16 CPUs and 2 GPUs. Five 9-CPU workers take a node each; a 7-CPU
    # launcher shares one (9 + 7 = 16), an 8-CPU launcher needs a sixth node the pool cannot add.
    # Counting each member alone (5 + 1 pods, 6 GPUs of 10) cannot tell: the packing does.
    fits = launcher_and_workers(5, "{nvidia.com/gpu: 1, cpu: 9}", "{nvidia.com/gpu: 1, cpu: 7}", CAPI_GANG_TOLERATION)
    assert [f for f in findings(write, fits, CAPI) if f["rule"] == "gang-unsatisfiable"] == []
    over = fits.replace("cpu: 7}", "cpu: 8}")
    error = only(findings(write, over, CAPI), "gang-unsatisfiable")
    assert error["severity"] == "error"
    assert "Volcano Job needs 6 pods placed at once; neither the nodes nor the nodes its pools" in error["message"]
    assert "the pools may add: MachineDeployment gpu-md-0: 5 new node(s)" in error["notes"]


def test_a_pool_of_several_instance_types_is_packed_within_its_limits(write, tmp_path):
    # The gpu NodePool limited to 3 GPUs and 12 CPUs (Karpenter counts the capacity of every node it
    # adds): a 6-CPU launcher needs a g5.2xlarge (8 vCPUs), a 3-CPU worker a g5.xlarge (4 vCPUs) beside it,
    # 8 + 4 = 12: a mix of types that fits. Nothing to report.
    inventory = tmp_path / "mixed"
    inventory.mkdir()
    text = (ELASTIC / "karpenter" / "nodepools.yaml").read_text()
    (inventory / "nodepools.yaml").write_text(
        text.replace("    nvidia.com/gpu: 4\n", "    nvidia.com/gpu: 3\n    cpu: 12\n")
    )
    mixed = launcher_and_workers(1, "{nvidia.com/gpu: 1, cpu: 3}", "{nvidia.com/gpu: 1, cpu: 6}", KARPENTER_TOLERATION)
    assert [f for f in findings(write, mixed, str(inventory)) if f["rule"] == "gang-unsatisfiable"] == []
    # A second worker needs a third node (the launcher's g5.2xlarge has no room for 3 more CPUs):
    # 8 + 4 + 4 = 16 CPUs past the limit of 12, though 3 GPUs are within it and every type alone
    # (one g5.2xlarge, three g5.xlarge) is too.
    over = launcher_and_workers(2, "{nvidia.com/gpu: 1, cpu: 3}", "{nvidia.com/gpu: 1, cpu: 6}", KARPENTER_TOLERATION)
    error = only(findings(write, over, str(inventory)), "gang-unsatisfiable")
    assert error["severity"] == "error"
    assert error["message"].startswith(
        "Volcano Job needs 3 pods placed at once; neither the nodes nor the nodes its pools can still add hold them"
    ), error["message"]
    assert any(note.startswith("the pools may add: Karpenter NodePool gpu: ") for note in error["notes"]), error


def test_one_instance_type_holding_the_whole_gang_is_not_a_mix(write):
    # trap: a 20-CPU launcher fits only a g5.12xlarge, which the 4-GPU limit allows once; that one node
    # holds the launcher and three 3-CPU workers (4 GPUs, 29 CPUs): it fits, nothing to report
    gang = launcher_and_workers(3, "{nvidia.com/gpu: 1, cpu: 3}", "{nvidia.com/gpu: 1, cpu: 20}", KARPENTER_TOLERATION)
    assert [f for f in findings(write, gang, KARPENTER) if f["rule"] == "gang-unsatisfiable"] == []


def zonal_l4_pools(tmp_path, max_b: int = 2) -> str:
    """Two GKE L4 pools (g2-standard-24: 2 GPUs, max 2 nodes in zone a, ``max_b`` in zone b)."""
    cluster = json.loads((ELASTIC / "gke" / "cluster.json").read_text())  # gcloud container clusters describe
    (pool_a,) = [p for p in cluster["nodePools"] if p["name"] == "l4-pool"]
    pool_b = json.loads(json.dumps(pool_a)) | {"name": "l4-pool-b", "locations": ["us-central1-b"]}
    pool_b["autoscaling"]["maxNodeCount"] = max_b
    inventory = tmp_path / f"zonal-{max_b}"
    inventory.mkdir()
    (inventory / "cluster.json").write_text(json.dumps({**cluster, "nodePools": [pool_a, pool_b]}))
    return str(inventory)


def zonal_gang(workers: int, topology: str) -> str:
    annotations = (
        f"\n        annotations: {{kueue.x-k8s.io/podset-required-topology: {topology}}}" if topology else " {}"
    )
    return f"""\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: llm, namespace: ml}}
spec:
  minAvailable: {workers}
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: {workers}
    template:
      metadata:{annotations}
      spec:
        nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
        containers:
        - name: w
          image: registry.example.com/llm:1.0
          resources: {{limits: {{nvidia.com/gpu: 2}}}}
"""


def test_a_gangs_zones_come_from_its_pools_locations(write, tmp_path):
    pools = zonal_l4_pools(tmp_path)
    zone = "topology.kubernetes.io/zone"
    # each zone's pool adds 2 nodes: 2 workers fit in one zone, 3 do not; 4 fit across both zones
    assert findings(write, zonal_gang(2, zone), pools) == []
    assert findings(write, zonal_gang(4, ""), pools) == []
    error = only(findings(write, zonal_gang(3, zone), pools), "gang-unsatisfiable")
    assert error["severity"] == "error"
    assert f"needs 3 pods placed at once in one {zone}; neither the nodes nor" in error["message"]


def test_a_gang_of_hami_pods_is_packed_on_its_gpus_the_pools_add_not_on_its_shares(write, tmp_path):
    """HAMi's shares (examples/nvidia/default_use.yaml) are its scheduler extender's; no pool's instance type
    offers them. The gang is judged as each of its pods is, on nvidia.com/gpu alone (issue #30): before, no pool
    fitted a member and 4 workers the pools hold were an error."""
    pools = zonal_l4_pools(tmp_path)
    shares = "{nvidia.com/gpu: 2, nvidia.com/gpumem: 3000, nvidia.com/gpucores: 30}"

    def hami(workers: int) -> str:
        return zonal_gang(workers, "").replace("{nvidia.com/gpu: 2}", shares)

    assert [f for f in findings(write, hami(4), pools) if f["rule"] == "gang-unsatisfiable"] == []
    error = only(findings(write, hami(5), pools), "gang-unsatisfiable")  # the pools add 4 nodes of 2 L4s
    assert error == only(findings(write, zonal_gang(5, ""), pools), "gang-unsatisfiable")
    assert "gpumem" not in error["message"] + " ".join(error["notes"])


def test_a_gang_with_a_zone_requirement_is_not_judged_when_the_pools_zones_are_unknown(write):
    # the Karpenter NodePools name no zone: a new node may land in any zone, so one zone may hold them all
    gang = zonal_gang(2, "topology.kubernetes.io/zone").replace(
        "nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}",
        f"tolerations: [{KARPENTER_TOLERATION}]",
    )
    assert [f for f in findings(write, gang, KARPENTER) if f["rule"] == "gang-unsatisfiable"] == []


# --------------------------------------------------------------------------- stale GPU labels

STALE_NODE = """\
# A GPU node whose GPU Feature Discovery labels outlived its device plugin: labelled A10G, no nvidia.com/gpu.
apiVersion: v1
kind: Node
metadata:
  name: ip-192-168-77-3.us-west-2.compute.internal
  labels:
    kubernetes.io/arch: amd64
    kubernetes.io/os: linux
    karpenter.sh/nodepool: gpu
    node.kubernetes.io/instance-type: g5.xlarge
    nvidia.com/gpu.present: "true"
    nvidia.com/gpu.product: NVIDIA-A10G
spec:
  taints:
  - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
status:
  capacity: {cpu: "4", memory: 16092956Ki, pods: "58"}
  allocatable: {cpu: 3920m, memory: 14162Mi, pods: "58"}
"""


def stale_cluster(tmp_path, name: str, pool_label: str) -> str:
    inventory = tmp_path / name
    inventory.mkdir()
    text = (ELASTIC / "karpenter" / "nodepools.yaml").read_text()
    text = text.replace("        workload-type: gpu\n", f"        workload-type: gpu\n{pool_label}", 1)
    (inventory / "nodepools.yaml").write_text(text)
    (inventory / "nodes.yaml").write_text(STALE_NODE)
    return str(inventory)


def test_stale_gpu_labels_are_not_reported_when_a_pool_adds_a_node_carrying_the_label(write, tmp_path):
    # The only node labelled NVIDIA-A10G advertises no GPU: without a pool the pod is stuck (a warning).
    # The gpu NodePool's template sets the label: the pending pod makes Karpenter add a node that has it.
    selecting = gpu_job(1, spec=TOLERATE_GPU + "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A10G}\n")
    served = stale_cluster(tmp_path, "served", "        nvidia.com/gpu.product: NVIDIA-A10G\n")
    assert [f for f in findings(write, selecting, served) if f["rule"] == "stale-gpu-label"] == []
    # the pool's template without the label: Karpenter cannot add a node for the selector, the warning stays
    unserved = stale_cluster(tmp_path, "unserved", "")
    warning = only(findings(write, selecting, unserved), "stale-gpu-label")
    assert warning["severity"] == "warning"
    assert "the one node the pod's node selection allows has stale GPU labels" in warning["message"]


def autoscaler_status(group: str, target: int, max_size: int = 4) -> str:
    """kube-system/cluster-autoscaler-status as the autoscaler writes it from 1.30 (clusterstate/api/types.go):
    one node group, an EKS managed node group's Auto Scaling group beside Karpenter."""
    return f"""\
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cluster-autoscaler-status
  namespace: kube-system
data:
  status: |
    time: 2026-11-30 09:12:41.125476354 +0000 UTC
    autoscalerStatus: Running
    nodeGroups:
    - name: {group}
      health:
        status: Healthy
        nodeCounts:
          registered: {{total: {target}, ready: {target}}}
        cloudProviderTarget: {target}
        minSize: 0
        maxSize: {max_size}
      scaleUp: {{status: NoActivity}}
      scaleDown: {{status: NoCandidates}}
"""


EKS_GROUP = "eks-gpu-a10g-54c6b8f2-3d1e-4a6b-9f0e-7c2d1b3a4e5f"
SELECTING_A10G = gpu_job(1, spec=TOLERATE_GPU + "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A10G}\n")


@pytest.mark.parametrize(
    ("status", "reported"),
    [
        pytest.param("", True, id="pools-whole"),
        pytest.param(autoscaler_status(EKS_GROUP, 4), True, id="group-at-max-size"),
        pytest.param(autoscaler_status(EKS_GROUP, 1), False, id="group-may-grow"),
    ],
)
def test_stale_gpu_labels_are_reported_only_when_the_pools_read_are_every_group(write, tmp_path, status, reported):
    """The NodePools' templates lack the label, so Karpenter adds no node for the selector. A node group the
    autoscaler may still grow that no pool read describes may add a node GPU feature discovery labels afresh:
    the stale node is then not proven to be all the pod can get (proof or silence)."""
    inventory = stale_cluster(tmp_path, "cluster", "")
    if status:
        (tmp_path / "cluster" / "autoscaler-status.yaml").write_text(status)
    found = [f for f in findings(write, SELECTING_A10G, inventory) if f["rule"] == "stale-gpu-label"]
    assert [f["severity"] for f in found] == (["warning"] if reported else []), found


def test_stale_gpu_labels_on_a_pools_nodes_say_nothing_when_no_pool_is_read(write, tmp_path):
    """The stale node came from the Karpenter NodePool gpu (its karpenter.sh/nodepool label) but the inventory
    holds no NodePool: whether the pool adds a node with the label is unknown. Without the label the node is
    the cluster's own, and the warning stands."""
    pooled = tmp_path / "pooled"
    pooled.mkdir()
    (pooled / "nodes.yaml").write_text(STALE_NODE)
    assert [f for f in findings(write, SELECTING_A10G, str(pooled)) if f["rule"] == "stale-gpu-label"] == []
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    (fixed / "nodes.yaml").write_text(STALE_NODE.replace("    karpenter.sh/nodepool: gpu\n", ""))
    warning = only(findings(write, SELECTING_A10G, str(fixed)), "stale-gpu-label")
    assert warning["message"].endswith("the one node the pod's node selection allows has stale GPU labels")


def test_explain_gives_the_gangs_pool_verdict_as_check_does(write, tmp_path):
    pools = zonal_l4_pools(tmp_path)
    placed = run_cli(
        "explain", str(write("fits.yaml", zonal_gang(2, "topology.kubernetes.io/zone"))), "--inventory", pools
    )
    assert "6. Gang and topology: ok" in placed.stdout
    assert "fits on the nodes and the nodes its pools can still add" in placed.stdout
    stuck = run_cli(
        "explain", str(write("stuck.yaml", zonal_gang(3, "topology.kubernetes.io/zone"))), "--inventory", pools
    )
    assert "6. Gang and topology: FAIL" in stuck.stdout
    assert (
        "cannot be placed: Volcano Job needs 3 pods placed at once in one topology.kubernetes.io/zone" in stuck.stdout
    )


# --------------------------------------------------------------------------- queued workloads

# Kueue's setup for the Karpenter GPU pool, as the Kueue docs pair them ("Setup Kueue with Karpenter"): the flavor
# steers admitted pods to the NodePool and tolerates its taint, so the job templates carry neither.
KUEUE_ON_KARPENTER = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: g5}
spec:
  nodeLabels: {karpenter.sh/nodepool: gpu}
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: ml}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: g5
      resources:
      - {name: cpu, nominalQuota: 512}
      - {name: memory, nominalQuota: 2Ti}
      - {name: nvidia.com/gpu, nominalQuota: 32}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: ml, namespace: ml}
spec: {clusterQueue: ml}
"""


def queued_job(parallelism: int, gpus: int, *, queue: str = "ml") -> str:
    label = f"  labels: {{kueue.x-k8s.io/queue-name: {queue}}}\n" if queue else ""
    return f"""\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  namespace: ml
{label}spec:
  parallelism: {parallelism}
  completions: {parallelism}
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: registry.example.com/train:1.0
        resources:
          limits: {{nvidia.com/gpu: {gpus}}}
"""


def queued(job: str, setup: str = KUEUE_ON_KARPENTER) -> str:
    return setup + "---\n" + job


def test_a_queued_job_is_judged_with_the_tolerations_its_flavor_adds(write):
    """Kueue adds the flavor's tolerations and nodeLabels to the pods it admits (kueue pkg/podset FromAssignment):
    the GPU pool's taint is tolerated, and Karpenter adds a g5 node for it."""
    found = findings(write, queued(queued_job(1, 4)), KARPENTER)
    assert [f for f in found if f["rule"] == "gpu-unschedulable"] == [], found


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param(queued_job(1, 4, queue=""), id="not-queued"),
        pytest.param(
            queued(
                queued_job(1, 4),
                KUEUE_ON_KARPENTER.replace(
                    "  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n", ""
                ),
            ),
            id="flavor-without-toleration",
        ),
        pytest.param(
            queued(
                queued_job(1, 4),
                KUEUE_ON_KARPENTER.replace(
                    "kind: LocalQueue\nmetadata: {name: ml,", "kind: LocalQueue\nmetadata: {name: research,"
                ),
            ),
            id="no-such-local-queue",
        ),
    ],
)
def test_no_flavor_no_toleration(write, manifest):
    """Without Kueue admitting it through the flavor, nothing adds the toleration: the GPU pool's taint keeps the
    pod off every node the pools can add."""
    error = only(findings(write, manifest, KARPENTER), "gpu-unschedulable")
    assert error["severity"] == "error"
    assert "Karpenter NodePool gpu: did not tolerate taint (taint=nvidia.com/gpu=true:NoSchedule)" in said(error)


def test_a_queued_jobs_pods_are_counted_against_the_pools_limits(write):
    """Kueue admits the 2 pods at once (32 GPUs of quota), but the flavor's NodePool may add only 4 GPUs: the second
    pod stays Pending. As written (no toleration), this was a "never scheduled" error instead."""
    warning = only(findings(write, queued(queued_job(2, 4)), KARPENTER), "gpu-unschedulable")
    assert warning["severity"] == "warning"
    assert "the workload runs 2 of these pods" in warning["message"]
    assert "its node pools may add room for 1 more" in said(warning)


def test_explain_shows_the_queued_pod_as_kueue_starts_it(write):
    run = run_cli("explain", str(write("job.yaml", queued(queued_job(1, 4)))), "--inventory", KARPENTER)
    assert "Karpenter NodePool gpu adds a node (g5.12xlarge); room for 1 more of these pods: fits after" in run.stdout
    assert "Node pools: ok" in run.stdout


# --------------------------------------------------------------------------- DRA

B200_CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: b200, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 1
          selectors:
          - cel:
              expression: 'device.attributes["gpu.nvidia.com"].productName.contains("B200")'
"""


def test_a_claim_no_existing_node_can_allocate_is_unknown_when_pools_can_add_nodes(write):
    # the DGX-style cluster's slices publish no B200: an error; with node pools, the devices of the nodes
    # they add are described nowhere (no template carries ResourceSlices): unknown, said as info
    dra = str(DATA / "dra")
    error = only(findings(write, B200_CLAIM, dra), "claim-unsatisfiable")
    assert error["severity"] == "error" and error["message"].startswith("the claim can never be allocated")
    info = only(findings(write, B200_CLAIM, dra, f"{KARPENTER}/nodepools.yaml"), "claim-unsatisfiable")
    assert info["severity"] == "info" and (info["line"], info["column"]) == (8, 7)
    assert info["message"] == (
        "no node that exists can allocate the claim (no node of 5 can satisfy it); "
        "whether a node a pool can add could is unknown"
    )
    assert any("Karpenter NodePool gpu" in note for note in info["notes"])


B200_GROUP = "https://www.googleapis.com/compute/v1/projects/ml-prod/zones/us-central1-a/instanceGroups/gke-ml-prod-b200-0c1d2e3f-grp"


@pytest.mark.parametrize(
    ("status", "severity"),
    [
        pytest.param("", "error", id="no-status"),
        pytest.param(autoscaler_status(B200_GROUP, 2, max_size=2), "error", id="group-at-max-size"),
        pytest.param(autoscaler_status(B200_GROUP, 0, max_size=2), None, id="group-may-grow"),
    ],
)
def test_a_claim_no_node_can_allocate_is_an_error_only_when_no_unread_group_may_grow(write, tmp_path, status, severity):
    """The autoscaler reports a B200 instance group (a GKE node pool at zero nodes) that no pool read describes:
    its nodes may publish B200s, so the claim is not proven unsatisfiable and nothing is said (proof or silence).
    At its max size it adds nothing, and the error stands."""
    dra = tmp_path / "dra"
    shutil.copytree(DATA / "dra", dra)
    if status:
        (dra / "autoscaler-status.yaml").write_text(status)
    found = [f for f in findings(write, B200_CLAIM, str(dra)) if f["rule"] == "claim-unsatisfiable"]
    assert [f["severity"] for f in found] == ([severity] if severity else []), found


def test_a_claim_no_node_can_allocate_says_nothing_when_the_nodes_pool_is_not_read(write, tmp_path):
    """dgx-0 came from a GKE node pool (cloud.google.com/gke-nodepool) the inventory does not describe: the pool
    may be scaled out with other machines, so "never" is unproven."""
    dra = tmp_path / "dra"
    shutil.copytree(DATA / "dra", dra)
    nodes = dra / "nodes.yaml"
    text = nodes.read_text()
    pooled = "labels: {kubernetes.io/hostname: dgx-0, cloud.google.com/gke-nodepool: a4-highgpu,"
    nodes.write_text(text.replace("labels: {kubernetes.io/hostname: dgx-0,", pooled, 1))
    assert pooled in nodes.read_text()
    assert [f for f in findings(write, B200_CLAIM, str(dra)) if f["rule"] == "claim-unsatisfiable"] == []


def one_zone_karpenter(tmp_path, *, nodes: bool = False) -> str:
    """The Karpenter pools with their EC2NodeClass's status.subnets in us-west-2a only; ``nodes``: with the
    two tainted system nodes (us-west-2a and us-west-2b)."""
    inventory = tmp_path / f"one-zone{'-nodes' if nodes else ''}"
    inventory.mkdir()
    text = (ELASTIC / "karpenter" / "nodepools.yaml").read_text()
    subnets = "status:\n  subnets:\n  - {id: subnet-0a1b2c3d4e5f60718, zone: us-west-2a, zoneID: usw2-az1}\n"
    (inventory / "nodepools.yaml").write_text(text + subnets)
    if nodes:
        (inventory / "nodes.yaml").write_text((ELASTIC / "system-nodes.yaml").read_text())
    return str(inventory)


def test_a_karpenter_pools_zones_come_from_its_ec2nodeclass_subnets(write, tmp_path):
    # EC2NodeClass status.subnets: the subnets Karpenter launches the NodePool's nodes in, and so their zones
    inventory = one_zone_karpenter(tmp_path)
    in_zone = gpu_job(1, spec=TOLERATE_GPU + "      nodeSelector: {topology.kubernetes.io/zone: us-west-2a}\n")
    assert findings(write, in_zone, str(inventory)) == []
    elsewhere = in_zone.replace("us-west-2a}", "us-west-2b}")
    # one cause, one finding: the selection is why no pool can add a node (gpu-unschedulable leaves it)
    (never,) = findings(write, elsewhere, str(inventory))
    assert never["rule"] == "over-tight-affinity"
    assert (
        "Karpenter NodePool gpu: incompatible requirements, key topology.kubernetes.io/zone, In [us-west-2b] not in "
        "In [us-west-2a]" in said(never)
    )
    # without the NodeClass's status the pool may launch in any zone: not judged
    assert [f for f in findings(write, elsewhere, KARPENTER) if f["severity"] == "error"] == []


def test_only_one_zone_its_pools_can_grow_into_holding_the_gang_is_a_warning(write, tmp_path):
    zone = "topology.kubernetes.io/zone"
    # zone a's pool may add 2 nodes (2 workers), zone b's 2 as well: either zone holds the gang
    assert findings(write, zonal_gang(2, zone), zonal_l4_pools(tmp_path)) == []
    # zone b's pool may add 1 node: only zone a can hold both workers
    warning = only(findings(write, zonal_gang(2, zone), zonal_l4_pools(tmp_path, max_b=1)), "over-tight-topology")
    assert warning["severity"] == "warning"
    assert warning["message"].startswith(f"only {zone}=us-central1-a can host the whole gang (2 domains exist")


def zone_job(zone: str) -> str:
    return gpu_job(1, spec=TOLERATE_GPU + f"      nodeSelector: {{topology.kubernetes.io/zone: {zone}}}\n")


G5_NODES = """\
# two g5.2xlarge of an EKS managed node group (1 x A10G each; no EFA adapter: no vpc.amazonaws.com/efa)
apiVersion: v1
kind: List
items:
""" + "".join(
    f"""\
- apiVersion: v1
  kind: Node
  metadata:
    name: ip-192-168-50-{i}.us-west-2.compute.internal
    labels:
      kubernetes.io/hostname: ip-192-168-50-{i}.us-west-2.compute.internal
      node.kubernetes.io/instance-type: g5.2xlarge
      topology.kubernetes.io/zone: us-west-2b
      eks.amazonaws.com/nodegroup: gpu-ng
  status:
    capacity: {{cpu: "8", memory: 32386544Ki, pods: "58", nvidia.com/gpu: "1"}}
    allocatable: {{cpu: 7910m, memory: 31369712Ki, pods: "58", nvidia.com/gpu: "1"}}
"""
    for i in (11, 12)
)


def test_a_node_group_with_gpus_but_no_efa_is_said_to_lack_efa_not_gpus(write, tmp_path):
    # issue #28: the nodes offer GPUs, and NodeResourcesFit fails them on `Insufficient vpc.amazonaws.com/efa`
    # only; the Karpenter pools (whose g5.12xlarge has EFA) launch in us-west-2a and lack the node group's label
    inventory = one_zone_karpenter(tmp_path, nodes=True)
    (tmp_path / "one-zone-nodes" / "g5-nodes.yaml").write_text(G5_NODES)
    selector = TOLERATE_GPU + "      nodeSelector: {eks.amazonaws.com/nodegroup: gpu-ng}\n"
    with_efa = gpu_job(1, spec=selector).replace("{nvidia.com/gpu: 1}", "{nvidia.com/gpu: 1, vpc.amazonaws.com/efa: 1}")
    finding = only(findings(write, with_efa, inventory), "over-tight-affinity")
    assert finding["message"] == (
        "the required node affinity/selector matches 2 nodes, none of which offers vpc.amazonaws.com/efa, "
        "and no node that its 2 node pools can add"
    )
    assert finding["notes"][0] == "those nodes offer nvidia.com/gpu"
    assert "Insufficient vpc.amazonaws.com/efa" in said(finding) and "Insufficient nvidia.com/gpu" not in said(finding)
    # the GPU alone fits on those nodes
    assert [
        f for f in findings(write, gpu_job(1, spec=selector), inventory) if f["rule"] == "over-tight-affinity"
    ] == []


def test_a_selection_only_tainted_system_nodes_and_no_pool_match_is_one_finding(write, tmp_path):
    # us-west-2b has a tainted system node and no pool launches there (the EC2NodeClass's subnets are in
    # 2a): one cause, one finding - over-tight-affinity, with the pools' reasons and the scheduler's summary
    inventory = one_zone_karpenter(tmp_path, nodes=True)
    assert findings(write, zone_job("us-west-2a"), inventory) == []  # the gpu pool adds a node in 2a
    (error,) = findings(write, zone_job("us-west-2b"), inventory)
    assert (error["rule"], error["severity"], error["line"], error["column"]) == ("over-tight-affinity", "error", 9, 51)
    assert error["message"] == (
        "the required node affinity/selector matches one node, which does not offer nvidia.com/gpu, "
        "and no node that its 2 node pools can add"
    )
    assert (
        "Karpenter NodePool gpu: incompatible requirements, key topology.kubernetes.io/zone, In [us-west-2b] not in "
        "In [us-west-2a]" in error["notes"][1]
    )
    assert error["notes"][2] == ("the pod stays Pending: 0/2 nodes are available: 2 node(s) had untolerated taint(s).")
    # a zone without any node: the same one finding
    (none,) = findings(write, zone_job("us-west-2c"), inventory)
    assert none["rule"] == "over-tight-affinity"
    assert none["message"].startswith("the required node affinity/selector matches none of the 2 nodes and no node")
    assert "the pod stays Pending: 0/2 nodes are available" in said(none)
    # the selection is the verdict's cause whichever rules run: with over-tight-affinity off, nothing is said
    assert findings(write, zone_job("us-west-2b"), inventory, extra=("--ignore", "over-tight-affinity")) == []


def test_a_pool_that_may_launch_in_the_zone_leaves_the_pod_to_gpu_unschedulable(write, tmp_path):
    # trap: the same selection, the pools' NodeClass without status (any zone): the gpu pool may launch in
    # us-west-2b, so the selection is not the cause and no rule reports the pod
    inventory = tmp_path / "any-zone"
    inventory.mkdir()
    (inventory / "nodepools.yaml").write_text((ELASTIC / "karpenter" / "nodepools.yaml").read_text())
    (inventory / "nodes.yaml").write_text((ELASTIC / "system-nodes.yaml").read_text())
    assert findings(write, zone_job("us-west-2b"), str(inventory)) == []
    # with 5 GPUs the pool is chosen but never fits: gpu-unschedulable's finding alone
    five = zone_job("us-west-2b").replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 5")
    assert [f["rule"] for f in findings(write, five, str(inventory))] == ["gpu-unschedulable"]


def test_explain_shows_the_one_finding_of_a_selection_no_pool_matches(write, tmp_path):
    inventory = one_zone_karpenter(tmp_path, nodes=True)
    out = run_cli("explain", str(write("zone.yaml", zone_job("us-west-2b"))), "--inventory", inventory).stdout
    assert "error[over-tight-affinity] the required node affinity/selector matches one node" in out
    assert "gpu-unschedulable" not in out
    assert "4. Node pools: FAIL" in out


def test_a_gang_that_fits_the_pools_only_without_its_topology_names_the_requirement_as_the_cause(write, tmp_path):
    pools = zonal_l4_pools(tmp_path)
    zone = "topology.kubernetes.io/zone"
    cause = (
        f"the topology requirement '{zone}' is the cause: the nodes and the nodes its pools can still add, "
        "across every domain, could hold the gang"
    )
    # 3 workers: no zone's pool adds 3 nodes, both zones' pools together add 4: the requirement is the cause
    error = only(findings(write, zonal_gang(3, zone), pools), "gang-unsatisfiable")
    assert cause in error["notes"]
    # 5 workers: the pools add 4 nodes in all, so without the requirement it does not fit either: no such note
    beyond = only(findings(write, zonal_gang(5, zone), pools), "gang-unsatisfiable")
    assert not any("is the cause" in note for note in beyond["notes"]), beyond
    # explain gives the same note
    out = run_cli("explain", str(write("three.yaml", zonal_gang(3, zone))), "--inventory", pools).stdout
    assert cause in out


def hami_job(shares: str) -> str:
    """A Job shaped like HAMi's examples (examples/nvidia/default_use.yaml): a GPU with memory and core shares."""
    return gpu_job(1, spec=TOLERATE_GPU).replace("{nvidia.com/gpu: 1}", f"{{nvidia.com/gpu: 1, {shares}}}")


def test_hami_shares_on_a_karpenter_only_cluster_are_one_warning_never_a_suggestion(write):
    nodepools = f"{KARPENTER}/nodepools.yaml"
    found = findings(write, hami_job("nvidia.com/gpumem: 3000, nvidia.com/gpucores: 30"), nodepools)
    (warning,) = found  # no gpu-unschedulable, no error
    assert (warning["rule"], warning["severity"], warning["line"], warning["column"]) == (
        "gpu-resource-unknown",
        "warning",
        13,
        39,
    )
    assert warning["message"] == (
        "container 'train' asks for nvidia.com/gpumem and nvidia.com/gpucores, HAMi shares that no node pool's "
        "instance types offer: no pool adds a node for the pod"
    )
    assert "did you mean" not in said(warning)
    assert "kubernetes-sigs/karpenter#751" in said(warning)
    # the severity is pinned: raising the rule does not make the unprovable an error
    config = write(".gpulint.yaml", "severity: {gpu-resource-unknown: error}\n")
    raised = findings(write, hami_job("nvidia.com/gpumem-percentage: 25"), nodepools, extra=("--config", str(config)))
    assert [f["severity"] for f in raised] == ["warning"]
    # boundary: the plain GPU the pools offer is fine
    assert findings(write, gpu_job(1, spec=TOLERATE_GPU), nodepools) == []


def test_explain_names_hami_shares_as_check_does(write):
    path = str(write("hami.yaml", hami_job("nvidia.com/gpumem: 3000")))
    out = run_cli("explain", path, "--inventory", f"{KARPENTER}/nodepools.yaml").stdout
    assert "1. Resource names and counts: info" in out
    assert "nvidia.com/gpumem: a HAMi share: HAMi's scheduler extender accounts for it" in out
    # boundary: a typo is still a failed step, once the DeviceClasses are known too (as check's error needs)
    typo = str(write("typo.yaml", hami_job("nvidia.com/gpumemory: 3000")))
    classes = str(write("deviceclasses.yaml", DEVICE_CLASSES))
    assert "1. Resource names and counts: FAIL" in run_cli("explain", typo, *inventory_args(KARPENTER, classes)).stdout
    unproven = run_cli("explain", typo, "--inventory", KARPENTER).stdout
    assert "1. Resource names and counts: info" in unproven
    assert "the inventory cannot tell whether it exists: the inventory does not list the cluster's DeviceClasses" in (
        unproven
    )


def test_a_known_resource_no_pool_offers_names_its_plugin_not_a_lookalike(write):
    amd = gpu_job(1, spec=TOLERATE_GPU).replace("nvidia.com/gpu: 1", "amd.com/gpu: 1")
    classes = str(write("deviceclasses.yaml", DEVICE_CLASSES))
    error = only(findings(write, amd, f"{KARPENTER}/nodepools.yaml", classes), "gpu-resource-unknown")
    assert error["severity"] == "error"
    assert "amd.com/gpu (advertised by the AMD GPU device plugin)" in error["message"]
    assert "did you mean" not in said(error)


AZURE_NODEPOOL = """\
# Shaped like the AKS node auto-provisioning docs' GPU NodePool (learn.microsoft.com/azure/aks/node-autoprovision)
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: gpu}
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [Standard_NC24ads_A100_v4, Standard_NC48ads_A100_v4]}
      - {key: topology.kubernetes.io/zone, operator: In, values: [eastus-1]}
      taints:
      - {key: sku, value: gpu, effect: NoSchedule}
---
apiVersion: karpenter.azure.com/v1beta1
kind: AKSNodeClass
metadata: {name: gpu}
spec:
  imageFamily: AzureLinux
  gpu: {mode: Driver}
  vnetSubnetID: /subscriptions/0000/resourceGroups/ml/providers/Microsoft.Network/virtualNetworks/ml/subnets/nodes
"""


def test_an_aks_nodeclass_changes_no_verdict_on_the_catalogued_sizes(write, tmp_path):
    # docs/inventory.md's claim: AzureLinux and gpu.mode Driver keep both A100 sizes (supported-gpus.yaml lists them
    # for azurelinux3 with a managed NVIDIA driver); zones come from the NodePool's requirement only
    inventory = tmp_path / "aks-karpenter"
    inventory.mkdir()
    (inventory / "nodepools.yaml").write_text(AZURE_NODEPOOL)
    sku = "      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n"
    assert findings(write, gpu_job(2, spec=sku), str(inventory)) == []
    never = only(findings(write, gpu_job(3, spec=sku), str(inventory)), "gpu-unschedulable")
    assert "at most 2 nvidia.com/gpu (Standard_NC48ads_A100_v4); the pod asks for 3" in said(never)
    elsewhere = gpu_job(1, spec=sku + "      nodeSelector: {topology.kubernetes.io/zone: eastus-2}\n")
    assert only(findings(write, elsewhere, str(inventory)), "over-tight-affinity")["severity"] == "error"
