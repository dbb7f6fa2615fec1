"""`gpulint explain` says what `gpulint check` says (issue #12): the same run, the same verdicts, the same
findings per object, the same exit codes; on the test fleet, the DRA test cluster and the example inventory."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import DATA, REPO, run_cli
from support.inventories import TWO_CPU_ONE_GPU

FLEET = str(DATA / "fleet")
DRA = str(DATA / "dra")
EXAMPLE = str(REPO / "examples" / "inventory")


def check(path: Path, inventory: str, *extra: str):
    return run_cli("check", str(path), "--inventory", inventory, "--format", "json", *extra)


def explain(path: Path, inventory: str, *extra: str):
    return run_cli("explain", str(path), "--inventory", inventory, "--format", "json", *extra)


def steps(explanation: dict) -> dict[str, dict]:
    return {step["title"]: step for step in explanation["steps"]}


def check_lines(result) -> list[str]:
    """check's findings as explain's "gpulint check" step lists them."""
    return [
        "\n".join(
            (
                f"{f['path']}:{f['line']}:{f['column']}: {f['severity']}[{f['rule']}] {f['message']}",
                *(f"    {n}" for n in f["notes"]),
            )
        )
        for f in result.json()["findings"]
    ]


def only_explanation(result) -> dict:
    data = json.loads(result.stdout)
    assert data["version"] == 1
    (explanation,) = data["explanations"]
    return explanation


# --------------------------------------------------------------------------- (a) replicas beyond capacity

STATEFULSET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: shards
  namespace: ml
spec:
  replicas: 6
  serviceName: shards
  selector:
    matchLabels: {app: shards}
  template:
    metadata:
      labels: {app: shards}
    spec:
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: shard
        image: registry.example.com/shard:1.0
        resources:
          limits: {nvidia.com/gpu: 5}
        volumeMounts: [{name: dshm, mountPath: /dev/shm}]
      volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"""
REPLICAS_WARNING = (
    "the workload runs 6 of these pods, but only 4 fit on the empty cluster at once (on 4 nodes that "
    "pass every filter); the other 2 would stay Pending"
)


def test_replicas_beyond_capacity_fail_the_capacity_step(write):
    """Each of the 6 pods fits one of 4 nodes (h100-0, h100-1, h100-2 with 6 allocatable, l4-0): check warns,
    and explain's capacity step no longer says "ok"."""
    path = write("shards.yaml", STATEFULSET)
    checked = check(path, FLEET)
    # l4-0 is time-sliced (nvidia.com/gpu.replicas=2): 5 of its units are replicas, which gpu-sharing says
    assert [(f["rule"], f["line"], f["column"]) for f in checked.json()["findings"]] == [
        ("gpu-sharing", 21, 36),
        ("gpu-unschedulable", 21, 36),
    ]
    assert checked.json()["findings"][1]["message"] == REPLICAS_WARNING
    explained = explain(path, FLEET)
    explanation = only_explanation(explained)
    assert explanation["heading"] == "StatefulSet/ml/shards (6 pods)"
    capacity = steps(explanation)["Capacity vs allocatable"]
    assert capacity == {
        "title": "Capacity vs allocatable",
        "status": "FAIL",
        "lines": [
            "nvidia.com/gpu: asks 5; largest node capacity 8, allocatable 8, free now 8",
            "the workload runs 6 of these pods, but only 4 fit on the empty cluster at once; the other 2 would stay "
            "Pending",
            # gpu-sharing's warning on the same container: the verdict both read (#30)
            "container 'shard': asks 5 nvidia.com/gpu; on 1 of the 4 nodes it can use (l4-0) it is a time-sliced "
            "replica of a whole GPU, 2 per device: the units may be replicas of one physical GPU, no more GPU than 1 "
            "is guaranteed",
        ],
    }
    assert steps(explanation)["gpulint check"] == {
        "title": "gpulint check",
        "status": "info",
        "lines": check_lines(checked),
    }
    # A warning: both exit 0 by default, both 1 when the configuration fails on warnings.
    assert checked.exit_code == explained.exit_code == 0
    config = write(".gpulint.yaml", "fail-on: warning\n")
    assert check(path, FLEET, "--config", str(config)).exit_code == 1
    assert explain(path, FLEET, "--config", str(config)).exit_code == 1


