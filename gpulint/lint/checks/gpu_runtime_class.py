"""gpu-runtime-class: a GPU pod without the RuntimeClass this cluster's GPU pods need (config gpu-runtime-class)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.resources import is_gpu
from gpulint.kube.workloads import PodSpecSite, containers
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, FixSafety, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope

SPEC = RuleSpec("gpu-runtime-class", Severity.WARNING, scope=Scope.POD_TEMPLATE, of_pods=True)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    wanted = ctx.config.gpu_runtime_class
    if not wanted:
        return
    if "runtimeClassName" in site.spec or site.completed_by:  # completed_by: the class may come from it
        return  # a class chosen on purpose (kata, a CDI class...): not second-guessed
    gpus = sorted(
        {
            name
            for _, container in containers(site.spec)
            for section in ("limits", "requests")
            for name in _names(container, section)
            if is_gpu(name, ctx.config.gpu_resources)
        }
    )
    if not gpus:
        return
    yield Diagnostic(
        RULE_ID,
        site.path,
        f"this pod asks for {', '.join(gpus)} but sets no runtimeClassName; on this cluster GPU pods need "
        f"runtimeClassName: {wanted}",
        notes=(
            "set by the configuration's gpu-runtime-class; without it the container runs under the default "
            "runtime without the NVIDIA hooks and sees no GPU (CUDA: no CUDA-capable device is detected)",
        ),
        fix_path=(*site.path, "runtimeClassName"),
        fix_value=wanted,
        fix_description=f"set runtimeClassName: {wanted}",
        # the class the team configured for every GPU pod, on a pod that names none
        fix_safety=FixSafety.SAFE,
    )


def _names(container: dict[str, Any], section: str) -> list[str]:
    resources = container.get("resources")
    values = resources.get(section) if isinstance(resources, dict) else None
    return [str(name) for name in values] if isinstance(values, dict) else []
