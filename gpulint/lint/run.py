"""A LintRun: one invocation of gpulint (or one admission review), from sources to a report.

sources -> parsed once -> linted set + cluster inventory -> resolver -> rules -> findings ->
suppressions -> Report. `check`, `--fix`, `explain`, `inventory`, pre-commit and the webhook all
build one; none of them reads a source twice, and none parses a file twice except a large `check`
(``streamed``), which trades a second parse for memory that does not grow with the repository:
each file is parsed for the objects other files read (only the documents that may hold one:
cross_file.CrossingText), its parse dropped, and parsed again to be checked (docs/performance.md).

Many files are checked by forked workers, which send their reports as they go; the run gives them on
in file order. Below KEPT_SOURCE_BYTES each worker parses its share once and sends the objects other
files may refer to; the run forwards them to the other workers, and each builds the linted set from
all of them and checks the files it already holds. Above it (a streamed run) a first set of workers
parses the shares for those objects, the run builds the linted set, its engines and the schemas once,
and forks a second set that inherits them and checks its shares one parse at a time.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NoReturn

from gpulint.kube import knative
from gpulint.kube.pools.kinds import CAPI_GROUP, CAPI_KINDS
from gpulint.lint.config import ClusterScope, Config
from gpulint.lint.engine import Deadline, Engine, Routes, enabled_rules, skipped_notes
from gpulint.lint.findings import FileReport, Report
from gpulint.lint.inputs.chart_entries import with_chart_entries
from gpulint.lint.inputs.linted_set import LintedObject, LintedSet, secret_outline
from gpulint.lint.inputs.loader import LoadedFile, LocatedDocument, collector_paused, load_bytes
from gpulint.lint.inputs.objects import KubeObject, ParsedFile, is_list, is_object, object_ref, parse_file
from gpulint.lint.inputs.run_setup import RunSetup
from gpulint.lint.inputs.setup_walk import mentions
from gpulint.lint.inputs.sources import Source
from gpulint.lint.inputs.terraform_clusters import (
    NO_ROOTS,
    ClusterRoots,
    with_cluster_files,
    with_fixtures,
    work_trees,
)
from gpulint.lint.output.suppress import ALL, path_ignores
from gpulint.lint.paths import path_matches
from gpulint.lint.registry import Rule, import_checks
from gpulint.lint.rule_spec import Need
from gpulint.lint.world.cross_file import CrossingText, crosses_files, kept_of_file
from gpulint.lint.world.inventory import ClusterInventory
from gpulint.lint.world.kinds import CLUSTER_KINDS, PER_CLUSTER_KINDS, Declared
from gpulint.lint.world.pod_outlines import names_pod_affinity, outlined
from gpulint.lint.world.rejections import API_REJECTED, inventory_reports
from gpulint.lint.world.resolver import Resolver
from gpulint.lint.world.shapes import PodShapes

PARALLEL_MIN_FILES = 48


def parse_source(source: Source, reduced: Callable[[str], str] | None = None) -> ParsedFile:
    """``reduced``: what of the text to parse (loader.load_bytes); not for a rendered source."""
    try:
        raw = source.read()
    except OSError as exc:
        return ParsedFile(LoadedFile(source.display, ""), [], read_error=exc.strerror or str(exc))
    kept = source.parsed.take(raw, source.display) if source.parsed is not None and reduced is None else None
    loaded = kept if kept is not None else load_bytes(source.display, raw, reduced=reduced, scripts=source.scripts)
    if source.rendered is not None:  # documents placed in the templates, bases and patches that made them
        return parse_file(source.rendered.loaded(loaded), complete_objects_only=source.values)
    if source.chart_entries:
        return with_chart_entries(ParsedFile(loaded, []))
    return with_chart_entries(parse_file(loaded, complete_objects_only=source.values))


def parse_all(sources: Sequence[Source]) -> list[ParsedFile]:
    """Every source parsed, then kept out of the cyclic collector's sight: parsed files live for the
    whole run (that is what parsing once means), and rescanning their nodes at every collection
    cost more than the parse itself. Nodes hold no cycles, so reference counting still frees them."""
    with collector_paused():
        parsed = [parse_source(source) for source in sources]
        gc.freeze()  # before the collector is back on: else its first pass scans every new node once
    return parsed


# Below this many bytes of sources, report() keeps every parse (one parse per file); above it, a streamed
# run parses each file twice and holds one at a time. Kept parses cost ~30 bytes of nodes a source byte, so
# this bounds them near 200 MiB; streaming costs a second parse (docs/performance.md: +35% CPU).
KEPT_SOURCE_BYTES = 6 * 1024 * 1024


def _source_bytes(sources: Sequence[Source]) -> int:
    return sum(len(source.content) for source in sources if source.content is not None)


def _parsed_alone(source: Source, reduced: Callable[[str], str] | None = None) -> ParsedFile:
    """One source parsed, to be dropped once used: made with the collector off and then frozen, as parse_all
    does (else the collector scans its nodes again and again while the file is checked: +60% of the run's
    CPU). Reference counting still frees them when the parse is dropped: nodes hold no cycles."""
    with collector_paused():
        parsed = parse_source(source, reduced)
        gc.freeze()
    return parsed


def shared_objects(parsed: ParsedFile, everything: bool, outline: bool = False) -> list[LintedObject]:
    """The objects of a file that the checks read in a split or streamed run (all of them: ``everything``);
    with ``outline``, the pod templates of the others as outlines (pod_outlines.outlined)."""
    objects = [linted_object(obj) for obj in parsed.objects]
    if everything:
        return objects
    kept = kept_of_file(objects, crosses_files)
    if not outline:
        return kept
    crossing = {id(obj) for obj in kept}
    carried = (outlined(obj) for obj in objects if id(obj) not in crossing)
    return kept + [obj for obj in carried if obj is not None]


# Strings up to this long are interned in the objects a streamed run keeps: a repository repeats its keys, labels
# and images, and each parse makes its own copies (a third less memory for those objects in bench.py's corpus).
_INTERNED_CHARS = 64


def _compact(obj: LintedObject) -> LintedObject:
    """``obj`` with its short strings interned: the objects other files read are kept to the end of the run."""
    return LintedObject(obj.ref, _interned(obj.data), obj.file, obj.render)


def _interned(value: Any) -> Any:
    """``value`` rebuilt with its short strings interned; the loader's own types (a string or mapping subclass
    that carries a tag or a position) are left as they are."""
    kind = type(value)
    if kind is str:
        return sys.intern(value) if len(value) <= _INTERNED_CHARS else value
    if kind is dict:
        return {_interned(key): _interned(item) for key, item in value.items()}
    if kind is list:
        return [_interned(item) for item in value]
    return value


def _streams(run: LintRun, sources: Sequence[Source]) -> bool:
    """Whether ``sources`` are checked one parse at a time (each file parsed twice, see _shared_streamed)."""
    return run.streamed and "files" not in run.__dict__ and _source_bytes(sources) > KEPT_SOURCE_BYTES


@dataclass
class _Streamed:
    """A streamed share's first pass: each file's shared objects, the parses kept for the second pass, and the
    (apiVersion, kind) of every object, whose schemas the checks will validate against."""

    shared: list[list[LintedObject]]
    kept: dict[int, ParsedFile]
    kinds: set[tuple[str, str]] = field(default_factory=set)

    def parsed(self, index: int, source: Source) -> ParsedFile:
        """File ``index``'s parse for its checks: the one kept, else parsed again (and dropped once checked)."""
        kept = self.kept.pop(index, None)
        return kept if kept is not None else _parsed_alone(source)


