"""Gangs on a three-rack cluster (tests/data/racks): r1 4x8 GPUs, r2 2x8 GPUs in zone-a; r3 3x4 GPUs in zone-b."""

import itertools
import textwrap
from collections import Counter
from fractions import Fraction

import pytest
from conftest import DATA, by_rule, lint_text, run_cli, said
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpulint.kube.gangs.members import Gang, Member, pack
from gpulint.kube.gangs.packing import Budget, NodeKind, Outcome, Shape, _Problem, decide, node_kind, request_units
from gpulint.kube.resources import accelerator_noun
from gpulint.kube.scheduler import ClusterModel, NodeInfo, pod_requirements
from gpulint.lint.config import Config
from gpulint.lint.findings import Severity
from gpulint.lint.inputs.sources import Source
from gpulint.lint.run import LintRun
from gpulint.lint.world.inventory import load_inventory

RACKS = str(DATA / "racks")


def lint(text: str, with_inventory: bool = True, **config):
    return lint_text(text, "gang.yaml", Config(**config), load_inventory([RACKS]) if with_inventory else None)


def volcano_job(workers: int, gpus: int = 8, min_available: int | None = None, topology: str = "") -> str:
    annotations = (
        "\n" + " " * 16 + f"annotations: {{kueue.x-k8s.io/podset-required-topology: {topology}}}" if topology else ""
    )
    minimum = f"\n          minAvailable: {min_available if min_available is not None else workers}"
    return textwrap.dedent(f"""
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {{name: llm, namespace: ml}}
        spec:{minimum}
          schedulerName: volcano
          tasks:
          - name: worker
            replicas: {workers}
            template:
              metadata:{annotations or " {}"}
              spec:
                containers:
                - name: w
                  image: i
                  resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
    """)


# ----------------------------------------------------------------- gang-unsatisfiable / over-tight-topology


def test_exactly_enough_capacity_fits():
    findings = lint(volcano_job(6))
    assert by_rule(findings, "gang-unsatisfiable") == []


def test_one_more_worker_than_the_cluster_holds():
    (finding,) = by_rule(lint(volcano_job(7)), "gang-unsatisfiable")
    assert "needs 7 worker pods x 8 nvidia.com/gpu placed at once; the cluster fits 6" in finding.message
    assert finding.line == 5  # minAvailable


def test_rack_topology_that_only_one_rack_satisfies():
    findings = lint(volcano_job(4, topology="topology.kubernetes.io/rack"))
    assert by_rule(findings, "gang-unsatisfiable") == []
    (finding,) = by_rule(findings, "over-tight-topology")
    assert "only topology.kubernetes.io/rack=r1 can host the whole gang" in finding.message


def test_capacity_split_across_two_racks():
    findings = lint(volcano_job(5, topology="topology.kubernetes.io/rack"))
    (unsat,) = by_rule(findings, "gang-unsatisfiable")
    assert "in one topology.kubernetes.io/rack; the best rack (r1) fits 4" in unsat.message
    # one cause, one finding: the error names the requirement; over-tight-topology says nothing more
    assert (
        "the topology requirement 'topology.kubernetes.io/rack' is the cause: the cluster as a whole could hold "
        "the gang" in unsat.notes
    )
    assert by_rule(findings, "over-tight-topology") == []
    # the verdict's cause is gang-unsatisfiable's whichever rules run: over-tight-topology alone says nothing
    alone = lint(volcano_job(5, topology="topology.kubernetes.io/rack"), select=("over-tight-topology",))
    assert alone == []


def test_partial_minimum_of_identical_pods():
    assert by_rule(lint(volcano_job(10, min_available=6)), "gang-unsatisfiable") == []
    assert len(by_rule(lint(volcano_job(10, min_available=7)), "gang-unsatisfiable")) == 1


def test_native_podgroup_with_topology_and_referencing_pods():
    text = """
        apiVersion: scheduling.k8s.io/v1beta1
        kind: PodGroup
        metadata: {name: workers, namespace: ml}
        spec:
          schedulingPolicy: {gang: {minCount: 3}}
          schedulingConstraints: {topology: [{key: topology.kubernetes.io/rack}]}
        ---
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: w, namespace: ml}
        spec:
          replicas: 3
          serviceName: w
          selector: {matchLabels: {a: b}}
          template:
            metadata: {labels: {a: b}}
            spec:
              schedulingGroup: {podGroupName: workers}
              containers:
              - {name: c, image: i, resources: {limits: {nvidia.com/gpu: 8}}}
    """
    findings = lint(text)
    assert by_rule(findings, "gang-unsatisfiable") == []  # r1 holds 4
    assert by_rule(findings, "gang-inconsistent") == []
    (info,) = [f for f in by_rule(findings, "feature-gate-required") if f.obj.kind == "StatefulSet"]
    assert info.severity == Severity.INFO and "GenericWorkload" in info.message
    bigger = text.replace("minCount: 3", "minCount: 5").replace("replicas: 3", "replicas: 5")
    (finding,) = by_rule(lint(bigger), "gang-unsatisfiable")
    assert "PodGroup workers needs 5" in finding.message and finding.obj.kind == "StatefulSet"


