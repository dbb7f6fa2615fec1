"""Findings people can read (#17): the first line of every finding fits in FIRST_LINE_MAX (160) characters,
with the scheduler-style reasons and the suggestions in the notes printed under it, and no doubled
noun ("3 pod pods", "GPU GPUs") or "1 nodes".

What is measured is the finding's message: the text the text formatter prints after
``path:line:col: severity[rule] Kind/namespace/name:``. That prefix is left out because its length is
the user's (file paths and object names), not gpulint's wording. A run note (printed once as
``note: ...``) is held to the same rule: its first line fits, and what it lists (the places a fact
applies to, the rules skipped) goes on the lines under it, the places capped with "and N more places".

The findings come from every built-in rule's and library policy's documented example and use-instead
(each against the inventory its doc names), the repository's examples/ with and without their
inventory, the test inventories under tests/data, and the realistic failing manifests below, shaped like
public repositories' manifests (long container and object names, several roles, long field paths).
"""

from __future__ import annotations

import re
import textwrap

import pytest
from conftest import DATA, REPO, run_cli
from rule_harness import raw_findings_of

from gpulint.lint.findings import FIRST_LINE_MAX, first_line, split_long
from gpulint.lint.registry import all_rules, policy_rules
from gpulint.lint.verdicts.shared import role_pods

DOUBLED = re.compile(r"\b(\w+) \1s\b", re.IGNORECASE)  # pod pods, GPU GPUs, node nodes
ONE_PLURAL = re.compile(r"(?<![\d.])\b1 (pods|nodes|GPUs|containers|devices|workers|replicas|claims)\b")

