"""Objects -> checks -> findings -> suppressions, for one parsed file at a time (gpulint.lint.run drives it)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from gpulint.kube.wording import first_and_more
from gpulint.kube.workloads import PodSpecSite, written_path
from gpulint.lint.checks import CheckContext, field_path
from gpulint.lint.config import Config
from gpulint.lint.findings import (
    Append,
    Diagnostic,
    FileReport,
    Finding,
    Fix,
    FixSafety,
    ObjectRef,
    Severity,
    excerpts,
    run_note,
    split_long,
    stable_field,
    tail_or_note,
)
from gpulint.lint.inputs.loader import LoadedFile
from gpulint.lint.inputs.objects import NOT_OBJECTS, KubeObject, ParsedFile
from gpulint.lint.inputs.render.flux_post_build import filled_in_notes
from gpulint.lint.output.suppress import (
    ANNOTATION,
    Directive,
    FileSuppressions,
    SuppressionPolicy,
    annotation_directive,
    path_ignores,
    path_matches,
    template_annotations,
)
from gpulint.lint.output.suppress import apply as apply_suppressions
from gpulint.lint.paths import release_snapshot
from gpulint.lint.registry import Rule, all_rules, policy_rules, resolved, rule_ids
from gpulint.lint.rule_spec import Need, Scope
from gpulint.lint.schema import SchemaStore
from gpulint.lint.verdicts.refusal import NOT_JUDGED, Refusal, object_refusal, refused_error
from gpulint.lint.world.resolver import Resolver

YAML_INVALID = "yaml-invalid"
# Rules that judge a workload against the cluster's Kueue queues or namespace quotas, and what of the
# cluster they read (the rules needing nodes read its nodes and node pools).
ADMISSION_FIT = {
    "queue-unadmittable": "queues (Kueue, Volcano, KAI Scheduler)",
    "resource-quota-exceeded": "ResourceQuotas",
    "limit-range-violation": "LimitRanges",
}
ASSUMED_FILES_SHOWN = 3


def enabled_rules(config: Config) -> dict[str, Rule]:
    rules = (
        {**all_rules(), **policy_rules(config.policies, config.kubernetes_version)} if config.policies else all_rules()
    )
    return {rule_id: rule for rule_id, rule in rules.items() if config.enables(rule_id)}


class DeadlineExceeded(Exception):
    """A review ran past its deadline (or its client left): its result is no longer wanted."""


@dataclass
class Deadline:
    """Checked between objects, rules and findings: Python threads cannot be killed, so a long
    review stops itself at the next check once the server no longer waits for it."""

    at: float  # time.monotonic()
    # set by cancel(), from the thread that no longer waits: a plain flag, read at each check (the GIL
    # makes its one write visible to the checking thread; nothing waits on it)
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True

    @property
    def expired(self) -> bool:
        return self.cancelled or time.monotonic() >= self.at

    def check(self) -> None:
        # expired's test, inline: a review checks its deadline ~30 times, before each rule and finding
        if self.cancelled or time.monotonic() >= self.at:
            raise DeadlineExceeded("review deadline passed")


@cache
def _schema_store(kubernetes_version: str, locations: tuple[str, ...] = ()) -> SchemaStore:
    # One per process, version and set of schema locations: compiled validators are reused across files and chunks.
    return SchemaStore(kubernetes_version, locations)


def available_needs(resolver: Resolver) -> frozenset[Need]:
    """What this run can give the rules (see gpulint.lint.rule_spec.Need): once per inventory (and gates) when
    the inventory alone has the hardware, as for most admission reviews."""
    if resolver.hardware_from_inventory:
        return resolver.cluster_fact(("available-needs", resolver.gates), lambda: _available_needs(resolver))
    return _available_needs(resolver)


def _available_needs(resolver: Resolver) -> frozenset[Need]:
    if not resolver.has_nodes:
        return frozenset()
    return frozenset({Need.NODES, Need.DEVICES}) if resolver.dra.has_devices else frozenset({Need.NODES})


def skipped_notes(rules: dict[str, Rule], available: frozenset[Need]) -> tuple[str, ...]:
    """One note per missing need, naming the enabled rules it skips (derived from their specs)."""
    skipped: dict[Need, list[str]] = {}
    for rule_id, rule in rules.items():
        missing = [need for need in Need if need in rule.needs and need not in available]
        if missing:  # the first missing need explains it: no nodes means no devices either
            skipped.setdefault(missing[0], []).append(f"{rule_id} (in part)" if rule.in_part else rule_id)
    notes = []
    for need, ids in skipped.items():
        listed = ", ".join(ids)
        line, details = tail_or_note(f"{need.value}: skipped", f" {listed}", listed)
        if details:  # too many to name on the line: counted on it, listed under it
            line = f"{need.value}: skipped {len(ids)} rules"
        notes.append(run_note(line, details))
    return tuple(notes)


Runnable = tuple[str, Rule, Callable[..., Iterator[Diagnostic]]]
MAX_ROUTED_KINDS = 1024  # kinds routed per Routes (a webhook reviews kinds its clients choose)


@dataclass
class Routes:
    """A configuration's enabled rules, routed once per set of available needs: a rule whose needs are
    unmet never runs (the run says it was skipped). The webhook's reviews of one inventory share one."""

    rules: dict[str, Rule]
    known: frozenset[str]  # every rule id the configuration knows (suppressions may name any of them)
    _routed: dict[frozenset[Need], tuple[list[Runnable], frozenset[str]]] = field(default_factory=dict, repr=False)
    _by_kind: dict[tuple[frozenset[Need], str], list[Runnable]] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, config: Config, rules: dict[str, Rule] | None = None) -> Routes:
        rules = enabled_rules(config) if rules is None else rules
        return cls(rules, frozenset(rule_ids(config.policies)) | frozenset(rules))

    def routed(self, available: frozenset[Need]) -> tuple[list[Runnable], frozenset[str]]:
        """The rules that run (with their checks), and the ids of the rules that ran."""
        found = self._routed.get(available)
        if found is None:  # two threads may both compute it: the same value
            runnable = [
                (rule_id, rule, rule.check)
                for rule_id, rule in self.rules.items()
                if rule.check is not None and (rule.needs <= available or rule.in_part)
            ]
            # a rule that ran only in part did not judge all it can: a suppression of it is not said unused
            whole = {rule_id for rule_id, rule, _ in runnable if rule.needs <= available}
            ran = whole | ({YAML_INVALID} if YAML_INVALID in self.rules else set())
            found = self._routed[available] = (runnable, frozenset(ran))
        return found

    def for_kind(self, available: frozenset[Need], kind: str) -> list[Runnable]:
        """The rules that run on objects of ``kind``, their checks imported: once per kind, in rule order.
        Bounded: the kinds come from the objects, so the table forgets them past MAX_ROUTED_KINDS."""
        key = (available, kind)
        found = self._by_kind.get(key)
        if found is None:
            found = [
                (rule_id, rule, resolved(check))
                for rule_id, rule, check in self.routed(available)[0]
                if rule.reads(kind)
                and (kind not in NOT_OBJECTS or rule.scope is Scope.POD_TEMPLATE or rule_id in NOT_OBJECTS[kind])
            ]
            if len(self._by_kind) >= MAX_ROUTED_KINDS:
                self._by_kind.clear()
            self._by_kind[key] = found
        return found


