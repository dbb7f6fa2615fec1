"""knative-field-disallowed: Knative's webhook refuses a pod field its feature flags keep off, a name, mount
path or port Knative reserves for itself, or container ports it cannot route (more than one across the
containers, or none among several)."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube import knative, kserve
from gpulint.kube.fields import mapping
from gpulint.kube.releases import all_before, release_of
from gpulint.kube.scheduler import pod_requirements
from gpulint.kube.workloads import PodSpecSite
from gpulint.lint.checks import CheckContext, field_path
from gpulint.lint.findings import Diagnostic, Refuses, Severity, refusing
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec, Scope

SPEC = RuleSpec(
    "knative-field-disallowed",
    Severity.ERROR,
    kinds=frozenset((*knative.KINDS, "InferenceService")),
    scope=Scope.POD_TEMPLATE,
)
RULE_ID = SPEC.id

_ASSUMED_SERVERLESS = kserve.ASSUMED_KNATIVE_NOTE
COMPONENTS = ("predictor", "transformer", "explainer")  # each a Knative Service in Knative mode


def _enabled_by_setup(
    obj: KubeObject, site: PodSpecSite, flag: str, state: knative.FlagState, ctx: CheckContext
) -> bool:
    """With config-features unknown, whether the platform the pod selects by node label (knative.PLATFORM_FLAGS),
    the platform whose tooling labels the object (knative.MAKER_FLAGS) or the repository's own setup (a
    script, a workflow, an install guide: gpulint.lint.inputs.knative_setup, read once per run) enables
    ``flag`` in the cluster it deploys to."""
    if state is not knative.FlagState.UNKNOWN:
        return False
    if flag in knative.platform_flags(pod_requirements(site.spec, facts=obj.facts).label_keys()):
        return True  # the pod is written for a platform whose managed Knative enables the flag
    if flag in knative.maker_flags(mapping(mapping(obj.data.get("metadata")).get("labels"))):
        return True  # the object was made with a platform's tooling whose Knative enables the flag
    return flag in ctx.resolver.knative_setup.enabled(obj.document.path)


def _older_paths(ctx: CheckContext) -> tuple[bool, str] | None:
    """Whether the Knative Serving releases the files and the inventory install reserve the paths releases before
    knative-v1.13 reserve: (True, every one found is before it; False, some are and the others are later or not
    known) with the releases as notes name them; None when none found is before it."""
    found = ctx.resolver.knative_installs()
    releases = [release_of(release) for release, _ in found]
    if not any(release is not None and release < knative.PATHS_FREED for release in releases):
        return None
    shown = ", ".join(f"{release or 'no version'} ({where})" for release, where in found)
    return all_before((release for release, _ in found), knative.PATHS_FREED) is True, shown


def _release_notes(use: knative.ReservedUse, older: tuple[bool, str] | None) -> tuple[str, ...]:
    if not use.until or older is None:
        return ()
    every, shown = older
    said = (
        f"Knative Serving before v1.13 reserves it (k8s_validation.go reservedPaths; v1.13 frees /tmp, /var and "
        f"/var/log, serving#14719); Knative Serving installed: {shown}"
    )
    return (said,) if every else (said, "not every Knative Serving release found is before v1.13")


def _refused_fields(
    obj: KubeObject, site: PodSpecSite, ctx: CheckContext
) -> Iterator[tuple[str, str, knative.FlagState]]:
    """The pod fields ``site`` sets that a Knative feature flag keeps off, as config-features says (disabled) or
    by default (unknown): (field, flag, state). SET (a value gpulint cannot read) and ALLOWED fields pass."""
    values = ctx.resolver.config_map_data(knative.CONFIG_NAMESPACE, knative.CONFIG_NAME)
    keys = None if values is not None else ctx.resolver.config_map_keys(knative.CONFIG_NAMESPACE, knative.CONFIG_NAME)
    for field, flag in knative.FEATURE_FLAGS.items():
        if site.spec.get(field) in (None, False, "", [], {}):
            continue
        state = knative.flag_state(flag, values, keys)
        if state in (knative.FlagState.ALLOWED, knative.FlagState.SET):
            continue  # SET: the operator chose a value gpulint cannot see; no proof either way
        if not _enabled_by_setup(obj, site, flag, state, ctx):
            yield field, flag, state


def _refused_parts(
    obj: KubeObject, site: PodSpecSite, ctx: CheckContext
) -> Iterator[tuple[knative.FlagRefusal, knative.FlagState]]:
    """The volumes and env sources ``site`` sets that a flag keeps off, decided as _refused_fields decides."""
    values = ctx.resolver.config_map_data(knative.CONFIG_NAMESPACE, knative.CONFIG_NAME)
    keys = None if values is not None else ctx.resolver.config_map_keys(knative.CONFIG_NAMESPACE, knative.CONFIG_NAME)
    for refusal in knative.flag_refusals(site.spec):
        state = knative.flag_state(refusal.flag, values, keys)
        if state in (knative.FlagState.ALLOWED, knative.FlagState.SET):
            continue
        if not _enabled_by_setup(obj, site, refusal.flag, state, ctx):
            yield refusal, state


def _refusal_words(refusal: knative.FlagRefusal, at: tuple[str | int, ...]) -> str:
    """Knative's words for ``refusal`` at the field path ``at``."""
    return refusal.message or f"must not set the field(s): {field_path(at)}"


