"""Files linted alone (pre-commit, `gpulint check changed.yaml`): references into the rest of the
repository resolve through its index; its cache is fast, and safe when hostile."""

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, REPO, run_cli
from support.index_cache import read_index, write_index

from gpulint.lint.config import Config
from gpulint.lint.findings import ObjectRef
from gpulint.lint.inputs.collect import collect
from gpulint.lint.inputs.linted_set import KeptObjects, LintedObject, LintedSet
from gpulint.lint.inputs.repo_index import CACHE_DIR, CACHE_FILE, CACHE_FORMAT, build_context, repository_of
from gpulint.lint.world.cross_file import crosses_files
from gpulint.lint.world.pod_outlines import outlines_of

GROUP = """\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: nccl-allreduce, namespace: ml}
spec: {minMember: 2, scheduleTimeoutSeconds: 60}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: nccl-{index}
  namespace: ml
  labels: {{scheduling.x-k8s.io/pod-group: {group}}}
spec:
  schedulerName: scheduler-plugins-scheduler
  resourceClaims:
  - name: gpus
    resourceClaimTemplateName: {template}
  containers:
  - name: nccl
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      claims: [{{name: gpus}}]
"""
TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: four-gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 4}
"""


def pod(index: int, group: str = "nccl-allreduce", template: str = "four-gpus") -> str:
    return POD.format(index=index, group=group, template=template)


def make_repo(root: Path, git: bool = True) -> Path:
    """A GitOps repository: the group and the claim template in their own files, one file per Pod."""
    (root / "gang").mkdir(parents=True)
    (root / "gang" / "podgroup.yaml").write_text(GROUP)
    (root / "claims").mkdir()
    (root / "claims" / "template.yaml").write_text(TEMPLATE)
    (root / "gang" / "pod-0.yaml").write_text(pod(0))
    (root / "gang" / "pod-1.yaml").write_text(pod(1))
    if git:
        (root / ".git").mkdir()  # a work tree is all the index needs (gpulint never runs git)
    return root


def rules_of(result, *rules: str) -> list[tuple[str, str, str]]:
    return [(f["path"], f["rule"], f["severity"]) for f in result.json()["findings"] if f["rule"] in rules]


REFERENCE_RULES = ("gang-inconsistent", "claim-reference-invalid")


def test_a_file_linted_alone_resolves_references_into_the_rest_of_its_repository(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    monkeypatch.chdir(repo)
    result = run_cli("check", "gang/pod-1.yaml", "--format", "json")
    assert rules_of(result, *REFERENCE_RULES) == []
    assert {f["path"] for f in result.json()["findings"]} <= {"gang/pod-1.yaml"}  # only the file passed is reported
    # a typo: the index finds the repository's groups, so the missing one gets a suggestion; it is an error
    # once the configuration declares that the repository holds every PodGroup (else a likely typo: info)
    (repo / "gang" / "pod-1.yaml").write_text(pod(1, group="nccl-allredcue"))
    result = run_cli("check", "gang/pod-1.yaml", "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "gang-inconsistent"]
    assert finding["severity"] == "info" and "did you mean 'nccl-allreduce'?" in finding["notes"]
    (repo / ".gpulint.yaml").write_text("complete: [PodGroup]\n")
    result = run_cli("check", "gang/pod-1.yaml", "--format", "json")
    (finding,) = [f for f in result.json()["findings"] if f["rule"] == "gang-inconsistent"]
    assert finding["severity"] == "error" and "did you mean 'nccl-allreduce'?" in finding["notes"]
    assert (repo / CACHE_DIR / ".gitignore").read_text().splitlines()[-1] == "*"


def test_the_index_counts_a_groups_members_in_unchanged_files(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    (repo / "gang" / "podgroup.yaml").write_text(GROUP.replace("minMember: 2", "minMember: 3"))
    monkeypatch.chdir(repo)
    result = run_cli("check", "gang/pod-1.yaml", "--format", "json", "--select", "gang-inconsistent")
    (finding,) = result.json()["findings"]
    assert "requires 3 pods at once but the 2 objects that join it create only 2" in finding["message"]
    (repo / "gang" / "pod-2.yaml").write_text(pod(2))
    result = run_cli("check", "gang/pod-1.yaml", "--format", "json", "--select", "gang-inconsistent")
    assert result.json()["findings"] == []


def test_outside_a_repository_the_files_named_are_the_whole_set(tmp_path, monkeypatch):
    make_repo(tmp_path / "loose", git=False)
    monkeypatch.chdir(tmp_path / "loose")
    # no repository to index: the file named is all there is (the rule docs' examples are linted so); a
    # reference found nowhere proves nothing until the configuration declares the kinds complete
    assert rules_of(run_cli("check", "gang/pod-1.yaml", "--format", "json"), *REFERENCE_RULES) == []
    Path(".gpulint.yaml").write_text("complete: [PodGroup, ResourceClaimTemplate]\n")
    assert rules_of(run_cli("check", "gang/pod-1.yaml", "--format", "json"), *REFERENCE_RULES) == [
        ("gang/pod-1.yaml", "gang-inconsistent", "error"),
        ("gang/pod-1.yaml", "claim-reference-invalid", "error"),
    ]
    # the directory is everything that is applied: a reference into nothing is reported
    os.remove("gang/podgroup.yaml")
    assert rules_of(run_cli("check", ".", "--format", "json"), "gang-inconsistent") == [
        ("gang/pod-0.yaml", "gang-inconsistent", "error"),
        ("gang/pod-1.yaml", "gang-inconsistent", "error"),
    ]
    assert not (tmp_path / "loose" / CACHE_DIR).exists()


def test_the_index_honours_gitignore_exclude_and_the_switch(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    (repo / ".gitignore").write_text("claims/\n")
    (repo / ".gpulint.yaml").write_text("complete: [ResourceClaimTemplate]\n")
    monkeypatch.chdir(repo)
    args = ("check", "gang/pod-1.yaml", "--format", "json", "--select", "claim-reference-invalid")
    (finding,) = run_cli(*args).json()["findings"]  # the template lives only in an ignored file
    assert finding["severity"] == "error" and "'four-gpus' is not among the linted files" in finding["message"]
    (repo / ".gitignore").write_text("")
    (repo / ".gpulint.yaml").write_text("exclude: [claims]\ncomplete: [ResourceClaimTemplate]\n")
    assert len(run_cli(*args).json()["findings"]) == 1
    (repo / ".gpulint.yaml").write_text("repo-index: false\ncomplete: [ResourceClaimTemplate]\n")
    assert run_cli(*args).json()["findings"] == []  # not indexed: a file alone proves nothing missing
    (repo / ".gpulint.yaml").write_text("repo-index: 'yes'\n")
    result = run_cli(*args)
    assert result.exit_code == 2 and "'repo-index' must be true or false" in result.stderr


def _context(repo: Path):
    sources = collect([str(repo / "gang" / "pod-1.yaml")])
    root = repository_of(sources)
    assert root == os.path.realpath(repo)
    return build_context(root, sources, crosses_files, outlines_of, Config().exclude)


def test_the_second_run_parses_only_what_changed(tmp_path):
    repo = make_repo(tmp_path / "repo")
    first = _context(repo)
    assert first.parsed == 3 and sorted(o.ref.name for o in first.objects) == ["four-gpus", "nccl-0", "nccl-allreduce"]
    second = _context(repo)
    assert second.parsed == 0 and sorted(o.ref.name for o in second.objects) == sorted(
        o.ref.name for o in first.objects
    )
    (repo / "gang" / "podgroup.yaml").write_text(GROUP.replace("nccl-allreduce", "renamed"))
    third = _context(repo)
    assert third.parsed == 1 and "renamed" in {o.ref.name for o in third.objects}


def test_the_cache_keys_a_file_by_its_path_in_the_work_tree_wherever_the_run_starts(tmp_path, monkeypatch):
    """The keys come from the walk's own paths (no realpath per file, issue #31): the same from the top, from a
    subdirectory and from outside, and a link to a file in the tree is keyed by the file it names."""
    repo = make_repo(tmp_path / "repo")
    (repo / "gang" / "alias.yaml").symlink_to(repo / "gang" / "podgroup.yaml")
    keys = []
    for cwd in (repo, repo / "gang", tmp_path):
        monkeypatch.chdir(cwd)
        shutil.rmtree(repo / CACHE_DIR, ignore_errors=True)
        _context(repo)
        keys.append(sorted(read_index(repo / CACHE_DIR / CACHE_FILE)[0]["files"]))
        assert _context(repo).parsed == 0  # the keys written are the keys looked up
    real = os.path.realpath(repo)
    expected = sorted(
        {
            os.path.relpath(os.path.realpath(os.path.join(directory, name)), real)
            for directory, _, names in os.walk(repo)
            if CACHE_DIR not in directory and ".git" not in directory.split(os.sep)
            for name in names
            if name.endswith(".yaml") and name != "pod-1.yaml"
        }
    )
    assert keys == [expected] * 3 and "gang/alias.yaml" not in expected


@pytest.mark.parametrize(
    "cache",
    [
        b"not json at all",
        b"[1, 2, 3]",
        b'{"format": 2, "gpulint": "0.1.0", "root": "ROOT", "files": {"gang/podgroup.yaml": {"stat": [1, 2], '
        b'"objects": []}}}',
        b'{"format": 2, "gpulint": "0.1.0", "root": "ROOT", "files": {"x.yaml": {"stat": [1, 2, 3], '
        b'"objects": [{"ref": ["v1", "Pod", "ml", 7], "data": {}}]}}}',
        b"[" * 100_000 + b"]" * 100_000,
    ],
    ids=["garbage", "a-list", "short-stat", "bad-ref", "deep-nesting"],
)
def test_a_hostile_or_broken_cache_is_ignored_and_rewritten(tmp_path, cache):
    repo = make_repo(tmp_path / "repo")
    (repo / CACHE_DIR).mkdir()
    (repo / CACHE_DIR / CACHE_FILE).write_bytes(cache.replace(b"ROOT", os.path.realpath(repo).encode()))
    context = _context(repo)
    assert context.parsed == 3 and len(context.objects) == 3
    written, _ = read_index(repo / CACHE_DIR / CACHE_FILE)
    assert written["format"] == CACHE_FORMAT and set(written["files"]) == {
        "gang/podgroup.yaml",
        "gang/pod-0.yaml",
        "claims/template.yaml",
    }


def test_a_cache_that_claims_objects_for_files_it_does_not_match_is_not_believed(tmp_path):
    """A cache planted in the repository (committed, or from another checkout) lists a PodGroup the
    files do not define: stat signatures never match a fresh checkout's, so it is parsed again."""
    repo = make_repo(tmp_path / "repo")
    planted = {
        "format": CACHE_FORMAT,
        "gpulint": "0.1.0",
        "root": os.path.realpath(repo),
        "files": {
            "gang/podgroup.yaml": {
                "stat": [1, 1, 1],
                "objects": [{"ref": ["scheduling.x-k8s.io/v1alpha1", "PodGroup", "ml", "planted"], "data": {}}],
                "outlines": [0, 0],
            }
        },
    }
    (repo / CACHE_DIR).mkdir()
    write_index(repo / CACHE_DIR / CACHE_FILE, planted)
    assert "planted" not in {o.ref.name for o in _context(repo).objects}