# Realistic manifests that fail several rules with long wording: names as long as real charts use them.
FAILING = {
    "mpijob-two-containers.yaml": """
        apiVersion: kubeflow.org/v2beta1
        kind: MPIJob
        metadata: {name: tensorflow-benchmarks-resnet101-synthetic, namespace: distributed-training}
        spec:
          slotsPerWorker: 8
          runPolicy: {cleanPodPolicy: Running}
          mpiReplicaSpecs:
            Launcher:
              replicas: 1
              template:
                spec:
                  containers:
                  - name: tensorflow-benchmarks-launcher
                    image: mpioperator/tensorflow-benchmarks:latest
                    command: [mpirun, --allow-run-as-root, -np, "32", python, scripts/tf_cnn_benchmarks.py]
                    resources: {limits: {nvidia.com/gpu: 1}}
            Worker:
              replicas: 2
              template:
                spec:
                  hostNetwork: true
                  containers:
                  - name: tensorflow-benchmarks-worker
                    image: mpioperator/tensorflow-benchmarks:latest
                    env: [{name: CUDA_VISIBLE_DEVICES, value: "0,1,2,3,4,5,6,7,8"}]
                    resources: {limits: {nvidia.com/gpu: 4, rdma/rdma_shared_device_a: 1}}
                  - name: nccl-tests-sidecar-with-a-long-name
                    image: nvcr.io/nvidia/pytorch:24.05-py3
                    resources: {limits: {nvidia.com/gpu: 2}}
        """,
    "leaderworkerset-vllm.yaml": """
        apiVersion: leaderworkerset.x-k8s.io/v1
        kind: LeaderWorkerSet
        metadata: {name: vllm-llama-3-1-405b-instruct-multinode, namespace: inference}
        spec:
          replicas: 2
          leaderWorkerTemplate:
            size: 2
            leaderTemplate:
              spec:
                containers:
                - name: vllm-leader
                  image: vllm/vllm-openai:v0.6.3
                  args: [--tensor-parallel-size, "8", --pipeline-parallel-size, "4"]
                  resources: {limits: {nvidia.com/gpu: 8}}
            workerTemplate:
              spec:
                containers:
                - name: vllm-worker
                  image: vllm/vllm-openai:v0.6.3
                  resources: {limits: {nvidia.com/gpu: 8}}
        """,
    "deployment-rejected.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: embeddings-api-with-a-long-deployment-name, namespace: inference}
        spec:
          selector: {matchLabels: {app: embeddings}}
          template:
            metadata: {labels: {app: embeddings}}
            spec:
              runtimeClassName: nvidia-container-runtime-with-a-very-long-name
              schedulerName: gpu-binpacking-schedular
              affinity:
                nodeAffinity:
                  requiredDuringSchedulingIgnoredDuringExecution:
                    nodeSelectorTerms:
                    - matchExpressions:
                      - {key: nvidia.com/gpu.product, operator: NotIn, values: ['NVIDIA H100 80GB HBM3 with spaces']}
              tolerations:
              - {key: nvidia.com/gpu, operator: Exists, value: "present-on-every-gpu-node", effect: NoSchedule}
              containers:
              - name: embeddings-server-container-with-a-long-name
                image: nvcr.io/nvidia/pytorch:24.05-py3
                env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]
                resources: {limits: {nvidia.com/gpu: "1.5"}}
        """,
    "claims.yaml": """
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {name: gpu-and-nic-on-the-same-pcie-root-with-a-long-name, namespace: ml-research}
        spec:
          spec:
            devices:
              requests:
              - name: gpus
                exactly:
                  deviceClassName: gpu.nvidia.com
                  count: 2
                  selectors:
                  - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName == "H100" &&'}
              - name: nics
                exactly: {deviceClassName: rdma.example.com, count: 1}
              config:
              - requests: [gpus]
                opaque:
                  driver: gpu.nvidia.com
                  parameters:
                    apiVersion: gpu.nvidia.com/v1alpha1
                    kind: GpuConfig
                    sharing: {strategy: TimeSlicing, timeslicingConfig: {interval: Long}}
        """,
    "kueue-inactive-queue.yaml": """
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: ResourceFlavor
        metadata: {name: a100-80gb-on-demand-europe-west4}
        ---
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: ClusterQueue
        metadata: {name: research-platform-a100-training-queue}
        spec:
          namespaceSelector: {}
          admissionChecksStrategy:
            admissionChecks:
            - name: provisioning-request-a100-spot-capacity-europe-west4
            - name: provisioning-request-a100-reserved-capacity-europe-west4
          resourceGroups:
          - coveredResources: [nvidia.com/gpu]
            flavors:
            - name: a100-80gb-on-demand-europe-west4
              resources: [{name: nvidia.com/gpu, nominalQuota: 16}]
            - name: a100-80gb-spot-europe-west4-with-a-long-name
              resources: [{name: nvidia.com/gpu, nominalQuota: 16}]
        ---
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: AdmissionCheck
        metadata: {name: provisioning-request-h100}
        spec:
          controllerName: kueue.x-k8s.io/provisioning-request
        ---
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: LocalQueue
        metadata: {name: research-platform-training, namespace: distributed-training}
        spec: {clusterQueue: research-platform-a100-training-queue}
        ---
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: llama-3-70b-finetune-lora-sweep
          namespace: distributed-training
          labels: {kueue.x-k8s.io/queue-name: research-platform-training}
        spec:
          suspend: true
          template:
            spec:
              restartPolicy: Never
              containers:
              - name: trainer
                image: nvcr.io/nvidia/pytorch:24.05-py3
                resources: {limits: {nvidia.com/gpu: 8}}
        """,
    "json-with-comment.json": """
        {
          // a comment kubectl refuses
          "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
          "spec": {"containers": [{"name": "c", "image": "x"}]}
        }
        """,
    "templated.yaml": """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: "{{ .Release.Name }}-training-job-with-a-long-name"}
        spec:
          parallelism: ${WORKERS}
        """,
}


def _report(*args: str) -> dict:
    run = run_cli("check", *args, "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    report: dict = run.json()
    return report


def _doc_runs() -> list[tuple[str, list[dict]]]:
    """Every rule's and library policy's example and use-instead, with every rule enabled (as a user runs
    gpulint), in the configuration and against the inventory the doc names."""
    runs = []
    rules = {**all_rules(), **policy_rules(tuple(f"gpulint:{p.stem}" for p in (REPO / "rules" / "policies").glob("*")))}
    for rule_id, rule in sorted(rules.items()):
        inventory = rule.inventory_path()
        base = {} if rule_id in all_rules() else {"policies": [f"gpulint:{rule_id}"]}
        for name, text, config in (
            ("example", rule.example, rule.example_config),
            ("use-instead", rule.use_instead, rule.use_instead_config),
        ):
            found = raw_findings_of(None, text, inventory=inventory, config={**base, **config})
            alone = raw_findings_of(rule_id, text, inventory=inventory, config={**base, **config})
            runs.append((f"{rule_id} {name}", [*found, *alone]))
    return runs


@pytest.fixture(scope="module")
def cli_reports(tmp_path_factory) -> list[tuple[str, dict]]:
    """The JSON reports of `gpulint check` over the examples, the test data and the failing manifests."""
    tmp = tmp_path_factory.mktemp("messages")
    failing = tmp / "failing"
    failing.mkdir()
    for name, text in FAILING.items():
        (failing / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    inventory = ("--inventory", str(REPO / "examples" / "inventory"))
    return [
        ("examples/", _report(str(REPO / "examples"), *inventory)),
        ("examples/ alone", _report(str(REPO / "examples" / "manifests"))),
        *(
            (f"tests/data/{folder.name}", _report(str(folder)))
            for folder in sorted(p for p in DATA.iterdir() if p.is_dir())
        ),
        ("failing manifests", _report(str(failing))),
        ("failing manifests on examples/inventory", _report(str(failing), *inventory)),
    ]


@pytest.fixture(scope="module")
def everything(cli_reports) -> list[tuple[str, dict]]:
    runs = [*_doc_runs(), *((source, report["findings"]) for source, report in cli_reports)]
    return [(source, finding) for source, found in runs for finding in found]


@pytest.mark.slow
def test_the_sources_exercise_every_rule(everything):
    reported = {finding["rule"] for _, finding in everything}
    assert set(all_rules()) <= reported, sorted(set(all_rules()) - reported)
    assert len(everything) > 200
    failing = {f["rule"] for source, f in everything if source.startswith("failing manifests")}
    assert len(failing) >= 12, sorted(failing)


def test_every_first_line_fits(everything):
    long = sorted(
        {
            f"{len(f['message'])} [{f['rule']}] {f['message']}  ({source})"
            for source, f in everything
            if len(f["message"]) > FIRST_LINE_MAX
        }
    )
    assert long == [], "first lines over 160 characters:\n" + "\n".join(long)


def test_no_doubled_nouns_or_one_plural(everything):
    bad = sorted(
        {
            f"[{f['rule']}] {line}"
            for _, f in everything
            for line in (f["message"], *f["notes"])
            if DOUBLED.search(line) or ONE_PLURAL.search(line)
        }
    )
    assert bad == [], "\n".join(bad)


def test_a_split_first_line_keeps_every_word_in_the_notes(everything):
    # the notes carry what the first line left out: nothing is dropped
    for _, finding in everything:
        assert all(note.strip() for note in finding["notes"]), finding


def test_first_line_takes_the_first_candidate_that_fits():
    fits = "x" * FIRST_LINE_MAX
    assert first_line(fits + "y", fits, "short") == fits
    assert first_line("a" * 200, "b" * 170) == "b" * 170  # none fits: the last, never cut mid-word


@pytest.mark.parametrize(
    ("text", "line", "notes"),
    [
        ("short: kept whole (even with a parenthetical)", "short: kept whole (even with a parenthetical)", ()),
        (
            "CEL selector undefined field 'productName' (device has driver, attributes, capacity and "
            'allowMultipleAllocations; attributes are read as device.attributes["<domain>"].<name>)',
            "CEL selector undefined field 'productName'",
            (
                "device has driver, attributes, capacity and allowMultipleAllocations; attributes are read as "
                'device.attributes["<domain>"].<name>',
            ),
        ),
        (
            "CEL runtime error on device gpu.nvidia.com/dgx-0/gpu-0: no such key: model. consider using CEL optional "
            "chaining (.? followed by orValue()) or guarding the check with has() for optional fields",
            "CEL runtime error on device gpu.nvidia.com/dgx-0/gpu-0: no such key: model",
            (
                "consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() "
                "for optional fields",
            ),
        ),
        (
            "Volcano Queue research is Closed: Volcano's admission webhook refuses the Job: can only submit job to "
            "queue with state `Open`, queue `research` status is `Closed`",
            "Volcano Queue research is Closed: Volcano's admission webhook refuses the Job",
            ("can only submit job to queue with state `Open`, queue `research` status is `Closed`",),
        ),
        ("x" * 200, "x" * 200, ()),  # nowhere to split: left whole, and the tests above catch it
    ],
)
def test_split_long_splits_at_a_clause_outside_parentheses_and_quotes(text, line, notes):
    assert split_long(text) == (line, notes)


@pytest.mark.parametrize(
    ("role", "said"),
    [("pod", "pods"), ("worker", "worker pods"), ("Worker", "Worker pods"), ("workers", "'workers' pods")],
)
def test_member_pods_are_named_by_role_without_doubling(role, said):
    # describe_gang (check) and explain's "to make it fit" line: never "pod pods" or "workers pods"
    assert role_pods(role) == said


# --------------------------------------------------------------------------- run notes


def _without_roots(text: str, *roots: object) -> str:
    """``text`` with the folders the test linted taken out: a path's length is the user's, not gpulint's."""
    for root in sorted({str(r) for r in roots}, key=len, reverse=True):
        text = text.replace(root + "/", "")
    return text


