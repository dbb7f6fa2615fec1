"""gang-missing: several accelerator pods that only work together, started without any gang policy."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube import jobset_placement
from gpulint.kube.distributed import ranks_of_one_program
from gpulint.kube.gangs.members import has_gang_policy
from gpulint.kube.resources import accelerator_noun, is_gpu
from gpulint.kube.scheduler import pod_requests
from gpulint.kube.workloads import PodSpecSite, api_group
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("gang-missing", Severity.WARNING, of_pods=True)
RULE_ID = SPEC.id


def _placed_whole(obj: KubeObject, site: PodSpecSite) -> bool:
    """A JobSet pod template whose Job is placed exclusively per topology domain."""
    if obj.kind != "JobSet" or api_group(obj.api_version) != jobset_placement.GROUP:
        return False
    return jobset_placement.exclusive_topology(obj.data, site.path) is not None


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if not ranks_of_one_program(obj.api_version, obj.kind, obj.data):
        return
    pods_by_role: dict[str, int] = {}
    resources: set[str] = set()
    for site in obj.facts.sites():
        asked = [name for name in pod_requests(site.spec, obj.facts) if is_gpu(name, ctx.config.gpu_resources)]
        if asked and site.pods and not _placed_whole(obj, site):
            role = site.role or "pod"
            pods_by_role[role] = pods_by_role.get(role, 0) + site.pods
            resources.update(asked)
    total = sum(pods_by_role.values())
    if total < 2 or has_gang_policy(obj, ctx.resolver):
        return
    noun = accelerator_noun(resources)
    roles = (
        f" ({', '.join(f'{role} {count}' for role, count in pods_by_role.items())})" if len(pods_by_role) > 1 else ""
    )
    yield Diagnostic(
        RULE_ID,
        ("spec",) if "spec" in obj.data else (),
        f"{obj.kind} starts {total} {noun} pods{roles} that only work together, with no gang policy",
        on_key=True,
        notes=(
            f"a partial placement holds {noun}s idle while the placed pods wait for their peers",
            "use a gang: native Workload/PodGroup (or Job spec.scheduling), Volcano, coscheduling, or Kueue admission",
        ),
    )
