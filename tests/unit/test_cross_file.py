"""What crosses files (gpulint/lint/world/cross_file.py) is what the checks read across files.

A run split over forked workers (``--jobs``), or a pre-commit run of a few files with the
repository index, gives each file's checks only the objects of the other files that
``crosses_files`` lets through. Two ways to hold the table to the truth:

- every (group, kind) the checks look up in the linted set while they check the rule docs'
  examples is one the table lets cross (recorded, not listed by hand);
- the rule docs' examples, one document per file, give the same output split over two workers,
  and checked one parse at a time, as in one process keeping every parse (the objects a finding
  depends on sit in other files than the finding).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import defaultdict

import pytest
import yaml
from conftest import REPO, run_cli
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rule_harness import findings_of
from support.inventories import TWO_CPU_ONE_GPU

import gpulint.lint.run
from gpulint.lint.config import Config
from gpulint.lint.inputs.linted_set import OUTLINE_KIND, LintedObject, LintedSet
from gpulint.lint.inputs.loader import LoadedFile, load_bytes
from gpulint.lint.inputs.objects import object_ref, parse_file
from gpulint.lint.inputs.render.rendered import Rendered, mapped
from gpulint.lint.inputs.sources import Source
from gpulint.lint.registry import all_rules
from gpulint.lint.run import LintRun, shared_objects
from gpulint.lint.world import cross_file
from gpulint.lint.world.cross_file import (
    CROSS_FILE_ANY_GROUP,
    CROSS_FILE_BY_CONTENT,
    CROSS_FILE_KINDS,
    CrossingText,
    crosses_files,
)
from gpulint.lint.world.inventory import load_inventory
from gpulint.lint.world.resolver import DRA_GROUP

RULES = sorted(all_rules())


def _covered(group: str, kind: str) -> bool:
    key = (group, kind)
    return group == DRA_GROUP or key in CROSS_FILE_KINDS or kind in CROSS_FILE_ANY_GROUP or key in CROSS_FILE_BY_CONTENT


def test_every_kind_the_checks_look_up_across_files_crosses_files(monkeypatch):
    asked: set[tuple[str, str]] = set()
    for name in ("of_kind", "find", "has_kind"):
        real = getattr(LintedSet, name)

        def recording(self, group, kind, *rest, _real=real):
            asked.add((group, kind))
            return _real(self, group, kind, *rest)

        monkeypatch.setattr(LintedSet, name, recording)
    for rule_id in RULES:
        rule = all_rules()[rule_id]
        inventory = rule.inventory_path()
        findings_of(None, rule.example, inventory=str(inventory) if inventory else None, config=rule.example_config)
    # the lookups the table exists for were exercised at all
    assert {("kueue.x-k8s.io", "ClusterQueue"), ("", "ConfigMap"), ("resource.nvidia.com", "ComputeDomain")} <= asked
    assert sorted(key for key in asked if not _covered(*key)) == []


def _documents(text: str) -> list[str]:
    """The example's documents, each as its own YAML text (what one file of a GitOps tree holds)."""
    return [yaml.safe_dump(doc, sort_keys=False) for doc in yaml.safe_load_all(text) if isinstance(doc, dict)]


def _trees() -> dict[str | None, list[tuple[str, str]]]:
    """Per example inventory, the rule examples' documents as (file name, text)."""
    trees: dict[str | None, list[tuple[str, str]]] = defaultdict(list)
    for rule_id in RULES:
        rule = all_rules()[rule_id]
        if rule.example_config:
            continue  # a configuration of its own: not one tree's
        inventory = rule.inventory_path()
        for index, document in enumerate(_documents(rule.example)):
            trees[str(inventory) if inventory else None].append((f"{rule_id}-{index}.yaml", document))
    return trees


