"""gpu-nic-locality: a claim asking for GPUs and NICs without keeping them on one PCIe root or NUMA node."""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpulint.kube.dra.allocation import LOCALITY_ATTRIBUTES, ClaimSpec, Request
from gpulint.kube.lru import short_strings_remembered
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import DRA_CLAIM_KINDS, RuleSpec
from gpulint.lint.world.dra_objects import claim_of

SPEC = RuleSpec("gpu-nic-locality", Severity.WARNING, kinds=DRA_CLAIM_KINDS)
RULE_ID = SPEC.id
_GPU = re.compile(r"gpu|mig|accelerator|neuron|tpu|gaudi", re.IGNORECASE)
_NIC = re.compile(r"nic|rdma|net|sriov|infiniband|\bib\b|roce|ethernet", re.IGNORECASE)
# A selector that pins a device to one locality domain: `....pcieRoot == "pci0000:17"`, `numaNode == 1`.
_PINNED = re.compile(
    r"""\b(pcieRoot|numaNode|numa)\b["'\]]*\s*==\s*("[^"]*"|'[^']*'|-?\d+)""",
)


def _kind(request: Request) -> str:
    text = " ".join(a.class_name + " " + " ".join(s.expression for s in a.selectors) for a in request.alternatives)
    return _kind_of(text, " ".join(a.class_name for a in request.alternatives))


# claims made from one template repeat their classes and selectors: the verdict is remembered for texts up to
# 2,000 characters (1,024 of them: a few MB at most however long the selectors a webhook is sent)
@short_strings_remembered(1024, max_chars=2000)
def _kind_of(text: str, classes: str) -> str:
    """ "nic", "gpu" or "" for a request of these device classes, whose classes and selectors read ``text``
    (``classes`` is part of it)."""
    if _NIC.search(classes) or (not _GPU.search(classes) and _NIC.search(text)):
        return "nic"
    if _GPU.search(text):
        return "gpu"
    return ""


def _pins(request: Request) -> set[tuple[str, str]]:
    """The (attribute, value) pairs every alternative of the request pins its devices to."""
    sets = [
        {(m.group(1), m.group(2).strip("'\"")) for s in alt.selectors for m in _PINNED.finditer(s.expression)}
        for alt in request.alternatives
    ]
    return set.intersection(*sets) if sets else set()


def aligned(claim: ClaimSpec, gpus: list[str], nics: list[str]) -> bool:
    """Whether the claim already keeps its GPUs and NICs together (or locality cannot be asked for).

    - a matchAttribute constraint covering a GPU and a NIC request: the author chose the attribute
      (resource.kubernetes.io/pcieRoot, a driver's numa, a rail label) and the allocator enforces it;
    - selectors that pin every GPU and NIC request to one PCIe root or NUMA node value;
    - a request with allocationMode All: the pod takes every such device of the node, so no single
      domain can hold them and a locality constraint would only make the claim unsatisfiable.
    """
    names = {request.name for request in claim.requests}
    for constraint in claim.constraints:
        covered = set(constraint.requests) if constraint.requests else names
        covered |= {name.split("/")[0] for name in covered}
        if not constraint.distinct and set(gpus) & covered and set(nics) & covered:
            return True
    involved = [request for request in claim.requests if request.name in gpus or request.name in nics]
    if any(alt.all_devices for request in involved for alt in request.alternatives):
        return True
    shared = set.intersection(*(_pins(request) for request in involved))
    return bool(shared)


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    claim = claim_of(obj)
    if claim is None:
        return
    kinds = {request.name: _kind(request) for request in claim.requests}
    gpus = [name for name, kind in kinds.items() if kind == "gpu"]
    nics = [name for name, kind in kinds.items() if kind == "nic"]
    if not gpus or not nics or aligned(claim, gpus, nics):
        return
    path = claim.requests[0].path[:-1]
    yield Diagnostic(
        RULE_ID,
        path,
        f"the claim asks for GPUs ({', '.join(gpus)}) and NICs ({', '.join(nics)}) without a "
        "matchAttribute constraint on a locality attribute",
        notes=(
            f"locality attributes: {' or '.join(LOCALITY_ATTRIBUTES)}; without one the allocator may pick a NIC "
            "on the other socket and GPU-direct traffic crosses the inter-socket link",
            "add constraints: [{requests: [" + ", ".join(gpus + nics) + "], matchAttribute: "
            "resource.kubernetes.io/pcieRoot}]",
        ),
    )