def test_several_member_shapes_use_the_exact_search():
    launcher_and_workers = """
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {name: mpi, namespace: ml}
        spec:
          minAvailable: %d
          schedulerName: volcano
          tasks:
          - name: launcher
            replicas: 1
            template:
              spec:
                containers: [{name: l, image: i, resources: {requests: {cpu: "60"}}}]
          - name: worker
            replicas: %d
            template:
              spec:
                containers: [{name: w, image: i, resources: {requests: {cpu: "10"}, limits: {nvidia.com/gpu: 8}}}]
    """
    assert by_rule(lint(launcher_and_workers % (7, 6)), "gang-unsatisfiable") == []
    assert len(by_rule(lint(launcher_and_workers % (8, 7)), "gang-unsatisfiable")) == 1


# ----------------------------------------------------------------- gang-inconsistent


def test_minimum_larger_than_the_pods():
    (finding,) = by_rule(lint(volcano_job(4, min_available=6), with_inventory=False), "gang-inconsistent")
    assert "requires 6 pods at once but the workload creates only 4" in finding.message
    # Volcano's job webhook refuses such a Job at creation (admit_job.go, v1.15.1): said in its words
    assert said(finding).endswith(
        "Volcano's webhook refuses the Job: job 'minAvailable' should not be greater than total replicas in tasks"
    )


def test_coscheduling_group_minimum_and_missing_groups():
    group = """
        apiVersion: scheduling.x-k8s.io/v1alpha1
        kind: PodGroup
        metadata: {name: nginx, namespace: ml}
        spec: {minMember: 4}
        ---
    """
    deployment = """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: d, namespace: ml}
        spec:
          replicas: 3
          selector: {matchLabels: {a: b}}
          template:
            metadata:
              labels: {a: b, scheduling.x-k8s.io/pod-group: nginx}
            spec:
              schedulerName: scheduler-plugins-scheduler
              containers: [{name: c, image: i}]
    """
    (finding,) = by_rule(lint(textwrap.dedent(group) + textwrap.dedent(deployment)), "gang-inconsistent")
    assert "requires 4 pods at once but this object creates only 3" in finding.message
    # a group found nowhere proves nothing (before: a warning): the operator or a chart may create it
    assert by_rule(lint(deployment), "gang-inconsistent") == []
    (missing,) = by_rule(lint(deployment, complete={"PodGroup": ("*",)}), "gang-inconsistent")
    assert missing.severity == Severity.ERROR and "coscheduling PodGroup 'nginx'" in missing.message
    assert "which does not exist: they stay unschedulable until it exists" in missing.message


COSCHEDULING_GROUP = """
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: nccl-allreduce, namespace: ml}
spec:
  minMember: %d
  scheduleTimeoutSeconds: 60
"""
# One of the bare Pods of the group, as the scheduler-plugins docs write them.
COSCHEDULED_POD = """
apiVersion: v1
kind: Pod
metadata:
  name: nccl-%d
  namespace: ml
  labels: {scheduling.x-k8s.io/pod-group: nccl-allreduce}
spec:
  schedulerName: scheduler-plugins-scheduler
  containers:
  - name: nccl
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits: {nvidia.com/gpu: %d}
"""


def lint_files(files: dict[str, str], with_inventory: bool = True):
    sources = [Source(name, content=text.lstrip().encode()) for name, text in files.items()]
    inventory = load_inventory([RACKS]) if with_inventory else None
    return LintRun(Config(), sources, inventory).report()


def _gang_group(pods: int, minimum: int, gpus: int = 4) -> dict[str, str]:
    files = {"podgroup.yaml": COSCHEDULING_GROUP % minimum}
    files.update({f"pod-{i}.yaml": COSCHEDULED_POD % (i, gpus) for i in range(pods)})
    return files


def test_bare_pods_of_one_coscheduling_group_are_counted_together():
    """False positive seen on real repositories: each Pod of a 4x4 gang was a workload that
    "creates only 1" of the 4 pods the group requires."""
    report = lint_files(_gang_group(4, 4))
    assert [f for f in report.findings if f.rule.startswith("gang-")] == []
    short = lint_files(_gang_group(3, 4), with_inventory=False)
    (finding,) = by_rule(short.findings, "gang-inconsistent")  # once for the group, not once per Pod
    assert finding.file == "pod-0.yaml" and finding.line == 6  # the label of the first Pod
    line = (COSCHEDULED_POD % (0, 4)).lstrip().splitlines()[finding.line - 1]
    assert line[finding.column - 1 :] == "nccl-allreduce}"
    assert said(finding) == (
        "coscheduling PodGroup nccl-allreduce: its group requires 4 pods at once but the 3 objects that join "
        "it create only 3\nthe gang can never reach quorum and its pods wait forever"
    )


def test_bare_pods_of_a_group_too_large_for_the_cluster_are_one_finding():
    # racks: 4 + 2 nodes of 8 GPUs and 3 of 4: seven pods of 8 GPUs never fit at once, six do
    (finding,) = by_rule(lint_files(_gang_group(7, 7, gpus=8)).findings, "gang-unsatisfiable")
    assert finding.file == "pod-0.yaml"
    assert finding.message.startswith("coscheduling PodGroup nccl-allreduce needs 7 pods x 8 nvidia.com/gpu")
    assert by_rule(lint_files(_gang_group(6, 6, gpus=8)).findings, "gang-unsatisfiable") == []