@pytest.mark.slow
@pytest.mark.parametrize("inventory", sorted(_trees(), key=str))
def test_split_over_workers_the_examples_read_the_same_as_in_one_process(inventory, tmp_path, monkeypatch):
    files = _trees()[inventory]
    for name, text in files:
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)
    forked: list[int] = []
    real = gpulint.lint.run._parallel_reports
    monkeypatch.setattr(gpulint.lint.run, "_parallel_reports", lambda run, n: forked.append(n) or real(run, n))
    args = ["check", str(tmp_path), "--format", "json", *(["--inventory", inventory] if inventory else [])]
    serial = run_cli(*args, "--jobs", "1")
    parallel = run_cli(*args, "--jobs", "2")
    assert forked == [2]
    assert json.loads(parallel.stdout)["findings"] == json.loads(serial.stdout)["findings"]
    assert (parallel.stdout, parallel.exit_code) == (serial.stdout, serial.exit_code)
    # one parse at a time (a large `check`): each file's checks see the other files' objects only as they cross
    monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)
    streamed = run_cli(*args, "--jobs", "1")
    assert (streamed.stdout, streamed.exit_code) == (serial.stdout, serial.exit_code)
    streamed = run_cli(*args, "--jobs", "2")  # and in workers, their reports sent and written as they come
    assert (streamed.stdout, streamed.exit_code) == (serial.stdout, serial.exit_code)
    assert forked == [2, 2]


@pytest.mark.slow
def test_the_parity_fails_when_nothing_crosses_files(tmp_path, monkeypatch):
    # the parity above means something only if findings depend on other files' objects: with nothing
    # let through, the split run of some example tree must answer differently
    monkeypatch.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)
    differ = []
    for number, (inventory, files) in enumerate(sorted(_trees().items(), key=str)):
        root = tmp_path / str(number)
        root.mkdir()
        for name, text in files:
            (root / name).write_text(text, encoding="utf-8")
        args = ["check", str(root), "--format", "json", *(["--inventory", inventory] if inventory else [])]
        serial = json.loads(run_cli(*args, "--jobs", "1").stdout)["findings"]
        with monkeypatch.context() as patch:
            patch.setattr(gpulint.lint.run, "crosses_files", lambda obj: False)
            alone = json.loads(run_cli(*args, "--jobs", "2").stdout)["findings"]
        differ.append(alone != serial)
    assert sum(differ) >= 2


# A streamed run's first pass parses only the documents whose text may hold an object that crosses files
# (cross_file.CrossingText); the objects it takes must be the ones the whole file's parse gives.


def _crossing(path: str, text: str, reduced: bool, outline: bool = False) -> tuple[list[tuple[object, object]], int]:
    """The objects of ``text`` that cross files (with ``outline``, and the outlines of the others' pod templates,
    as a run carries them when a file names podAffinity), and how many objects were parsed."""
    crossing = CrossingText(pods=outline) if reduced else None
    parsed = parse_file(load_bytes(path, text.encode(), reduced=crossing))
    return [(obj.ref, obj.data) for obj in shared_objects(parsed, False, outline)], len(parsed.objects)


def _example_files() -> list[tuple[str, str]]:
    """Files as written: every rule doc's example (several documents each) and every file of examples/."""
    files = [(f"{rule_id}.yaml", all_rules()[rule_id].example) for rule_id in RULES]
    root = REPO / "examples"
    files += [(str(path), path.read_text("utf-8")) for path in sorted(root.rglob("*.yaml"))]
    return files


@pytest.mark.parametrize("outline", [False, True], ids=["crossing", "with-outlines"])
def test_the_first_pass_takes_the_same_objects_from_the_documents_it_parses(outline):
    parsed = {True: 0, False: 0}
    outlines = 0
    for path, text in _example_files():
        whole, parsed_whole = _crossing(path, text, reduced=False, outline=outline)
        fewer, parsed_fewer = _crossing(path, text, reduced=True, outline=outline)
        assert fewer == whole, path
        parsed[True] += parsed_fewer
        parsed[False] += parsed_whole
        outlines += sum(ref.kind == OUTLINE_KIND for ref, _ in whole)
    if not outline:
        assert parsed[True] < parsed[False] / 2  # most documents hold nothing another file reads: not parsed
    else:  # most hold a pod template, outlined; the others are still not parsed
        assert outlines > 40 and parsed[True] < parsed[False]


def test_the_first_pass_misses_objects_when_the_words_are_left_out(monkeypatch):
    monkeypatch.setattr(cross_file, "_CROSSING_WORDS", re.compile("(?!)"))
    assert any(_crossing(p, t, reduced=True)[0] != _crossing(p, t, reduced=False)[0] for p, t in _example_files())


_CLAIM = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: one-gpu\n"
_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: trainer\nspec:\n  containers:\n  - name: main\n    image: {image}\n"
)