def _shared_streamed(sources: Sequence[Source], everything: bool, outline: bool = False) -> _Streamed:
    """Each file's shared objects (with ``outline``, and the outlines of the pod templates of the others), each
    file's parse dropped as soon as they are taken from it: the values of these objects are all that is kept of
    it until it is parsed again to be checked. Only the documents that may hold such objects are parsed
    (cross_file.CrossingText): the others' text is blanked, their kind read from it. A rendered chart's or
    overlay's parse is kept instead: placing its documents reads its templates, which are read once."""
    streamed = _Streamed([], {})
    for index, source in enumerate(sources):
        if source.rendered is not None or everything:
            parsed = _parsed_alone(source)
        else:
            parsed = _parsed_alone(source, CrossingText(streamed.kinds, pods=outline))
        streamed.shared.append([_compact(obj) for obj in shared_objects(parsed, everything, outline)])
        streamed.kinds.update(_kind_of(obj.data) for obj in parsed.objects)
        if source.rendered is not None:
            streamed.kept[index] = parsed
    return streamed


def _kind_of(data: dict[str, Any]) -> tuple[str, str]:
    api_version, kind = data.get("apiVersion"), data.get("kind")
    return (api_version, kind) if isinstance(api_version, str) and isinstance(kind, str) else ("", "")


def _warm_schemas(engines: Sequence[Engine], kinds: set[tuple[str, str]]) -> None:
    """The schema validators of ``kinds`` compiled now, before the checking workers fork: they share them
    instead of each compiling its own (v1 Pod's is ~12 MiB, mostly outside Python's heap)."""
    for engine in engines:
        for api_version, kind in sorted(kinds):
            if kind:
                engine.context.schemas.validator(api_version, kind)


def declared_of(config: Config) -> Declared:
    return Declared(config.complete, config.root)


