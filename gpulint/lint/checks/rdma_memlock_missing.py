"""rdma-memlock-missing: a GPU container on an RDMA network that cannot pin memory (no IPC_LOCK)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.lru import short_strings_remembered
from gpulint.kube.runtime import container_gpus, main_containers
from gpulint.kube.workloads import PodSpecSite, template_metadata
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope

SPEC = RuleSpec("rdma-memlock-missing", Severity.WARNING, scope=Scope.POD_TEMPLATE, of_pods=True)
RULE_ID = SPEC.id

# Resources of RDMA NICs and SR-IOV virtual functions (k8s-rdma-shared-dev-plugin, the SR-IOV network
# device plugin, the NVIDIA network operator's defaults, cloud RDMA plugins).
_RDMA_RESOURCE = re.compile(
    r"rdma/.+|.*sriov.*|.+/(hca|rdma|mlnx|ib|roce|efa|hostdev)[^/]*|vpc\.amazonaws\.com/efa", re.I
)
MULTUS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
# RDMA devices whose nodes already run containers with an unlimited memlock: IPC_LOCK changes nothing there.
# EFA: the EKS-optimized AMIs set memlock to unlimited (awslabs/amazon-eks-ami #595, AMI v20210112) and
# Bottlerocket raises it when an EFA device is attached (bottlerocket-core-kit #141).
_NODE_RAISES_MEMLOCK = frozenset({"vpc.amazonaws.com/efa"})


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    patterns = ctx.config.gpu_resources
    if site.completed_by:
        return  # the capabilities may come from the object that completes the pod
    networks: str | None = None  # read for the first container without an RDMA device
    for container_path, container in main_containers(site.spec):
        # the cheapest question first: most GPU containers join no RDMA network
        rdma = _rdma_resource(container)
        if not rdma and networks is None:
            networks = _networks(obj, site)
        if not rdma and not networks:
            continue
        if not container_gpus(container, patterns, obj.facts) or _can_lock_memory(container):
            continue
        name = text(container.get("name"))
        cause = (
            f"asks for the RDMA device {rdma}"
            if rdma
            else f"joins the secondary networks '{networks}' ({MULTUS_ANNOTATION})"
        )
        where = (*site.path, *container_path, "name") if "name" in container else (*site.path, *container_path)
        yield Diagnostic(
            RULE_ID,
            where,
            f"GPU container '{name}' {cause} but cannot lock memory: it lacks the IPC_LOCK capability",
            notes=(
                "the container's memlock limit stays at the runtime's default (64 KiB to 8 MiB), RDMA memory "
                'registration fails and NCCL\'s IB transport with it ("NET/IB : ... ibv_reg_mr failed", or NCCL '
                "silently falls back to TCP sockets)",
                "add IPC_LOCK to securityContext.capabilities.add",
            ),
        )


def _networks(obj: KubeObject, site: PodSpecSite) -> str:
    """The secondary networks the pod joins (Multus' annotation on its template)."""
    annotations = mapping(template_metadata(obj.data, site).get("annotations"))
    return text(annotations.get(MULTUS_ANNOTATION)).strip()


def _can_lock_memory(container: dict[str, Any]) -> bool:
    security = mapping(container.get("securityContext"))
    if security.get("privileged") is True:
        return True
    added = sequence(dig(security, "capabilities", "add"))
    return any(isinstance(cap, str) and cap.upper().removeprefix("CAP_") in ("IPC_LOCK", "ALL") for cap in added)


def _rdma_resource(container: dict[str, Any]) -> str:
    resources = mapping(container.get("resources"))
    for section in ("limits", "requests"):
        for name in mapping(resources.get(section)):
            if isinstance(name, str) and "/" in name and name not in _NODE_RAISES_MEMLOCK and _is_rdma(name):
                return name
    return ""


@short_strings_remembered(1024)
def _is_rdma(name: str) -> bool:
    """Remembered per resource name (real manifests repeat a handful of names)."""
    return _RDMA_RESOURCE.fullmatch(name) is not None