# Pod templates whose text does not name `containers`: KServe's model shorthand (the predictor's container is
# built from it, kube/kserve.py), and a Deployment whose template has none written (refused by the API server,
# still a template gpulint reads).
_SHORTHAND = (
    "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: llama, namespace: ml}\n"
    "spec:\n  predictor:\n    model:\n      modelFormat: {name: huggingface}\n"
    '      resources: {limits: {nvidia.com/gpu: "1"}}\n'
)
_NO_CONTAINERS = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: empty, namespace: ml}\nspec:\n  template:\n"
    "    metadata: {labels: {app: cache}}\n    spec: {nodeSelector: {pool: cpu}}\n"
)


@pytest.mark.parametrize("document", [_SHORTHAND, _NO_CONTAINERS], ids=["kserve-shorthand", "no-containers"])
def test_the_first_pass_outlines_pod_templates_that_name_no_containers(document):
    text = _SERVICE + "---\n" + document
    whole, _ = _crossing("f.yaml", text, reduced=False, outline=True)
    assert [ref.kind for ref, _ in whole] == ["Service", OUTLINE_KIND]
    assert _crossing("f.yaml", text, reduced=True, outline=True)[0] == whole
    assert _crossing("f.yaml", text, reduced=True)[0] == whole[:1]  # without outlines, not parsed


@pytest.mark.parametrize("outline", [False, True], ids=["crossing", "with-outlines"])
@pytest.mark.parametrize(
    ("case", "text"),
    [
        # a kind spelled with an escape in a double-quoted scalar: no search of the text sees "PodGroup"
        ("escaped kind", 'apiVersion: example.com/v1\nkind: "Pod\\x47roup"\nmetadata: {name: g}\n---\n' + _CLAIM),
        # a template anywhere: the loader reads none of the file's objects (not YAML yet)
        ("template", _CLAIM + "---\n" + _POD.format(image="{{ .Values.image }}")),
        # a printf verb YAML stops at: none either
        ("printf verb", _CLAIM + "---\n" + _POD.format(image="registry/%s:latest").replace("image: r", "image: %s r")),
        ("broken document between", _CLAIM + "---\nmetadata: {name: [\n---\n" + _CLAIM.replace("one-gpu", "two")),
        ("document end marker", _POD.format(image="a") + "...\n" + _CLAIM),
        ("directive", "%YAML 1.1\n---\n" + _CLAIM + "---\n" + _POD.format(image="a")),
        ("carriage returns", (_POD.format(image="a") + "---\n" + _CLAIM).replace("\n", "\r")),
        ("flow style", '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}\n---\n' + _CLAIM),
        # a template statement YAML stops at (an Ansible template, a Terraform templatefile()): none either
        ("jinja statement", _CLAIM + "---\n" + _POD.format(image="a").replace("  - name", "{% if gpu %}\n  - name")),
        (
            "terraform directive",
            _CLAIM + "---\n" + _POD.format(image="a").replace("  - name", "  %{ for c in cs ~}\n  - name"),
        ),
        # a character libyaml refuses ends the file's parse before the documents ahead of it are given
        ("control character", _CLAIM + "---\n" + _POD.format(image="a\x07")),
        # a JSON file's parse is retried without its comments, all of its text at once: here the comment left
        # open takes the rest of the file with it
        ("json comments", '{"a": 1} /* the claim:\n---\n' + _CLAIM),
    ],
)
def test_the_first_pass_reads_what_the_whole_file_s_parse_reads(case, text, outline):
    path = "f.json" if case.startswith("json") else "f.yaml"
    whole, _ = _crossing(path, text, reduced=False, outline=outline)
    assert _crossing(path, text, reduced=True, outline=outline)[0] == whole
    assert case != "escaped kind" or [ref.kind for ref, _ in whole] == ["PodGroup", "ResourceClaim"]
    refused = (
        "template",
        "printf verb",
        "jinja statement",
        "terraform directive",
        "control character",
        "json comments",
    )
    assert case not in refused or whole == []  # the trap: a blanked document decides


def test_a_blanked_document_keeps_its_lines_and_its_kind():
    crossing = CrossingText()
    text = _POD.format(image="a") + "--- # the claim\n" + _CLAIM
    reduced = crossing(text)
    assert reduced.count("\n") == text.count("\n")
    assert reduced == "\n" * _POD.count("\n") + "--- # the claim\n" + _CLAIM
    assert crossing.kinds == {("v1", "Pod")}