def scope_index(path: str, scopes: Sequence[ClusterScope], root: str) -> int:
    """0: ``path`` is in no mapped cluster's paths; i: in the paths of ``scopes[i - 1]`` (the first that has it)."""
    for index, scope in enumerate(scopes, 1):
        if any(path_matches(path, glob, root) for glob in scope.paths):
            return index
    return 0


def run_scope(path: str, run: LintRun) -> int:
    """The engine of the file ``path``: 0, in no cluster; then the clusters of ``clusters:`` (the first that
    has it); then the folders whose own Terraform creates a cluster (the deepest that holds it)."""
    scopes = [scope for scope, _ in run.scoped]
    index = scope_index(path, scopes, run.config.root)
    if index or not run.cluster_roots.roots:
        return index
    root = run.cluster_roots.of(path)
    return len(scopes) + root if root else 0


def scoped_engines(run: LintRun, linted: LintedSet) -> list[Engine]:
    """The engines of a run: one for the files in no mapped cluster (against the run's inventory), then one
    per cluster of ``clusters:`` (against its own), then one per folder whose Terraform creates a cluster."""
    return [Engine(run.config, resolver, run.rules, run.routes) for resolver in scoped_resolvers(run, linted)]


def scoped_resolvers(run: LintRun, linted: LintedSet) -> list[Resolver]:
    """The resolvers of scoped_engines. Each sees the linted objects of its cluster's files and of the files in
    no cluster: a NodePool, queue or quota of clusters/dev is not clusters/prod's."""
    declared = declared_of(run.config)
    roots = run.cluster_roots.roots
    if not run.scoped and not roots:
        return [
            Resolver(
                linted,
                run.cluster,
                run.config.gates,
                declared,
                setup=run.setup,
                indexed=bool(run.context),
                shapes=run.shapes,
            )
        ]
    # a mapped cluster without an inventory of its own: the run's, if any, and what its files describe
    inventories = [run.cluster, *(run.cluster if inventory is None else inventory for _, inventory in run.scoped)]
    # a folder whose Terraform creates a cluster: the run's inventory, if any, and what its own files describe;
    # still an assumption (not mapped), and not every pool when the Terraform creates node groups too
    gaps = [""] * len(inventories) + [root.gap for root in roots]
    inventories += [run.cluster] * len(roots)
    where: dict[str, int] = {}
    for obj in itertools.chain(linted, linted.outlines):
        if obj.file not in where:
            where[obj.file] = run_scope(obj.file, run)
    # the test and example folders that describe a cluster: each is left out of every other scope, and said
    pooled = {where[obj.file] for obj in linted if (obj.ref.group, obj.ref.kind) in CLUSTER_KINDS}
    fixtures = {len(inventories) - len(roots) + i: r.where for i, r in enumerate(roots) if r.fixture}
    # a shared file may be deployed by any cluster root: what the roots hold by name (a KServe or Knative ConfigMap,
    # a Secret) is read for it too, as before they split the run; a fixture's is not
    deployers = {len(inventories) - len(roots) + i for i, r in enumerate(roots) if not r.fixture}
    resolvers = []
    for index, inventory in enumerate(inventories):
        seen = (
            obj
            for obj in itertools.chain(linted, linted.outlines)
            if _sees(index, where[obj.file], obj)
            or (index == 0 and where[obj.file] in deployers and (obj.ref.group, obj.ref.kind) in _HELD_BY_NAME)
        )
        kept = LintedSet(seen, linted.complete, pods_whole=linted.pods_whole)
        mapped = 0 < index <= len(run.scoped)
        resolvers.append(
            Resolver(
                kept,
                inventory,
                run.config.gates,
                declared,
                mapped=mapped,
                setup=run.setup,
                pools_elsewhere=gaps[index],
                indexed=bool(run.context),
                pools_left_out=tuple(sorted(w for i, w in fixtures.items() if i != index and i in pooled)),
            )
        )
    return resolvers


# What a cluster holds by name for its pods, not what describes it (lint.world.kinds KindRow.per_cluster)
_HELD_BY_NAME = PER_CLUSTER_KINDS - CLUSTER_KINDS


def _sees(cluster: int, scope: int, obj: LintedObject) -> bool:
    """Whether cluster ``cluster``'s checks read ``obj`` (of a file in ``scope``): its own files' objects, and
    what files mapped to no cluster hold (a shared base), except what describes a cluster (node pools,
    quotas): a mapped cluster's is its inventory's and its own files'."""
    if scope == cluster:
        return True
    return scope == 0 and (cluster == 0 or (obj.ref.group, obj.ref.kind) not in CLUSTER_KINDS)


def linted_object(obj: KubeObject) -> LintedObject:
    if obj.ref.kind == "Secret" and not obj.ref.group:
        return LintedObject(obj.ref, secret_outline(obj.data), obj.document.path, obj.document.render)
    return LintedObject(obj.ref, obj.data, obj.document.path, obj.document.render)