def test_members_with_different_schedulers():
    text = (
        volcano_job(2)
        + textwrap.indent(
            textwrap.dedent("""
        - name: evaluator
          replicas: 1
          template:
            spec:
              schedulerName: default-scheduler
              containers: [{name: e, image: i}]
    """).strip("\n"),
            "  ",
        )
        + "\n"
    )
    (finding,) = by_rule(lint(text, with_inventory=False), "gang-inconsistent")
    assert "different schedulers (default-scheduler, volcano)" in finding.message


# ----------------------------------------------------------------- gang-missing

PYTORCH = """
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata: {name: ddp, namespace: ml%s}
    spec:%s
      pytorchReplicaSpecs:
        Worker:
          replicas: %d
          template:
            spec:
              containers:
              - {name: pytorch, image: i, resources: {limits: {%s: 8}}}
"""


@pytest.mark.parametrize(
    "labels, policy, workers, resource, expected",
    [
        ("", "", 2, "nvidia.com/gpu", 1),
        ("", "\n  runPolicy: {schedulingPolicy: {minAvailable: 2}}", 2, "nvidia.com/gpu", 0),
        (", labels: {kueue.x-k8s.io/queue-name: team-a}", "", 2, "nvidia.com/gpu", 0),
        ("", "", 1, "nvidia.com/gpu", 0),
        ("", "", 4, "cpu", 0),
    ],
)
def test_gang_missing(labels, policy, workers, resource, expected):
    text = textwrap.dedent(PYTORCH % (labels, policy, workers, resource))
    assert len(by_rule(lint(text, with_inventory=False), "gang-missing")) == expected


def test_indexed_job_with_gpus_needs_a_gang():
    job = """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j}
        spec:
          completionMode: Indexed
          parallelism: 4
          completions: 4
          template:
            spec:
              restartPolicy: Never
              containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]
    """
    assert len(by_rule(lint(job, with_inventory=False), "gang-missing")) == 1
    assert by_rule(lint(job.replace("Indexed", "NonIndexed"), with_inventory=False), "gang-missing") == []


# A JobSet as the JobSet docs write one for TPU slices: one Job per slice, exclusive per node pool.
TPU_JOBSET = """
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata:
      name: multislice
      annotations:%s
    spec:
      failurePolicy: {maxRestarts: 3}
      replicatedJobs:
      - name: slice
        replicas: 2
        template:%s
          spec:
            parallelism: 4
            completions: 4
            backoffLimit: 0
            template:
              spec:
                nodeSelector:
                  cloud.google.com/gke-tpu-accelerator: tpu-v5-lite-podslice
                  cloud.google.com/gke-tpu-topology: 4x4
                containers:
                - name: jax-tpu
                  image: python:3.11
                  resources:
                    limits: {google.com/tpu: 4}
"""
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool"


def test_gang_missing_words_the_accelerator_and_knows_jobset_exclusive_placement():
    (finding,) = by_rule(lint(TPU_JOBSET % (" {}", ""), with_inventory=False), "gang-missing")
    assert finding.message.startswith("JobSet starts 8 TPU pods that only work together, with no gang policy")
    assert "GPU" not in said(finding)
    # exclusive placement on the JobSet, or on the replicatedJob's template: each Job placed whole
    on_jobset = TPU_JOBSET % ("\n        " + EXCLUSIVE, "")
    on_template = TPU_JOBSET % (" {}", "\n          metadata:\n            annotations:\n              " + EXCLUSIVE)
    for text in (on_jobset, on_template):
        assert by_rule(lint(text, with_inventory=False), "gang-missing") == [], text


def test_gang_missing_names_the_member_roles():
    text = """
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: ddp, namespace: ml}
        spec:
          pytorchReplicaSpecs:
            Master:
              replicas: 1
              template:
                spec:
                  containers: [{name: pytorch, image: i, resources: {limits: {amd.com/gpu: 8}}}]
            Worker:
              replicas: 3
              template:
                spec:
                  containers: [{name: pytorch, image: i, resources: {limits: {amd.com/gpu: 8}}}]
    """
    (finding,) = by_rule(lint(text, with_inventory=False), "gang-missing")
    assert finding.message.startswith("PyTorchJob starts 4 AMD GPU pods (Master 1, Worker 3) that only work together")


# ----------------------------------------------------------------- feature-gate-required


def test_feature_gates():
    workload = (
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec:\n  podGroupTemplates:\n"
        "  - name: g\n    schedulingPolicy: {gang: {minCount: 2}}\n"
    )
    (info,) = by_rule(lint(workload, with_inventory=False), "feature-gate-required")
    assert info.severity == Severity.INFO and "GenericWorkload" in info.message
    (warning,) = by_rule(
        lint(workload, with_inventory=False, feature_gates={"GenericWorkload": False}), "feature-gate-required"
    )
    assert warning.severity == Severity.WARNING and "disabled in --feature-gates" in warning.message
    assert (
        by_rule(lint(workload, with_inventory=False, feature_gates={"GenericWorkload": True}), "feature-gate-required")
        == []
    )