_RELEASE_LABELS = "  labels: {app.kubernetes.io/instance: nextcloud, helm.sh/chart: nextcloud-30.1.0}\n"
_APP = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nextcloud\n  namespace: ix-nextcloud\n{labels}"
    "spec:\n  replicas: 1\n  strategy: {{type: Recreate}}\n  selector:\n    matchLabels: {{app: nextcloud}}\n"
    "  template:\n    metadata:\n      labels: {{app: nextcloud}}\n    spec:\n      containers:\n"
    "      - name: nextcloud\n        image: nextcloud:28.0.2\n        resources:\n"
    "          limits: {{gpu.intel.com/i915: 1}}\n"
)
_CRON = (
    "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: nextcloud-preview-cron\n  namespace: ix-nextcloud\n"
    + _RELEASE_LABELS
    + 'spec:\n  schedule: "*/5 * * * *"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n'
    "          restartPolicy: Never\n          containers:\n          - name: preview\n"
    "            image: nextcloud:28.0.2\n            resources:\n              limits: {gpu.intel.com/i915: 1}\n"
)
_IGPU_NODE = (
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: ix-truenas\n  labels: {kubernetes.io/hostname: ix-truenas}\n"
    'status:\n  capacity: {cpu: "8", memory: 32Gi, pods: "250", gpu.intel.com/i915: "1"}\n'
    '  allocatable: {cpu: "8", memory: 31Gi, pods: "250", gpu.intel.com/i915: "1"}\n'
)


def test_a_release_s_device_holder_crosses_files_for_its_cronjob(tmp_path, monkeypatch):
    # a chart rendered into one file per template: the CronJob's finding reads the Deployment of another file,
    # so a split run and a streamed one must see it too; a GPU Deployment of no release does not cross
    (tmp_path / "deployment.yaml").write_text(_APP.format(labels=_RELEASE_LABELS), encoding="utf-8")
    (tmp_path / "cronjob.yaml").write_text(_CRON, encoding="utf-8")
    inventory = tmp_path.parent / f"{tmp_path.name}-node.yaml"
    inventory.write_text(_IGPU_NODE, encoding="utf-8")
    monkeypatch.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)
    args = ["check", str(tmp_path), "--format", "json", "--inventory", str(inventory), "--select", "gpu-unschedulable"]
    serial = run_cli(*args, "--jobs", "1")
    assert any("this CronJob's pods fit no node" in f["message"] for f in json.loads(serial.stdout)["findings"])
    assert run_cli(*args, "--jobs", "2").stdout == serial.stdout
    monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)
    assert run_cli(*args, "--jobs", "1").stdout == serial.stdout
    alone, _ = _crossing("deployment.yaml", _APP.format(labels=""), reduced=True)
    released, _ = _crossing("deployment.yaml", _APP.format(labels=_RELEASE_LABELS), reduced=True)
    assert (alone, [ref.kind for ref, _ in released]) == ([], ["Deployment"])


_PHP = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nextcloud-php, namespace: ix-nextcloud}\n"
    "data: {memory_limit: 2G}\n"
)


_UNLABELLED = (_APP.format(labels=""), _CRON.replace(_RELEASE_LABELS, ""))


def _overlay_render() -> Source:
    """An overlay's render as `kubectl kustomize` gives it: the app and its CronJob from two base files, no release
    labels, each document placed in its base file (render/kustomize.py reads kustomize's origin annotations)."""
    output = "---\n".join(_UNLABELLED).encode()
    files = ("base/deployment.yaml", "base/cronjob.yaml")

    def placed(loaded: LoadedFile) -> LoadedFile:
        loaded.documents = [mapped(document, files[index]) for index, document in enumerate(loaded.documents)]
        return loaded

    return Source("overlays/home", rendered=Rendered("kustomize", "overlays/home", output=output, mapper=placed))


