"""gang-missing: several GPU pods that only work together, started without any gang policy."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.fields import mapping
from gpulint.kube.gangs.members import has_gang_policy
from gpulint.kube.resources import is_gpu
from gpulint.kube.scheduler import pod_requests
from gpulint.kube.workloads import api_group, pod_spec_sites
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("gang-missing", Severity.WARNING)
RULE_ID = SPEC.id
# Kinds whose pods are one distributed program (one rank missing stalls the others).
TOGETHER = {
    ("kubeflow.org", "PyTorchJob"),
    ("kubeflow.org", "MPIJob"),
    ("kubeflow.org", "TFJob"),
    ("kubeflow.org", "JAXJob"),
    ("kubeflow.org", "XGBoostJob"),
    ("kubeflow.org", "PaddleJob"),
    ("jobset.x-k8s.io", "JobSet"),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"),
    ("batch.volcano.sh", "Job"),
}


def _distributed(obj: KubeObject) -> bool:
    key = (api_group(obj.api_version), obj.kind)
    if key in TOGETHER:
        return True
    spec = mapping(obj.data.get("spec"))
    return key == ("batch", "Job") and spec.get("completionMode") == "Indexed"


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if not _distributed(obj):
        return
    gpu_pods = 0
    for site in pod_spec_sites(obj.data):
        if any(is_gpu(name, ctx.config.gpu_resources) for name in pod_requests(site.spec)):
            gpu_pods += site.pods or 0
    if gpu_pods < 2 or has_gang_policy(obj, ctx.resolver):
        return
    yield Diagnostic(
        RULE_ID,
        ("spec",) if "spec" in obj.data else (),
        f"{obj.kind} starts {gpu_pods} GPU pods that only work together, with no gang policy: a partial "
        "placement holds GPUs idle while the placed pods wait for their peers. Use a gang: native "
        "Workload/PodGroup (or Job spec.scheduling), Volcano, coscheduling, or Kueue admission",
        on_key=True,
    )