def schemas_for(config: Config, resolver: Resolver) -> SchemaStore:
    """The schemas of the target version with the CRDs of the run (linted, then the inventory's). Without
    a linted CRD they are the inventory's alone: built once per inventory, not once per review."""
    store = _schema_store(config.kubernetes_version, config.schema_locations)
    if resolver.linted.has_kind("apiextensions.k8s.io", "CustomResourceDefinition"):
        return store.with_crds(resolver.linted_crds, resolver.inventory_crds)
    return resolver.cluster_fact(
        ("schemas", config.kubernetes_version, config.schema_locations),
        lambda: store.with_crds(resolver.inventory_crds),
    )


class Engine:
    """Checks parsed files with a fixed configuration, rule set and view of the cluster.

    Built once per run (or per admission review): the check context, and its memo, live as
    long as the run does.
    """

    def __init__(
        self, config: Config, resolver: Resolver, rules: dict[str, Rule] | None = None, routes: Routes | None = None
    ) -> None:
        self.config = config
        routes = routes if routes is not None else Routes.of(config, rules)
        self.rules = routes.rules
        self.context = CheckContext(config, schemas_for(config, resolver), resolver)
        self._snapshot_contexts: dict[str | None, CheckContext] = {}
        self._crd_snapshots: dict[str, str | None] | None = None  # a linted CRD's file -> its release snapshot
        self.available = available_needs(resolver)
        self._routes = routes
        self._runnable, self._ran = routes.routed(self.available)
        self._known = routes.known
        self._checks_by_kind: dict[str, dict[str, Callable[..., Iterator[Diagnostic]]]] = {}

    def _routed(self, kind: str) -> list[Runnable]:
        """The runnable rules that read this kind, their checks imported, in rule order."""
        return self._routes.for_kind(self.available, kind)

    def check_file(
        self, parsed: ParsedFile, deadline: Deadline | None = None, *, path_ignores_apply: bool = True
    ) -> FileReport:
        """Findings of one parsed file, suppressions applied (``per-path-ignores`` only for files:
        an admission review has no path)."""
        loaded = parsed.loaded
        report = FileReport(loaded.path)
        report.templated = loaded.templated
        findings: list[Finding] = []
        if parsed.read_error is not None:
            findings.append(self._file_finding(loaded.path, f"cannot read file: {parsed.read_error}", 1, 1))
        findings.extend(
            self._file_finding(
                p.file or loaded.path, p.message, p.line, p.column, p.document or 0, p.rule, p.severity, p.notes
            )
            for p in loaded.problems
            if p.rule in self.rules
        )
        report.documents = len(loaded.documents)
        report.not_objects = parsed.not_objects
        located: list[tuple[Finding, tuple[Directive, ...]]] = [(finding, ()) for finding in findings]
        annotations: list[Directive] = []
        held: list[_Held] = []
        context = self._context_for(loaded.path)
        for each in self._check_objects(parsed.objects, deadline, context):
            report.objects += 1
            located.extend(each.findings())
            annotations.extend(each.directives)
            held.extend(self._held_back(each, context))
        if deadline is not None:  # suppressing and sorting a long List's findings takes a while too
            deadline.check()
        report.findings, report.suppressed = self._suppress(loaded, located, annotations, path_ignores_apply)
        if held:
            report.findings = _hold_back(report.findings, held)
        if loaded.substituted:
            report.findings = [_with_substitutions(finding, loaded) for finding in report.findings]
        report.findings.sort(key=Finding.sort_key)
        report.excerpts = excerpts(loaded.text, {f.line for f in report.findings if f.file == loaded.path})
        return report

    def _file_finding(
        self,
        path: str,
        message: str,
        line: int,
        column: int,
        document: int = 0,
        rule: str = YAML_INVALID,
        severity: Severity | None = None,
        notes: tuple[str, ...] = (),
    ) -> Finding:
        # a problem's own severity stands (a render the environment prevented is a warning, whatever the rule's)
        chosen = severity if severity is not None else self._severity(rule, None)
        brief, more = split_long(message)  # a renderer's or parser's words may be long
        return Finding(rule, chosen, brief, path, line, column, document=document, notes=(*more, *notes))

    def _severity(self, rule_id: str, requested: Severity | None) -> Severity:
        configured = self.config.severity.get(rule_id)
        if configured is not None:
            return configured
        if requested:
            return requested
        rule = self.rules.get(rule_id) or all_rules().get(rule_id)
        assert rule is not None, f"no rule {rule_id!r}: checks report only under the ids of registered rules"
        return rule.severity

    def _context_for(self, path: str) -> CheckContext:
        """The check context of a file. A file under a past release's documentation (paths.release_snapshot: a
        Docusaurus versioned_docs/version-X) matches that release's CRDs, not the ones the repository holds now: it
        is validated by the CRDs of its own snapshot and the inventory's, and a snapshot's CRDs validate only their
        snapshot, in a run over the repository as in a run of the file alone."""
        if self._crd_snapshots is None:
            self._crd_snapshots = {file: release_snapshot(file) for _, file in self.context.resolver.linted_crds}
        if not self._crd_snapshots:
            return self.context
        snapshot = release_snapshot(path)
        if set(self._crd_snapshots.values()) == {snapshot}:
            return self.context
        found = self._snapshot_contexts.get(snapshot)
        if found is None:
            resolver = self.context.resolver
            own = [(crd, file) for crd, file in resolver.linted_crds if self._crd_snapshots[file] == snapshot]
            store = _schema_store(self.config.kubernetes_version, self.config.schema_locations)
            found = CheckContext(self.config, store.with_crds(own, resolver.inventory_crds), resolver)
            self._snapshot_contexts[snapshot] = found
        return found

    def _check_objects(
        self, objects: list[KubeObject], deadline: Deadline | None = None, context: CheckContext | None = None
    ) -> list[_Checked]:
        """Each object with its findings, each with the annotation suppressions whose scope holds it, and those
        annotation suppressions; in object order, each object's in rule order. The rules run one after
        another over all the objects (of a file), not the objects one after another through all the
        rules: a rule's code and tables stay in the processor's caches while it reads the objects, which
        measured 0.93x the CPU of the checks (docs/speed.md)."""
        context = context or self.context
        checked: list[_Checked] = []
        for obj in objects:
            # A List's objects are prepared one by one, the deadline checked between them: a review taken over
            # (its client gone, its deadline passed) gives its slot back now, not after seconds of a long List.
            if deadline is not None:
                deadline.check()
            each = _Checked(with_facts(with_runtime(obj, context.resolver)), self._checks_of(obj.kind))
            each.prepare()
            checked.append(each)
        for rule_id, rule, _ in self._runnable:
            per_site = rule.scope is Scope.POD_TEMPLATE
            for each in checked:
                check = each.checks.get(rule_id)
                if check is None:
                    continue
                # Inline, not through helpers: this runs ~30 times per admission review, most of them
                # for a check that yields nothing.
                try:
                    if per_site:  # one pod template at a time, found once for the object (_Checked.sites)
                        diagnostics = _site_diagnostics(check, each, context, deadline)
                    elif deadline is None:
                        diagnostics = list(check(each.obj, context))
                    else:
                        deadline.check()
                        diagnostics = []
                        # a check may yield very many: stop between them
                        for diagnostic in check(each.obj, context):
                            deadline.check()
                            diagnostics.append(diagnostic)
                except DeadlineExceeded:
                    raise
                except Exception as exc:  # a bug in one check must not hide the others' findings
                    each.found[rule_id] = [(_internal_error(rule_id, each.obj, exc), each.whole)]
                    continue
                if diagnostics:  # most rules, on most objects, have none
                    each.found[rule_id] = self._rule_findings(diagnostics, each)
        return checked

    def _held_back(self, each: _Checked, context: CheckContext) -> Iterator[_Held]:
        """The findings about the pods of an object refused at admission (its admission verdict, built only for an
        object such a rule spoke of), with the refusal; shown or held back once suppressions are applied."""
        pods = [
            finding
            for rule_id, found in each.found.items()
            if (rule := self.rules.get(rule_id)) is not None and rule.of_pods
            for finding, _ in found
            if finding.severity > Severity.INFO
        ]
        if not pods:
            return
        # the errors that word a certain refusal (Finding.refused), as their rules word them, after the verdict's own
        errors = tuple(
            (finding, refused_error(refused.what, finding.rule, finding.message, each.obj.ref))
            for found in each.found.values()
            for finding, _ in found
            if (refused := finding.refused) is not None and refused.certain and finding.severity >= Severity.ERROR
        )
        refusal = object_refusal(each.obj, context.resolver, self.config.gates, context.memo)
        if refusal is not None or errors:
            field = stable_field(each.obj.data, refusal.path) if refusal is not None else ""
            yield _Held(each.obj.ref, each.obj.document.index, each.obj.kind, refusal, field, tuple(pods), errors)

    def _checks_of(self, kind: str) -> dict[str, Callable[..., Iterator[Diagnostic]]]:
        """The checks of the rules that read ``kind``, by rule id in rule order (once per kind of the run)."""
        found = self._checks_by_kind.get(kind)
        if found is None:
            found = self._checks_by_kind[kind] = {rule_id: check for rule_id, _, check in self._routed(kind)}
        return found

    def _rule_findings(
        self, diagnostics: list[Diagnostic], each: _Checked
    ) -> list[tuple[Finding, tuple[Directive, ...]]]:
        """One rule's diagnostics of one object as findings, each with the annotation suppressions that cover it."""
        obj = each.obj
        findings: list[tuple[Finding, tuple[Directive, ...]]] = []
        scoped, placeholders = each.scoped, obj.document.placeholders
        written: set[tuple[Any, ...]] = set()
        for diagnostic in diagnostics:
            if each.has_views:
                diagnostic = _as_written(obj, diagnostic)
                key = (diagnostic.path, diagnostic.message)
                if key in written:
                    continue  # two fields of the pod written as one (a VLLMRuntime's gpu: request and limit)
                written.add(key)
            if placeholders and any(
                _under_placeholder((*obj.prefix, *path), placeholders) for path in (diagnostic.path, *diagnostic.inputs)
            ):
                continue  # ${GPUS} is not a value yet: the file's one not-rendered finding says so
            covering = tuple(d for d, prefix in scoped if diagnostic.path[: len(prefix)] == prefix) if scoped else ()
            findings.append((self._finding(obj, diagnostic), covering))
        return findings

    def _finding(self, obj: KubeObject, diagnostic: Diagnostic) -> Finding:
        if diagnostic.offset is not None:
            line, column = obj.locate_in_string(diagnostic.path, diagnostic.offset)
        else:
            line, column = obj.locate(diagnostic.path, diagnostic.on_key)
        file = obj.document.file_of((*obj.prefix, *diagnostic.path), diagnostic.on_key)
        fix = None
        if diagnostic.fix_path is not None or diagnostic.fix_appends:
            source = None if diagnostic.fix_source is None else (*obj.prefix, *diagnostic.fix_source)
            fix = obj.document.retarget(
                Fix(
                    obj.document.index,
                    () if diagnostic.fix_path is None else (*obj.prefix, *diagnostic.fix_path),
                    diagnostic.fix_value,
                    diagnostic.fix_description,
                    source,
                    appends=tuple(Append((*obj.prefix, *a.path), a.item) for a in diagnostic.fix_appends),
                    safety=diagnostic.fix_safety or FixSafety.SAFE,
                )
            )
            if fix.appends and fix.file and not fix.refused:  # list items' paths are the rendered object's
                fix = replace(fix, refused="a fix that adds list items is made only in the object's own file")
        # a check words its first line to fit; a message that quotes long upstream text is split as a last resort
        message, more = (diagnostic.message, ()) if diagnostic.run_note else split_long(diagnostic.message)
        severity = (
            diagnostic.severity
            if diagnostic.pinned and diagnostic.severity
            else self._severity(diagnostic.rule, diagnostic.severity)
        )
        assumed = self._assumption(diagnostic.rule) if severity > Severity.INFO else None
        if assumed is not None:  # a cluster no inventory names: at most a warning, and it says so
            severity = min(severity, Severity.WARNING)
        return Finding(
            diagnostic.rule,
            severity,
            message,
            file,
            line,
            column,
            obj.ref,
            fix,
            obj.document.index,
            (*more, *diagnostic.notes, *((assumed,) if assumed else ()), *_released(obj)),
            diagnostic.run_note,
            stable_field(obj.data, diagnostic.path),
            diagnostic.refused,
        )

    def _assumption(self, rule_id: str) -> str | None:
        """The note naming what a cluster-fit finding assumed when no inventory names the cluster (None: the
        rule judges no cluster, or an inventory does)."""
        resolver = self.context.resolver
        if not resolver.cluster_assumed:
            return None
        rule = self.rules.get(rule_id)
        # a file checked alone (pre-commit) is judged by what its repository's other files describe too
        files = "repository's files" if resolver.indexed else "linted files"
        if rule is not None and Need.NODES in rule.needs:
            shown = first_and_more(resolver.linted_pool_files, ASSUMED_FILES_SHOWN)
            what = f"node pools of the {files} ({shown})"
            if resolver.pools_left_out:
                left = first_and_more(list(resolver.pools_left_out), ASSUMED_FILES_SHOWN)
                what += f", not those of {left} (a test or example folder's pools serve its own workloads only)"
        elif rule_id in ADMISSION_FIT:
            what = f"{ADMISSION_FIT[rule_id]} of the {files}"
        else:
            return None
        return (
            f"assumed: no --inventory names the cluster this workload deploys to, so it was judged against the "
            f"{what}; map its path to its cluster's inventory (clusters: in .gpulint.yaml) to judge it for certain"
        )

    def _suppress(
        self,
        loaded: LoadedFile,
        findings: list[tuple[Finding, tuple[Directive, ...]]],
        annotations: list[Directive],
        path_ignores_apply: bool,
    ) -> tuple[list[Finding], int]:
        """Comments, per-path-ignores and suppression policy of the file each finding is in: a rendered
        chart's findings are in its templates, whose comments (and paths) are the ones that count."""
        groups: dict[str, list[tuple[Finding, tuple[Directive, ...]]]] = {loaded.path: []}
        for item in findings:
            groups.setdefault(item[0].file, []).append(item)
        if loaded.reported is not None:  # an overlay built for a base named alone: the rest is other units'
            groups = {file: items for file, items in groups.items() if os.path.realpath(file) in loaded.reported}
        if loaded.unreported:  # a Flux component several overlays are built with: said by the first
            groups = {file: items for file, items in groups.items() if os.path.realpath(file) not in loaded.unreported}
        kept: list[Finding] = []
        suppressed = 0
        for file, items in groups.items():
            text = loaded.text if file == loaded.path else loaded.texts.get(file, "")
            here = annotations if file == loaded.path else []  # the objects' annotations: reported once
            file_kept, file_suppressed = self._suppress_file(file, text, items, here, path_ignores_apply)
            kept += file_kept
            suppressed += file_suppressed
        return kept, suppressed

    def _suppress_file(
        self,
        path: str,
        text: str,
        findings: list[tuple[Finding, tuple[Directive, ...]]],
        annotations: list[Directive],
        path_ignores_apply: bool,
    ) -> tuple[list[Finding], int]:
        config = self.config
        by_path = path_ignores(path, config.per_path_ignores, config.root) if path_ignores_apply else frozenset()
        disallowed = (
            next((glob for glob in config.suppressions_disallowed if path_matches(path, glob, config.root)), "")
            if path_ignores_apply
            else ""
        )
        comments = FileSuppressions.scan(text).directives
        policy = SuppressionPolicy(
            self._known, self._ran, config.require_reason, config.report_unused, disallowed, by_path
        )
        kept, suppressed, problems = apply_suppressions(findings, comments, annotations, policy)
        for problem in problems:
            if problem.rule not in self.rules:
                continue
            # the suppression rules themselves: per-path-ignores, or a comment that names them (never `all`)
            if problem.rule in by_path or (
                not disallowed
                and any(problem.rule in d.names() and (d.kind == "file" or d.target == problem.line) for d in comments)
            ):
                suppressed += 1
                continue
            severity = self._severity(problem.rule, None)
            kept.append(Finding(problem.rule, severity, problem.message, path, problem.line, problem.column))
        return kept, suppressed