def test_a_render_s_device_holder_crosses_files_whatever_its_labels(tmp_path, monkeypatch):
    # one overlay's (or chart's) render deploys together (lint/verdicts/holders.py): the CronJob's finding reads the
    # app of another base file, so a split and a streamed run must see it too; the app as a file of its own does not
    node = tmp_path / "node.yaml"
    node.write_text(_IGPU_NODE, encoding="utf-8")
    sources = [_overlay_render(), Source("apps/php.yaml", content=_PHP.encode())]

    def found(jobs: int, given: list[Source] = sources) -> list[tuple[str, str, int, str]]:
        run = LintRun(Config(), given, load_inventory([str(node)]), streamed=True)
        reports = run.file_reports(jobs)
        return [(r.path, f.file, f.line, f.message) for r in reports for f in r.findings if "CronJob" in f.message]

    kept = found(1)
    assert [(path, file) for path, file, _, _ in kept] == [("overlays/home", "base/cronjob.yaml")]
    assert kept[0][3].startswith("this CronJob's pods fit no node once Deployment nextcloud runs")
    monkeypatch.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)
    assert found(2) == kept
    monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)
    assert found(1) == found(2) == kept
    # the trap: the same two files as written, not rendered together (no release labels either)
    written = [
        Source(file, content=text.encode()) for file, text in zip(("deployment.yaml", "cronjob.yaml"), _UNLABELLED)
    ]
    assert found(1, written) == found(2, written) == []
    app = yaml.safe_load(_APP.format(labels=""))
    rendered = LintedObject(object_ref(app), app, "base/deployment.yaml", render="overlays/home")
    assert crosses_files(rendered) and not crosses_files(LintedObject(rendered.ref, app, rendered.file))


_HPA = (
    "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: nextcloud\n"
    "  namespace: ix-nextcloud\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nextcloud}\n"
    "  minReplicas: 1\n  maxReplicas: 3\n"
)


def test_an_autoscaler_in_another_file_is_read_by_a_split_run(tmp_path, monkeypatch):
    # the HPA may shrink the app: a split or streamed run must see it too, or it flags the CronJob
    (tmp_path / "deployment.yaml").write_text(_APP.format(labels=_RELEASE_LABELS), encoding="utf-8")
    (tmp_path / "cronjob.yaml").write_text(_CRON, encoding="utf-8")
    (tmp_path / "hpa.yaml").write_text(_HPA, encoding="utf-8")
    inventory = tmp_path.parent / f"{tmp_path.name}-node.yaml"
    inventory.write_text(_IGPU_NODE, encoding="utf-8")
    monkeypatch.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)
    args = ["check", str(tmp_path), "--format", "json", "--inventory", str(inventory), "--select", "gpu-unschedulable"]
    serial = run_cli(*args, "--jobs", "1")
    assert not any("this CronJob's pods" in f["message"] for f in json.loads(serial.stdout)["findings"])
    assert run_cli(*args, "--jobs", "2").stdout == serial.stdout
    monkeypatch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)
    assert run_cli(*args, "--jobs", "1").stdout == serial.stdout


# Whatever a file's documents hold and however they are spelled or broken, the first pass takes from it exactly the
# objects the whole file's parse gives: objects that cross and objects that do not, as repositories write them (block,
# flow and JSON style, anchors, merge keys, tags, quotes, escapes, a List), broken as real files are (templates of
# several languages, printf verbs, unclosed quotes, brackets and comments, tabs, markers, characters YAML refuses).
_PODGROUP = (
    "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: trainers\n  namespace: ml\n"
    "spec:\n  minMember: 2\n"
)
_GANG_POD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: worker-0\n  namespace: ml\n"
    "  labels: {scheduling.x-k8s.io/pod-group: trainers}\nspec:\n  containers:\n  - name: main\n    image: a\n"
)
_QUEUE = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: q, namespace: ml}\nspec: {clusterQueue: cq}\n"
_SCHEDULER = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: sched, namespace: kube-system}\nspec:\n  template:\n"
    "    spec:\n      containers:\n      - name: s\n        image: registry.k8s.io/kube-scheduler:v1.33.0\n"
    "        command: [kube-scheduler, --scheduler-name=gpu-binpack]\n"
)
_CLAIMING_JOB = (
    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ml}\nspec:\n  template:\n    spec:\n"
    "      containers:\n      - {name: main, image: a}\n      resourceClaims:\n"
    "      - {name: gpu, resourceClaimTemplateName: one-gpu}\n"
)
_SERVICE = "apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: ml}\nspec:\n  ports:\n  - port: 80\n"
_LIST = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(_PODGROUP)]})
_DOCUMENTS = [
    *(_CLAIM, _PODGROUP, _GANG_POD, _QUEUE, _SCHEDULER, _CLAIMING_JOB, _APP.format(labels=_RELEASE_LABELS), _HPA),
    *(_PHP, _LIST, _SERVICE, _IGPU_NODE, _POD.format(image="a"), _APP.format(labels=""), _UNLABELLED[1]),
]
_SPELLINGS = ["block", "flow", "json", "json-escaped", "escaped kind", "tagged kind", "anchored", "merged", "comment"]
_BREAKS = [
    "{% if gpu %}\n", "{%- endif %}\n", "  %{ for node in nodes ~}\n", "  %{ endfor ~}\n", "  image: %s\n",
    "  image: {{ .Values.image }}\n", "metadata: {name: [\n", 'x: "unterminated\n', "x: 'unterminated\n",
    "x: 'a\n---\nb'\n", "\t- tab\n", "...\n", "%YAML 1.1\n", "x: *undefined\n", "x: &a &b y\n", "? complex\n",
    "x: !!binary aGk=\n", "x: !!python/name:os.system\n", "x: a\rb\n", "x: \u2028\n", "- item\n", "x: |\n  ---\n",
    "x: \\\n", "labels: {scheduling.x-k8s.io/pod-group: g}\n", "  # kind: PodGroup\n", 'x: "%d"\n', "\ufeff\n",
    "x: y: z\n", "x: a\x07b\n", "x: \x7f\n", "/* open\n", "  // a comment\n", "x: 1 /* c */\n", "{}\n",
]  # fmt: skip
_SEPARATORS = ["---\n", "--- \n", "---\n\n", "--- # next\n", "---\t\n"]