def test_feature_gates_flag_and_config(write):
    path = write("w.yaml", "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec: {}\n")
    report = run_cli("check", str(path), "--feature-gates", "GenericWorkload=false", "--format", "json").json()
    assert [f["severity"] for f in report["findings"] if f["rule"] == "feature-gate-required"] == ["warning"]
    assert run_cli("check", str(path), "--feature-gates", "GenericWorkload").exit_code == 2


# ----------------------------------------------------------------- the packer against brute force


def _node(name: str, gpus: int, cpu: int) -> NodeInfo:
    amounts = {"nvidia.com/gpu": Fraction(gpus), "cpu": Fraction(cpu), "pods": Fraction(110)}
    return NodeInfo(name, {"kubernetes.io/hostname": name}, (), False, amounts, dict(amounts))


def _member(role: str, gpus: int, cpu: int, count: int) -> Member:
    spec = {"containers": [{"resources": {"requests": {"cpu": str(cpu)}, "limits": {"nvidia.com/gpu": gpus}}}]}
    return Member(role, (), pod_requirements(spec), count, "default-scheduler")


def _brute_force(nodes: list[NodeInfo], members: list[Member]) -> bool:
    pods = [m for m in members for _ in range(m.count)]
    for assignment in itertools.product(range(len(nodes)), repeat=len(pods)):
        used = [dict(gpu=0, cpu=0) for _ in nodes]
        ok = True
        for member, index in zip(pods, assignment):
            used[index]["gpu"] += member.pod.requests.get("nvidia.com/gpu", 0)
            used[index]["cpu"] += member.pod.requests.get("cpu", 0)
            node = nodes[index]
            if used[index]["gpu"] > node.allocatable["nvidia.com/gpu"] or used[index]["cpu"] > node.allocatable["cpu"]:
                ok = False
                break
        if ok:
            return True
    return False


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, 8), st.integers(1, 16)), min_size=1, max_size=3),
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 8), st.integers(1, 3)), min_size=1, max_size=2),
)
def test_packer_never_contradicts_brute_force(node_shapes, member_shapes):
    nodes = [_node(f"n{i}", gpus, cpu) for i, (gpus, cpu) in enumerate(node_shapes)]
    members = [_member(f"m{i}", gpus, cpu, count) for i, (gpus, cpu, count) in enumerate(member_shapes)]
    gang = Gang("test", members, sum(m.count for m in members), ())
    verdict = pack(gang, ClusterModel(nodes))
    feasible = _brute_force(nodes, members)
    if verdict.unsatisfiable:
        assert not feasible  # never "unsatisfiable" when a placement exists
    if verdict.placements and verdict.placements[0].fits:
        assert feasible  # never a fit that violates a node's capacity


def _brute_force_shapes(shapes: list[Shape], nodes: list[tuple[dict, frozenset[int]]]) -> bool:
    """Every pod on every allowed node, one after another (nodes in the same state tried once)."""
    pods = [index for index, shape in enumerate(shapes) for _ in range(shape.count)]

    def place(position: int, used: list[dict]) -> bool:
        if position == len(pods):
            return True
        index, tried = pods[position], set()
        for number, (allocatable, allowed) in enumerate(nodes):
            state = (tuple(sorted(used[number].items())), tuple(sorted(allocatable.items())), allowed)
            if index not in allowed or state in tried:
                continue
            tried.add(state)
            after = dict(used[number], pods=used[number].get("pods", 0) + 1)
            for resource, amount in shapes[index].requests:
                after[resource] = after.get(resource, 0) + amount
            if all(amount <= allocatable.get(resource, 0) for resource, amount in after.items()):
                if place(position + 1, [*used[:number], after, *used[number + 1 :]]):
                    return True
        return False

    return place(0, [{} for _ in nodes])


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.integers(0, 8), st.integers(0, 12), st.sampled_from([2, 3, 110]), st.sets(st.integers(0, 2))),
        min_size=1,
        max_size=5,
    ),
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 4)), min_size=1, max_size=3),
)
def test_counting_packer_and_its_search_against_brute_force(node_shapes, pod_shapes):
    shapes = [
        Shape(f"s{i}", tuple((r, Fraction(a)) for r, a in (("nvidia.com/gpu", gpus), ("cpu", cpu)) if a), count)
        for i, (gpus, cpu, count) in enumerate(pod_shapes)
    ]
    nodes = [
        ({"nvidia.com/gpu": gpus, "cpu": cpu, "pods": slots}, frozenset(i for i in allowed if i < len(shapes)))
        for gpus, cpu, slots, allowed in node_shapes
    ]
    kinds: Counter[NodeKind] = Counter(
        node_kind({r: Fraction(a) for r, a in allocatable.items()}, request_units(shapes), allowed)
        for allocatable, allowed in nodes
    )
    feasible = _brute_force_shapes(shapes, nodes)
    decision = decide(shapes, kinds, Budget(10**6))
    assert decision.outcome is (Outcome.FITS if feasible else Outcome.UNSATISFIABLE), decision
    problem = _Problem.build(shapes, kinds)  # the search alone (no bounds, no greedy) is exact too
    if problem.classes and all(held >= shape.count for held, shape in zip(problem.copies(), shapes)):
        assert (problem.search(Budget(10**6)) is not None) is feasible