def check(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    """Its errors are refusals: Knative's webhook refuses a Knative Service, or the one KServe's controller makes for an InferenceService."""
    return refusing(_found(obj, site, ctx), Refuses.OBJECT if obj.ref.group == knative.GROUP else Refuses.SERVICE)


def _found(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    if obj.ref.group in (kserve.GROUP, kserve.KFSERVING_GROUP) and obj.kind == "InferenceService":
        yield from _inference_service(obj, site, ctx)
        return
    if obj.ref.group != knative.GROUP:
        return
    for problem in knative.port_problems(site.spec):
        yield Diagnostic(
            RULE_ID,
            (*site.path, *problem.path),
            f"Knative's webhook rejects the {obj.kind}: {problem.message}: {field_path(site.path)}.containers[*].ports",
            on_key=True,
            notes=tuple(
                note
                for note in (
                    problem.details,
                    "Knative routes requests to the one container that declares a port; the others are "
                    "sidecars without ports",
                )
                if note
            ),
        )
    for field, flag, state in _refused_fields(obj, site, ctx):
        path = (*site.path, field)
        refused = f"must not set the field(s): {field_path(path)}"
        if state is knative.FlagState.DISABLED:
            yield Diagnostic(
                RULE_ID,
                path,
                f"Knative's webhook rejects the {obj.kind}: {refused} ({flag} is disabled in "
                f"{knative.CONFIG_NAMESPACE}/{knative.CONFIG_NAME})",
                on_key=True,
                notes=(f'set {flag}: "enabled" in the ConfigMap {knative.CONFIG_NAME} to allow it',),
            )
        else:
            yield Diagnostic(
                RULE_ID,
                path,
                f"Knative's webhook rejects the {obj.kind} ({refused}) unless {flag} is enabled: it is "
                "disabled by default",
                severity=Severity.WARNING,
                on_key=True,
                notes=(
                    f"gpulint does not know {knative.CONFIG_NAMESPACE}/{knative.CONFIG_NAME}: lint it with the "
                    "manifests, or add it to the inventory, to turn this into a verdict",
                ),
            )
    older = ctx.memo(("knative-older-paths",), lambda: _older_paths(ctx))
    for use in knative.reserved_uses(site.spec, older is not None):
        path = (*site.path, *use.path)
        yield Diagnostic(
            RULE_ID,
            path,
            f"Knative's webhook rejects the {obj.kind}: validation failed: {use.message}: {field_path(path)}",
            on_key=True,
            notes=(f"Knative keeps it for {use.why}, whatever config-features says", *_release_notes(use, older)),
            severity=Severity.INFO if use.until and older is not None and not older[0] else None,
        )
    for refusal, state in _refused_parts(obj, site, ctx):
        path = (*site.path, *refusal.path)
        words = _refusal_words(refusal, path)
        if state is knative.FlagState.DISABLED:
            yield Diagnostic(
                RULE_ID,
                path,
                f"Knative's webhook rejects the {obj.kind}: {words} ({refusal.flag} is disabled in "
                f"{knative.CONFIG_NAMESPACE}/{knative.CONFIG_NAME})",
                on_key=True,
                notes=(f'set {refusal.flag}: "enabled" in the ConfigMap {knative.CONFIG_NAME} to allow it',),
            )
        else:
            yield Diagnostic(
                RULE_ID,
                path,
                f"Knative's webhook rejects the {obj.kind} ({words}) unless {refusal.flag} is enabled: "
                "it is disabled by default",
                severity=Severity.WARNING,
                on_key=True,
                notes=(
                    f"gpulint does not know {knative.CONFIG_NAMESPACE}/{knative.CONFIG_NAME}: lint it with the "
                    "manifests, or add it to the inventory, to turn this into a verdict",
                ),
            )


def _inference_service(obj: KubeObject, site: PodSpecSite, ctx: CheckContext) -> Iterator[Diagnostic]:
    """In Knative mode KServe makes a Knative Service of each component, its pod fields copied into
    spec.template.spec: Knative's webhook refuses them there, and the InferenceService reports
    "fails to reconcile predictor: admission webhook ... denied the request"."""
    if len(site.path) != 2 or site.path[-1] not in COMPONENTS:
        return  # a workerSpec: multi-node serving runs in Standard mode only
    component = site.path[-1]
    maker = "KFServing" if obj.ref.group == kserve.KFSERVING_GROUP else "KServe"
    mode = kserve.deployment_mode(obj.data, ctx.kserve_default_mode())
    if mode is kserve.DeploymentMode.OTHER:
        return
    assumed = mode is kserve.DeploymentMode.ASSUMED_KNATIVE
    for field, flag, state in _refused_fields(obj, site, ctx):
        disabled = state is knative.FlagState.DISABLED
        notes = [
            f"{maker} copies the {component}'s {field} into the Knative Service it makes for it; Knative's "
            f"webhook refuses it there: must not set the field(s): spec.template.spec.{field}",
            f'set {flag}: "enabled" in the ConfigMap {knative.CONFIG_NAMESPACE}/{knative.CONFIG_NAME} to allow it'
            if disabled
            else f"gpulint does not know {knative.CONFIG_NAMESPACE}/{knative.CONFIG_NAME}, where {flag} is "
            "disabled by default",
        ]
        if assumed:
            notes.append(_ASSUMED_SERVERLESS)
        yield Diagnostic(
            RULE_ID,
            (*site.path, field),
            f"the {component} sets {field}, which Knative refuses in the Knative Service {maker} makes for it "
            f"({flag} is {'disabled' if disabled else 'disabled by default'}), so the InferenceService never "
            "becomes ready",
            severity=None if disabled and not assumed else Severity.WARNING,
            on_key=True,
            notes=tuple(notes),
        )
    for problem in knative.port_problems(site.spec):
        if problem.message != knative.MORE_THAN_ONE_PORT:
            continue  # no port among several: the runtime's own container may declare it
        notes = [
            f"{maker} copies the {component}'s containers, their ports with them, into the Knative Service it makes "
            f"for it; Knative's webhook refuses it there: {problem.message}: spec.template.spec.containers[*].ports",
            problem.details,
            "Knative routes requests to one port of one container: declare only the serving port (named http1, "
            "h2c, or not named)",
        ]
        if assumed:
            notes.append(_ASSUMED_SERVERLESS)
        yield Diagnostic(
            RULE_ID,
            (*site.path, *problem.path),
            f"the {component} declares more than one container port, which Knative refuses in the Knative Service "
            f"{maker} makes for it, so the InferenceService never becomes ready",
            severity=Severity.WARNING if assumed else None,
            on_key=True,
            notes=tuple(notes),
        )
    older = ctx.memo(("knative-older-paths",), lambda: _older_paths(ctx))
    for use in knative.reserved_uses(site.spec, older is not None):
        notes = [
            f"{maker} copies the {component}'s containers into the Knative Service it makes for it; Knative's "
            f"webhook refuses it there: {use.message}: "
            f"{field_path(('spec', 'template', 'spec', *use.path))}",
            f"Knative keeps it for {use.why}, whatever config-features says",
            *_release_notes(use, older),
        ]
        if assumed:
            notes.append(_ASSUMED_SERVERLESS)
        severity = Severity.WARNING if assumed else None
        if use.until and older is not None and not older[0]:
            severity = Severity.INFO
        yield Diagnostic(
            RULE_ID,
            (*site.path, *use.path),
            f"the {component} uses what Knative reserves ({use.message}), which Knative refuses in the Knative "
            f"Service {maker} makes for it, so the InferenceService never becomes ready",
            severity=severity,
            on_key=True,
            notes=tuple(notes),
        )
    for refusal, state in _refused_parts(obj, site, ctx):
        disabled = state is knative.FlagState.DISABLED
        words = _refusal_words(refusal, ("spec", "template", "spec", *refusal.path))
        notes = [
            f"{maker} copies the {component}'s pod spec into the Knative Service it makes for it; Knative's webhook "
            f"refuses it there: {words}",
            f'set {refusal.flag}: "enabled" in the ConfigMap {knative.CONFIG_NAMESPACE}/{knative.CONFIG_NAME} to '
            "allow it"
            if disabled
            else f"gpulint does not know {knative.CONFIG_NAMESPACE}/{knative.CONFIG_NAME}, where {refusal.flag} is "
            "disabled by default",
        ]
        if assumed:
            notes.append(_ASSUMED_SERVERLESS)
        yield Diagnostic(
            RULE_ID,
            (*site.path, *refusal.path),
            f"the {component} {refusal.what}, which Knative refuses in the Knative Service {maker} "
            f"makes for it ({refusal.flag} is {'disabled' if disabled else 'disabled by default'}), so the "
            "InferenceService never becomes ready",
            severity=None if disabled and not assumed else Severity.WARNING,
            on_key=True,
            notes=tuple(notes),
        )
