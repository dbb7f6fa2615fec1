"""gpu-nic-locality: a claim asking for GPUs and NICs without keeping them on one PCIe root or NUMA node."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpulint.kube.dra.allocation import LOCALITY_ATTRIBUTES, Request
from gpulint.lint.checks import CheckContext
from gpulint.lint.dra_objects import claim_of
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.objects import KubeObject
from gpulint.lint.rule_spec import DRA_CLAIM_KINDS, RuleSpec

SPEC = RuleSpec("gpu-nic-locality", Severity.WARNING, kinds=DRA_CLAIM_KINDS)
RULE_ID = SPEC.id
_GPU = re.compile(r"gpu|mig|accelerator|neuron|tpu|gaudi", re.IGNORECASE)
_NIC = re.compile(r"nic|rdma|net|sriov|infiniband|\bib\b|roce|ethernet", re.IGNORECASE)


def _kind(request: Request) -> str:
    text = " ".join(a.class_name + " " + " ".join(s.expression for s in a.selectors) for a in request.alternatives)
    classes = " ".join(a.class_name for a in request.alternatives)
    if _NIC.search(classes) or (not _GPU.search(classes) and _NIC.search(text)):
        return "nic"
    if _GPU.search(text):
        return "gpu"
    return ""


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    claim = claim_of(obj)
    if claim is None:
        return
    kinds = {request.name: _kind(request) for request in claim.requests}
    gpus = [name for name, kind in kinds.items() if kind == "gpu"]
    nics = [name for name, kind in kinds.items() if kind == "nic"]
    if not gpus or not nics:
        return
    for constraint in claim.constraints:
        covered = set(constraint.requests) if constraint.requests else set(kinds)
        covered |= {name.split("/")[0] for name in covered}
        if (
            not constraint.distinct
            and constraint.attribute.split("/")[-1] in ("pcieRoot", "numaNode", "numa")
            and set(gpus) & covered
            and set(nics) & covered
        ):
            return
    path = claim.requests[0].path[:-1]
    yield Diagnostic(
        RULE_ID,
        path,
        f"the claim asks for GPUs ({', '.join(gpus)}) and NICs ({', '.join(nics)}) without a "
        f"matchAttribute constraint on a locality attribute ({' or '.join(LOCALITY_ATTRIBUTES)}), so "
        "the allocator may pick a NIC on the other socket and GPU-direct traffic crosses the "
        "inter-socket link; add constraints: [{requests: ["
        + ", ".join(gpus + nics)
        + "], matchAttribute: resource.kubernetes.io/pcieRoot}]",
    )
