"""The pipeline: sources -> located documents -> objects -> checks -> findings -> suppressions.

Files are independent for the per-object checks, so large inputs are split over a
process pool; results come back in input order, so output is deterministic.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache

from gpulint.checks import CheckContext
from gpulint.config import Config
from gpulint.findings import Diagnostic, Finding, Fix, ObjectRef, Severity
from gpulint.inventory import Inventory
from gpulint.loader import LoadedFile, LocatedDocument, load_bytes
from gpulint.objects import KubeObject, is_object, objects_in
from gpulint.registry import Rule, all_rules, policy_rules
from gpulint.schema import SchemaStore
from gpulint.sources import Source
from gpulint.suppress import FileSuppressions, annotation_rules, path_ignores, template_annotation_rules

YAML_INVALID = "yaml-invalid"
PARALLEL_MIN_FILES = 48


@dataclass
class FileReport:
    path: str
    findings: list[Finding] = field(default_factory=list)
    documents: int = 0
    objects: int = 0
    not_objects: int = 0  # documents that are not Kubernetes objects (values files, patches)
    suppressed: int = 0
    templated: bool = False


@dataclass
class Report:
    files: list[FileReport]

    @property
    def findings(self) -> list[Finding]:
        return [finding for report in self.files for finding in report.findings]

    def count(self, severity: Severity) -> int:
        return sum(1 for finding in self.findings if finding.severity == severity)

    def worst(self) -> Severity | None:
        return max((finding.severity for finding in self.findings), default=None)

    def summary(self) -> dict[str, int]:
        return {
            "files": len(self.files),
            "documents": sum(r.documents for r in self.files),
            "objects": sum(r.objects for r in self.files),
            "not_objects": sum(r.not_objects for r in self.files),
            "errors": self.count(Severity.ERROR),
            "warnings": self.count(Severity.WARNING),
            "infos": self.count(Severity.INFO),
            "suppressed": sum(r.suppressed for r in self.files),
            "fixable": sum(1 for f in self.findings if f.fix is not None),
        }


def enabled_rules(config: Config) -> dict[str, Rule]:
    rules = {**all_rules(), **policy_rules(config.policies)} if config.policies else all_rules()
    selected = config.select
    chosen = {}
    for rule_id, rule in rules.items():
        if selected is not None and "all" not in selected and rule_id not in selected:
            continue
        if rule_id in config.ignore or "all" in config.ignore:
            continue
        chosen[rule_id] = rule
    return chosen


class DeadlineExceeded(Exception):
    """A review ran past its deadline (or its client left): its result is no longer wanted."""


@dataclass
class Deadline:
    """Checked between objects, rules and findings: Python threads cannot be killed, so a long
    review stops itself at the next check once the server no longer waits for it."""

    at: float  # time.monotonic()
    _cancelled: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def expired(self) -> bool:
        return self._cancelled.is_set() or time.monotonic() >= self.at

    def check(self) -> None:
        if self.expired:
            raise DeadlineExceeded("review deadline passed")


@cache
def _schema_store(kubernetes_version: str) -> SchemaStore:
    # One per process and version: compiled validators are reused across files and chunks.
    return SchemaStore(kubernetes_version)


class FileLinter:
    """Lints one file at a time with a fixed configuration (and cluster inventory)."""

    def __init__(self, config: Config, inventory: Inventory | None = None) -> None:
        self.config = config
        self.rules = enabled_rules(config)
        self.context = CheckContext(config, _schema_store(config.kubernetes_version), inventory)

    def lint(self, source: Source, deadline: Deadline | None = None) -> FileReport:
        try:
            raw = source.read()
        except OSError as exc:
            report = FileReport(source.display)
            report.findings.append(self._file_finding(source.display, f"cannot read file: {exc.strerror or exc}", 1, 1))
            return report
        return self._lint_loaded(load_bytes(source.display, raw), deadline)

    def lint_documents(self, path: str, documents: list[LocatedDocument],
                       deadline: Deadline | None = None) -> FileReport:
        """Documents parsed already (an AdmissionReview's object): no YAML round trip, no comments."""
        return self._lint_loaded(LoadedFile(path, "", documents), deadline)

    def _lint_loaded(self, loaded: LoadedFile, deadline: Deadline | None) -> FileReport:
        report = FileReport(loaded.path)
        report.templated = loaded.templated
        findings: list[Finding] = []
        if YAML_INVALID in self.rules:
            findings.extend(self._file_finding(loaded.path, p.message, p.line, p.column, p.document or 0)
                            for p in loaded.problems)
        report.documents = len(loaded.documents)
        for document in loaded.documents:
            if not is_object(document.data):
                if document.data is not None:
                    report.not_objects += 1
                continue
            for obj in objects_in(document):
                report.objects += 1
                findings.extend(self._check_object(obj, deadline))
        report.findings, report.suppressed = self._suppress(loaded.path, loaded.text, findings)
        report.findings.sort(key=Finding.sort_key)
        return report

    def _file_finding(self, path: str, message: str, line: int, column: int, document: int = 0) -> Finding:
        return Finding(YAML_INVALID, self._severity(YAML_INVALID, None), message, path, line, column,
                       document=document)

    def _severity(self, rule_id: str, requested: Severity | None) -> Severity:
        configured = self.config.severity.get(rule_id)
        if configured is not None:
            return configured
        return requested or self.rules.get(rule_id, all_rules().get(rule_id)).severity

    def _check_object(self, obj: KubeObject, deadline: Deadline | None = None) -> list[Finding]:
        findings = []
        ignored = annotation_rules(obj.annotations())
        template_ignores = template_annotation_rules(obj.data)
        for rule_id, rule in self.rules.items():
            if rule.check is None:
                continue
            try:
                diagnostics = self._diagnostics(rule, obj, deadline)
            except DeadlineExceeded:
                raise
            except Exception as exc:  # a bug in one check must not hide the others' findings
                line, column = obj.locate(())
                findings.append(Finding(rule_id, Severity.INFO,
                                        f"internal error in gpulint's {rule_id} check ({type(exc).__name__}: {exc}); "
                                        "this object was not fully checked - please report it",
                                        obj.document.path, line, column, obj.ref, document=obj.document.index))
                continue
            for diagnostic in diagnostics:
                finding = self._finding(obj, diagnostic)
                scoped = [rules for prefix, rules in template_ignores if diagnostic.path[:len(prefix)] == prefix]
                if any(rule_id in rules or "all" in rules for rules in (ignored, *scoped)):
                    finding = _SUPPRESSED
                findings.append(finding)
        return findings

    def _diagnostics(self, rule: Rule, obj: KubeObject, deadline: Deadline | None) -> list[Diagnostic]:
        if deadline is None:
            return list(rule.check(obj, self.context))
        deadline.check()
        diagnostics = []
        for diagnostic in rule.check(obj, self.context):  # a check may yield very many: stop between them
            deadline.check()
            diagnostics.append(diagnostic)
        return diagnostics

    def _finding(self, obj: KubeObject, diagnostic: Diagnostic) -> Finding:
        if diagnostic.offset is not None:
            line, column = obj.locate_in_string(diagnostic.path, diagnostic.offset)
        else:
            line, column = obj.locate(diagnostic.path, diagnostic.on_key)
        fix = None
        if diagnostic.fix_path is not None:
            source = None if diagnostic.fix_source is None else (*obj.prefix, *diagnostic.fix_source)
            fix = Fix(obj.document.index, (*obj.prefix, *diagnostic.fix_path), diagnostic.fix_value,
                      diagnostic.fix_description, source)
        return Finding(diagnostic.rule, self._severity(diagnostic.rule, diagnostic.severity), diagnostic.message,
                       obj.document.path, line, column, obj.ref, fix, obj.document.index)

    def _suppress(self, path: str, text: str, findings: list[Finding]) -> tuple[list[Finding], int]:
        comments = FileSuppressions.scan(text)
        by_path = path_ignores(path, self.config.per_path_ignores, self.config.root)
        kept = [f for f in findings if f is not _SUPPRESSED and f.rule not in by_path and "all" not in by_path
                and not comments.suppresses(f)]
        return kept, len(findings) - len(kept)


# A placeholder for a finding suppressed by its object's annotation (counted, not reported).
_SUPPRESSED = Finding("", Severity.INFO, "", "", 0, 0, ObjectRef())


# The linter of a worker process, built once by the pool's initializer so the inventory
# (thousands of nodes) crosses the process boundary once per worker, not once per chunk.
_worker_linter: FileLinter | None = None


def _init_worker(config: Config, inventory: Inventory | None) -> None:
    global _worker_linter
    _worker_linter = FileLinter(config, inventory)


def _lint_chunk(sources: Sequence[Source]) -> list[FileReport]:
    assert _worker_linter is not None
    return [_worker_linter.lint(source) for source in sources]


def lint(sources: Iterable[Source], config: Config, jobs: int = 0, inventory: Inventory | None = None) -> Report:
    """Lint every source; ``jobs`` 0 means one worker per core when the input is large."""
    items = list(sources)
    workers = jobs or os.cpu_count() or 1
    if workers <= 1 or len(items) < PARALLEL_MIN_FILES:
        linter = FileLinter(config, inventory)
        return Report([linter.lint(source) for source in items])
    from concurrent.futures import ProcessPoolExecutor  # only large inputs pay for the pool

    chunk_count = workers * 4  # small chunks even out files of different sizes
    size = max(1, -(-len(items) // chunk_count))
    chunks = [items[start:start + size] for start in range(0, len(items), size)]
    with ProcessPoolExecutor(max_workers=min(workers, len(chunks)), initializer=_init_worker,
                             initargs=(config, inventory)) as pool:
        return Report([report for chunk in pool.map(_lint_chunk, chunks) for report in chunk])