@dataclass(frozen=True)
class _Held:
    """An object refused at admission and the findings about the pods it would make."""

    ref: ObjectRef
    document: int
    kind: str
    refusal: Refusal | None  # the admission verdict's (verdicts/refusal.py)
    field: str  # the refused field, as findings keep it (stable_field)
    pods: tuple[Finding, ...]
    errors: tuple[tuple[Finding, Refusal], ...] = ()  # the errors of rules that word a certain refusal

    def reported(self, findings: list[Finding], kept: set[int]) -> Refusal | None:
        """The refusal the user reads once suppressions are applied: the verdict's, where its own finding or
        another error of its rule on the object is reported, else the first refusing error still reported."""
        verdict = self.refusal
        if verdict is not None and any(
            f.rule == verdict.rule
            and f.obj == self.ref
            and f.document == self.document
            and (f.field == self.field or f.severity >= Severity.ERROR)
            for f in findings
        ):
            return verdict
        return next((refusal for finding, refusal in self.errors if id(finding) in kept), None)


def _hold_back(findings: list[Finding], held: list[_Held]) -> list[Finding]:
    """Each refused object's findings about its pods, held back where the refusal itself is reported: one info per
    rule stands for them, its notes keep their words. A refusal suppressed, or its rule not run, holds nothing back:
    the user has said the object is admitted (a patched operator, a webhook not installed), so its pods are judged."""
    kept = {id(finding) for finding in findings}
    out = list(findings)
    for each in held:
        refusal = each.reported(findings, kept)
        pods = [finding for finding in each.pods if id(finding) in kept]
        if refusal is None or not pods:
            continue
        gone = {id(finding) for finding in pods}
        out = [finding for finding in out if id(finding) not in gone]
        by_rule: dict[str, list[Finding]] = {}
        for finding in pods:
            by_rule.setdefault(finding.rule, []).append(finding)
        for found in by_rule.values():
            first = found[0]
            count = f"{len(found)} finding{'s' if len(found) != 1 else ''}"
            out.append(
                replace(
                    first,
                    severity=Severity.INFO,
                    message=f"{NOT_JUDGED}{count} held back): this {each.kind} {refusal.held_back}",
                    notes=(
                        f"{refusal.words()} (see {refusal.rule})",
                        *(f"held back: {f.severity} {f.line}:{f.column}: {f.message}" for f in found),
                    ),
                    fix=None,
                    refused=None,
                )
            )
    return out