def test_every_run_notes_first_line_fits(cli_reports, tmp_path_factory):
    notes = [(source, note) for source, report in cli_reports for note in report["notes"]]
    assert any("\n" in note for _, note in notes)  # the sources produce notes with a list under them
    roots = (REPO, DATA, tmp_path_factory.getbasetemp())
    long = sorted(
        {
            f"{len(first)} {first}  ({source})"
            for source, note in notes
            if len(first := _without_roots(note.split("\n")[0], *roots)) > FIRST_LINE_MAX
        }
    )
    assert long == [], "run notes whose first line is over 160 characters:\n" + "\n".join(long)
    assert all(line.strip() for _, note in notes for line in note.split("\n"))  # no empty detail line


def _claims(count: int, device_class: str = "fpga.acme.io") -> str:
    """``count`` ResourceClaimTemplates of an ml-platform repository, each asking for a device of
    ``device_class``, which neither the files nor an inventory define."""
    return "---\n".join(
        textwrap.dedent(f"""\
            apiVersion: resource.k8s.io/v1
            kind: ResourceClaimTemplate
            metadata: {{name: fpga-inference-{index}, namespace: ml-platform}}
            spec:
              spec:
                devices:
                  requests:
                  - name: fpga
                    exactly: {{deviceClassName: {device_class}, count: 1}}
            """)
        for index in range(count)
    )