@dataclass
class LintRun:
    config: Config
    sources: Sequence[Source] = ()
    cluster: ClusterInventory | None = None
    complete: bool = True  # False: one object seen alone (an admission review)
    rules: dict[str, Rule] = field(default_factory=dict)
    # Objects of files not linted that the linted ones may refer to (the repository index); and
    # whether the files are part of a larger set nobody indexed (then an absent object proves nothing).
    context: Sequence[LintedObject] = ()
    partial: bool = False
    routes: Routes | None = None  # the rules routed already (the webhook's, once per inventory); else per run
    # `clusters:` of the configuration, each with its inventory: the files in its paths are judged against it
    scoped: Sequence[tuple[ClusterScope, ClusterInventory | None]] = ()
    # report() may drop each file's parse once it is checked (`check` without --fix): the files are not
    # asked for afterwards, so a large input is checked in memory that does not grow with it
    streamed: bool = False
    # The files are some of a repository's, its other files read through the repository index for the objects
    # that cross files only, without the outlines of their pod templates: not every pod template of what is
    # applied (LintedSet.pods_whole).
    indexed: bool = False
    # the webhook snapshot's verdicts by pod shape (lint/world/shapes.py): None in a CLI run
    shapes: PodShapes | None = None

    def __post_init__(self) -> None:
        if self.routes is not None:
            self.rules = self.routes.rules
        if not self.rules:
            self.rules = enabled_rules(self.config)
        self.available: frozenset[Need] = frozenset()  # what the rules could be given (set by report())

    # ------------------------------------------------------------------ parsed once

    @cached_property
    def files(self) -> list[ParsedFile]:
        return parse_all(self.sources)

    @cached_property
    def linted(self) -> LintedSet:
        own = (linted_object(obj) for parsed in self.files for obj in parsed.objects)
        return LintedSet(own, self.references_complete, pods_whole=self.pods_whole, kept=self.context)

    @cached_property
    def setup(self) -> RunSetup:
        """The linted files' own repositories' setup files (lint/inputs/run_setup.py): each reader walked at most
        once per run, on its first read (forked workers inherit it: _read_setup_before_fork)."""
        return RunSetup(self.sources, self.config.exclude)

    @property
    def pods_whole(self) -> bool:
        """Whether the linted files are every file applied with them (LintedSet.pods_whole, when each is read whole)."""
        return not self.indexed and not self.partial

    @property
    def references_complete(self) -> bool:
        return self.complete and not self.partial

    @cached_property
    def engines(self) -> list[Engine]:
        """One engine per cluster: the files in no mapped cluster's paths first, then each of ``scoped``."""
        return scoped_engines(self, self.linted)

    @property
    def resolver(self) -> Resolver:
        """The resolver of the files in no mapped cluster's paths (of every file without ``clusters:``)."""
        return self.engine.context.resolver

    @property
    def engine(self) -> Engine:
        return self.engines[0]

    @cached_property
    def cluster_roots(self) -> ClusterRoots:
        """The folders whose own Terraform (or eksctl) creates a cluster, and the test and example folders: each is
        its own cluster's scope. Read only when the linted files (or the repository index's) describe a cluster's
        pools, queues or quotas, or hold what a pod reads from its cluster by name (ConfigMaps, Secrets)."""
        if not self.linted.has_any(PER_CLUSTER_KINDS):
            return NO_ROOTS
        files = (obj.file for obj in itertools.chain(self.linted, self.linted.outlines))
        trees = work_trees(self.sources)
        pooled = (obj.file for kind in CAPI_KINDS for obj in self.linted.of_kind(CAPI_GROUP, kind))
        return with_fixtures(with_cluster_files(self.setup.cluster_roots, pooled, trees), trees, files)

    def engine_for(self, path: str) -> Engine:
        return self.engines[run_scope(path, self)]

    def resolver_for(self, path: str) -> Resolver:
        return self.engine_for(path).context.resolver

    def objects(self) -> list[KubeObject]:
        return [obj for parsed in self.files for obj in parsed.objects]

    def relinted(self, changed: Sequence[Source]) -> LintRun:
        """The same run after a fix pass: ``changed`` (read again from disk after --fix rewrote them, or
        holding --diff's fixed bytes) replace the sources of their names and are parsed again, the others
        are reused as parsed."""
        fresh = {source.display: source for source in changed}
        sources = [fresh.get(source.display, source) for source in self.sources]
        run = LintRun(
            self.config,
            sources,
            self.cluster,
            self.complete,
            self.rules,
            self.context,
            self.partial,
            self.routes,
            self.scoped,
            indexed=self.indexed,
        )
        run.files = [parse_source(fresh[parsed.path]) if parsed.path in fresh else parsed for parsed in self.files]
        run.setup = self.setup  # fixes change manifests, never a setup script
        return run

    # ------------------------------------------------------------------ checked

    def report(self, jobs: int = 0, deadline: Deadline | None = None) -> Report:
        """Every file checked; ``jobs`` 0 means one worker per core when the input is large."""
        return Report(list(self.file_reports(jobs, deadline)))

    def file_reports(self, jobs: int = 0, deadline: Deadline | None = None) -> Iterator[FileReport]:
        """Every file's report, in file order, made as it is read: a streamed run holds the reports of the
        files not yet read only (forked workers send theirs in batches as they check), so that a report
        written as it comes (StreamedReport) never holds them all. ``available`` is set once it is read."""
        if len(self.sources) >= PARALLEL_MIN_FILES and deadline is None and "files" not in self.__dict__:
            workers = jobs or usable_cpus()
            if workers > 1 and _can_fork():
                return _parallel_reports(self, workers)
        if _streams(self, self.sources):
            return self._streamed_reports(deadline)
        self.available = frozenset().union(*(engine.available for engine in self.engines))
        return (
            self.engine_for(parsed.path).check_file(parsed, deadline, path_ignores_apply=self.complete)
            for parsed in self.files
        )

    def _streamed_reports(self, deadline: Deadline | None) -> Iterator[FileReport]:
        """Every file checked while at most one file's parse is held: each is parsed once for the objects
        other files read (cross_file.py), its parse dropped, then parsed again to be checked and dropped."""
        everything = _policies_read_objects(self.rules)
        outline = names_pod_affinity(self.sources)
        streamed = _shared_streamed(self.sources, everything, outline)
        own = (obj for objects in streamed.shared for obj in objects)
        whole = (everything or outline) and self.pods_whole
        self.linted = LintedSet(own, self.references_complete, pods_whole=whole, kept=self.context)
        self.available = frozenset().union(*(engine.available for engine in self.engines))
        for index, source in enumerate(self.sources):
            parsed = streamed.parsed(index, source)
            yield self.engine_for(source.display).check_file(parsed, deadline, path_ignores_apply=self.complete)

    def inventory_reports(self) -> list[FileReport]:
        """The inventory's objects the API server would refuse, as api-rejected warnings in the inventory files
        (lint/world/rejections.py); not part of report(): an admission review, and `explain`, judge only their objects."""
        if self.cluster is None or not self.complete or API_REJECTED not in self.rules:
            return []
        config = self.config

        def ignored(path: str) -> bool:
            ids = path_ignores(path, config.per_path_ignores, config.root)
            return API_REJECTED in ids or ALL in ids

        linted = {source.display for source in self.sources}
        return inventory_reports(self.cluster.rejections, linted, ignored)

    def notes(self) -> tuple[str, ...]:
        """The rules this run skipped and why (after report())."""
        return skipped_notes(self.rules, self.available)

    # ------------------------------------------------------------------ one object (the webhook)

    @classmethod
    def for_object(
        cls,
        config: Config,
        data: dict[str, Any],
        cluster: ClusterInventory | None,
        routes: Routes | None = None,
        shapes: PodShapes | None = None,
    ) -> LintRun:
        """An object already parsed (an AdmissionReview's): no source, no positions, no path; ``shapes``: its
        snapshot's verdicts by pod shape."""
        ref = object_ref(data)
        display = ref.display()
        document = UnlocatedDocument(display, 0, data, None)
        loaded = LoadedFile(display, "", [document])
        run = cls(config, (), cluster, complete=False, routes=routes, shapes=shapes)
        if is_object(data) and not is_list(data):  # what parse_file makes of it, its ref read once
            run.files = [ParsedFile(loaded, [KubeObject(data, document, (), ref)])]
        else:
            run.files = [parse_file(loaded)]
        return run