@dataclass
class _Checked:
    """One object while its file is checked: the rules that read its kind, its annotation suppressions and
    what each rule found in it."""

    obj: KubeObject
    checks: dict[str, Callable[..., Iterator[Diagnostic]]]
    scoped: list[tuple[Directive, tuple[Any, ...]]] = field(default_factory=list)
    directives: list[Directive] = field(default_factory=list)
    whole: tuple[Directive, ...] = ()
    sites: tuple[PodSpecSite, ...] = ()  # its pod templates, found once for every pod-template check
    has_views: bool = False
    found: dict[str, list[tuple[Finding, tuple[Directive, ...]]]] = field(default_factory=dict)

    def prepare(self) -> None:
        """Read its annotation suppressions and whether its paths move (its pod templates found by now)."""
        self.scoped = annotation_directives(self.obj)
        self.directives = [directive for directive, _ in self.scoped]
        self.whole = tuple(directive for directive, prefix in self.scoped if not prefix)
        self.sites = self.obj.facts.sites()
        self.has_views = any(site.aliases for site in self.sites)  # a controller-built pod: paths move

    def findings(self) -> list[tuple[Finding, tuple[Directive, ...]]]:
        """What the rules found, in rule order."""
        return [finding for rule_id in self.checks for finding in self.found.get(rule_id, ())]


