"""gpu-non-integer: an extended-resource quantity that is not a whole number."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.quantity import QuantityError, quantity_from_yaml
from gpulint.kube.resources import is_extended
from gpulint.kube.workloads import PodSpecSite, site_resources
from gpulint.lint.checks import CheckContext, field_path
from gpulint.lint.findings import Diagnostic, Severity, refusing
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope
from gpulint.lint.verdicts.refusal import template_refuses

SPEC = RuleSpec("gpu-non-integer", Severity.ERROR, scope=Scope.POD_TEMPLATE)
RULE_ID = SPEC.id


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    """Its errors are refusals: Kubernetes validates the pod template with a built-in workload, else at each pod's create."""
    return refusing(_found(obj, site, ctx), template_refuses(obj.ref))


def _found(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    for block in site_resources(site):
        for section, values in (("requests", block.requests), ("limits", block.limits)):
            for name, value in values.items():
                if (type(value) is int and value >= 0) or value is None:
                    continue  # a whole count (a YAML bool is no int here); null decodes as 0 (Quantity.UnmarshalJSON)
                if not is_extended(name):
                    continue
                path = (*block.path, section, name)
                where = field_path(path)
                try:
                    quantity = quantity_from_yaml(value)
                except QuantityError as exc:
                    yield Diagnostic(
                        RULE_ID,
                        path,
                        f"{where}: {value!r} is not a valid Kubernetes quantity",
                        notes=(str(exc), "write a whole number such as 1"),
                    )
                    continue
                if quantity.value < 0:
                    yield Diagnostic(
                        RULE_ID, path, f'{where}: Invalid value: "{value}": must be greater than or equal to 0'
                    )
                elif not quantity.is_integer():
                    yield Diagnostic(
                        RULE_ID,
                        path,
                        f'{where}: Invalid value: "{value}": must be an integer',
                        notes=(
                            f"{name} is an extended resource and is allocated in whole devices",
                            "to share a GPU, use the device plugin's time-slicing or MPS replicas, a MIG profile, "
                            "or a DRA claim",
                        ),
                    )
