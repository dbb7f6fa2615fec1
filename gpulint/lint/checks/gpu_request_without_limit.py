"""gpu-request-without-limit: an extended resource requested without an equal limit."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.resources import is_extended
from gpulint.kube.workloads import PodSpecSite, site_resources
from gpulint.lint.checks import CheckContext, field_path
from gpulint.lint.findings import Diagnostic, FixSafety, Severity, refusing
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope
from gpulint.lint.verdicts.refusal import template_refuses

SPEC = RuleSpec("gpu-request-without-limit", Severity.ERROR, scope=Scope.POD_TEMPLATE)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    """Its errors are refusals: Kubernetes validates the pod template with a built-in workload, else at each pod's create."""
    return refusing(_found(obj, site, ctx), template_refuses(obj.ref))


def _found(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    for block in site_resources(site):
        for name, requested in block.requests.items():
            if not is_extended(name):
                continue
            request_path = (*block.path, "requests", name)
            limit_path = (*block.path, "limits", name)
            if name not in block.limits:
                if block.completed_by:
                    continue  # the limit may come from the object that completes the pod (a ServingRuntime)
                yield Diagnostic(
                    RULE_ID,
                    request_path,
                    f"container '{block.container}' requests {name}: {requested} but sets no limit for it; "
                    "the API server rejects the Pod",
                    on_key=True,
                    notes=(
                        f"{field_path((*block.path, 'limits'))}: Required value: "
                        "Limit must be set for non overcommitable resources",
                        f"set limits.{name} to {requested}: extended resources are requested through limits "
                        "(the request defaults to the limit)",
                    ),
                    fix_path=limit_path,
                    fix_value=requested,
                    fix_source=request_path,
                    fix_description=f"add limits.{name}: {requested}",
                    # the pod then holds what it asked for: the request the author wrote
                    fix_safety=FixSafety.SAFE,
                )
                continue
            limit = block.limits[name]
            try:
                same = quantity_from_yaml(requested).value == quantity_from_yaml(limit).value
            except QuantityError:
                continue  # gpu-non-integer reports values that are not quantities
            if not same:
                yield Diagnostic(
                    RULE_ID,
                    request_path,
                    f"container '{block.container}' requests {name}: {requested} but its limit is {limit}; "
                    "the API server rejects the Pod",
                    notes=(
                        f"{field_path((*block.path, 'requests'))}: Invalid value: "
                        f'"{requested}": must be equal to {name} limit of {limit}',
                        f"extended resources cannot be overcommitted: either set the request to {limit} (the "
                        f"container holds {limit} {name}) or {_verb(requested, limit)} the limit to {requested} (it holds {requested}); "
                        "a request left out defaults to the limit",
                        f"--unsafe-fixes sets the request to the limit {limit}; which one you meant, gpulint cannot tell",
                    ),
                    fix_path=request_path,
                    fix_value=limit,
                    fix_source=limit_path,
                    fix_description=f"set requests.{name} to the limit {limit}",
                    # either choice changes how many devices the container holds from one of the two numbers written
                    fix_safety=FixSafety.UNSAFE,
                )


def _verb(requested: object, limit: object) -> str:
    """How the limit changes when it is set to the request: lowered, or raised (a request above its limit)."""
    return "lower" if quantity_from_yaml(requested).value < quantity_from_yaml(limit).value else "raise"
