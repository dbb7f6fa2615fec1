"""The inventory rules on a realistic fleet (tests/data/fleet): failing cases and false-positive traps."""

import json
import shutil
import textwrap

import pytest
from conftest import DATA, by_rule, lint_text, run_cli, said

from gpulint.lint.config import Config
from gpulint.lint.findings import Severity
from gpulint.lint.world.inventory import InventoryError, load_inventory

FLEET = str(DATA / "fleet")
TOLERATE = "tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]"


@pytest.fixture(scope="module")
def inventory():
    return load_inventory([FLEET])


def lint(text: str, inventory, **config):
    return lint_text(text, "w.yaml", Config(**config), inventory)


def pod(spec_lines: str, kind_header: str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n"):
    return kind_header + textwrap.indent(textwrap.dedent(spec_lines).strip("\n"), "  ") + "\n"


def gpu_pod(gpus, extra: str = "", resource: str = "nvidia.com/gpu") -> str:
    """A Pod with one container asking for ``gpus`` of ``resource``; ``extra`` is more of the pod spec."""
    spec = textwrap.dedent(extra).strip("\n") + "\n" if extra.strip() else ""
    spec += f"containers:\n- name: c\n  image: i\n  resources:\n    limits: {{{resource}: {gpus}}}\n"
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n" + textwrap.indent(spec, "  ")


def test_inventory_reads_nodes_slices_classes_and_running_pods(inventory):
    assert len(inventory.nodes) == 8
    assert "gpu.example.com" in inventory.device_classes and len(inventory.slices) == 1
    by_name = {n.name: n for n in inventory.nodes}
    assert by_name["h100-0"].used["nvidia.com/gpu"] == 8 and by_name["h100-1"].used["nvidia.com/gpu"] == 4
    assert "nvidia.com/gpu" not in by_name["h100-2"].used  # a Succeeded pod holds nothing


# ----------------------------------------------------------------- gpu-resource-unknown


def test_typo_in_resource_name_is_unknown_with_a_suggestion(inventory):
    (finding,) = by_rule(lint(gpu_pod(1, resource="nvidia.com/gpus"), inventory), "gpu-resource-unknown")
    assert finding.message.endswith("; did you mean nvidia.com/gpu?")
    assert "0/8 nodes are available: 8 Insufficient nvidia.com/gpus." in finding.notes[0]
    assert (finding.line, finding.column) == (9, 16)
    # and gpu-unschedulable does not say it a second time
    assert by_rule(lint(gpu_pod(1, resource="nvidia.com/gpus"), inventory), "gpu-unschedulable") == []


@pytest.mark.parametrize(
    "resource", ["nvidia.com/mig-1g.5gb", "example.com/gpu", "deviceclass.resource.kubernetes.io/gpu.example.com"]
)
def test_published_and_dra_backed_resources_are_known(inventory, resource):
    assert by_rule(lint(gpu_pod(1, resource=resource), inventory), "gpu-resource-unknown") == []


def test_mig_profile_no_node_offers(inventory):
    (finding,) = by_rule(lint(gpu_pod(1, resource="nvidia.com/mig-3g.20gb"), inventory), "gpu-resource-unknown")
    assert "nvidia.com/mig-1g.5gb" in said(finding)


def test_a_hami_share_no_node_publishes_is_info_without_a_suggestion(inventory):
    # HAMi's scheduler extender accounts for nvidia.com/gpumem (ignoredByScheduler): nodes never publish it
    hami = gpu_pod(1).replace("{nvidia.com/gpu: 1}", "{nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 50}")
    (finding,) = by_rule(lint(hami, inventory), "gpu-resource-unknown")
    assert finding.severity == Severity.INFO and "did you mean" not in said(finding)
    assert finding.message == (
        "container 'c' asks for nvidia.com/gpumem-percentage, a HAMi share no node publishes: only HAMi's "
        "scheduler can place the pod"
    )
    assert (finding.line, finding.column) == (9, 35)


def test_a_known_device_plugin_resource_gets_no_suggestion_but_a_typo_does(inventory):
    # amd.com/gpu is the AMD device plugin's, not a typo of a published name: no "did you mean"
    (amd,) = by_rule(lint(gpu_pod(1, resource="amd.com/gpu"), inventory), "gpu-resource-unknown")
    assert amd.severity == Severity.ERROR and "did you mean" not in said(amd)
    assert "asks for amd.com/gpu (advertised by the AMD GPU device plugin), which none of the 8 nodes" in amd.message
    # boundary: an unknown name one letter off a published one keeps its suggestion
    (typo,) = by_rule(lint(gpu_pod(1, resource="nvidia.com/gpuu"), inventory), "gpu-resource-unknown")
    assert typo.message.endswith("; did you mean nvidia.com/gpu?")


def test_device_class_in_the_linted_files_counts(write, tmp_path):
    nodes_only = write("inv/nodes.yaml", (DATA / "fleet" / "nodes.yaml").read_text())
    manifest = write(
        "app/app.yaml",
        (DATA / "fleet" / "dra.yaml").read_text().split("---")[0] + "---\n" + gpu_pod(1, resource="example.com/gpu"),
    )
    report = run_cli("check", str(manifest), "--inventory", str(nodes_only), "--format", "json").json()
    assert [f["rule"] for f in report["findings"] if f["rule"] == "gpu-resource-unknown"] == []


# ----------------------------------------------------------------- gpu-unschedulable


def test_more_gpus_than_any_node_has(inventory):
    (finding,) = by_rule(lint(gpu_pod(16, TOLERATE), inventory), "gpu-unschedulable")
    assert finding.severity == Severity.ERROR
    assert finding.message == "this pod can never be scheduled on this cluster, even empty"
    assert finding.notes[0] == "0/8 nodes are available: 1 node(s) were unschedulable, 7 Insufficient nvidia.com/gpu."
    assert (
        "largest node that passes the other filters offers 8 nvidia.com/gpu; this pod asks for 16" in finding.notes[1]
    )


def test_untolerated_taints_and_the_fit_on_untainted_nodes(inventory):
    # 8 GPUs without the toleration: only the untainted L4 node with 8 (time-sliced) replicas fits
    assert by_rule(lint(gpu_pod(8), inventory), "gpu-unschedulable") == []
    (finding,) = by_rule(
        lint(gpu_pod(8, "nodeSelector: {topology.kubernetes.io/zone: zone-a}"), inventory), "gpu-unschedulable"
    )
    # worded as the 1.37 scheduler words it (kubernetes#134740); the taint goes into the hint
    assert "1 node(s) were unschedulable, 3 node(s) had untolerated taint(s), 4 node(s) didn't" in finding.notes[0]
    assert "carry the taint {nvidia.com/gpu: present}: add a matching toleration" in finding.notes[1]
    # a 1.33 scheduler still named the taint in its reason
    older = lint(
        gpu_pod(8, "nodeSelector: {topology.kubernetes.io/zone: zone-a}"), inventory, kubernetes_version="1.33"
    )
    (named,) = by_rule(older, "gpu-unschedulable")
    assert "3 node(s) had untolerated taint {nvidia.com/gpu: present}, 4 node(s)" in named.notes[0]
    assert "carry the taint {nvidia.com/gpu: present}: add a matching toleration" in named.notes[1]


def test_fits_empty_but_not_now_is_a_warning(inventory):
    spec = f"{TOLERATE}\nnodeSelector: {{topology.kubernetes.io/rack: r1}}"
    (finding,) = by_rule(lint(gpu_pod(8, spec), inventory), "gpu-unschedulable")
    assert finding.severity == Severity.WARNING
    assert "fits on the empty cluster (2 nodes) but not with the pods running now" in finding.message
    assert "2 Insufficient nvidia.com/gpu" in finding.notes[0]
    assert finding.notes[-1] == "it waits for capacity, or preempts lower-priority pods if its priority allows"


def test_replicas_that_do_not_all_fit(inventory):
    deployment = """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: d}
        spec:
          replicas: 5
          selector: {matchLabels: {a: b}}
          template:
            metadata: {labels: {a: b}}
            spec:
              tolerations: [{key: nvidia.com/gpu, operator: Exists}]
              containers:
              - name: c
                image: i
                resources: {limits: {nvidia.com/gpu: 8}}
    """
    (finding,) = by_rule(lint(deployment, inventory), "gpu-unschedulable")
    assert finding.severity == Severity.WARNING
    assert "runs 5 of these pods, but only 3 fit" in finding.message


def test_daemonset_pods_get_the_controllers_tolerations(inventory):
    daemonset = """
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: dcgm}
        spec:
          selector: {matchLabels: {a: b}}
          template:
            metadata: {labels: {a: b}}
            spec:
              nodeSelector: {kubernetes.io/hostname: l4-2}
              containers:
              - name: c
                image: i
                resources: {limits: {nvidia.com/gpu: 1}}
    """
    assert by_rule(lint(daemonset, inventory), "gpu-unschedulable") == []  # tolerates the cordon


def test_pods_without_extended_resources_are_not_judged(inventory):
    text = pod("""
        nodeSelector: {pool: does-not-exist}
        containers: [{name: c, image: i, resources: {requests: {cpu: "1000"}}}]
    """)
    assert by_rule(lint(text, inventory), "gpu-unschedulable") == []


def test_dra_extended_resource_is_left_to_dra(inventory):
    assert by_rule(lint(gpu_pod(2, resource="example.com/gpu"), inventory), "gpu-unschedulable") == []


# ----------------------------------------------------------------- over-tight-affinity


def test_affinity_matching_no_node_names_the_expression_and_the_real_values(inventory):
    text = gpu_pod(
        1,
        """affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions:
                - {key: topology.kubernetes.io/zone, operator: In, values: [zone-a, zone-c]}
                - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB]}""",
    )
    (finding,) = by_rule(lint(text, inventory), "over-tight-affinity")
    assert finding.severity == Severity.ERROR
    assert "'nvidia.com/gpu.product In [NVIDIA-H100-80GB]' alone excludes 8" in finding.message
    assert "NVIDIA-H100-80GB-HBM3 (3)" in finding.notes[0]
    assert finding.line == 11  # the expression that excludes the most nodes


def test_affinity_to_nodes_without_the_gpu(inventory):
    """One cause, one finding: the selector is why the pod cannot run, so over-tight-affinity reports it,
    an error (the inventory holds every node), with the scheduler's summary; gpu-unschedulable is silent."""
    findings = lint(gpu_pod(1, "nodeSelector: {kubernetes.io/hostname: cpu-0}"), inventory)
    (finding,) = by_rule(findings, "over-tight-affinity")
    assert finding.severity == Severity.ERROR
    assert "none of them offers nvidia.com/gpu" in finding.message
    notes = "\n".join(finding.notes)
    assert "the pod stays Pending: 0/" in notes and "Insufficient nvidia.com/gpu" in notes
    assert by_rule(findings, "gpu-unschedulable") == []
    # the verdict's cause is over-tight-affinity's whichever rules run: gpu-unschedulable alone is silent
    alone = lint(gpu_pod(1, "nodeSelector: {kubernetes.io/hostname: cpu-0}"), inventory, select=("gpu-unschedulable",))
    assert alone == []


def test_preferred_affinity_and_matching_selectors_are_clean(inventory):
    preferred = gpu_pod(
        1,
        """affinity:
          nodeAffinity:
            preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 1
              preference: {matchExpressions: [{key: nope, operator: Exists}]}""",
    )
    assert by_rule(lint(preferred, inventory), "over-tight-affinity") == []
    ok = gpu_pod(1, "nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}")
    assert by_rule(lint(ok, inventory), "over-tight-affinity") == []


def test_affinity_that_limits_replicas(inventory):
    statefulset = """
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: s}
        spec:
          replicas: 3
          serviceName: s
          selector: {matchLabels: {a: b}}
          template:
            metadata: {labels: {a: b}}
            spec:
              tolerations: [{key: nvidia.com/gpu, operator: Exists}]
              nodeSelector: {topology.kubernetes.io/rack: r2}
              containers:
              - name: c
                image: i
                resources: {limits: {nvidia.com/gpu: 4}}
    """
    findings = lint(statefulset, inventory)
    (finding,) = by_rule(findings, "over-tight-affinity")
    assert "needs 3 pods, but the one node its required" in finding.message and "hold only 1" in finding.message
    assert by_rule(findings, "gpu-unschedulable") == []  # one cause, one finding
    # the selection is the cause whichever rules run: without over-tight-affinity, nothing is reported
    assert by_rule(lint(statefulset, inventory, ignore=("over-tight-affinity",)), "gpu-unschedulable") == []


# ----------------------------------------------------------------- stale-gpu-label


def test_stale_labels_on_the_inventory_nodes():
    report = run_cli("check", str(DATA / "fleet" / "nodes.yaml"), "--inventory", FLEET, "--format", "json").json()
    stale = {
        (f["object"]["name"], f["line"]): f["message"] for f in report["findings"] if f["rule"] == "stale-gpu-label"
    }
    names = sorted(name for name, _ in stale)
    # h100-1: product label vs slice; h100-2: unhealthy GPUs; l4-1: plugin down; l4-2: count label stale
    assert names == ["h100-1", "h100-2", "l4-1", "l4-2"]
    messages = " | ".join(stale.values())
    assert "ResourceSlice publishes NVIDIA-A100-SXM4-80GB" in messages
    assert "capacity 8 but allocatable 6" in messages
    assert "advertises no nvidia.com/gpu" in messages
    assert "nvidia.com/gpu.count=2 but the node's capacity is 4" in messages


def test_mig_and_time_slicing_nodes_are_not_stale():
    report = run_cli("check", str(DATA / "fleet" / "nodes.yaml"), "--inventory", FLEET, "--format", "json").json()
    names = {f["object"]["name"] for f in report["findings"] if f["rule"] == "stale-gpu-label"}
    assert "a100-mig" not in names and "l4-0" not in names


def test_workload_selecting_only_stale_nodes(inventory):
    text = gpu_pod(
        1,
        f"{TOLERATE}\nnodeSelector: {{kubernetes.io/hostname: h100-1, nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}}",
    )
    (finding,) = by_rule(lint(text, inventory), "stale-gpu-label")
    assert finding.message.endswith("but the one node the pod's node selection allows has stale GPU labels")
    assert finding.notes[0].startswith("e.g. h100-1: ")


# ----------------------------------------------------------------- the pipeline


def test_without_inventory_the_rules_are_skipped_and_the_summary_says_so(write):
    path = write("p.yaml", gpu_pod(16))
    result = run_cli("check", str(path))
    assert result.exit_code == 0
    # every rule whose spec needs nodes, named once (the note is derived from the rules' specs)
    # too many to name on one line: counted on it, listed under it
    listed = (
        "claim-unsatisfiable, daemonset-coverage, gang-unsatisfiable, gpu-resource-unknown, "
        "gpu-sharing (in part), gpu-unschedulable, over-tight-affinity, over-tight-topology"
    )  # gpu-sharing still reads Volcano's scheduler configuration from the files
    assert f"note: no cluster inventory with nodes (--inventory): skipped 8 rules\n    {listed}\n" in result.stdout
    note = f"no cluster inventory with nodes (--inventory): skipped 8 rules\n{listed}"
    assert run_cli("check", str(path), "--format", "json").json()["notes"] == [note]
    only = run_cli("check", str(path), "--select", "gpu-unschedulable,gpu-non-integer", "--format", "json").json()
    assert only["notes"] == ["no cluster inventory with nodes (--inventory): skipped gpu-unschedulable"]


def test_broken_inventory_is_a_usage_error_with_a_position(write):
    bad = write("inv.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: [\n")
    path = write("p.yaml", gpu_pod(1))
    result = run_cli("check", str(path), "--inventory", str(bad))
    assert result.exit_code == 2
    assert f"{bad}:4:1: inventory: YAML syntax error" in result.stderr
    with pytest.raises(InventoryError):
        load_inventory([str(bad)])
    assert run_cli("check", str(path), "--inventory", "/no/such/inventory").exit_code == 2


def test_inventory_from_the_config_file(write, tmp_path, monkeypatch):
    write("apps/p.yaml", gpu_pod(16, TOLERATE))
    shutil.copytree(FLEET, tmp_path / "inventory")  # a repository's configuration names its own files only
    write(".gpulint.yaml", "inventory: [inventory]\n")
    monkeypatch.chdir(tmp_path)
    report = run_cli("check", "apps", "--format", "json", "--ignore", "dev-shm-missing")
    assert report.exit_code == 1
    assert [f["rule"] for f in report.json()["findings"]] == ["gpu-unschedulable"]


def test_inventory_command(tmp_path):
    result = run_cli("inventory", "--inventory", FLEET)
    assert result.exit_code == 0
    assert "Nodes: 8 (2 running pods accounted)" in result.stdout
    assert "NVIDIA-H100-80GB-HBM3  3" in result.stdout
    assert "stale-gpu-label" in result.stdout
    data = json.loads(run_cli("inventory", "--inventory", FLEET, "--format", "json").stdout)
    gpu = data["summary"]["resources"]["nvidia.com/gpu"]
    assert gpu == {"capacity": 36, "allocatable": 34, "free": 22}
    assert data["summary"]["deviceClasses"] == {"gpu.example.com": {"extendedResourceName": "example.com/gpu"}}
    assert run_cli("inventory").exit_code == 2


def test_explain_command(write):
    path = write(
        "job.yaml",
        """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: big, namespace: ml}
        spec:
          template:
            metadata: {labels: {app: big}}
            spec:
              restartPolicy: Never
              tolerations: [{key: nvidia.com/gpu, operator: Exists}]
              containers:
              - name: c
                image: i
                resources: {limits: {nvidia.com/gpu: 16}}
                volumeMounts: [{name: dshm, mountPath: /dev/shm}]
              volumes: [{name: dshm, emptyDir: {medium: Memory}}]
    """,
    )
    result = run_cli("explain", str(path), "--inventory", FLEET, "--object", "job/ml/big")
    assert result.exit_code == 1  # as `check` exits: the Job is gpu-unschedulable
    out = result.stdout
    assert "== Job/ml/big (1 pod)" in out
    assert "2. Capacity vs allocatable: FAIL" in out
    assert "Scheduler: 0/8 nodes are available: 1 node(s) were unschedulable, 7 Insufficient nvidia.com/gpu." in out
    assert "kubectl describe pods -n ml -l app=big" in out
    # check's own finding on the object, from the same run
    assert f"6. gpulint check: FAIL\n     {path}:13:46: error[gpu-unschedulable] this pod can never be scheduled" in out
    assert run_cli("explain", str(path), "--inventory", FLEET, "--object", "job/other").exit_code == 2


def test_amd_labels_without_the_device_plugin_and_custom_gpu_resources(write):
    nodes = write(
        "nodes.yaml",
        """
        apiVersion: v1
        kind: List
        items:
        - apiVersion: v1
          kind: Node
          metadata:
            name: mi300-0
            labels: {amd.com/gpu.product-name: AMD_Instinct_MI300X_OAM, amd.com/gpu.vram: 192G}
          status:
            capacity: {cpu: "96", pods: "110"}
        - apiVersion: v1
          kind: Node
          metadata: {name: mi300-1, labels: {amd.com/gpu.product-name: AMD_Instinct_MI300X_OAM}}
          status:
            capacity: {cpu: "96", pods: "110", amd.com/gpu: "8", example.com/accelerator: "4"}
            allocatable: {cpu: "96", pods: "110", amd.com/gpu: "8", example.com/accelerator: "2"}
    """,
    )
    report = run_cli("check", str(nodes), "--format", "json").json()
    (finding,) = [f for f in report["findings"] if f["rule"] == "stale-gpu-label"]
    assert finding["object"]["name"] == "mi300-0" and "no amd.com/gpu" in finding["message"]
    assert finding["line"] == 8  # the first AMD label key
    write(".gpulint.yaml", "gpu-resources: [example.com/accelerator]\n")
    report = run_cli("check", str(nodes), "--format", "json", "--config", str(nodes.parent / ".gpulint.yaml")).json()
    messages = [said(f) for f in report["findings"] if f["object"]["name"] == "mi300-1"]
    assert messages == [
        "example.com/accelerator: capacity 4 but allocatable 2: 2 device(s) are unhealthy or withheld "
        "by the device plugin\nworkloads sized for the full node will not fit"
    ]


def test_gpu_unschedulable_points_at_the_gpu_limit(inventory):
    (finding,) = by_rule(lint(gpu_pod(16, TOLERATE), inventory), "gpu-unschedulable")
    assert (finding.line, finding.column) == (10, 32)  # limits' nvidia.com/gpu value


def test_inventory_counts_dra_devices_per_class():
    data = json.loads(run_cli("inventory", "--inventory", str(DATA / "dra"), "--format", "json").stdout)
    summary = data["summary"]
    assert summary["draDevicesByDriver"]["gpu.nvidia.com"] == 8 + 8 + 4 + 1 + 7
    assert summary["draDevicesByClass"] == {
        "gpu.nvidia.com": 21,
        "mig.nvidia.com": 7,
        "rdma.example.com": 4,
        "fabric.example.com": 1,
    }


def test_parallel_output_is_deterministic(tmp_path):
    for index in range(60):
        (tmp_path / f"f{index:02d}.yaml").write_text(gpu_pod(index % 3 + 1, resource="nvidia.com/gpus"))
    only = ("--ignore", "dev-shm-missing")  # the typo'd resource is what this run is about
    serial = run_cli("check", str(tmp_path), "--inventory", FLEET, "--jobs", "1", "--format", "json", *only)
    parallel = run_cli("check", str(tmp_path), "--inventory", FLEET, "--jobs", "2", "--format", "json", *only)
    assert serial.stdout == parallel.stdout and len(serial.json()["findings"]) == 60


def test_explain_json(write):
    path = write("p.yaml", gpu_pod(16, TOLERATE))
    data = json.loads(run_cli("explain", str(path), "--inventory", FLEET, "--format", "json").stdout)
    assert data["version"] == 1
    (explanation,) = data["explanations"]
    assert explanation["heading"] == "Pod/ml/p (1 pod)"
    assert [step["status"] for step in explanation["steps"]][:2] == ["ok", "FAIL"]
    assert explanation["scheduler"].startswith("0/8 nodes are available:")
    assert sum(row["count"] for row in explanation["nodes"]) == 8


def test_stale_amd_labels_are_reported_at_the_first_label_in_name_order(write):
    """The finding names the AMD label first in name order (as sorted), wherever the manifest writes it."""
    nodes = write(
        "nodes.yaml",
        """
        apiVersion: v1
        kind: Node
        metadata:
          name: mi300-0
          labels:
            amd.com/gpu.vram: 192G
            kubernetes.io/hostname: mi300-0
            beta.amd.com/gpu.family: AI
            amd.com/gpu.product-name: AMD_Instinct_MI300X_OAM
        status:
          capacity: {cpu: "96", pods: "110"}
        """,
    )
    report = run_cli("check", str(nodes), "--format", "json").json()
    (finding,) = [f for f in report["findings"] if f["rule"] == "stale-gpu-label"]
    assert (finding["line"], finding["column"]) == (9, 5)
    assert finding["message"].startswith("labelled amd.com/gpu.product-name=AMD_Instinct_MI300X_OAM but the node")


def test_reserved_cpu_and_memory_are_not_unhealthy_devices(write):
    """Every real node reserves CPU and memory for the system (allocatable below capacity): only GPU resources
    below their capacity are devices withheld."""
    node = """
        apiVersion: v1
        kind: Node
        metadata:
          name: h100-0
          labels: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, nvidia.com/gpu.count: "8"}
        status:
          capacity: {cpu: "192", memory: 2Ti, pods: "110", ephemeral-storage: 3Ti, nvidia.com/gpu: "8"}
          allocatable: {cpu: "190", memory: 1900Gi, pods: "110", ephemeral-storage: 2800Gi, nvidia.com/gpu: "GPUS"}
        """
    report = run_cli("check", str(write("nodes.yaml", node.replace("GPUS", "8"))), "--format", "json").json()
    assert [f for f in report["findings"] if f["rule"] == "stale-gpu-label"] == []
    report = run_cli("check", str(write("nodes.yaml", node.replace("GPUS", "6"))), "--format", "json").json()
    assert [said(f) for f in report["findings"] if f["rule"] == "stale-gpu-label"] == [
        "nvidia.com/gpu: capacity 8 but allocatable 6: 2 device(s) are unhealthy or withheld by the device plugin; "
        "workloads sized for the full node will not fit"
    ]