class UnlocatedDocument(LocatedDocument):
    """A document parsed from JSON without positions (an admission review: the API server shows
    messages, never lines), so locating anything is free."""

    def locate(self, path: Any, on_key: bool = False) -> tuple[int, int]:
        return 1, 1

    def locate_in_string(self, path: Any, offset: int) -> tuple[int, int]:
        return 1, 1


# --------------------------------------------------------------------------- forked workers


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask: a container's cpuset, taskset), not every
    CPU of the machine."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # macOS, Windows
        return os.cpu_count() or 1


def _can_fork() -> bool:
    import multiprocessing  # the workers' modules load only when there are workers

    return "fork" in multiprocessing.get_all_start_methods()


def _shares(sources: Sequence[Source], workers: int) -> list[list[int]]:
    """File indexes per worker: each file, in file order, to the worker with the fewest bytes so far. The
    workers then move through the files side by side, so the run, which gives the reports on in file order,
    holds few that came early (a worker that took the first half would send all of it while the run waits
    for the second's first file)."""
    shares: list[list[int]] = [[] for _ in range(workers)]
    loads = [0] * workers
    for index, source in enumerate(sources):
        least = loads.index(min(loads))
        shares[least].append(index)
        loads[least] += (len(source.content) if source.content is not None else 0) + 1
    return [share for share in shares if share]