@pytest.mark.parametrize("span", [[0, 10**9], [5, 2], [-1, 0], ["0", 1], [0], "[0, 1]"])
def test_an_outlines_span_off_the_bytes_after_the_table_drops_the_cache(tmp_path, span):
    """Each file's outlines are a span of the bytes after the cache's table: one that is not a span of them drops
    the cache whole, as any other field not as written does (every file is parsed again)."""
    repo = make_repo(tmp_path / "repo")
    _context(repo)
    cache = repo / CACHE_DIR / CACHE_FILE
    assert _context(repo).parsed == 0
    document, written = read_index(cache)
    document["files"]["gang/pod-0.yaml"]["outlines"] = span
    write_index(cache, document, written)
    assert _context(repo).parsed == 3


@pytest.mark.parametrize("span", [[0, 10**9], [5, 2], [-1, 0], [0, "1"], "past the objects' texts"])
def test_an_objects_span_off_the_objects_texts_drops_the_cache(tmp_path, span):
    """Each kept object's data is a span of the objects' texts after the table (the outlines' follow them): one that
    is not drops the cache whole, as the outlines' span does."""
    repo = make_repo(tmp_path / "repo")
    _context(repo)
    cache = repo / CACHE_DIR / CACHE_FILE
    document, written = read_index(cache)
    ((*ref, start, end),) = document["files"]["claims/template.yaml"]["objects"]
    if span == "past the objects' texts":
        span = [document["data"] + 1, document["data"] + 1 + end - start]
        written += b"{}" * (end - start)
    document["files"]["claims/template.yaml"]["objects"] = [[*ref, *span]]
    write_index(cache, document, written)
    assert _context(repo).parsed == 3