def test_reasons_name_pods_once():
    """Bare Pods are members named "pod": a reason says "3 pods", never "3 pod pods"."""
    shapes = [Shape("pod", (("nvidia.com/gpu", Fraction(5)),), 2), Shape("pod", (("nvidia.com/gpu", Fraction(6)),), 1)]
    units = request_units(shapes)
    kinds = {node_kind({"nvidia.com/gpu": Fraction(8), "pods": Fraction(110)}, units, frozenset({0, 1})): 2}
    decision = decide(shapes, kinds, Budget())
    assert decision.outcome is Outcome.UNSATISFIABLE
    assert decision.reason.startswith("3 pods each need more than half of a node's nvidia.com/gpu"), decision.reason
    named = [Shape("worker", shapes[0].requests, 2), Shape("evaluator", shapes[1].requests, 1)]
    assert decide(named, kinds, Budget()).reason.startswith("3 evaluator and worker pods each need")


def test_the_search_takes_gangs_of_many_shapes():
    # 1,200 pods of distinct CPU requests on two nodes: a configuration spans every shape, deeper
    # than Python's recursion limit
    shapes = [Shape(f"t{i}", (("cpu", Fraction(1000 + i, 1000)),), 1) for i in range(1200)]
    units = request_units(shapes)
    kinds = {node_kind({"cpu": Fraction(1100), "pods": Fraction(1000)}, units, frozenset(range(1200))): 2}
    assert _Problem.build(shapes, kinds).search(Budget(10**6)) is not None
    assert decide(shapes, kinds, Budget()).outcome is Outcome.FITS


def test_v1alpha1_workload_reference_and_kueue_pod_group():
    workload = """
        apiVersion: scheduling.k8s.io/v1alpha1
        kind: Workload
        metadata: {name: train, namespace: ml}
        spec:
          podGroups:
          - name: workers
            policy: {gang: {minCount: 7}}
        ---
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j, namespace: ml}
        spec:
          parallelism: 7
          completions: 7
          template:
            spec:
              restartPolicy: Never
              workloadRef: {name: train, podGroup: workers}
              containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]
    """
    (finding,) = by_rule(lint(workload, kubernetes_version="1.35"), "gang-unsatisfiable")
    assert "Workload train needs 7" in finding.message and "fits 6" in finding.message
    kueue = """
        apiVersion: v1
        kind: Pod
        metadata:
          name: p0
          namespace: ml
          labels: {kueue.x-k8s.io/pod-group-name: g, kueue.x-k8s.io/queue-name: q}
          annotations: {kueue.x-k8s.io/pod-group-total-count: "%d"}
        spec:
          containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]
    """
    assert by_rule(lint(kueue % 2), "gang-inconsistent") == []  # the group's other pods are other objects
    # one Pod of 7: the other six are not known (the manifest created 7 times, or other shapes): not guessed
    assert by_rule(lint(kueue % 7), "gang-unsatisfiable") == []
    seven = "---".join((kueue % 7).replace("name: p0", f"name: p{i}") for i in range(7))
    (finding,) = by_rule(lint(seven), "gang-unsatisfiable")
    assert "Kueue pod group g needs 7" in finding.message
    assert (
        by_rule(
            lint("---".join((kueue % 6).replace("name: p0", f"name: p{i}") for i in range(6))), "gang-unsatisfiable"
        )
        == []
    )


def test_multi_level_topology_job_in_one_zone_each_group_in_one_rack():
    composite = """
        apiVersion: scheduling.k8s.io/v1alpha3
        kind: CompositePodGroup
        metadata: {name: job, namespace: ml}
        spec:
          schedulingPolicy: {gang: {minGroupCount: 2}}
          schedulingConstraints: {topology: [{key: topology.kubernetes.io/zone}]}
        ---
        apiVersion: scheduling.k8s.io/v1alpha3
        kind: PodGroup
        metadata: {name: group-a, namespace: ml}
        spec:
          parentCompositePodGroupName: job
          schedulingPolicy: {gang: {minCount: %d}}
          schedulingConstraints: {topology: [{key: topology.kubernetes.io/rack}]}
        ---
        apiVersion: scheduling.k8s.io/v1alpha3
        kind: PodGroup
        metadata: {name: group-b, namespace: ml}
        spec:
          parentCompositePodGroupName: job
          schedulingPolicy: {gang: {minCount: 2}}
          schedulingConstraints: {topology: [{key: topology.kubernetes.io/rack}]}
        ---
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata: {name: js, namespace: ml}
        spec:
          replicatedJobs:
          - name: a
            replicas: 1
            template:
              spec:
                parallelism: %d
                completions: %d
                template:
                  spec:
                    schedulingGroup: {podGroupName: group-a}
                    containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]
          - name: b
            replicas: 1
            template:
              spec:
                parallelism: 2
                completions: 2
                template:
                  spec:
                    schedulingGroup: {podGroupName: group-b}
                    containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]
    """
    # zone-a: rack r1 holds 4 x 8 GPUs, rack r2 holds 2: groups of 4 and 2 fit; of 5 and 2 do not
    fits = [f for f in lint(composite % (4, 4, 4)) if f.rule == "gang-unsatisfiable"]
    assert fits == []
    (finding,) = [
        f for f in lint(composite % (5, 5, 5)) if f.rule == "gang-unsatisfiable" and "CompositePodGroup" in f.message
    ]
    assert "in one topology.kubernetes.io/zone" in said(finding) and "zone-a" in said(finding)
    # groups of 4 and 3 each fit rack r1 alone, but zone-a's 6 nodes cannot hold their 7 pods together
    together = composite.replace("minCount: 2}", "minCount: 3}").replace(
        "parallelism: 2\n                completions: 2", "parallelism: 3\n                completions: 3"
    )
    (finding,) = [
        f for f in lint(together % (4, 4, 4)) if f.rule == "gang-unsatisfiable" and "CompositePodGroup" in f.message
    ]
    assert "zone-a: the groups together do not fit (PodGroup group-a/PodGroup group-b: 6 of 7 fit)" in said(finding), (
        finding.notes
    )