def object_diagnostics(
    rule: Rule, check: Callable[..., Iterator[Diagnostic]], obj: KubeObject, context: CheckContext
) -> Iterator[Diagnostic]:
    """One rule's diagnostics of one object whatever its scope, for tools that run a check alone (the
    engine runs them in its own loop)."""
    if rule.scope is Scope.POD_TEMPLATE:
        for site in obj.facts.sites():
            yield from check(obj, site, context)
    else:
        yield from check(obj, context)


def _site_diagnostics(
    check: Callable[..., Iterator[Diagnostic]], each: _Checked, context: CheckContext, deadline: Deadline | None
) -> list[Diagnostic]:
    """A pod-template check's diagnostics of one object: each of its pod templates in turn."""
    diagnostics: list[Diagnostic] = []
    for site in each.sites:
        if deadline is None:
            diagnostics.extend(check(each.obj, site, context))
            continue
        deadline.check()
        for diagnostic in check(each.obj, site, context):  # a check may yield very many: stop between them
            deadline.check()
            diagnostics.append(diagnostic)
    return diagnostics


def _internal_error(rule_id: str, obj: KubeObject, exc: Exception) -> Finding:
    """What a check that raised leaves of its findings on ``obj``: one info finding that says so."""
    line, column = obj.locate(())
    return Finding(
        rule_id,
        Severity.INFO,
        f"internal error in gpulint's {rule_id} check ({type(exc).__name__}: {exc}); "
        "this object was not fully checked - please report it",
        obj.document.path,
        line,
        column,
        obj.ref,
        document=obj.document.index,
    )