# --------------------------------------------------------------------------- (b) DRA-backed extended resources

DRA_EXTENDED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: inference
  namespace: ml
spec:
  replicas: 2
  selector:
    matchLabels: {app: inference}
  template:
    metadata:
      labels: {app: inference}
    spec:
      containers:
      - name: server
        image: registry.example.com/server:1.0
        resources:
          limits: {example.com/dra-gpu: %d}
"""


def test_dra_backed_extended_resource_that_fits_is_not_a_failure(write):
    """example.com/dra-gpu is gpu.nvidia.com's extendedResourceName: no node publishes it, the DRA allocator
    serves it (2 GPUs on dgx-0, dgx-1 or l40s-0)."""
    path = write("inference.yaml", DRA_EXTENDED % 2)
    checked = check(path, DRA)
    assert checked.exit_code == 0 and checked.json()["findings"] == []
    explained = explain(path, DRA)
    assert explained.exit_code == 0
    explanation = only_explanation(explained)
    assert [s["status"] for s in explanation["steps"]] == ["ok"] * 6
    by_title = steps(explanation)
    assert by_title["Capacity vs allocatable"]["lines"] == [
        "example.com/dra-gpu: asks 2; served by DRA (a DeviceClass's extendedResourceName): see the DRA step"
    ]
    assert by_title["DRA claims"]["lines"] == [
        "0 resource claim(s); 1 found in the linted files or the inventory",
        "the claims can be allocated on 3 of the 5 nodes that pass the other filters",
    ]
    assert explanation["scheduler"] == "5/5 nodes pass every filter"


def test_dra_backed_extended_resource_that_cannot_be_allocated(write):
    path = write("inference.yaml", DRA_EXTENDED % 9)
    checked = check(path, DRA)
    (finding,) = checked.json()["findings"]
    assert (finding["rule"], finding["line"], finding["column"]) == ("claim-unsatisfiable", 18, 41)
    explained = explain(path, DRA)
    assert checked.exit_code == explained.exit_code == 1
    by_title = steps(only_explanation(explained))
    assert by_title["Capacity vs allocatable"]["status"] == "ok"  # not NodeResourcesFit's to judge
    assert by_title["DRA claims"]["status"] == "FAIL"
    assert by_title["DRA claims"]["lines"][-1] == (
        "no node of 5 can satisfy it: request 'example.com/dra-gpu' needs 9 devices of class gpu.nvidia.com; 8 pass "
        "the class selectors and 8 its own selectors, on the node that comes closest, dgx-0"
    )
    assert by_title["gpulint check"] == {"title": "gpulint check", "status": "FAIL", "lines": check_lines(checked)}


# --------------------------------------------------------------------------- (c) check's findings in explain

STALE_SELECTOR = """\
apiVersion: v1
kind: Pod
metadata:
  name: h100-debug
  namespace: ml-research
spec:
  nodeSelector:
    kubernetes.io/hostname: h100-a-3
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - name: debug
    image: registry.example.com/debug:1.0
    resources:
      limits: {nvidia.com/gpu: 1}
"""


def test_stale_gpu_label_of_the_selected_node_is_in_explain(write):
    """h100-a-3 is labelled H100 but its ResourceSlice publishes an A100: the pod schedules, on the wrong GPU."""
    path = write("debug.yaml", STALE_SELECTOR)
    checked = check(path, EXAMPLE)
    assert [(f["rule"], f["line"], f["column"], f["severity"]) for f in checked.json()["findings"]] == [
        ("stale-gpu-label", 9, 29, "warning")
    ]
    assert (
        "e.g. h100-a-3: nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3 but the node's ResourceSlice publishes "
        "NVIDIA-A100-SXM4-80GB" in checked.json()["findings"][0]["notes"][0]
    )
    explained = explain(path, EXAMPLE)
    explanation = only_explanation(explained)
    assert steps(explanation)["gpulint check"] == {
        "title": "gpulint check",
        "status": "info",
        "lines": check_lines(checked),
    }
    assert explanation["scheduler"] == "1/16 nodes pass every filter"
    assert checked.exit_code == explained.exit_code == 0


# --------------------------------------------------------------------------- (d) kubectl describe node


def _described_node(explanation: dict) -> str | None:
    names = [m.group(1) for c in explanation["commands"] if (m := re.match(r"kubectl describe node (\S+)", c))]
    assert len(names) <= 1
    return names[0] if names else None


def _node_labels(inventory: str) -> dict[str, dict[str, str]]:
    labels = {}
    for path in sorted(Path(inventory).glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            for item in (document or {}).get("items", [document]):
                if isinstance(item, dict) and item.get("kind") == "Node":
                    labels[item["metadata"]["name"]] = item["metadata"].get("labels", {})
    return labels


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


POD_SELECTING = """\
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: ml}
spec:
  nodeSelector: %s
  tolerations: %s
  containers:
  - name: main
    image: registry.example.com/main:1.0
    resources:
      limits: {nvidia.com/gpu: %d}
