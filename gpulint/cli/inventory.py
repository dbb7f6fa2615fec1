"""`gpulint inventory`: what the cluster offers, and what is wrong with the inventory itself."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from gpulint.cli.pool_summary import PoolRow, pool_rows, pools_json, render_pools
from gpulint.kube.fields import mapping, sequence
from gpulint.kube.gpu_sharing import GpuBreakdown, breakdown
from gpulint.kube.quantity import format_amount
from gpulint.kube.resources import is_extended
from gpulint.lint.config import Config
from gpulint.lint.findings import FileReport
from gpulint.lint.inputs.loader import MAX_FILE_BYTES
from gpulint.lint.inputs.objects import is_list, is_object, list_is_malformed
from gpulint.lint.inputs.sources import Source
from gpulint.lint.schema import SchemaStore
from gpulint.lint.verdicts.queues import admission_check_problems
from gpulint.lint.world.inventory import ClusterInventory, slices_by_node
from gpulint.lint.world.rejections import Rejection
from gpulint.lint.world.resolver import Resolver

# The rules `gpulint inventory` runs on its own files (the inventory's findings)
OWN_RULES = ("stale-gpu-label", "schema-invalid")
ZONE_LABEL = "topology.kubernetes.io/zone"
RACK_LABELS = (
    "topology.kubernetes.io/rack",
    "cloud.google.com/gce-topology-subblock",
    "topology.k8s.aws/network-node-layer-3",
    "network.topology.nvidia.com/leaf",
)
MODEL_LABELS = ("nvidia.com/gpu.product", "amd.com/gpu.product-name")


@dataclass
class ResourceTotals:
    capacity: Fraction = Fraction(0)
    allocatable: Fraction = Fraction(0)
    free: Fraction = Fraction(0)


@dataclass
class InventorySummary:
    nodes: int
    by_model: Counter[str] = field(default_factory=Counter)
    by_zone: Counter[str] = field(default_factory=Counter)
    by_rack: Counter[str] = field(default_factory=Counter)
    resources: dict[str, ResourceTotals] = field(default_factory=dict)
    devices_by_driver: Counter[str] = field(default_factory=Counter)
    devices_by_class: Counter[str] = field(default_factory=Counter)
    device_classes: dict[str, str] = field(default_factory=dict)  # class -> extended resource name or ""
    running_pods: int = 0
    queues: list[QueueQuota] = field(default_factory=list)  # Kueue: per ClusterQueue, flavor and resource
    queue_checks: list[QueueChecks] = field(default_factory=list)  # Kueue: the AdmissionChecks of each ClusterQueue
    pools: list[PoolRow] = field(default_factory=list)  # the node pools: the nodes that can exist
    nvidia: GpuBreakdown = field(default_factory=GpuBreakdown)  # what nvidia.com/* units are: GPUs, replicas, slices
    rejected: list[Rejection] = field(default_factory=list)  # the inventory's objects the API server would refuse

    def as_json(self) -> dict[str, Any]:
        def number(value: Fraction) -> int | float:
            return value.numerator if value.denominator == 1 else float(value)

        return {
            "nodes": self.nodes,
            "byModel": dict(self.by_model),
            "byZone": dict(self.by_zone),
            "byRack": dict(self.by_rack),
            "resources": {
                name: {"capacity": number(t.capacity), "allocatable": number(t.allocatable), "free": number(t.free)}
                for name, t in sorted(self.resources.items())
            },
            "draDevicesByDriver": dict(self.devices_by_driver),
            "draDevicesByClass": dict(self.devices_by_class),
            "deviceClasses": {
                name: {"extendedResourceName": ext or None} for name, ext in sorted(self.device_classes.items())
            },
            "runningPods": self.running_pods,
            "clusterQueues": _queues_json(self.queues, self.queue_checks, number),
            "nodePools": pools_json(self.pools),
            "nvidiaGpus": self.nvidia.as_json(),
            "resourceSliceProblems": capped([r.summary_line() for r in self.rejected if r.ref.kind == "ResourceSlice"]),
            "rejectedObjects": [
                {
                    "path": r.file,
                    "line": r.line,
                    "column": r.column,
                    "object": r.ref.as_json(),
                    "field": r.error.field,
                    "message": r.error.message(),
                }
                for r in self.rejected
            ],
        }


_ARRAY = re.compile(rb"[ \t\r\n]*\[")


@dataclass
class QuietFiles:
    """The inventory files linting would find nothing in, told from the data the loader reads (``inspect``), so
    that `gpulint inventory` does not parse them again with positions (a 5,000-node file: seconds and a GiB).

    A file is quiet when each of its documents is a v1 Node, or a List of them, that the schema of the target
    version takes whole, and stale-gpu-label has nothing to say of any of its Nodes: then OWN_RULES find nothing
    in it. Anything else (another kind, a JSON array, a node of a name seen twice, schema locations configured)
    is linted as before. The summary reads no linted Node (only the inventory's), so it stays the same; the
    skipped file's report keeps its counts of documents and objects."""

    config: Config
    store: SchemaStore | None = None
    loud: set[str] = field(default_factory=set)
    documents: Counter[str] = field(default_factory=Counter)
    objects: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        if not self.config.schema_locations:  # a location may hold its own Node schema: then lint every file
            self.store = SchemaStore(self.config.kubernetes_version)

    def inspect(self, file: str, what: str, data: Any) -> None:
        if file in self.loud:
            return
        if what == "document":
            self.documents[file] += 1
            if not (isinstance(data, dict) and is_object(data) and (not is_list(data) or not list_is_malformed(data))):
                self.loud.add(file)
            elif is_list(data) and not all(_is_node(item) for item in data.get("items") or ()):
                self.loud.add(file)
            return
        if what == "object":
            self.objects[file] += 1
        if self.store is None or not _is_node(data) or self.store.validate(data):
            self.loud.add(file)

    def to_lint(self, sources: Sequence[Source], inventory: ClusterInventory) -> tuple[list[Source], list[FileReport]]:
        """The sources to lint, and the reports of the quiet ones, in the order of ``sources``."""
        if self.store is None or len(inventory.nodes) != len(inventory.node_objects):  # a name twice: lint all
            return list(sources), []
        slices = slices_by_node(inventory.slices)
        from gpulint.lint.checks.stale_gpu_label import node_staleness

        gpu_resources = self.config.gpu_resources
        stale = {
            located.file
            for name, located in inventory.node_objects.items()
            if node_staleness(located.data, slices.get(name, []), gpu_resources)
        }
        linted, quiet = [], []
        for source in sources:
            raw = source.read()
            if source.display in self.loud or source.display in stale or source.display not in self.documents:
                linted.append(source)
            elif _ARRAY.match(raw):  # a bare JSON array: one document, not an object, to the manifest reader
                linted.append(source)
            elif len(raw) > MAX_FILE_BYTES:  # past what a linted file may be: not read (the counts say so)
                quiet.append(FileReport(source.display))
            else:
                documents, objects = self.documents[source.display], self.objects[source.display]
                quiet.append(FileReport(source.display, documents=documents, objects=objects))
        return linted, quiet


def _is_node(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") == "Node" and data.get("apiVersion") == "v1"


@dataclass(frozen=True)
class QueueQuota:
    queue: str
    cohort: str
    flavor: str
    resource: str
    nominal: Fraction
    maximum: Fraction  # with what the cohort can lend (Kueue's PotentialAvailable)
    used: Fraction | None  # status.flavorsReservation; None when the inventory has no status


@dataclass(frozen=True)
class CheckState:
    name: str
    controller: str  # "" when the AdmissionCheck is not found
    state: str  # "Active", "not Active", "status unknown" (no Active condition, as a manifest) or "missing"


@dataclass(frozen=True)
class QueueChecks:
    queue: str
    cohort: str
    checks: tuple[CheckState, ...]
    inactive: tuple[str, ...]  # why Kueue marks the ClusterQueue inactive for its checks (check's own words)


def _queues_json(rows: list[QueueQuota], checks: list[QueueChecks], number: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for row in rows:
        queue = out.setdefault(row.queue, {"cohort": row.cohort or None, "flavors": {}})
        queue["flavors"].setdefault(row.flavor, {})[row.resource] = {
            "nominalQuota": number(row.nominal),
            "maximum": number(row.maximum),
            "used": None if row.used is None else number(row.used),
        }
    for entry in checks:
        queue = out.setdefault(entry.queue, {"cohort": entry.cohort or None, "flavors": {}})
        queue["admissionChecks"] = {
            check.name: {"controllerName": check.controller or None, "state": check.state} for check in entry.checks
        }
        queue["inactiveReasons"] = list(entry.inactive)
    return out


def queue_checks(inventory: Resolver) -> list[QueueChecks]:
    """Per ClusterQueue that names AdmissionChecks, each check's state, and the problems that make Kueue mark the
    queue inactive (the verdicts `check` reports as queue-reference-invalid)."""
    known = inventory.kueue.admission_checks
    out = []
    for name, queue in sorted(inventory.kueue.cluster_queues.items()):
        if not queue.admission_checks:
            continue
        states = []
        for check_name in queue.admission_checks:
            found = known.get(check_name)
            if found is None:
                states.append(CheckState(check_name, "", "missing"))
            else:
                state = {True: "Active", False: "not Active", None: "status unknown"}[found.active]
                states.append(CheckState(check_name, found.controller, state))
        problems = admission_check_problems(queue, (), inventory)
        out.append(
            QueueChecks(name, queue.cohort, tuple(states), tuple("; ".join(problem.lines) for problem in problems))
        )
    return out


def queue_quotas(inventory: Resolver) -> list[QueueQuota]:
    setup = inventory.kueue
    rows = []
    for name, queue in sorted(setup.cluster_queues.items()):
        usage = dict(queue.usage)
        for group in queue.groups:
            for flavor in group.flavors:
                for resource, quota in flavor.resources:
                    fr = (flavor.name, resource)
                    rows.append(
                        QueueQuota(
                            name,
                            queue.cohort,
                            flavor.name,
                            resource,
                            quota.nominal,
                            setup.potential_available(queue, fr),
                            usage.get(fr, Fraction(0)) if queue.usage_known else None,
                        )
                    )
    return rows


def _first_label(labels: dict[str, str], keys: tuple[str, ...], default: str) -> str:
    for key in keys:
        if key in labels:
            return labels[key]
    return default


def summarize(inventory: Resolver) -> InventorySummary:
    summary = InventorySummary(len(inventory.nodes))
    totals: dict[str, ResourceTotals] = defaultdict(ResourceTotals)
    for node in inventory.nodes:
        summary.by_model[_first_label(node.labels, MODEL_LABELS, "(no GPU model label)")] += 1
        summary.by_zone[node.labels.get(ZONE_LABEL, "(no zone label)")] += 1
        summary.by_rack[_first_label(node.labels, RACK_LABELS, "(no rack label)")] += 1
        for name in set(node.capacity) | set(node.allocatable):
            if not is_extended(name):
                continue
            totals[name].capacity += node.capacity.get(name, Fraction(0))
            totals[name].allocatable += node.allocatable.get(name, Fraction(0))
            totals[name].free += max(node.free(name), Fraction(0))
    summary.resources = dict(totals)
    for located in inventory.slices:
        spec = mapping(located.data.get("spec"))
        devices = sequence(spec.get("devices"))
        summary.devices_by_driver[str(spec.get("driver") or "(no driver)")] += len(devices)
    extended = {
        cls: name
        for name, cls in inventory.dra_extended_resources().items()
        if not name.startswith("deviceclass.resource.kubernetes.io/")
    }
    summary.device_classes = {name: extended.get(name, "") for name in inventory.device_classes}
    summary.devices_by_class = _devices_by_class(inventory)
    summary.running_pods = sum(node.pod_count for node in inventory.nodes)
    summary.queues = queue_quotas(inventory)
    summary.queue_checks = queue_checks(inventory)
    summary.pools = pool_rows(inventory)
    summary.nvidia = breakdown(inventory.nodes)
    summary.rejected = list(inventory.inventory_rejections)
    return summary


MAX_SLICE_PROBLEMS = 20


def capped(lines: list[str]) -> list[str]:
    if len(lines) > MAX_SLICE_PROBLEMS:
        return [*lines[:MAX_SLICE_PROBLEMS], f"... and {len(lines) - MAX_SLICE_PROBLEMS} more"]
    return lines


def _devices_by_class(inventory: Resolver) -> Counter[str]:
    """Devices each DeviceClass selects (its CEL selectors evaluated on every published device)."""
    counts: Counter[str] = Counter()
    if not inventory.slices or not inventory.device_classes:
        return counts
    from gpulint.kube.dra.allocation import class_selectors

    dra = inventory.dra
    devices = dra.all_devices()
    for name, located in sorted(inventory.device_classes.items()):
        selectors = class_selectors(located.data)
        counts[name] = sum(
            1 for device in devices if all(dra.selectors.outcome(selector, device).matches for selector in selectors)
        )
    return counts


def _table(title: str, counts: Counter[str]) -> list[str]:
    if not counts:
        return []
    width = max(len(key) for key in counts)
    return [title] + [
        f"  {key:<{width}}  {count}" for key, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def render_text(summary: InventorySummary) -> str:
    lines = [
        f"Nodes: {summary.nodes}"
        + (f" ({summary.running_pods} running pods accounted)" if summary.running_pods else "")
    ]
    lines += _table("By GPU model:", summary.by_model)
    lines += _table("By zone:", summary.by_zone)
    lines += _table("By rack:", summary.by_rack)
    if summary.resources:
        width = max(len(name) for name in summary.resources)
        lines.append("Extended resources:")
        lines.append(f"  {'resource':<{width}}  {'capacity':>8}  {'allocatable':>11}  {'free now':>8}")
        for name, totals in sorted(summary.resources.items()):
            lines.append(
                f"  {name:<{width}}  {format_amount(totals.capacity):>8}  {format_amount(totals.allocatable):>11}  "
                f"{format_amount(totals.free):>8}"
            )
    lines += render_gpu_breakdown(summary.nvidia)
    if summary.devices_by_driver:
        lines += _table("DRA devices by driver (ResourceSlices):", summary.devices_by_driver)
    if summary.device_classes:
        lines.append("DeviceClasses:")
        width = max(len(name) for name in summary.device_classes)
        for name, extended in sorted(summary.device_classes.items()):
            devices = f"  {summary.devices_by_class.get(name, 0):>4} devices" if summary.devices_by_driver else ""
            lines.append(f"  {name:<{width}}{devices}" + (f"  (extendedResourceName {extended})" if extended else ""))
    if summary.queues:
        lines.append("Kueue ClusterQueues (quota per flavor; maximum = nominal + what the cohort can lend):")
        for row in summary.queues:
            cohort = f" (cohort {row.cohort})" if row.cohort else ""
            used = "" if row.used is None else f"  used {format_amount(row.used)}"
            lines.append(
                f"  {row.queue}{cohort}  {row.flavor}  {row.resource}: nominal {format_amount(row.nominal)}, "
                f"maximum {format_amount(row.maximum)}{used}"
            )
    if summary.queue_checks:
        lines.append("Kueue AdmissionChecks per ClusterQueue (Kueue admits nothing from a queue they make inactive):")
        for entry in summary.queue_checks:
            shown = ", ".join(
                f"{check.name} ({check.controller + ', ' if check.controller else ''}{check.state})"
                for check in entry.checks
            )
            lines.append(f"  {entry.queue}: {shown}")
            lines += [f"    {reason}" for reason in entry.inactive]
    lines += render_pools(summary.pools)
    if summary.rejected:
        lines.append(
            "Warning: inventory objects the API server would refuse (written by hand, or for another Kubernetes "
            "version?); the allocator model reads them as they are:"
        )
        # the objects as `check` reports them (api-rejected warnings in the inventory files): lint/world/rejections.py
        lines += [f"  {problem}" for problem in capped([r.summary_line() for r in summary.rejected])]
    return "\n".join(lines) + "\n"


def render_gpu_breakdown(nvidia: GpuBreakdown) -> list[str]:
    """nvidia.com/gpu counts replicas and MIG slices as GPUs: the units told apart, from GFD's labels."""
    if not nvidia.nodes or not (nvidia.replicas or nvidia.mig):
        return []  # every unit is a whole GPU: the resource table already says it
    unknown = (
        f" (+ {nvidia.physical_unknown_nodes} shared without a replicas label)" if nvidia.physical_unknown_nodes else ""
    )
    unknown += " (+ the GPUs split into the MIG slices below)" if nvidia.mig else ""
    lines = [
        "NVIDIA GPUs by what a unit is (GPU feature discovery labels):",
        f"  physical GPUs      {nvidia.physical}{unknown}",
    ]
    lines.append(f"  whole GPUs         {nvidia.whole}")
    for strategy, units in sorted(nvidia.replicas.items()):
        behind = nvidia.replicated_gpus.get(strategy)
        over = f" over {behind} devices" if behind else ""
        lines.append(f"  {strategy + ' units':<18} {units}{over}")
    for name, slices in sorted(nvidia.mig.items()):
        lines.append(f"  MIG slices         {slices}  {name}")
    return lines
