#!/usr/bin/env python3
"""Generate schemas/crds/ from the published CRDs of the workload kinds gpulint reads.

Each served version's ``openAPIV3Schema`` is converted by gpulint.lint.crd_schema (kubeconform's
``openapi2jsonschema.py --strict`` with the API server's structural-schema semantics: nulls
pruned, defaulted and webhook-defaulted fields not required, embedded resources keep their
apiVersion/kind/metadata); the same conversion validates the CRDs found among linted files.

Sources: SOURCES below (CRD file at a release tag); schemas/crds/sources.json records them per kind.

Usage: python scripts/generate_crd_schemas.py MIRROR_ROOT schemas/crds
  MIRROR_ROOT holds ``<owner>+<name>/repo`` bare git directories (as the fetch tool makes them).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from gpulint.lint.crd_schema import crd_schemas, union

# (repository, tag, path of the CRD file): most used first.
SOURCES: tuple[tuple[str, str, str], ...] = (
    ("kubeflow/training-operator", "v1.9.0", "manifests/base/crds/kubeflow.org_pytorchjobs.yaml"),
    ("kubeflow/training-operator", "v1.9.0", "manifests/base/crds/kubeflow.org_mpijobs.yaml"),
    ("kubeflow/mpi-operator", "v0.8.0", "manifests/base/kubeflow.org_mpijobs.yaml"),
    ("kubernetes-sigs/jobset", "v0.12.0", "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"),
    ("kubernetes-sigs/lws", "v0.10.0", "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml"),
    ("kubeflow/trainer", "v2.3.0", "manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml"),
    ("kubeflow/trainer", "v2.3.0", "manifests/base/crds/trainer.kubeflow.org_trainingruntimes.yaml"),
    ("kubeflow/trainer", "v2.3.0", "manifests/base/crds/trainer.kubeflow.org_clustertrainingruntimes.yaml"),
    ("ray-project/kuberay", "v1.7.0", "ray-operator/config/crd/bases/ray.io_rayjobs.yaml"),
    ("ray-project/kuberay", "v1.7.0", "ray-operator/config/crd/bases/ray.io_rayclusters.yaml"),
    ("ray-project/kuberay", "v1.7.0", "ray-operator/config/crd/bases/ray.io_rayservices.yaml"),
    ("volcano-sh/volcano", "v1.15.1", "config/crd/volcano/bases/batch.volcano.sh_jobs.yaml"),
    ("volcano-sh/volcano", "v1.15.1", "config/crd/volcano/bases/scheduling.volcano.sh_podgroups.yaml"),
    ("volcano-sh/volcano", "v1.15.1", "config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml"),
    ("kubernetes-sigs/kueue", "v0.19.2", "config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml"),
    ("kubernetes-sigs/kueue", "v0.19.2", "config/components/crd/bases/kueue.x-k8s.io_localqueues.yaml"),
    ("kubernetes-sigs/kueue", "v0.19.2", "config/components/crd/bases/kueue.x-k8s.io_resourceflavors.yaml"),
    ("kubernetes-sigs/kueue", "v0.19.2", "config/components/crd/bases/kueue.x-k8s.io_cohorts.yaml"),
    ("kubernetes-sigs/kueue", "v0.19.2", "config/components/crd/bases/kueue.x-k8s.io_topologies.yaml"),
    ("kubernetes-sigs/kueue", "v0.19.2", "config/components/crd/bases/kueue.x-k8s.io_workloads.yaml"),
    ("aws/karpenter-provider-aws", "v1.14.1", "pkg/apis/crds/karpenter.sh_nodepools.yaml"),
    ("aws/karpenter-provider-aws", "v1.14.1", "pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml"),
)

# Older releases whose fields are accepted too (gpulint.lint.crd_schema.union): an alpha API whose
# fields moved while the older release is still what clusters run. Trainer v2.2 dropped
# mlPolicy.torch.numProcPerNode and elasticPolicy, which the v2.0/v2.1 torch-distributed runtime sets.
ALSO_ACCEPTED: dict[str, tuple[str, ...]] = {"kubeflow/trainer": ("v2.2.1", "v2.1.0")}


SHARED_MIN_CHARS = 2000  # a repeated subschema at least this long is written once, under $defs


def _text(node: Any) -> str:
    return json.dumps(node, separators=(",", ":"), sort_keys=True)


def _count_large(node: Any, counts: dict[str, int], root: bool = False) -> None:
    """How often each subschema of at least SHARED_MIN_CHARS occurs below ``node`` (``$defs`` aside)."""
    if isinstance(node, dict):
        if not root and "$ref" not in node:
            text = _text(node)
            if len(text) >= SHARED_MIN_CHARS:
                counts[text] = counts.get(text, 0) + 1
        for key, value in node.items():
            if key != "$defs":
                _count_large(value, counts)
    elif isinstance(node, list):
        for value in node:
            _count_large(value, counts)


def _replaced(node: Any, text: str, ref: dict[str, str]) -> Any:
    """``node`` with every subschema whose text is ``text`` replaced by ``ref``."""
    if isinstance(node, dict):
        if _text(node) == text:
            return ref
        return {key: _replaced(value, text, ref) for key, value in node.items()}
    if isinstance(node, list):
        return [_replaced(value, text, ref) for value in node]
    return node


def share_repeated(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each large subschema that occurs more than once (a CRD repeats the whole pod
    template: a RayJob's head and worker groups, a RayService's) written once under ``$defs`` and
    referenced, largest first; what it accepts and the paths of its errors are unchanged."""
    defs: dict[str, Any] = {}
    while True:
        counts: dict[str, int] = {}
        for node in (schema, *defs.values()):
            _count_large(node, counts, root=True)
        repeated = [text for text, count in counts.items() if count > 1]
        if not repeated:
            break
        chosen = max(repeated, key=len)
        name = f"shared{len(defs)}"
        ref = {"$ref": f"#/$defs/{name}"}
        defs = {key: {k: _replaced(v, chosen, ref) for k, v in value.items()} for key, value in defs.items()}
        schema = {key: _replaced(value, chosen, ref) for key, value in schema.items()}
        defs[name] = json.loads(chosen)
    if defs:
        schema["$defs"] = defs
    return schema


def git_show(mirrors: Path, repo: str, tag: str, path: str) -> str:
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{tag}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def schemas_of(text: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for crd in yaml.safe_load_all(text):
        if crd and crd.get("kind") == "CustomResourceDefinition":
            found.update(crd_schemas(crd))
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    mirrors, dest = Path(argv[1]), Path(argv[2])
    dest.mkdir(parents=True, exist_ok=True)
    index: dict[str, str] = {}
    origins: dict[str, str] = {}
    for repo, tag, path in SOURCES:
        schemas = schemas_of(git_show(mirrors, repo, tag, path))
        older = [(old, schemas_of(git_show(mirrors, repo, old, path))) for old in ALSO_ACCEPTED.get(repo, ())]
        for key, schema in schemas.items():
            accepted = [old for old, found in older if key in found]
            for _, found in older:
                if key in found:
                    schema = union(schema, found[key])
            filename = re.sub(r"[^A-Za-z0-9]+", "_", key) + ".json"
            (dest / filename).write_text(_text(share_repeated(schema)))
            index[key] = filename
            origins[key] = f"{repo} {tag} {path}" + (
                f" (fields of {', '.join(accepted)} accepted too)" if accepted else ""
            )
    (dest / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    (dest / "sources.json").write_text(json.dumps(origins, indent=1, sort_keys=True) + "\n")
    print(f"{len(index)} kinds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