def _released(obj: KubeObject) -> tuple[str, ...]:
    """The note naming the release of the repository whose render made the object (render/releases)."""
    return (f"rendered as {obj.document.release}",) if obj.document.release else ()


def _as_written(obj: KubeObject, diagnostic: Diagnostic) -> Diagnostic:
    """A diagnostic on a controller-built pod (kube/pod_views), placed where its fields were written.

    Its fix is kept when every field it touches sits in the object in the same shape (a KServe
    ``model`` container, an Argo template's container); it is dropped when the operator builds the
    field from others (a NIMService's spec.resources): gpulint cannot write that field for it."""
    where = written_path(obj.facts.sites(), diagnostic.path)
    dropped = tuple(
        site.dropped
        for site in obj.facts.sites()
        if site.dropped and diagnostic.path[: len(site.path)] == site.path and site.dropped not in diagnostic.notes
    )
    diagnostic = replace(
        diagnostic,
        message=_written_text(obj, diagnostic.message),
        notes=(*(_written_text(obj, note) for note in diagnostic.notes), *dropped),
    )
    if not where.moved and diagnostic.fix_path is None and not diagnostic.fix_appends:
        return diagnostic
    touched = [
        written_path(obj.facts.sites(), path)
        for path in (diagnostic.fix_path, diagnostic.fix_source, *(a.path for a in diagnostic.fix_appends))
        if path is not None
    ]
    fixable = all(w.faithful for w in touched if w.moved)
    moved = replace(
        diagnostic,
        path=where.path,
        offset=None if where.moved else diagnostic.offset,  # an offset into a string the operator builds
    )
    if not fixable:  # and no note may promise the fix
        notes = tuple(note for note in moved.notes if "--fix" not in note and "--unsafe-fixes" not in note)
        return replace(
            moved, fix_path=None, fix_source=None, fix_appends=(), fix_value=None, fix_description="", notes=notes
        )
    return replace(
        moved,
        fix_path=None if diagnostic.fix_path is None else written_path(obj.facts.sites(), diagnostic.fix_path).path,
        fix_source=None
        if diagnostic.fix_source is None
        else written_path(obj.facts.sites(), diagnostic.fix_source).path,
        fix_appends=tuple(
            replace(a, path=written_path(obj.facts.sites(), a.path).path) for a in diagnostic.fix_appends
        ),
    )