"""


def test_describe_node_skips_nodes_only_affinity_excludes(write):
    """Every node fails; the H100s only for the nodeSelector, the L4s for their capacity: describe an L4."""
    path = write(
        "l4.yaml", POD_SELECTING % ("l4-batch", "{nvidia.com/gpu.product: NVIDIA-L4}", "[{operator: Exists}]", 16)
    )
    explanation = only_explanation(explain(path, FLEET))
    assert _described_node(explanation) == "l4-0"


@pytest.mark.parametrize(
    "inventory, selector, tolerations, gpus",
    [
        # h100-0 is tainted (its first failing filter) and not an L4: the L4s are the nodes to describe.
        (FLEET, {"nvidia.com/gpu.product": "NVIDIA-L4"}, [], 16),
        # The pod fits h100-a-3 (the only node it selects); l4-c-5 is cordoned and not h100-a-3.
        (EXAMPLE, {"kubernetes.io/hostname": "h100-a-3"}, [{"key": "nvidia.com/gpu", "operator": "Exists"}], 1),
    ],
)
def test_describe_node_never_names_a_node_the_selector_excludes(write, inventory, selector, tolerations, gpus):
    path = write("pod.yaml", POD_SELECTING % ("p", json.dumps(selector), json.dumps(tolerations), gpus))
    explanation = only_explanation(explain(path, inventory))
    described = _described_node(explanation)
    assert described is None or _selects(selector, _node_labels(inventory)[described]), described


def test_scheduler_hint_does_not_say_no_node_matches_when_some_do(write):
    path = write(
        "l4.yaml", POD_SELECTING % ("l4-batch", "{nvidia.com/gpu.product: NVIDIA-L4}", "[{operator: Exists}]", 16)
    )
    explanation = only_explanation(explain(path, FLEET))
    assert explanation["scheduler"].startswith(
        "0/8 nodes are available: 3 Insufficient nvidia.com/gpu, 5 node(s) didn't match Pod's node affinity/selector."
    )
    assert "No node matches the pod's nodeSelector" not in explanation["scheduler"]


@pytest.mark.parametrize(
    "inventory, selector, tolerations, gpus, hint",
    [
        # too many GPUs for any node: the hint names the largest node
        (EXAMPLE, {}, [{"operator": "Exists"}], 16, "The largest node that passes the other filters offers 8"),
        # the H100s it selects are tainted: the hint names the taint
        (
            FLEET,
            {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
            [],
            1,
            "Most nodes the pod's node selection allows carry the taint",
        ),
    ],
)
def test_scheduler_line_is_the_cause_gpu_unschedulable_words(write, inventory, selector, tolerations, gpus, hint):
    """One Cause (lint/verdicts/scheduling.py): explain's "Scheduler:" line is gpu-unschedulable's notes, the scheduler's
    summary then the hint."""
    path = write("pod.yaml", POD_SELECTING % ("p", json.dumps(selector), json.dumps(tolerations), gpus))
    (finding,) = [f for f in check(path, inventory).json()["findings"] if f["rule"] == "gpu-unschedulable"]
    explanation = only_explanation(explain(path, inventory))
    summary, said_hint = finding["notes"]
    assert summary.startswith("0/") and said_hint.startswith(hint)
    assert explanation["scheduler"] == f"{summary} {said_hint}"


# --------------------------------------------------------------------------- (e) objects without pods


def _claim_template(count: int) -> str:
    return f"""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpus-{count}
  namespace: ml
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          allocationMode: ExactCount
          count: {count}
