"""host-network-dns: a GPU pod on the host network that cannot resolve cluster Service names."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.runtime import is_distributed, pod_gpus
from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, FixSafety, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope

SPEC = RuleSpec("host-network-dns", Severity.WARNING, scope=Scope.POD_TEMPLATE, of_pods=True)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    if obj.kind == "DaemonSet":
        return  # node agents on the host network (device plugins, exporters) rarely resolve Services
    patterns = ctx.config.gpu_resources
    spec = site.spec
    if site.completed_by:
        return  # the dnsPolicy may come from the object that completes the pod
    if spec.get("hostNetwork") is not True or not pod_gpus(spec, patterns, obj.facts):
        return
    policy = spec.get("dnsPolicy")
    if policy not in (None, "ClusterFirst"):
        return  # ClusterFirstWithHostNet, or Default/None chosen on purpose
    # only the ranks of a distributed job have a rendezvous to fail; a lone pod loses Service names
    consequence = (
        f"its {obj.kind}'s peers (the master or leader Service, the headless Service of the ranks) do not "
        'resolve and the rendezvous fails ("Name or service not known")'
        if is_distributed(obj.api_version, obj.kind)
        else 'cluster Service names do not resolve ("Name or service not known")'
    )
    yield Diagnostic(
        RULE_ID,
        (*site.path, "dnsPolicy") if "dnsPolicy" in spec else (*site.path, "hostNetwork"),
        f"hostNetwork: true with dnsPolicy {policy or 'ClusterFirst (the default)'}: the pod gets the node's "
        "resolv.conf and cluster Services do not resolve",
        notes=(
            f"Kubernetes then gives the pod the node's resolv.conf (the Default policy), so {consequence}",
            "set dnsPolicy: ClusterFirstWithHostNet",
        ),
        on_key="dnsPolicy" not in spec,
        fix_path=(*site.path, "dnsPolicy"),
        fix_safety=FixSafety.SAFE,  # ClusterFirstWithHostNet: what a hostNetwork pod needs to resolve services
        fix_value="ClusterFirstWithHostNet",
        fix_description="set dnsPolicy: ClusterFirstWithHostNet",
    )