def with_runtime(obj: KubeObject, resolver: Resolver) -> KubeObject:
    """The object as its controller sees it: a TrainJob bound to the runtime it names (kube/trainjob)."""
    data = resolver.with_runtime(obj.data)
    return obj if data is obj.data else replace(obj, data=data)


def with_facts(obj: KubeObject) -> KubeObject:
    """The object with the facts the engine keeps while it checks it (its pod templates, what the rules work
    out of it once): built here, dropped with the file's check."""
    return obj.with_facts()


def _written_text(obj: KubeObject, text: str) -> str:
    """A message with each field path of a controller-built pod spelled as the object's own field
    (spec.predictor.containers[0].resources -> spec.predictor.model.resources), in one pass."""
    aliases: dict[str, str] = {}
    for site in obj.facts.sites():
        aliases.update({field_path(virtual): field_path(real) for virtual, real in site.aliases})
        aliases.update({field_path(virtual): name for virtual, name in site.names})
    if not aliases:
        return text
    pattern = "|".join(re.escape(v) for v in sorted(aliases, key=len, reverse=True))
    return re.sub(f"({pattern})(?![A-Za-z0-9_])", lambda m: aliases[m.group(1)], text)


def annotation_directives(obj: KubeObject) -> list[tuple[Directive, tuple[Any, ...]]]:
    """The object's `gpulint.io/ignore` annotation (scope: the whole object) and its pod templates'
    (scope: the template's path), as directives placed where the annotation's value is."""
    found = []
    sites: list[tuple[tuple[Any, ...], Any]] = [((), obj.annotations().get(ANNOTATION))]
    sites += template_annotations(obj.data, obj.facts.sites())
    for prefix, value in sites:
        if not isinstance(value, str):
            continue
        path = (*prefix, "metadata", "annotations", ANNOTATION)
        line, column = obj.locate(path)

        def locate(offset: int, path: tuple[Any, ...] = path) -> tuple[int, int]:
            return obj.locate_in_string(path, offset)

        directive = annotation_directive(value, (obj.document.index, obj.prefix, prefix), locate, line, column)
        if directive is not None:
            found.append((directive, prefix))
    return found


def _under_placeholder(path: tuple[object, ...], placeholders: tuple[tuple[object, ...], ...]) -> bool:
    return any(path[: len(p)] == p for p in placeholders)


def _with_substitutions(finding: Finding, loaded: LoadedFile) -> Finding:
    """The finding with a note naming each variable Flux's post-build substitution filled in where it is."""
    text = loaded.text if finding.file == loaded.path else loaded.texts.get(finding.file, "")
    notes = filled_in_notes(text.splitlines(), finding.line, loaded.substituted)
    return replace(finding, notes=(*finding.notes, *notes)) if notes else finding
