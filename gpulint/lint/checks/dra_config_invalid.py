"""dra-config-invalid: opaque device configuration that the NVIDIA DRA driver refuses to decode or validate."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube.dra import nvidia_config
from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity, first_line, split_long
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import DRA_SELECTOR_KINDS, RuleSpec

SPEC = RuleSpec("dra-config-invalid", Severity.ERROR, kinds=DRA_SELECTOR_KINDS)
RULE_ID = SPEC.id
# Where each kind keeps its device configuration.
CONFIG_PATHS = {
    "ResourceClaim": ("spec", "devices", "config"),
    "ResourceClaimTemplate": ("spec", "spec", "devices", "config"),
    "DeviceClass": ("spec", "config"),
}


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    if not obj.api_version.startswith("resource.k8s.io/"):
        return
    base = CONFIG_PATHS[obj.kind]
    for index, entry in enumerate(sequence(dig(obj.data, *base))):
        opaque = mapping(mapping(entry).get("opaque"))
        driver = text(opaque.get("driver"))
        if driver not in nvidia_config.DRIVERS or "parameters" not in opaque:
            continue
        at = (*base, index, "opaque", "parameters")
        field = ".".join(str(step) for step in base) + f"[{index}].opaque.parameters"
        for problem in nvidia_config.problems(opaque.get("parameters")):
            decoding = problem.message.startswith(("strict decoding", "json:", "no kind", "quantities", "parameters"))
            prefix = "error decoding object at" if decoding else "object at"
            suffix = "" if decoding else " is invalid"
            who = f"{'' if problem.certain else 'current releases of '}{driver} refuse{'s' if problem.certain else ''}"
            error = f"{prefix} {field}{suffix}: {problem.message}"
            brief = first_line(f"{who} this config ({error})", f"{who} this config: {problem.message}")
            brief = split_long(brief)[0]  # the whole error is the first note
            yield Diagnostic(
                RULE_ID,
                (*at, *problem.path),
                brief,
                notes=(
                    *(() if error in brief else (error,)),
                    "the claim is rejected by the driver's admission webhook, or its pods fail in ContainerCreating "
                    '("error decoding config parameters")',
                ),
                on_key=problem.on_key,
                severity=None if problem.certain else Severity.WARNING,
            )