@pytest.mark.parametrize("text", [b"not json", b"[1, 2]", b'"four-gpus"', b"[" * 100_000])
def test_an_objects_data_is_decoded_when_read_and_not_as_written_is_read_from_its_file(tmp_path, text):
    """A warm run decodes a kept object's data only when a check reads it (most runs read few kinds), so a text
    that is not a JSON object is found then, not when the table is read: that file is indexed again and the
    object's data read from it, as a cold run reads it."""
    repo = make_repo(tmp_path / "repo")
    cold = {o.ref.name: o.data for o in _context(repo).objects}
    cache = repo / CACHE_DIR / CACHE_FILE
    document, written = read_index(cache)
    ((*ref, start, end),) = document["files"]["claims/template.yaml"]["objects"]
    written = written[:start] + text + written[end:]
    shift = len(text) - (end - start)
    document["data"] += shift
    for entry in document["files"].values():
        entry["objects"] = [[*r, a + shift * (a > start), b + shift * (b > start)] for *r, a, b in entry["objects"]]
        entry["outlines"] = [n + shift for n in entry["outlines"]]
    write_index(cache, document, written)
    warm = _context(repo)
    assert warm.parsed == 0  # the table as written: the text is not decoded yet
    assert {o.ref.name: o.data for o in warm.objects} == cold
    assert cold["four-gpus"]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 4


