#!/usr/bin/env python3
"""Generate schemas/crds/ from the published CRDs of the workload kinds gpulint reads.

Each CRD's ``openAPIV3Schema`` (one per served version) is converted as kubeconform's
``openapi2jsonschema.py --strict`` converts it (github.com/yannh/kubeconform,
scripts/openapi2jsonschema.py): an object with ``properties`` and no
``additionalProperties`` gets ``additionalProperties: false`` unless it is marked
``x-kubernetes-preserve-unknown-fields``; ``x-kubernetes-int-or-string`` becomes
"integer or string". One deliberate leniency: every value may be ``null``, because the
API server prunes a null field of a structural schema before it validates
(apiextensions-apiserver, pkg/apiserver/schema/pruning and defaulting/prunenulls.go), so
an empty ``resources:`` is not an error there and must not be one here.

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

# (repository, tag, path of the CRD file): most used first.
SOURCES: tuple[tuple[str, str, str], ...] = (
    ("kubeflow/training-operator", "v1.9.0", "manifests/base/crds/kubeflow.org_pytorchjobs.yaml"),
    ("kubeflow/training-operator", "v1.9.0", "manifests/base/crds/kubeflow.org_mpijobs.yaml"),
    ("kubeflow/mpi-operator", "v0.8.0", "manifests/base/kubeflow.org_mpijobs.yaml"),
    ("kubernetes-sigs/jobset", "v0.12.0", "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"),
    ("kubernetes-sigs/lws", "v0.10.0", "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml"),
)

# Required fields that the project's mutating webhook fills in before the API server validates the
# schema (admission runs before validation), so a manifest without them is accepted.
WEBHOOK_DEFAULTED: dict[str, tuple[str, ...]] = {
    # jobset pkg/webhooks/jobset_webhook.go, (*jobSetWebhook).Default
    "jobset.x-k8s.io/JobSet": ("spec.failurePolicy.rules[].name", "spec.volumeClaimPolicies[].retentionPolicy"),
    # lws pkg/webhooks/leaderworkerset_webhook.go, (*LeaderWorkerSetWebhook).Default
    "leaderworkerset.x-k8s.io/LeaderWorkerSet": ("spec.networkConfig.subdomainPolicy", "spec.rolloutStrategy.type"),
}

DROP_KEYS = {"description", "example", "externalDocs"}


def convert(node: Any) -> Any:
    if isinstance(node, list):
        return [convert(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in DROP_KEYS or key.startswith("x-kubernetes-") or key == "nullable":
            continue
        if key in ("properties", "patternProperties", "$defs"):
            out[key] = {name: convert(sub) for name, sub in value.items()}
        else:
            out[key] = convert(value)
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        branches = [{"type": "integer"}, {"type": "string"}]
        out["anyOf"] = branches + [
            convert(b) for b in node.get("anyOf", []) if b.get("type") not in ("integer", "string")
        ]
    if isinstance(out.get("required"), list):  # a field with a schema default is filled in before validation
        props = node.get("properties", {})
        out["required"] = [name for name in out["required"] if "default" not in props.get(name, {})]
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if "properties" in out and "additionalProperties" not in out and not preserve:
        out["additionalProperties"] = False
    if isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def drop_required(schema: dict[str, Any], dotted: str) -> None:
    *parents, name = dotted.replace("[]", ".[]").split(".")
    node: Any = schema
    for part in parents:
        node = node.get("items", {}) if part == "[]" else node.get("properties", {}).get(part, {})
    required = node.get("required", [])
    if name in required:
        required.remove(name)


def crd_schemas(crd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    found: dict[str, dict[str, Any]] = {}
    for version in crd["spec"]["versions"]:
        if not version.get("served", True):
            continue
        schema = convert(version["schema"]["openAPIV3Schema"])
        for dotted in WEBHOOK_DEFAULTED.get(f"{group}/{kind}", ()):
            drop_required(schema, dotted)
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        found[f"{group}/{version['name']}/{kind}"] = schema
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
        git_dir = mirrors / repo.replace("/", "+") / "repo"
        text = subprocess.run(
            ["git", "--git-dir", str(git_dir), "show", f"{tag}:{path}"], check=True, capture_output=True, text=True
        ).stdout
        for crd in yaml.safe_load_all(text):
            if not crd or crd.get("kind") != "CustomResourceDefinition":
                continue
            for key, schema in crd_schemas(crd).items():
                filename = re.sub(r"[^A-Za-z0-9]+", "_", key) + ".json"
                (dest / filename).write_text(json.dumps(schema, separators=(",", ":"), sort_keys=True))
                index[key] = filename
                origins[key] = f"{repo} {tag} {path}"
    (dest / "index.json").write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")
    (dest / "sources.json").write_text(json.dumps(origins, indent=1, sort_keys=True) + "\n")
    print(f"{len(index)} kinds")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