"""


def test_claim_template_alone_is_explained(write):
    path = write("claim.yaml", _claim_template(16))
    checked = check(path, DRA)
    explained = explain(path, DRA)
    assert checked.exit_code == explained.exit_code == 1
    explanation = only_explanation(explained)
    assert explanation["heading"] == "ResourceClaimTemplate/ml/gpus-16"
    assert explanation["steps"] == [
        {
            "title": "DRA allocation",
            "status": "FAIL",
            "lines": [
                "the claim can never be allocated: no node of 5 can satisfy it: request 'gpus' needs 16 devices of class "
                "gpu.nvidia.com; 8 pass the class selectors and 8 its own selectors, on the node that comes closest, "
                "dgx-0"
            ],
        },
        {"title": "gpulint check", "status": "FAIL", "lines": check_lines(checked)},
    ]
    assert [f["rule"] for f in checked.json()["findings"]] == ["claim-unsatisfiable"]

    path = write("claim.yaml", _claim_template(4))
    checked, explained = check(path, DRA), explain(path, DRA)
    assert checked.exit_code == explained.exit_code == 0
    assert only_explanation(explained)["steps"] == [
        {"title": "DRA allocation", "status": "ok", "lines": ["the claim can be allocated on 3 of the 5 nodes"]},
        {"title": "gpulint check", "status": "ok", "lines": ["no findings"]},
    ]


VOLCANO_POD_GROUP = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: trainers
  namespace: ml
spec:
  minMember: 4
  queue: default
  minResources:
    nvidia.com/gpu: "%d"
"""


def test_volcano_pod_group_alone_that_never_fits_is_explained(write):
    """The fleet's schedulable nodes have 30 GPUs (l4-2 is cordoned): a group that needs 64 is never admitted."""
    path = write("group.yaml", VOLCANO_POD_GROUP % 64)
    checked, explained = check(path, FLEET), explain(path, FLEET)
    assert checked.exit_code == explained.exit_code == 1
    explanation = only_explanation(explained)
    assert explanation["heading"] == "PodGroup/ml/trainers"
    assert explanation["steps"][-1] == {
        "title": "gpulint check",
        "status": "FAIL",
        "lines": [
            f"{path}:10:21: error[gang-unsatisfiable] the PodGroup needs minResources nvidia.com/gpu: 64 at once, but the "
            "schedulable nodes have 30 in all; the gang is never admitted"
        ],
    }


def test_volcano_pod_group_alone_that_fits_is_explained(write):
    path = write("group.yaml", VOLCANO_POD_GROUP % 16)
    checked, explained = check(path, FLEET), explain(path, FLEET)
    assert checked.exit_code == 0 and checked.json()["findings"] == []
    assert explained.exit_code == 0, explained.stderr
    assert only_explanation(explained)["heading"] == "PodGroup/ml/trainers"


VOLCANO_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: pretrain
  namespace: ml