@pytest.mark.parametrize(
    ("claims", "places"),
    [
        (3, ["claims.yaml:9:36", "claims.yaml:19:36", "claims.yaml:29:36"]),  # at the cap: every place named
        (4, ["claims.yaml:9:36", "claims.yaml:19:36", "claims.yaml:29:36", "and 1 more place"]),
        (6, ["claims.yaml:9:36", "claims.yaml:19:36", "claims.yaml:29:36", "and 3 more places"]),
    ],
)
def test_a_run_note_names_its_places_under_its_first_line_capped(tmp_path, monkeypatch, claims, places):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "claims.yaml").write_text(_claims(claims), encoding="utf-8")
    result = run_cli("check", "claims.yaml", "--select", "device-class-unknown")
    assert result.exit_code == 0, result.stderr
    first = (
        "note: device-class-unknown: DeviceClass 'fpga.acme.io' not checked: the linted files do not define it and "
        "the inventory does not list the cluster's DeviceClasses"
    )
    hint = "drivers install their classes; add `kubectl get deviceclasses -o yaml` to the inventory"
    lines = result.stdout.splitlines()
    start = lines.index(first)
    assert lines[start + 1 : start + 2 + len(places)] == [f"    {hint}", *(f"    {place}" for place in places)]
    assert not lines[start + 2 + len(places)].startswith(" ")  # the list ends: nothing else is indented under it
    assert len(first) - len("note: ") <= FIRST_LINE_MAX
    # JSON keeps the note as one string, its lines in order; markdown quotes it with the list under it
    (note,) = _report("claims.yaml", "--select", "device-class-unknown")["notes"]
    assert note.split("\n") == [first.removeprefix("note: "), hint, *places]
    markdown = run_cli("check", "claims.yaml", "--select", "device-class-unknown", "--format", "markdown").stdout
    from gpulint.report.markdown import _code  # what gpulint did not write alone is markup-free (issue #33)

    assert f"> {_code(first.removeprefix('note: '))}\n> - {_code(hint)}\n> - {_code(places[0])}\n" in markdown


def test_a_short_list_stays_on_the_first_line_a_long_one_goes_under_it(tmp_path, monkeypatch):
    # the rules skipped without an inventory: named on the line when they fit, else counted and listed under it
    monkeypatch.chdir(tmp_path)
    (tmp_path / "claims.yaml").write_text(_claims(1), encoding="utf-8")
    one = _report("claims.yaml", "--select", "claim-unsatisfiable")["notes"]
    assert one == ["no cluster inventory with nodes (--inventory): skipped claim-unsatisfiable"]
    every = [n for n in _report("claims.yaml")["notes"] if n.startswith("no cluster inventory with nodes")]
    (note,) = every
    first, listed = note.split("\n")
    assert first == f"no cluster inventory with nodes (--inventory): skipped {len(listed.split(', '))} rules"
    assert "claim-unsatisfiable" in listed.split(", ") and "gpu-unschedulable" in listed.split(", ")
