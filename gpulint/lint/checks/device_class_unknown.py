"""device-class-unknown: a claim names a DeviceClass that neither the linted files nor the inventory define."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from gpulint.kube.dra.drivers import WELL_KNOWN_CLASSES
from gpulint.kube.typos import edit_distance
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import DRA_CLAIM_KINDS, RuleSpec
from gpulint.lint.world.dra_objects import class_references

SPEC = RuleSpec("device-class-unknown", Severity.ERROR, kinds=DRA_CLAIM_KINDS)
RULE_ID = SPEC.id
_MIN_LABEL = 4  # "tpu" vs "gpu" are two classes, not a typo: short labels never count as one


def is_typo_of(name: str, candidate: str) -> bool:
    """A misspelling of ``candidate``: its domain cut short (gpu.nvidia for gpu.nvidia.com), or one
    label of at least four characters off by at most two edits (gpu.nvida.com)."""
    if name == candidate:
        return False
    if candidate.startswith(name + ".") or candidate.lower() == name.lower():
        return True
    ours, theirs = name.split("."), candidate.split(".")
    if len(ours) != len(theirs):
        return False
    differing = [(a, b) for a, b in zip(ours, theirs, strict=True) if a != b]
    return (
        len(differing) == 1
        and min(len(differing[0][0]), len(differing[0][1])) >= _MIN_LABEL
        and edit_distance(*differing[0], limit=2) <= 2
    )


def closest(name: str, candidates: Iterable[str]) -> str | None:
    found = sorted(c for c in candidates if is_typo_of(name, c))
    return min(found, key=lambda c: edit_distance(name, c)) if found else None


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    defined = ctx.resolver.device_classes
    for class_name, path in class_references(obj):
        if not class_name:
            yield Diagnostic(RULE_ID, path, "the request names no deviceClassName (required)")
        elif class_name in defined:
            continue
        elif ctx.resolver.catalog_complete("DeviceClass", obj.document.path):  # known whole: this one does not exist
            close = closest(class_name, defined)
            known = sorted(defined)
            hint = f"did you mean '{close}'?" if close else f"the cluster defines {', '.join(known[:8]) or 'none'}"
            driver = WELL_KNOWN_CLASSES.get(class_name)
            installed = (f"{driver} installs it: is the driver installed?",) if driver else ()
            yield Diagnostic(
                RULE_ID,
                path,
                f"DeviceClass '{class_name}' does not exist: the scheduler leaves the pod Pending "
                f'with "device class {class_name} does not exist"',
                notes=(hint, *installed),
            )
        elif class_name in WELL_KNOWN_CLASSES:
            continue  # a driver's chart installs it; the inventory does not say whether it is installed
        elif close := closest(class_name, {*defined, *WELL_KNOWN_CLASSES}):
            yield Diagnostic(
                RULE_ID,
                path,
                f"DeviceClass '{class_name}' is not defined in the linted files and no DRA driver gpulint "
                f"knows installs it; did you mean '{close}'?",
                notes=("if a driver installs it, add `kubectl get deviceclasses -o yaml` to the inventory",),
                severity=Severity.INFO,
                pinned=True,  # a class found nowhere proves nothing while the cluster's classes are not known
            )
        else:
            yield Diagnostic(
                RULE_ID,
                path,
                f"DeviceClass '{class_name}' not checked: the linted files do not define it and the "
                "inventory does not list the cluster's DeviceClasses",
                notes=("drivers install their classes; add `kubectl get deviceclasses -o yaml` to the inventory",),
                severity=Severity.INFO,
                run_note=True,  # a fact about the inventory, said once per class, not once per claim
            )