SYSTEMS = {
    "volcano": lambda n: volcano_job(n),
    "kubeflow": lambda n: textwrap.dedent(f"""
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {{name: ddp, namespace: ml}}
        spec:
          runPolicy: {{schedulingPolicy: {{minAvailable: {n}}}}}
          pytorchReplicaSpecs:
            Worker:
              replicas: {n}
              template:
                spec:
                  schedulerName: volcano
                  containers: [{{name: w, image: i, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}]
    """),
    "native-job": lambda n: textwrap.dedent(f"""
        apiVersion: batch/v1
        kind: Job
        metadata: {{name: j, namespace: ml}}
        spec:
          parallelism: {n}
          completions: {n}
          scheduling: {{schedulingPolicy: {{gang: {{minCount: {n}}}}}}}
          template:
            spec:
              restartPolicy: Never
              containers: [{{name: w, image: i, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}]
    """),
    "coscheduling": lambda n: textwrap.dedent(f"""
        apiVersion: scheduling.x-k8s.io/v1alpha1
        kind: PodGroup
        metadata: {{name: pg, namespace: ml}}
        spec: {{minMember: {n}}}
        ---
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {{name: s, namespace: ml}}
        spec:
          replicas: {n}
          serviceName: s
          selector: {{matchLabels: {{a: b}}}}
          template:
            metadata: {{labels: {{a: b, scheduling.x-k8s.io/pod-group: pg}}}}
            spec:
              schedulerName: scheduler-plugins-scheduler
              containers: [{{name: w, image: i, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}]
    """),
    "native-podgroup": lambda n: textwrap.dedent(f"""
        apiVersion: scheduling.k8s.io/v1beta1
        kind: PodGroup
        metadata: {{name: pg, namespace: ml}}
        spec: {{schedulingPolicy: {{gang: {{minCount: {n}}}}}}}
        ---
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {{name: s, namespace: ml}}
        spec:
          replicas: {n}
          serviceName: s
          selector: {{matchLabels: {{a: b}}}}
          template:
            metadata: {{labels: {{a: b}}}}
            spec:
              schedulingGroup: {{podGroupName: pg}}
              containers: [{{name: w, image: i, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}]
    """),
    "kueue-pod-group": lambda n: "---".join(
        textwrap.dedent(f"""
        apiVersion: v1
        kind: Pod
        metadata:
          name: p-{i}
          namespace: ml
          labels: {{kueue.x-k8s.io/pod-group-name: g, kueue.x-k8s.io/queue-name: q}}
          annotations: {{kueue.x-k8s.io/pod-group-total-count: "{n}"}}
        spec:
          containers: [{{name: w, image: i, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}]
    """)
        for i in range(n)
    ),
}


@pytest.mark.parametrize("system", sorted(SYSTEMS))
def test_every_gang_system_at_the_capacity_boundary(system):
    # the cluster holds exactly 6 pods of 8 GPUs: 5 fits, 6 fits (borderline), 7 does not
    for workers, unsatisfiable in ((5, 0), (6, 0), (7, 1)):
        findings = by_rule(lint(SYSTEMS[system](workers)), "gang-unsatisfiable")
        assert len(findings) == unsatisfiable, (system, workers, [f.message for f in findings])


def test_exact_positions_of_gang_findings():
    missing = textwrap.dedent(PYTORCH % ("", "", 2, "nvidia.com/gpu"))
    (finding,) = by_rule(lint(missing, with_inventory=False), "gang-missing")
    assert (finding.line, finding.column) == (4, 1)  # the spec key
    (inconsistent,) = by_rule(lint(volcano_job(4, min_available=6), with_inventory=False), "gang-inconsistent")
    assert (inconsistent.line, inconsistent.column) == (5, 17)  # minAvailable's value
    (tight,) = by_rule(lint(volcano_job(4, topology="topology.kubernetes.io/rack")), "over-tight-topology")
    assert (tight.line, tight.column) == (12, 64)  # the Kueue topology annotation's value
    workload = "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec: {}\n"
    (gate,) = by_rule(lint(workload, with_inventory=False), "feature-gate-required")
    assert (gate.line, gate.column) == (2, 7)


