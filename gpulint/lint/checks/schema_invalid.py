"""schema-invalid: the object does not match the Kubernetes schema of its apiVersion/kind."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from gpulint.kube.crd_templates import SchemaBound
from gpulint.kube.fields import type_name
from gpulint.kube.validation import scheduling
from gpulint.kube.validation.decoded import VALUE_RULES, decoding_errors, moot_on_decode
from gpulint.kube.wording import first_and_more
from gpulint.kube.workloads import read_by_shape
from gpulint.lint.checks import CheckContext, field_path
from gpulint.lint.findings import Diagnostic, Refuses, Severity, first_line, refusing
from gpulint.lint.inputs.objects import KubeObject, is_list, list_is_malformed
from gpulint.lint.rule_spec import RuleSpec

SPEC = RuleSpec("schema-invalid", Severity.ERROR)
# A pod template file (Spark's spark.kubernetes.driver.podTemplateFile, Flink's podTemplate) is a Pod without
# containers by design: the driver or operator adds its own container to it, and nobody applies it.
_POD_TEMPLATE_FILE = re.compile(r"pod[-_]?template", re.IGNORECASE)
RULE_ID = SPEC.id
# Kinds whose registry strategy resets the status a manifest gives, on create and on update (pkg/registry in
# kubernetes v1.37.2: core/pod, apps/{deployment,statefulset,daemonset,replicaset}, batch/{job,cronjob},
# resource/resourceclaim, scheduling/{podgroup,compositepodgroup} strategy.go PrepareForCreate; the status
# subresource alone writes it): the decoder still reads it, so only a value of the wrong type is refused there.
STATUS_RESET = frozenset(
    {
        ("", "Pod"),
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
        ("apps", "ReplicaSet"),
        ("batch", "Job"),
        ("batch", "CronJob"),
        ("resource.k8s.io", "ResourceClaim"),
        ("scheduling.k8s.io", "PodGroup"),
        ("scheduling.k8s.io", "CompositePodGroup"),
    }
)


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    """Its errors are refusals: the API server refuses the create."""
    return refusing(_found(obj, ctx), Refuses.OBJECT)


def _found(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    data = obj.data
    if not isinstance(data.get("kind"), str) or not data.get("kind"):
        yield Diagnostic(
            RULE_ID,
            ("kind",) if "kind" in data else (),
            "object has no kind: kubectl refuses it (Object 'Kind' is missing)",
        )
        return
    if not isinstance(data.get("apiVersion"), str) or not data.get("apiVersion"):
        cased = _api_version_cased_otherwise(data)
        if cased is not None and not ctx.schemas.has_schema(cased[1], data["kind"]):
            return  # a tool's own configuration, not for kubectl (see _api_version_cased_otherwise)
        if cased is None and not _served_kind(data["kind"], ctx):
            return  # a tool's own configuration (Zarf's ZarfPackageConfig, a UDSBundle): no API serves the kind
        yield Diagnostic(
            RULE_ID,
            ("apiVersion",) if "apiVersion" in data else (),
            f"{data['kind']} has no apiVersion: kubectl refuses it (apiVersion not set)",
            notes=(f"'{cased[0]}' is not apiVersion: the API's keys are case-sensitive",) if cased is not None else (),
        )
        return
    if is_list(data) and list_is_malformed(data):
        yield from _list_items(obj)
        return
    pod_template_file = obj.kind == "Pod" and _POD_TEMPLATE_FILE.search(os.path.basename(obj.document.path))
    status_reset = (obj.ref.group, obj.kind) in STATUS_RESET
    errors = ctx.schemas.validate(data)
    mutators = ctx.resolver.mutating_webhooks_on_create(data) if any(e.rule == "Required" for e in errors) else []
    for error in errors:
        if error.rule in VALUE_RULES and (
            (status_reset and error.path[:1] == ("status",))
            or scheduling.dropped(obj.kind, obj.api_version, error.path, ctx.config.gates)
        ):
            continue  # the API server drops the field before it validates (STATUS_RESET, a disabled gate's field)
        missing = _required(error.message)
        if moot_on_decode(obj.kind, obj.api_version, data, error.path, error.rule, missing, ctx.config.gates):
            continue  # a resource.k8s.io field as Go decodes it and the create strategy drops it
        where = field_path(error.path) or obj.kind
        if pod_template_file and error.path == ("spec",) and '"containers" is required' in error.message:
            continue  # a Spark or Flink pod template file: the driver adds the containers it runs
        if error.rule == "Required" and mutators:
            yield _may_be_set(obj, mutators)
            continue
        if error.unknown_field:
            lead = f'unknown field "{where}" in {obj.api_version} {obj.kind}'
            origin = ctx.schemas.origin(obj.api_version, obj.kind)
            brief = first_line(f"{lead} ({origin})", lead)  # a schema's path may be long: then it is a note
            yield Diagnostic(
                RULE_ID,
                error.path,
                brief,
                notes=(
                    *((origin,) if brief == lead else ()),
                    "the API server's strict field validation warns and drops it",
                ),
                on_key=True,
                severity=Severity.WARNING,
            )
        else:
            yield Diagnostic(RULE_ID, error.path, f"{where}: {_bounded(error.message)}")
    for refused in decoding_errors(obj.kind, obj.api_version, data):  # the decoder's 400
        full = refused.message()
        brief = first_line(full, f"{full.rpartition(': ')[0]}: not a quantity")
        yield Diagnostic(RULE_ID, refused.path, brief, notes=() if brief == full else (full,))
    # a custom resource bound to its CRD (kube/crd_templates) has its pod templates where its schema puts them
    shaped = read_by_shape(obj.api_version, obj.kind) and not isinstance(data, SchemaBound)
    if shaped and obj.facts.sites():
        yield Diagnostic(
            RULE_ID,
            ("kind",),
            f"the pod templates of {obj.api_version} {obj.kind} were read by their shape",
            notes=(
                "gpulint has no table row for this custom resource: the pod rules ran on every mapping under spec "
                "holding containers, and the rules that need the whole pod or its count stayed silent",
            ),
            severity=Severity.INFO,
            run_note=True,
        )


def _may_be_set(obj: KubeObject, mutators: list[str]) -> Diagnostic:
    """A required field missing from an object a mutating webhook may change on create: admission calls the
    webhook before the schema check, and a patch may add the field (a controller-runtime defaulter re-marshals the
    whole object, so a field without ``omitempty`` comes back as its zero value): not checked, said once per kind."""
    return Diagnostic(
        RULE_ID,
        ("kind",),
        f"required fields of {obj.api_version} {obj.kind} not checked: mutating webhook "
        f"{first_and_more([repr(name) for name in mutators])} may set them (mutating admission runs before the schema check)",
        severity=Severity.INFO,
        pinned=True,
        run_note=True,
    )


_REQUIRED = re.compile(r'^Required value: "([^"]+)" is required$')


def _required(message: str) -> str:
    found = _REQUIRED.match(message)
    return found.group(1) if found else ""


def _api_version_cased_otherwise(data: dict) -> tuple[str, str] | None:
    """An `apiVersion` key written in another case (`apiversion`), and its value. A Go program that writes a
    TypeMeta through a YAML library ignoring its json tags spells it so, and reads it back through
    encoding/json, which matches keys case-insensitively: operator-sdk's scorecard configuration
    (`bundle/tests/scorecard/config.yaml`, kind Configuration). Such a file is for that program; only an
    object of a kind Kubernetes serves is a manifest whose key kubectl refuses."""
    for key, value in data.items():
        if isinstance(key, str) and key != "apiVersion" and key.lower() == "apiversion" and isinstance(value, str):
            return key, value
    return None


def _served_kind(kind: str, ctx: CheckContext) -> bool:
    """Whether some API gpulint knows serves ``kind``: the Kubernetes release's, a bundled CRD's or one of the
    linted set's. A document with a kind and no apiVersion is a manifest kubectl refuses only when its kind is
    one; a kind nothing serves is another tool's configuration that borrows the word (Zarf's
    `kind: ZarfPackageConfig` in zarf.yaml, UDS's `kind: UDSBundle`: their schemas have no apiVersion)."""
    return any(key.rsplit("/", 1)[-1] == kind for key in ctx.schemas.known_kinds())


def _list_items(obj: KubeObject) -> Iterator[Diagnostic]:
    items = obj.data.get("items")
    if not isinstance(items, list):
        yield Diagnostic(
            RULE_ID,
            ("items",),
            f"items: Invalid value: {obj.kind}.items must be a list of objects, "
            f"not {type_name(items)}; kubectl refuses the whole document",
        )
        return
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            yield Diagnostic(
                RULE_ID,
                ("items", index),
                f"items[{index}]: Invalid value: each item of a "
                f"{obj.kind} must be an object, not {type_name(item)}; "
                "kubectl refuses the whole document",
            )


MAX_MESSAGE = 240


def _bounded(message: str) -> str:
    """The schema library quotes the offending value whole: a 5,000-digit number or a 1 MB string
    would fill the report. The head says what it is, the tail what was expected."""
    if len(message) <= MAX_MESSAGE:
        return message
    return f"{message[: MAX_MESSAGE // 2]}...{message[-MAX_MESSAGE // 2 :]}"