def _send(conn: Any, value: Any) -> None:
    import pickle

    conn.send_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


# A worker's failure, sent as these bytes and its traceback: no pickle starts so (b"\x80"), and the run,
# which forwards the workers' objects without unpickling them, still sees it.
_FAILED = b"gpulint: a worker failed\n"


def _received_bytes(conn: Any) -> bytes:
    message: bytes = conn.recv_bytes()
    if message.startswith(_FAILED):
        raise RuntimeError(f"a worker failed:\n{message[len(_FAILED) :].decode()}")
    return message


def _receive(conn: Any) -> Any:
    """What arrives (the other workers' objects in a worker, a batch of reports in the run) holds no cycles:
    unpickled with the collector paused and then frozen, as parse_all does with parsed files (else the
    collector rescans it while it is built, 2.3 -> 0.8 s of the run's CPU for the reports of 50,000
    documents, when they all arrived at the end); reference counting frees the reports once written."""
    import pickle

    message = _received_bytes(conn)
    with collector_paused():
        value = pickle.loads(message)
        gc.freeze()
    return value


def _worker(run: LintRun, shares: list[list[int]], mine: int, everything: bool, outline: bool, conn: Any) -> NoReturn:
    """Phase 1: parse this worker's share, send the objects other files may refer to; phase 2: the other
    workers' objects arrive as they sent them (the run forwards them), the linted set is built from all,
    in file order, and the share is checked. Then the process ends at once, as the CLI does
    (cli.main.leave_now): Python's teardown would free the parsed files object by object first, and the
    run waits for that in join (0.6-0.65 s of a 50,000-document run's wall time)."""
    try:
        share = shares[mine]
        sources = [run.sources[index] for index in share]
        streams = _streams(run, sources)
        parsed: list[ParsedFile] = [] if streams else parse_all(sources)
        streamed = _shared_streamed(sources, everything, outline) if streams else None
        # each share carries the pod templates of what does not cross (outlines) when a pod may follow them (a
        # file names podAffinity)
        shared = streamed.shared if streamed is not None else [shared_objects(p, everything, outline) for p in parsed]
        _send(conn, shared)
        by_file = dict(zip(share, shared))
        for other in shares[:mine] + shares[mine + 1 :]:
            by_file.update(zip(other, _receive(conn)))
        own = (obj for index in sorted(by_file) for obj in by_file[index])
        whole = (everything or outline) and run.pods_whole
        linted = LintedSet(own, run.references_complete, pods_whole=whole, kept=run.context)
        engines = scoped_engines(run, linted)
        batch: list[FileReport] = []
        for p in parsed if streamed is None else itertools.starmap(streamed.parsed, enumerate(sources)):
            batch.append(engines[run_scope(p.path, run)].check_file(p, path_ignores_apply=run.complete))
            if len(batch) == REPORTS_A_MESSAGE:
                _send(conn, (batch, None))
                batch = []
        _send(conn, (batch, frozenset().union(*(engine.available for engine in engines))))
    except BaseException:
        _send_failure(conn)
    finally:
        conn.close()
        os._exit(0)  # what it had to say is sent: a failure too


@dataclass
class _Channel:
    """One forked worker: the files it holds, the parent's end of its pipe, its process."""

    share: list[int]
    conn: Any  # multiprocessing.connection.Connection
    process: Any  # multiprocessing.Process
    reports: deque[FileReport] = field(default_factory=deque)  # received, not yet given on
    available: frozenset[Need] | None = None  # sent after its last report

    def read(self) -> None:
        """The next message: a batch of reports, the last one with what the worker's rules could be given."""
        batch, available = self.receive()
        self.reports.extend(batch)
        if available is not None:
            self.available = available

    def send(self, message: bytes) -> None:
        try:
            self.conn.send_bytes(message)
        except OSError:
            raise self.ended() from None

    def receive(self) -> Any:
        try:
            return _receive(self.conn)
        except (EOFError, OSError):
            raise self.ended() from None

    def receive_bytes(self) -> bytes:
        try:
            return _received_bytes(self.conn)
        except (EOFError, OSError):
            raise self.ended() from None

    def ended(self) -> RuntimeError:
        """A worker gone without a word (killed: the out-of-memory killer, a signal)."""
        self.process.join(timeout=1)
        code = self.process.exitcode
        how = "still running" if code is None else f"exit code {code}" if code >= 0 else _signal_name(-code)
        return RuntimeError(f"a worker process ended without answering ({how}); --jobs 1 checks in one process")


