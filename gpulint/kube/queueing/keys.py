"""Labels and annotations the queueing and gang systems read, and which of the two each one is.

A key written in the other map is silently ignored: the workload is not queued, not grouped, not
placed in one domain. Sources: Kueue site/content/en/docs/reference/labels-and-annotations.md;
Volcano (pods: annotations scheduling.k8s.io/group-name and scheduling.volcano.sh/queue-name);
scheduler-plugins coscheduling (label scheduling.x-k8s.io/pod-group); KAI Scheduler (label
kai.scheduler/queue).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping
from gpulint.kube.refs import Path
from gpulint.kube.workloads import ObjectFacts, template_metadata

LABEL, ANNOTATION = "labels", "annotations"
# key -> (the map it is read from, who reads it). kueue.x-k8s.io/queue-name is judged with the queue route.
KEYS: dict[str, tuple[str, str]] = {
    "kueue.x-k8s.io/pod-group-name": (LABEL, "Kueue"),
    "kueue.x-k8s.io/pod-group-total-count": (ANNOTATION, "Kueue"),
    "kueue.x-k8s.io/podset-required-topology": (ANNOTATION, "Kueue"),
    "kueue.x-k8s.io/podset-preferred-topology": (ANNOTATION, "Kueue"),
    "kueue.x-k8s.io/podset-slice-required-topology": (ANNOTATION, "Kueue"),
    "kueue.x-k8s.io/podset-slice-size": (ANNOTATION, "Kueue"),
    "scheduling.volcano.sh/queue-name": (ANNOTATION, "Volcano"),
    "scheduling.k8s.io/group-name": (ANNOTATION, "Volcano"),
    "scheduling.x-k8s.io/pod-group": (LABEL, "scheduler-plugins coscheduling"),
    "kai.scheduler/queue": (LABEL, "KAI Scheduler"),
}

_READ = frozenset(KEYS)  # a key that is not a string (YAML `1:`) is never one of them: str(1) is "1"


@dataclass(frozen=True)
class Misplaced:
    path: Path  # to the key, in the map it was written in
    key: str
    expected: str  # "labels" or "annotations"
    reader: str


def metadata_places(facts: ObjectFacts) -> tuple[tuple[Path, dict[str, Any]], ...]:
    """(path, metadata) of the object and of each of its pod templates, each path once (a Pod's template
    metadata is its own metadata); found once while the object is checked (the queue rules ask)."""
    return facts.fact("metadata places", None, _metadata_places, facts)


def _metadata_places(facts: ObjectFacts) -> tuple[tuple[Path, dict[str, Any]], ...]:
    data = facts.data
    places: dict[Path, dict[str, Any]] = {("metadata",): mapping(data.get("metadata"))}
    for site in facts.sites():
        places.setdefault((*site.template_path, "metadata"), template_metadata(data, site))
    return tuple(places.items())


def misplaced_keys(facts: ObjectFacts) -> Iterator[Misplaced]:
    for path, meta in metadata_places(facts):
        for given in (LABEL, ANNOTATION):
            written = mapping(meta.get(given))
            if written.keys().isdisjoint(_READ):
                continue  # none of the keys the systems read (most maps): nothing is misplaced
            for key in written:
                expected, reader = KEYS.get(str(key), (given, ""))
                if expected != given:
                    yield Misplaced((*path, given, key), str(key), expected, reader)