def _spelled(text: str, how: str) -> str:
    data = yaml.safe_load(text)
    kind = data["kind"]
    if how == "flow":
        return yaml.safe_dump(data, default_flow_style=True, width=60)
    if how == "json":
        return json.dumps(data, indent=2) + "\n"
    if how == "json-escaped":  # JSON may spell '/' as '\/'
        return json.dumps(data).replace("/", "\\/") + "\n"
    if how == "escaped kind":
        return text.replace(f"kind: {kind}\n", f'kind: "\\x{ord(kind[0]):02x}{kind[1:]}"\n')
    if how == "tagged kind":
        return text.replace(f"kind: {kind}\n", f"kind: !!str '{kind}'\n")
    if how == "anchored":
        return text.replace("metadata:", "metadata: &meta", 1) + "x-meta: *meta\n"
    if how == "merged":
        return f"x-base: &base\n  kind: {kind}\n" + text.replace(f"kind: {kind}\n", "<<: *base\n")
    if how == "comment":
        return f"# Source: chart/templates/{kind.lower()}.yaml\n" + text
    return text


@st.composite
def _files(draw: st.DrawFn) -> tuple[str, str]:
    documents = []
    for _ in range(draw(st.integers(1, 4))):
        written = draw(st.sampled_from([*_DOCUMENTS, _SHORTHAND, _NO_CONTAINERS]))
        lines = _spelled(written, draw(st.sampled_from(_SPELLINGS))).splitlines(True)
        for _ in range(draw(st.integers(0, 2))):
            lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(_BREAKS)))
        documents.append("".join(lines))
    separators = [draw(st.sampled_from(_SEPARATORS)) for _ in documents]
    first = separators[0] if draw(st.booleans()) else ""
    text = first + documents[0] + "".join(sep + doc for sep, doc in zip(separators[1:], documents[1:]))
    return draw(st.sampled_from(["f.yaml", "f.json"])), text


@pytest.mark.slow
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_files())
@example(("f.yaml", _CLAIM + "---\n" + _POD.format(image="a").replace("  - name", "{% if gpu %}\n  - name")))
@example(("f.yaml", _CLAIM + "---\n" + _POD.format(image="a\x07")))
@example(("f.json", '{"a": 1} /* the claim:\n---\n' + _CLAIM))
@example(("f.yaml", _UNLABELLED[0] + "---\n" + _UNLABELLED[1].replace("kind: CronJob", 'kind: "\\x43ronJob"')))
def test_the_first_pass_never_drops_or_adds_an_object_the_whole_parse_takes(file):
    path, text = file
    assert _crossing(path, text, reduced=True)[0] == _crossing(path, text, reduced=False)[0]
    # nor, when the run carries them, a pod template's outline
    assert _crossing(path, text, True, outline=True)[0] == _crossing(path, text, False, outline=True)[0]


def test_the_generated_files_hold_objects_that_cross():
    # the property above is about something: each kind of document it is made of crosses, or does not, as meant
    crossing = [bool(_crossing("f.yaml", text, reduced=False)[0]) for text in _DOCUMENTS]
    assert crossing == [True] * 11 + [False] * 4  # a Service crosses: service-dns-mismatch reads it by name