def _signal_name(number: int) -> str:
    import signal

    try:
        return f"killed by {signal.Signals(number).name}"
    except ValueError:
        return f"killed by signal {number}"


# A worker sends its reports this many files at a time: the run then holds, of the reports not yet given on,
# what one worker checked ahead of the other (the files are dealt out in file order, see _shares).
REPORTS_A_MESSAGE = 16


def _parallel_reports(run: LintRun, workers: int) -> Iterator[FileReport]:
    """The files' reports in file order, as the workers send them (run.available set at the end). An input
    that streams (over KEPT_SOURCE_BYTES) has its linted set built once, by the run, before the checking
    workers are forked (_shared_first); a smaller one is parsed once, by workers that keep their parses."""
    import_checks(run.rules)  # imported once here, not once in every worker
    if _streams(run, run.sources):
        return _shared_first(run, workers)
    return _exchanged(run, workers)


def _read_setup_before_fork(run: LintRun, resolvers: Sequence[Resolver]) -> None:
    """The setup files walked now, before the checking workers fork, by each reader a check may ask (a resolver
    lacks config-features; a GPU pod's cluster is not known to be GKE): they inherit one walk instead of each
    walking its own."""
    if not all(resolver.knative_flags_known for resolver in resolvers):
        _ = run.setup.knative_flags
    said = run.config.gke_autopilot is not None  # the configuration's word: the clusters are never read
    if not said and run.setup.may_walk_clusters() and not all(resolver.gke_known for resolver in resolvers):
        _ = run.setup.clusters  # autopilot-rejected reads it on a GPU pod of a cluster not known to be GKE


def _config_features_of(run: LintRun) -> LintedSet:
    """The objects of the sources that may hold Knative's config-features (and the repository index's): what a
    resolver reads of the linted files to decide the flags, before the workers have parsed the files."""
    named = [source for source in run.sources if mentions(source, (knative.CONFIG_NAME.encode(),))]
    own = (linted_object(obj) for source in named for obj in _parsed_alone(source).objects)
    return LintedSet(own, run.references_complete, pods_whole=False, kept=run.context)


def _fork(target: Any, args: tuple[Any, ...], share: list[int]) -> _Channel:
    """A worker forked to run ``target(*args, its end of the pipe)``: the cluster inventory, the sources and,
    once built, the linted set are inherited, not pickled."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe()
    process = context.Process(target=target, args=(*args, child), daemon=True)
    process.start()
    child.close()
    return _Channel(share, parent, process)


def _exchanged(run: LintRun, workers: int) -> Iterator[FileReport]:
    """Each worker parses its share once and keeps it, sends the objects other files read, builds the linted
    set from every worker's (the run forwards them as sent) and checks its share."""
    everything = _policies_read_objects(run.rules)
    channels: list[_Channel] = []
    answered = False
    try:
        # the workers build the linted set: the run reads only what decides the flags
        if run.setup.may_walk_knative() or run.setup.may_walk_clusters():
            _read_setup_before_fork(run, scoped_resolvers(run, _config_features_of(run)))
        shares = _shares(run.sources, workers)
        outline = names_pod_affinity(run.sources)
        for mine, share in enumerate(shares):
            channels.append(_fork(_worker, (run, shares, mine, everything, outline), share))
        # Each worker's objects to every other worker, as sent: all are read before any is sent on, so
        # no worker still sending can be blocked by one the run writes to.
        objects = [channel.receive_bytes() for channel in channels]
        for channel in channels:
            for other, message in zip(channels, objects):
                if other is not channel:
                    channel.send(message)
        del objects
        yield from _in_file_order(run, channels)
        answered = True
    finally:
        _reap(channels, answered)