spec:
  minAvailable: 4
  schedulerName: volcano
  queue: default
  tasks:
  - name: worker
    replicas: 4
    template:
      spec:
        restartPolicy: OnFailure
        tolerations:
        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
        containers:
        - name: worker
          image: registry.example.com/pretrain:1.0
          resources:
            limits: {nvidia.com/gpu: 8}
          volumeMounts: [{name: dshm, mountPath: /dev/shm}]
        volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"""


def test_volcano_gang_is_explained_as_check_judges_it(write):
    """4 workers x 8 GPUs at once; 3 nodes have 8 (h100-0, h100-1, l4-0)."""
    path = write("pretrain.yaml", VOLCANO_JOB)
    checked, explained = check(path, FLEET), explain(path, FLEET)
    assert checked.exit_code == explained.exit_code == 1
    assert [f["rule"] for f in checked.json()["findings"]] == ["gang-unsatisfiable", "gpu-sharing", "gpu-unschedulable"]
    by_title = steps(only_explanation(explained))
    assert by_title["Gang and topology"] == {
        "title": "Gang and topology",
        "status": "FAIL",
        "lines": [
            "Volcano Job: 4 of 4 pods at once",
            "  cannot be placed: Volcano Job needs 4 worker pods x 8 nvidia.com/gpu placed at once; the cluster fits 3",
        ],
    }
    assert by_title["Capacity vs allocatable"]["status"] == "FAIL"
    assert by_title["gpulint check"] == {"title": "gpulint check", "status": "FAIL", "lines": check_lines(checked)}


# --------------------------------------------------------------------------- (f) a bad inventory

BAD_INVENTORIES = {
    "syntax.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: n1\nstatus: {}\n",
    "quantity.yaml": "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {nvidia.com/gpu: eight}}\n",
    "truncated.json": '{"apiVersion": "v1", "kind": "Node",',
    "binary.yaml": "\x00\x01binary",
    "templated.yaml": "x: {{ .Values.nodes }}\n",
}


@pytest.mark.parametrize("name", [*BAD_INVENTORIES, "missing"])
def test_bad_inventory_fails_explain_as_it_fails_check(write, tmp_path, name):
    path = write("shards.yaml", STATEFULSET)
    inventory = tmp_path / "inventory" / name
    if name in BAD_INVENTORIES:
        inventory.parent.mkdir()
        inventory.write_text(BAD_INVENTORIES[name])
    checked = run_cli("check", str(path), "--inventory", str(inventory))
    explained = run_cli("explain", str(path), "--inventory", str(inventory))
    assert checked.exit_code == explained.exit_code == 2
    assert checked.stdout == explained.stdout == ""
    assert explained.stderr == checked.stderr and checked.stderr.startswith("gpulint: error: ")
    assert str(inventory) in checked.stderr and "Traceback" not in checked.stderr


# --------------------------------------------------------------------------- (g) versioned JSON


def test_explain_json_is_versioned(write):
    pod = write("pod.yaml", STATEFULSET)
    claim = write("claim.yaml", _claim_template(16))
    data = json.loads(run_cli("explain", str(pod), str(claim), "--inventory", DRA, "--format", "json").stdout)
    assert list(data) == ["version", "explanations"] and data["version"] == 1
    assert [e["heading"] for e in data["explanations"]] == [
        "StatefulSet/ml/shards (6 pods)",
        "ResourceClaimTemplate/ml/gpus-16",
    ]


def test_explain_json_of_templated_files_is_still_a_document(write):
    """A file holding only Helm/Go template text has nothing to explain: stderr says why, and a JSON
    reader still gets a versioned document with no explanations (found by the pipeline fuzzer)."""
    templated = write("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Values.name }}\n")
    as_json = run_cli("explain", str(templated), "--inventory", DRA, "--format", "json")
    assert as_json.exit_code == 0, as_json.stderr
    assert json.loads(as_json.stdout) == {"version": 1, "explanations": []}
    assert f"{templated}:4:" in as_json.stderr and "templated file" in as_json.stderr
    as_text = run_cli("explain", str(templated), "--inventory", DRA)
    assert as_text.exit_code == 0 and as_text.stdout == ""
    assert "templated file" in as_text.stderr


SPREAD_INVENTORY = """
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: cpu-c, labels: {topology.kubernetes.io/zone: zone-c}},
   status: {allocatable: {cpu: "8", memory: 30Gi, pods: "58"}}}
- {apiVersion: v1, kind: Node, metadata: {name: gpu-a, labels: {topology.kubernetes.io/zone: zone-a}},
   status: {allocatable: {cpu: "48", memory: 185Gi, pods: "110", nvidia.com/gpu: "4"}}}
- {apiVersion: v1, kind: Node, metadata: {name: gpu-b, labels: {topology.kubernetes.io/zone: zone-b}},
   status: {allocatable: {cpu: "48", memory: 185Gi, pods: "110", nvidia.com/gpu: "4"}}}
"""

SPREAD_DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: embedder, namespace: ml}
spec:
  replicas: 3
  selector: {matchLabels: {app: embedder}}
  template:
    metadata: {labels: {app: embedder}}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: embedder}}}
      containers:
      - name: main
        image: registry.example.com/embedder:2.3
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_a_zone_spread_that_caps_the_replicas_is_a_failed_step(write):
    """gpu-unschedulable's topology spread warning (zone-c counted, no GPU node there) is explain's step too."""
    path = write("embedder.yaml", SPREAD_DEPLOYMENT)
    inventory = write("inventory.yaml", SPREAD_INVENTORY)
    checked = check(path, str(inventory))
    assert [f["rule"] for f in checked.json()["findings"]] == ["gpu-unschedulable"]
    assert "lets at most 2 run: it counts zone-c" in checked.json()["findings"][0]["message"]
    spread = steps(only_explanation(explain(path, str(inventory))))["Topology spread"]
    assert spread == {
        "title": "Topology spread",
        "status": "FAIL",
        "lines": [
            "maxSkew 1 over topology.kubernetes.io/zone counts zone-c, where no node can hold a pod: at most 2 of "
            "the 3 pods run (1 in each of zone-a, zone-b)"
        ],
    }


# --------------------------------------------------------------------------- required pod affinity

# loft-sh/devpod-provider-kubernetes#63: the workspace follows its helper (same hostname); the helper has no
# toleration for the only GPU node's taint.
DEVPOD = """\
apiVersion: v1
kind: Pod
metadata:
  name: ws-helper
  namespace: devpod
  labels: {devpod.sh/workspace: ws, devpod.sh/role: init}