def test_a_warm_index_makes_only_the_kinds_a_lookup_reads_and_walks_as_a_list(tmp_path):
    """A warm run's kept objects are made kind by kind as checks look them up (a pre-commit run looks up a few kinds
    of thousands of objects); a lookup, a walk of every object and an object added after them see what the set
    made from the same objects as a list sees, in the same order, the same instance for an object looked up twice."""
    repo = make_repo(tmp_path / "repo")
    (repo / "gang" / "more.yaml").write_text(TEMPLATE.replace("four-gpus", "two-gpus") + "---\n" + GROUP)
    assert _context(repo).parsed == 4
    own = LintedObject(ObjectRef("v1", "Pod", "ml", "nccl-1"), {"kind": "Pod"}, "gang/pod-1.yaml")
    listed = LintedSet([own], kept=list(_context(repo).objects))
    kept = _context(repo).objects
    assert isinstance(kept, KeptObjects) and len(kept) == 5 and kept._made == [None] * 5  # nothing made yet
    lazy = LintedSet([own], kept=kept)
    assert lazy.has_kind("resource.k8s.io", "ResourceClaimTemplate") and not lazy.has_kind("", "ConfigMap")
    assert lazy.has_any([("", "Secret"), ("scheduling.x-k8s.io", "PodGroup")])
    templates = lazy.of_kind("resource.k8s.io", "ResourceClaimTemplate")
    assert [o.ref.name for o in templates] == ["four-gpus", "two-gpus"]
    assert sum(made is not None for made in kept._made) == 2  # the Pod and the PodGroups not made
    assert lazy.find("scheduling.x-k8s.io", "PodGroup", "ml", "nccl-allreduce") == listed.find(
        "scheduling.x-k8s.io", "PodGroup", "ml", "nccl-allreduce"
    )
    assert [(o.ref, o.file) for o in lazy] == [(o.ref, o.file) for o in listed] and len(lazy) == len(listed) == 6
    assert lazy.of_kind("resource.k8s.io", "ResourceClaimTemplate")[0] is templates[0]
    later = LintedObject(ObjectRef("v1", "ConfigMap", "ml", "late"), {}, "late.yaml")
    lazy.add(later)
    listed.add(later)
    assert [o.ref for o in lazy] == [o.ref for o in listed] and lazy.of_kind("", "ConfigMap") == [later]