def _shared_first(run: LintRun, workers: int) -> Iterator[FileReport]:
    """A streamed input in two sets of workers: the first parses its shares for the objects other files read
    and sends them; the run builds the linted set and its engines from them, once, freezes them out of the
    collector's sight and forks the second set, which inherits them (pages shared until written) and checks
    its shares one parse at a time. Before, every worker built its own copy of the linted set: --jobs 2 held
    three of them. A rendered source is parsed by the run itself and its parse kept for its checks (placing
    its documents reads its templates, which are read once)."""
    everything = _policies_read_objects(run.rules)
    outline = names_pod_affinity(run.sources)
    shares = _shares(run.sources, workers)
    channels: list[_Channel] = []
    answered = False
    try:
        renders = [source for source in run.sources if source.rendered is not None]
        rendered = _shared_streamed(renders, everything, outline)
        indexes = [index for index, source in enumerate(run.sources) if source.rendered is not None]
        kept = {indexes[index]: parsed for index, parsed in rendered.kept.items()}
        for share in shares:
            channels.append(_fork(_sharing_worker, (run, share, everything, outline), share))
        kinds = rendered.kinds
        by_file: dict[int, list[LintedObject]] = {}
        for channel in channels:
            objects, seen = channel.receive()
            by_file.update(zip(channel.share, objects))
            kinds |= seen
        by_file.update(zip(indexes, rendered.shared))  # the run's own: a worker sends none for a rendered file
        _reap(channels, answered=True)
        channels = []
        own = (obj for index in sorted(by_file) for obj in by_file[index])
        whole = (everything or outline) and run.pods_whole
        run.linted = LintedSet(own, run.references_complete, pods_whole=whole, kept=run.context)
        del by_file
        run.available = frozenset().union(*(engine.available for engine in run.engines))
        _warm_schemas(run.engines, kinds)
        _read_setup_before_fork(run, [engine.context.resolver for engine in run.engines])
        gc.freeze()  # the linted set, engines and schemas out of the collector's sight: no worker's collection writes them
        for share in shares:
            channels.append(_fork(_checking_worker, (run, share, _Streamed([], kept)), share))
        kept.clear()  # the workers hold what they inherited; the run drops its own reference
        yield from _in_file_order(run, channels)
        answered = True
    finally:
        _reap(channels, answered)


def _sharing_worker(run: LintRun, share: list[int], everything: bool, outline: bool, conn: Any) -> NoReturn:
    """The first set of _shared_first: each non-rendered file of ``share`` parsed, its shared objects (and pod
    outlines) taken and its parse dropped; the objects sent, a list per file (a rendered file's are the run's:
    empty here)."""
    try:
        plain = [index for index in share if run.sources[index].rendered is None]
        streamed = _shared_streamed([run.sources[index] for index in plain], everything, outline)
        by_file = dict(zip(plain, streamed.shared))
        _send(conn, ([by_file.get(index, []) for index in share], streamed.kinds))
    except BaseException:
        _send_failure(conn)
    finally:
        conn.close()
        os._exit(0)


def _checking_worker(run: LintRun, share: list[int], streamed: _Streamed, conn: Any) -> NoReturn:
    """The second set of _shared_first: ``share`` checked against the run's engines, one parse at a time,
    the reports sent REPORTS_A_MESSAGE files at a time."""
    try:
        batch: list[FileReport] = []
        for index in share:
            source = run.sources[index]
            parsed = streamed.parsed(index, source)
            batch.append(run.engine_for(source.display).check_file(parsed, path_ignores_apply=run.complete))
            del parsed
            if len(batch) == REPORTS_A_MESSAGE:
                _send(conn, (batch, None))
                batch = []
        _send(conn, (batch, run.available))
    except BaseException:
        _send_failure(conn)
    finally:
        conn.close()
        os._exit(0)


def _send_failure(conn: Any) -> None:
    import traceback

    with contextlib.suppress(OSError):  # the run is gone
        conn.send_bytes(_FAILED + traceback.format_exc().encode())


def _in_file_order(run: LintRun, channels: list[_Channel]) -> Iterator[FileReport]:
    """The workers' reports given on in file order; what every worker has sent meanwhile is read, so that none
    waits on the run. run.available is set once all have answered."""
    owner = {index: channel for channel in channels for index in channel.share}
    for index in range(len(run.sources)):
        channel = owner[index]
        while not channel.reports:
            if channel.available is not None:
                raise RuntimeError(f"a worker sent fewer reports than the {len(channel.share)} files it checked")
            _read_ready([c for c in channels if c.available is None], channel)
        yield channel.reports.popleft()
    for channel in channels:
        while channel.available is None:
            channel.read()
    run.available = channels[0].available or frozenset()  # every worker has the same linted set and cluster


def _read_ready(channels: list[_Channel], needed: _Channel) -> None:
    """A message from each channel that has one waiting, and from ``needed`` whether or not it has."""
    from multiprocessing.connection import wait

    ready = set(map(id, wait([channel.conn for channel in channels], timeout=0)))
    for channel in channels:
        if id(channel.conn) in ready or channel is needed:
            channel.read()


def _reap(channels: list[_Channel], answered: bool) -> None:
    """No worker outlives the run, nor stays a zombie: once all have answered they are exiting and are
    waited for; after a failure the others are killed, not waited for."""
    for channel in channels:
        channel.conn.close()
    for channel in channels:
        if answered:
            channel.process.join(timeout=5)
        if channel.process.is_alive():
            channel.process.kill()
        channel.process.join()


def _policies_read_objects(rules: dict[str, Rule]) -> bool:
    return any(rule.reads_objects for rule in rules.values())