# Required pod affinity (lint/verdicts/pod_affinity.py): the pods a pod may join are every linted pod template, of
# every file. A split run carries the templates of what does not cross as outlines (lint/world/pod_outlines.py); a
# streamed or indexed run holds only what crosses (here the DaemonSet) and says nothing. A node-local cache: its
# DaemonSet on the CPU nodes (no toleration for the GPU node's taint), a replica on the GPU node in another file;
# the trainer follows the cache.
_CACHE_DAEMONSET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: cache, namespace: ml}
spec:
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      containers:
      - {name: cache, image: redis:7.2, resources: {requests: {cpu: 100m, memory: 128Mi}}}
"""
_CACHE_ON_GPU = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: cache-gpu, namespace: ml}
spec:
  replicas: 1
  selector: {matchLabels: {app: cache, tier: gpu}}
  template:
    metadata: {labels: {app: cache, tier: gpu}}
    spec:
      nodeSelector: {kubernetes.io/hostname: gpu-1}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - {name: cache, image: redis:7.2, resources: {requests: {cpu: 100m, memory: 128Mi}}}
"""
_TRAINER = """\
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: ml, labels: {app: trainer}}
spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {labelSelector: {matchLabels: {app: cache}}, topologyKey: kubernetes.io/hostname}
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - {name: train, image: registry.example.com/train:1.0, resources: {limits: {nvidia.com/gpu: 1}}}
"""
_AFFINITY = "cannot be scheduled beside the pods its required pod affinity"


def _affinity_findings(*args: str) -> list[str]:
    run = run_cli(*args, "--format", "json", "--select", "gpu-unschedulable")
    assert run.exit_code in (0, 1), run.stderr
    return [f["message"] for f in json.loads(run.stdout)["findings"] if _AFFINITY in f["message"]]


def test_a_pod_affinity_peer_in_another_file_is_never_missed_by_a_split_run(tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    tree.mkdir()
    for name, text in (("cache.yaml", _CACHE_DAEMONSET), ("cache-gpu.yaml", _CACHE_ON_GPU), ("trainer.yaml", _TRAINER)):
        (tree / name).write_text(text, encoding="utf-8")
    inventory = tmp_path / "nodes.yaml"
    inventory.write_text(TWO_CPU_ONE_GPU, encoding="utf-8")
    args = ("check", str(tree), "--inventory", str(inventory))
    monkeypatch.setattr(gpulint.lint.run, "PARALLEL_MIN_FILES", 2)
    # one process holding every file: the replica on gpu-1 is a pod the trainer can join there
    assert _affinity_findings(*args, "--jobs", "1") == []
    # split over workers: the replica's Deployment does not cross, its outline does; no false warning
    assert _affinity_findings(*args, "--jobs", "2") == []
    # one parse at a time, and pre-commit on the trainer's file (the repository index carries the DaemonSet,
    # not the Deployment): the run does not hold every pod template, and says nothing
    with monkeypatch.context() as patch:
        patch.setattr(gpulint.lint.run, "KEPT_SOURCE_BYTES", 0)
        assert _affinity_findings(*args, "--jobs", "1") == _affinity_findings(*args, "--jobs", "2") == []
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    assert _affinity_findings("check", str(tree / "trainer.yaml"), "--inventory", str(inventory)) == []
    (tree / ".git").rename(tmp_path / "git")
    # the trap: without the replica, the cache stays off gpu-1 (the DaemonSet crosses files)
    (tree / "cache-gpu.yaml").unlink()
    blocked = [
        "this pod cannot be scheduled beside the pods its required pod affinity (kubernetes.io/hostname) matches"
    ]
    assert _affinity_findings(*args, "--jobs", "1") == _affinity_findings(*args, "--jobs", "2") == blocked
    # and the cache as a Deployment, which does not cross: the split run judges it from its outline
    (tree / "cache.yaml").write_text(
        _CACHE_ON_GPU.replace("cache-gpu", "cache").replace(
            "kubernetes.io/hostname: gpu-1", "kubernetes.io/hostname: cpu-1"
        ),
        encoding="utf-8",
    )
    assert _affinity_findings(*args, "--jobs", "1") == _affinity_findings(*args, "--jobs", "2") == blocked