def test_a_deferred_object_crosses_to_a_worker_decoded(tmp_path):
    """A ``--jobs`` worker's pipe pickles the objects: a deferred object goes with its data, equal to the cold one."""
    repo = make_repo(tmp_path / "repo")
    cold = sorted(_context(repo).objects, key=lambda o: o.ref.name)
    warm = sorted(_context(repo).objects, key=lambda o: o.ref.name)
    crossed = [pickle.loads(pickle.dumps(obj)) for obj in warm]
    assert crossed == warm == cold and [o.data for o in crossed] == [o.data for o in cold]


def test_a_cache_directory_that_is_a_link_is_neither_read_nor_written_through(tmp_path):
    repo = make_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / CACHE_DIR).symlink_to(outside)
    context = _context(repo)
    assert context.parsed == 3 and list(outside.iterdir()) == []
    assert _context(repo).parsed == 3  # no cache: parsed again, and still right


def test_a_rewritten_cache_keeps_its_mode_and_a_planted_link_is_replaced_not_followed(tmp_path):
    """The cache is written whole through a new file: the mode the file had is kept (0644 in a shared work tree
    stays readable to the team), a first write is owner-only, and a link planted at its name is replaced, its
    target untouched and its mode not lent."""
    repo = make_repo(tmp_path / "repo")
    _context(repo)
    cache = repo / CACHE_DIR / CACHE_FILE
    assert cache.stat().st_mode & 0o777 == 0o600
    cache.chmod(0o644)
    (repo / "gang" / "pod-0.yaml").write_text(pod(0).replace("pytorch:24.05", "pytorch:24.06"))
    assert _context(repo).parsed == 1
    assert cache.stat().st_mode & 0o777 == 0o644
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    outside.chmod(0o666)
    cache.unlink()
    cache.symlink_to(outside)
    assert _context(repo).parsed == 3
    assert not cache.is_symlink() and cache.stat().st_mode & 0o777 == 0o600
    assert outside.read_text() == "{}"


@pytest.mark.slow
def test_pre_commit_with_the_group_in_an_unchanged_file(tmp_path):
    """The real pre-commit: only the changed Pod is passed; its PodGroup and ResourceClaimTemplate are
    in files that did not change."""
    if not (REPO / ".pre-commit-hooks.yaml").is_file() or not (REPO / ".git").exists():
        raise AssertionError("run the tests from a git checkout of gpulint")
    work = tmp_path / "gitops"
    make_repo(work, git=False)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "add", "."], cwd=work, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "gang"], cwd=work, check=True)
    (work / "gang" / "pod-1.yaml").write_text(pod(1).replace("pytorch:24.05", "pytorch:24.06"))
    subprocess.run([*git, "add", "."], cwd=work, check=True)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}
    pre_commit = shutil.which("pre-commit", path=os.path.dirname(sys.executable)) or "pre-commit"

    def try_repo(*files: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [pre_commit, "try-repo", str(REPO), "gpulint", "--verbose", "--files", *files],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    passing = try_repo("gang/pod-1.yaml")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "gang-inconsistent" not in passing.stdout and "claim-reference-invalid" not in passing.stdout
    (work / "gang" / "pod-1.yaml").write_text(pod(1, template="four-gpu"))
    (work / ".gpulint.yaml").write_text("complete: [ResourceClaimTemplate]\n")  # the repository holds them all
    failing = try_repo("gang/pod-1.yaml")
    assert "gang/pod-1.yaml:11:32: error[claim-reference-invalid]" in failing.stdout, failing.stdout
    assert "gang/pod-0.yaml" not in failing.stdout and "podgroup.yaml" not in failing.stdout
    assert (work / CACHE_DIR / CACHE_FILE).is_file()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=work, capture_output=True, text=True, check=True)
    assert CACHE_DIR not in status.stdout  # the cache never shows up as a change to commit