spec:
  containers:
  - {name: devpod, image: ghcr.io/loft-sh/dockerless:0.1.4, resources: {requests: {cpu: 100m}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: ws
  namespace: devpod
  labels: {devpod.sh/workspace: ws, devpod.sh/role: workspace}
spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {devpod.sh/workspace: ws, devpod.sh/role: init}}
        topologyKey: kubernetes.io/hostname
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - {name: devpod, image: ghcr.io/loft-sh/dockerless:0.1.4, resources: {limits: {nvidia.com/gpu: 1}}}
"""


def test_required_pod_affinity_is_a_step_of_explain(write):
    """check's warning and explain's step read one verdict: the helper runs on the CPU nodes only, the workspace
    fits gpu-1 only, and InterPodAffinity refuses it there."""
    path = write("devpod.yaml", DEVPOD)
    inventory = write("nodes.yaml", TWO_CPU_ONE_GPU)
    summary = "0/3 nodes are available: 1 node(s) didn't match pod affinity rules, 2 Insufficient nvidia.com/gpu."
    (finding,) = check(path, str(inventory)).json()["findings"]
    assert (finding["rule"], finding["severity"], finding["line"]) == ("gpu-unschedulable", "warning", 21)
    assert summary in finding["notes"]
    data = json.loads(explain(path, str(inventory), "--object", "Pod/devpod/ws").stdout)
    (explanation,) = data["explanations"]
    assert steps(explanation)["Inter-pod affinity"] == {
        "title": "Inter-pod affinity",
        "status": "FAIL",
        "lines": [
            "1 required pod affinity term(s) over kubernetes.io/hostname; the linted pods they match: "
            "Pod/devpod/ws-helper, which can run on cpu-1, cpu-2",
            summary,
        ],
    }
    fixed = DEVPOD.replace(
        "  containers:\n  - {name: devpod, image: ghcr.io/loft-sh/dockerless:0.1.4, resources: {requests",
        "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n  containers:\n"
        "  - {name: devpod, image: ghcr.io/loft-sh/dockerless:0.1.4, resources: {requests",
        1,
    )
    path = write("devpod.yaml", fixed)
    assert check(path, str(inventory)).json()["findings"] == []
    (explanation,) = json.loads(explain(path, str(inventory), "--object", "Pod/devpod/ws").stdout)["explanations"]
    assert steps(explanation)["Inter-pod affinity"]["status"] == "ok"


# --------------------------------------------------------------------------- JobSet's exclusive placement

# kubernetes-sigs/jobset#637 (held-out set 12): the GKE docs' exclusive-topology key on an on-prem cluster whose
# node groups are labelled node-group; the fixed twin names node-group. The pod webhook's leader affinities
# (kube/jobset_placement.leader_spec) need the key on a node.
JOBSET_637 = REPO / "tests" / "heldout12" / "jobset637-exclusive-topology-label-missing"


@pytest.mark.parametrize("twin", ["broken.yaml", "fixed.yaml"])
def test_jobset_exclusive_topology_is_the_inter_pod_affinity_step(write, twin):
    """The leader pod JobSet's webhook makes is what gpu-unschedulable and explain's inter-pod affinity step judge:
    a key no node carries fails both (once, at the annotation); the nodes' own key passes both."""
    # copied out of the repository, whose own configuration would apply to files inside it
    path = write(twin, (JOBSET_637 / twin).read_text(encoding="utf-8"))
    inventory = str(write("inventory.yaml", (JOBSET_637 / "inventory.yaml").read_text(encoding="utf-8")))
    found = [(f["rule"], f["line"]) for f in check(path, inventory).json()["findings"]]
    explained = steps(only_explanation(explain(path, inventory)))
    if twin == "fixed.yaml":
        assert [rule for rule, _ in found if rule == "gpu-unschedulable"] == []
        assert "Inter-pod affinity" not in explained  # the webhook's terms match the Job's own pods: it passes
        return
    assert found.count(("gpu-unschedulable", 9)) == 1
    assert explained["Inter-pod affinity"]["status"] == "FAIL"
    assert explained["Inter-pod affinity"]["lines"][1].endswith("node(s) didn't match pod affinity rules.")


# --------------------------------------------------------------------------- LeaderWorkerSet's exclusive placement

# kubernetes-sigs/lws#257 (held-out set 13): a CPU leader pinned to a CPU node pool, GPU workers in GPU pools, and
# subgroup-exclusive-topology on the node pool; the fixed twin excludes the leader from the subgroups.
LWS_257 = REPO / "tests" / "heldout13" / "lws257-leader-in-gpu-subgroup"


@pytest.mark.parametrize("twin", ["broken.yaml", "fixed.yaml"])
def test_lws_exclusive_topology_is_the_inter_pod_affinity_step(write, twin):
    """The workers LWS's webhook ties to their leader are what gpu-unschedulable and explain's inter-pod affinity
    step judge: no domain shared with the leader's nodes fails both (at the annotation); LeaderExcluded passes."""
    path = write(twin, (LWS_257 / twin).read_text(encoding="utf-8"))
    inventory = str(write("inventory.yaml", (LWS_257 / "inventory.yaml").read_text(encoding="utf-8")))
    found = [(f["rule"], f["line"]) for f in check(path, inventory).json()["findings"]]
    explanations = json.loads(explain(path, inventory).stdout)["explanations"]
    (workers,) = [e for e in explanations if "'worker' pod template" in e["heading"]]
    explained = steps(workers)
    if twin == "fixed.yaml":
        assert [rule for rule, _ in found if rule in ("gpu-unschedulable", "over-tight-affinity")] == []
        assert "Inter-pod affinity" not in explained
        return
    assert found.count(("gpu-unschedulable", 9)) == 1
    assert "over-tight-affinity" not in {rule for rule, _ in found}
    step = explained["Inter-pod affinity"]
    assert step["status"] == "FAIL"
    assert "cpu-pool" in step["lines"][0] and "h100-pool-a, h100-pool-b" in step["lines"][0]
    assert step["lines"][1].endswith("4 node(s) didn't match pod affinity rules.")


# --------------------------------------------------------------------------- a DaemonSet's RuntimeClass scheduling

# kubernetes/kubernetes#111590 (held-out set 13): a DaemonSet whose RuntimeClass alone carries the GPU nodes'
# nodeSelector and toleration; the fixed twin writes them in the template. The controller places from the template.
K8S_111590 = REPO / "tests" / "heldout13" / "k8s111590-daemonset-runtimeclass-nodeselector"


@pytest.mark.parametrize("twin", ["broken.yaml", "fixed.yaml"])
def test_daemonset_runtime_class_scheduling_is_the_coverage_step(write, twin):
    """daemonset-coverage and explain's coverage step read one placement model: the pods the controller makes from
    the template, and the RuntimeClass's nodeSelector and tolerations only on the pods it admits."""
    path = write(twin, (K8S_111590 / twin).read_text(encoding="utf-8"))
    inventory = str(write("inventory.yaml", (K8S_111590 / "inventory.yaml").read_text(encoding="utf-8")))
    found = sorted(
        f["severity"] for f in check(path, inventory).json()["findings"] if f["rule"] == "daemonset-coverage"
    )
    explanations = json.loads(explain(path, inventory).stdout)["explanations"]
    (daemonset,) = [e for e in explanations if e["heading"].startswith("DaemonSet/")]
    step = steps(daemonset)["DaemonSet coverage"]
    if twin == "fixed.yaml":
        assert found == []
        assert step["status"] == "ok"
        return
    assert found == ["error", "warning"]
    assert step["status"] == "FAIL"
    assert any("(cpu-node-1, cpu-node-2): they stay Pending" in line for line in step["lines"])
    assert any("tolerations admit (gpu-node-1, gpu-node-2)" in line for line in step["lines"])