def test_kueue_slices_each_within_one_rack():
    job = """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: sliced, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}
        spec:
          parallelism: %d
          completions: %d
          template:
            metadata:
              annotations:
                kueue.x-k8s.io/podset-slice-required-topology: topology.kubernetes.io/rack
                kueue.x-k8s.io/podset-slice-size: "3"
            spec:
              restartPolicy: Never
              containers: [{name: w, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]
    """
    # slices of 3 x 8 GPUs: rack r1 (4 nodes) holds one slice, r2 (2 nodes) none -> 3 pods fit, 6 do not,
    # though the cluster has room for 6 such pods in total
    assert by_rule(lint(job % (3, 3)), "gang-unsatisfiable") == []
    (finding,) = by_rule(lint(job % (6, 6)), "gang-unsatisfiable")
    assert "Kueue pod set" in finding.message


def test_podgroup_min_resources_larger_than_the_cluster():
    group = """
        apiVersion: scheduling.volcano.sh/v1beta1
        kind: PodGroup
        metadata: {name: big, namespace: ml}
        spec:
          minMember: 2
          minResources: {nvidia.com/gpu: "%d", cpu: "64"}
    """
    assert by_rule(lint(group % 60), "gang-unsatisfiable") == []  # 4x8 + 2x8 + 3x4 = 60 GPUs
    (finding,) = by_rule(lint(group % 61), "gang-unsatisfiable")
    assert "minResources nvidia.com/gpu: 61 at once, but the schedulable nodes have 60" in finding.message
    assert finding.line == 6


def test_a_misspelt_group_is_an_error_only_when_the_groups_are_known_whole():
    text = """
        apiVersion: scheduling.x-k8s.io/v1alpha1
        kind: PodGroup
        metadata: {name: trainers, namespace: ml}
        spec: {minMember: 2}
        ---
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j, namespace: ml}
        spec:
          parallelism: 2
          template:
            metadata: {labels: {scheduling.x-k8s.io/pod-group: trainer}}
            spec:
              restartPolicy: Never
              schedulerName: scheduler-plugins-scheduler
              containers: [{name: c, image: i}]
    """
    # another group in the repository (an example folder, another overlay) proves nothing: a likely typo is info
    (finding,) = by_rule(lint(text), "gang-inconsistent")
    assert finding.severity == Severity.INFO and "did you mean 'trainers'?" in said(finding)
    (finding,) = by_rule(lint(text, complete={"PodGroup": ("*",)}), "gang-inconsistent")
    assert finding.severity == Severity.ERROR and "did you mean 'trainers'?" in said(finding)
    unrelated = text.replace("pod-group: trainer}", "pod-group: allreduce}")
    assert by_rule(lint(unrelated), "gang-inconsistent") == []  # no close name: nothing said


# ----------------------------------------------------------------- gangs built once per object checked


def test_gangs_are_built_once_per_object_checked_and_never_kept_after(monkeypatch):
    """gang-unsatisfiable, gang-inconsistent, over-tight-topology and the gang-policy test of other rules
    each ask for the object's gangs; while the engine checks one object they are built once (they were
    built 4 times), the findings unchanged; outside that check an object changed later is read afresh."""
    import gpulint.kube.gangs.members as members

    built: list[bool] = []
    real = members._gangs_of

    def counted(obj, inventory, reported_only):
        built.append(reported_only)
        return real(obj, inventory, reported_only)

    monkeypatch.setattr(members, "_gangs_of", counted)
    run = LintRun(Config(), [Source("gang.yaml", content=volcano_job(7).encode())], load_inventory([RACKS]))
    (finding,) = by_rule(run.report(1).findings, "gang-unsatisfiable")
    assert "needs 7 worker pods x 8 nvidia.com/gpu placed at once; the cluster fits 6" in finding.message
    assert sorted(Counter(built).values()) in ([1], [1, 1])  # once per question (reported only, or all)

    built.clear()
    (obj,) = run.objects()
    (gang,) = members.gangs_of(obj, None)
    assert gang.total == 7
    obj.data["spec"]["tasks"][0]["replicas"] = 3
    (gang,) = members.gangs_of(obj, None)
    assert gang.total == 3 and built == [False, False]


@pytest.mark.parametrize(
    "names, noun",
    [
        (["nvidia.com/gpu", "nvidia.com/mig-1g.5gb"], "GPU"),
        (["google.com/tpu"], "TPU"),
        (["aws.amazon.com/neuroncore"], "Neuron"),
        (["google.com/tpu", "nvidia.com/gpu"], "accelerator"),  # two kinds: no one word
        (["example.com/fpga"], "accelerator"),
        ([], "accelerator"),
    ],
)
def test_the_accelerator_noun_of_a_finding_is_the_same_when_asked_again(names, noun):
    assert accelerator_noun(names) == noun
    assert accelerator_noun(reversed(names)) == noun  # each name's noun is remembered: the same answer


# ----------------------------------------------------------------- the no-group shortcut against the full reading

