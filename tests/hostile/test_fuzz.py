"""Bugs the whole-pipeline fuzzers found (tests/fuzz/, scripts/fuzz_atheris.py), each reproduced as found:
through the `gpulint` command, on a real file."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent.parent
CLAIM = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ml}\nspec:\n  devices:\n"
REQUEST = "    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n"


POD_WITH_CLAIM = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  tolerations: [{operator: Exists}]
  resourceClaims: [{name: g, resourceClaimTemplateName: t}]
  containers: [{name: c, image: i, resources: {claims: [{name: g}]}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 1}
"""


def gpulint(*args: str, cwd: Path) -> tuple[int, list[dict], str]:
    done = subprocess.run(
        [sys.executable, "-m", "gpulint", *args, "--format", "json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "internal error" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)["findings"], done.stderr


# A DRA list field holding a scalar made every DRA check fail internally ("TypeError: 'int' object is
# not iterable" in dra.parse_claim_spec, class_selectors, slice_devices): now only the schema speaks.
# (The slice is only read when a pod needs DRA devices, hence the pod and its claim template.)
SCALAR_LISTS = (
    (CLAIM + "    requests: 5\n", (6, 15), "spec.devices.requests: Invalid value: 5 is not of types"),
    (
        CLAIM + REQUEST + "        selectors: true\n",
        (10, 20),
        "spec.devices.requests[0].exactly.selectors: Invalid value: true is not of types",
    ),
    (
        CLAIM
        + REQUEST
        + "    constraints:\n    - matchAttribute: resource.kubernetes.io/pcieRoot\n      requests: 7\n",
        (12, 17),
        "spec.devices.constraints[0].requests: Invalid value: 7 is not of types",
    ),
    (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\nspec:\n"
        "  selectors: true\n",
        (5, 14),
        "spec.selectors: Invalid value: true is not of types",
    ),
    (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: gpu.nvidia.com\n"
        "  nodeName: h100-a-2\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n  devices: 3\n---\n"
        + POD_WITH_CLAIM,
        (8, 12),
        "spec.devices: Invalid value: 3 is not of types",
    ),
)


@pytest.mark.slow
def test_a_dra_list_that_is_a_scalar_is_a_schema_error_not_a_crash(tmp_path: Path) -> None:
    for index, (manifest, _, _) in enumerate(SCALAR_LISTS):
        (tmp_path / f"dra{index}.yaml").write_text(manifest)
    code, findings, _ = gpulint(
        "check",
        *(f"dra{i}.yaml" for i in range(len(SCALAR_LISTS))),
        "--inventory",
        str(REPO / "examples" / "inventory"),
        cwd=tmp_path,
    )
    assert code == 1
    schema = [f for f in findings if f["rule"] == "schema-invalid"]
    assert [(f["path"], f["line"], f["column"]) for f in schema] == [
        (f"dra{i}.yaml", *position) for i, (_, position, _) in enumerate(SCALAR_LISTS)
    ]
    for finding, (_, _, message) in zip(schema, SCALAR_LISTS):
        assert finding["message"].startswith(message), finding


@pytest.mark.slow
def test_an_inventory_claim_with_a_malformed_status_holds_no_devices(tmp_path: Path) -> None:
    """dra_model read status.allocation.devices.results with .get() on whatever was there (AttributeError)."""
    inventory = tmp_path / "inventory"
    shutil.copytree(REPO / "examples" / "inventory", inventory)
    (tmp_path / "pod.yaml").write_text(POD_WITH_CLAIM)
    statuses = ("5", "{allocation: [1]}", "{allocation: {devices: {results: 1}}}")
    claims = [
        f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: held{i}, namespace: ml}}\nspec: {{}}\n"
        for i in range(len(statuses))
    ]
    (inventory / "claims.yaml").write_text("---\n".join(claims))
    expected = gpulint("check", "pod.yaml", "--inventory", "inventory", cwd=tmp_path)
    assert expected[:2] == (0, [])  # the claim fits: it is then checked against the devices claims hold
    (inventory / "claims.yaml").write_text(
        "---\n".join(f"{claim}status: {status}\n" for claim, status in zip(claims, statuses))
    )
    assert gpulint("check", "pod.yaml", "--inventory", "inventory", cwd=tmp_path) == expected


# PyYAML's int and float constructors index the text's first character: an empty or sign-only scalar
# with an explicit !!int or !!float tag was an IndexError (exit 3).
@pytest.mark.slow
def test_an_explicit_number_tag_on_an_empty_scalar_is_a_yaml_error(tmp_path: Path) -> None:
    # The first four name no apiVersion or kind (no manifest: info); the last is a manifest's (an error).
    texts = ("a: !!int\n", "a: !!int '-'\n", "a: !!float ''\n", "!!int : x\n", "kind: ConfigMap\ndata: !!int\n")
    for index, text in enumerate(texts):
        (tmp_path / f"tag{index}.yaml").write_text(text)
    code, findings, _ = gpulint("check", *(f"tag{i}.yaml" for i in range(len(texts))), cwd=tmp_path)
    assert code == 1
    assert [(f["path"], f["rule"], f["severity"], f["line"], f["column"]) for f in findings] == [
        ("tag0.yaml", "yaml-invalid", "info", 1, 4),
        ("tag1.yaml", "yaml-invalid", "info", 1, 4),
        ("tag2.yaml", "yaml-invalid", "info", 1, 4),
        ("tag3.yaml", "yaml-invalid", "info", 1, 1),
        ("tag4.yaml", "yaml-invalid", "error", 2, 7),
    ]


GANG_WITH_NEGATIVE_REPLICAS = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: j, namespace: ml}
spec:
  tasks:
  - replicas: -1
    template:
      spec:
        nodeSelector: {node.kubernetes.io/instance-type: "6"}
  - replicas: -1
    template:
      spec:
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution: {}
"""


@pytest.mark.slow
def test_a_gang_with_negative_replicas_is_judged_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(GANG_WITH_NEGATIVE_REPLICAS)
    inventory = str(REPO / "tests" / "data" / "dra")
    gpulint("check", "job.yaml", "--inventory", inventory, cwd=tmp_path)  # no internal-error finding
    explained = subprocess.run(
        [sys.executable, "-m", "gpulint", "explain", "job.yaml", "--inventory", inventory],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert explained.returncode in (0, 1, 2) and "internal error" not in explained.stderr, explained.stderr
