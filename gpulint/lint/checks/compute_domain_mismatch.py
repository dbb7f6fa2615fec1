"""compute-domain-mismatch: a ComputeDomain whose numNodes the pods that use its channel cannot reach."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.dra import compute_domain
from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("compute-domain-mismatch", Severity.WARNING, kinds=frozenset({compute_domain.KIND}))
RULE_ID = SPEC.id


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if not compute_domain.is_compute_domain(obj.data):
        return
    nodes = integer(dig(obj.data, "spec", "numNodes"), 0) or 0
    template = compute_domain.template_name(obj.data)
    if nodes <= 0 or not template or not ctx.resolver.reference_proven_absent:
        return  # 0: the recommended value (IMEXDaemonsWithDNSNames); one object alone proves nothing
    users: list[str] = []
    pods = 0
    namespace = obj.ref.namespace
    for other in ctx.resolver.linted:
        if other.ref.namespace and namespace and other.ref.namespace != namespace:
            continue
        for site in other.facts.sites():
            uses = any(
                text(mapping(entry).get("resourceClaimTemplateName")) == template
                for entry in sequence(site.spec.get("resourceClaims"))
            )
            if uses:
                if site.pods is None:
                    return  # a DaemonSet: one pod per node, as many as the cluster has
                pods += site.pods
                users.append(f"{other.ref.kind}/{other.ref.name}")
    if not users or pods >= nodes:
        return
    yield Diagnostic(
        RULE_ID,
        ("spec", "numNodes"),
        f"numNodes {nodes} but the pods that use its channel template '{template}' are {pods}, "
        f"on at most {pods} node{'s' if pods != 1 else ''}",
        notes=(
            f"the pods: {', '.join(users)}",
            "with the driver's IMEXDaemonsWithDNSNames feature gate off, the pods wait in ContainerCreating until "
            "numNodes IMEX daemons join - forever; with it on (the default) the ComputeDomain never reports Ready",
            "set numNodes to the number of nodes the workload spans, or 0 (recommended; numNodes is deprecated)",
        ),
    )