_GROUP_LABELS = {"scheduling.x-k8s.io/pod-group": "g1", "kueue.x-k8s.io/pod-group-name": "kg", "app": "trainer"}
_GROUP_ANNOTATIONS = {
    "scheduling.k8s.io/group-name": "g1",
    "scheduling.volcano.sh/group-name": "g1",
    "kueue.x-k8s.io/podset-required-topology": "topology.kubernetes.io/rack",
    "kueue.x-k8s.io/podset-slice-required-topology": "topology.kubernetes.io/rack",
    "kueue.x-k8s.io/podset-slice-size": "2",
    "kueue.x-k8s.io/pod-group-total-count": "2",
    "note": "unrelated",
}
_GROUP_FIELDS = {"schedulingGroup": {"podGroupName": "g1"}, "workloadRef": {"name": "w1", "podGroup": "workers"}}


def _group_object(kind: str, name: str, labels: dict, annotations: dict, fields: dict, replicas: int) -> dict:
    meta = {"labels": labels, "annotations": annotations}
    spec = {**fields, "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 8}}}]}
    if kind == "Pod":
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml", **meta}, "spec": spec}
    api = {"Job": "batch/v1", "Deployment": "apps/v1"}[kind]
    counts = {"parallelism": replicas, "completions": replicas} if kind == "Job" else {"replicas": replicas}
    owner_labels = {"kueue.x-k8s.io/queue-name": "q"} if "app" in labels else {}
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": name, "namespace": "ml", "labels": owner_labels},
        "spec": {**counts, "template": {"metadata": meta, "spec": spec}},
    }


_GROUP_OBJECTS = st.builds(
    _group_object,
    st.sampled_from(["Pod", "Job", "Deployment"]),
    st.sampled_from(["a", "b"]),
    st.dictionaries(st.sampled_from(sorted(_GROUP_LABELS)), st.just(""), max_size=2).map(
        lambda keys: {key: _GROUP_LABELS[key] for key in keys}
    ),
    st.dictionaries(st.sampled_from(sorted(_GROUP_ANNOTATIONS)), st.just(""), max_size=3).map(
        lambda keys: {key: _GROUP_ANNOTATIONS[key] for key in keys}
    ),
    st.dictionaries(st.sampled_from(sorted(_GROUP_FIELDS)), st.just(""), max_size=1).map(
        lambda keys: {key: _GROUP_FIELDS[key] for key in keys}
    ),
    st.integers(1, 7),
)
_POD_GROUPS = [
    {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "g1", "namespace": "ml"},
        "spec": {"minMember": 5},
    },
    {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g1", "namespace": "ml"},
        "spec": {"minMember": 3},
    },
]


def _read_gangs(text: str) -> tuple[list, list]:
    """The findings of the file and every object's gangs (without and with the inventory, all and reported)."""
    import gpulint.kube.gangs.members as members

    run = LintRun(Config(), [Source("gang.yaml", content=text.encode())], load_inventory([RACKS]))
    found = [(f.rule, f.line, f.column, f.message, f.notes) for f in run.report(1).findings]
    gangs = [
        members.gangs_of(obj, inventory, reported_only)
        for obj in run.objects()
        for inventory in (None, run.resolver)
        for reported_only in (False, True)
    ]
    return found, gangs


def _assert_shortcut_reads_all(objects: list[dict]) -> None:
    """gangs_of and group_references skip a template with none of the fields, labels and annotations that join a
    group (members._none_of: most templates); reading every template in full finds the same gangs and findings."""
    from unittest import mock

    import yaml

    import gpulint.kube.gangs.members as members

    text = yaml.safe_dump_all(objects, sort_keys=False)
    shortcut = _read_gangs(text)
    with mock.patch.object(members, "_none_of", lambda *_: False):
        assert _read_gangs(text) == shortcut


@pytest.mark.parametrize("kind", ["Pod", "Job", "Deployment"])
@pytest.mark.parametrize(
    "where, key",
    [("labels", key) for key in _GROUP_LABELS]
    + [("annotations", key) for key in _GROUP_ANNOTATIONS]
    + [("fields", key) for key in _GROUP_FIELDS],
)
def test_each_key_that_joins_a_group_is_read_past_the_shortcut(kind, where, key):
    """Each key alone (with a Kueue pod group's total count beside it, which counts only with the label)."""
    keys = {"labels": {}, "annotations": {"kueue.x-k8s.io/pod-group-total-count": "2"}, "fields": {}}
    keys[where][key] = {**_GROUP_LABELS, **_GROUP_ANNOTATIONS, **_GROUP_FIELDS}[key]
    workload = _group_object(kind, "a", keys["labels"], keys["annotations"], keys["fields"], 6)
    _assert_shortcut_reads_all([workload, *_POD_GROUPS])


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_GROUP_OBJECTS, min_size=1, max_size=3), st.sets(st.integers(0, len(_POD_GROUPS) - 1)))
def test_the_no_group_shortcut_finds_what_reading_every_template_finds(objects, groups):
    """Any mix of the keys that join a group (and of unrelated ones) on several objects: the same gangs."""
    _assert_shortcut_reads_all([*objects, *(_POD_GROUPS[index] for index in sorted(groups))])