def test_explain_sees_the_repository_as_check_does(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    monkeypatch.chdir(repo)
    result = run_cli("explain", "gang/pod-1.yaml", "--inventory", str(DATA / "racks"))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "coscheduling PodGroup nccl-allreduce: 2 of 2 pods at once" in result.stdout
    assert "1 resource claim(s); 1 found in the linted files or the inventory" in result.stdout


# kserve/kserve's docs/samples/llmisvc: the e2e sample's Secret writes its key in stringData with a value the reader
# replaces; the tool-calling sample in another folder reads that key. Set "H-L per unit" in docs/precision.md.
HF_SECRET = """\
apiVersion: v1
kind: Secret
metadata:
  name: hf-token
type: Opaque
stringData:
  {key}: <REPLACE_WITH_YOUR_HF_TOKEN>
"""
HF_READER = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: qwen3-coder-tool-calling}
spec:
  selector: {matchLabels: {app: qwen3}}
  template:
    metadata: {labels: {app: qwen3}}
    spec:
      containers:
      - name: main
        image: ghcr.io/llm-d/llm-d-cuda:v0.9.0
        env:
        - name: HF_TOKEN
          valueFrom:
            secretKeyRef: {name: hf-token, key: HF_TOKEN}
        resources:
          limits: {nvidia.com/gpu: "1"}
"""


def secret_repo(root: Path, key: str, folder: str = "e2e") -> Path:
    (root / folder).mkdir(parents=True)
    (root / folder / "hf-token-secret.yaml").write_text(HF_SECRET.format(key=key))
    (root / "tool-calling").mkdir()
    (root / "tool-calling" / "serve.yaml").write_text(HF_READER)
    (root / ".git").mkdir()
    return root


def env_findings(repo: Path) -> list[tuple[str, str]]:
    result = run_cli("check", "tool-calling/serve.yaml", "--format", "json")
    return [(f["severity"], f["message"]) for f in result.json()["findings"] if f["rule"] == "env-reference-invalid"]


def test_a_secrets_string_data_keys_resolve_from_the_index(tmp_path, monkeypatch):
    repo = secret_repo(tmp_path / "repo", "HF_TOKEN", folder="secrets")
    monkeypatch.chdir(repo)
    assert env_findings(repo) == []
    assert env_findings(repo) == []  # from the cache as well
    whole = run_cli("check", ".", "--format", "json").json()["findings"]
    assert [f for f in whole if f["rule"] == "env-reference-invalid"] == []


def test_a_key_the_indexed_secret_lacks_is_still_reported(tmp_path, monkeypatch):
    # the Secret in a folder of the project's own: one under e2e/ is that test folder's (its own cluster scope, as
    # its pools are), which neither satisfies nor contradicts another folder's workload
    repo = secret_repo(tmp_path / "repo", "token", folder="secrets")
    monkeypatch.chdir(repo)
    ((severity, message),) = env_findings(repo)
    assert severity == "error"
    assert message.startswith("couldn't find key HF_TOKEN in Secret <namespace>/hf-token")


def test_a_test_folders_secret_does_not_judge_another_folders_workload(tmp_path, monkeypatch):
    repo = secret_repo(tmp_path / "repo", "token")
    monkeypatch.chdir(repo)
    assert env_findings(repo) == []
    whole = run_cli("check", ".", "--format", "json").json()["findings"]
    assert [f for f in whole if f["rule"] == "env-reference-invalid"] == []


def test_the_index_cache_holds_a_secrets_keys_never_its_values(tmp_path, monkeypatch):
    repo = secret_repo(tmp_path / "repo", "HF_TOKEN")
    monkeypatch.chdir(repo)
    env_findings(repo)
    cached = (repo / CACHE_DIR / CACHE_FILE).read_text()
    assert "HF_TOKEN" in cached
    assert "REPLACE_WITH_YOUR_HF_TOKEN" not in cached
