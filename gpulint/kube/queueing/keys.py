"""Labels and annotations the queueing and gang systems read, and which of the two each one is.

A key written in the other map is silently ignored: the workload is not queued, not grouped, not
placed in one domain. So is a Kueue topology annotation written on a workload's own metadata: Kueue
builds each PodSet's topology request from its pod template's annotations only
(kubernetes-sigs/kueue pkg/controller/jobframework/tas.go NewPodSetTopologyRequest, called with the
pod template's ObjectMeta by every integration; a Pod's template is itself; kueue#15816). Sources: Kueue site/content/en/docs/reference/labels-and-annotations.md;
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

# Read from each pod template's annotations, never from the workload object's own metadata.
FROM_POD_TEMPLATE = frozenset(
    {
        "kueue.x-k8s.io/podset-required-topology",
        "kueue.x-k8s.io/podset-preferred-topology",
        "kueue.x-k8s.io/podset-slice-required-topology",
        "kueue.x-k8s.io/podset-slice-size",
    }
)
_READ = frozenset(KEYS)  # a key that is not a string (YAML `1:`) is never one of them: str(1) is "1"


@dataclass(frozen=True)
class Misplaced:
    path: Path  # to the key, in the map it was written in
    key: str
    expected: str  # "labels" or "annotations"
    reader: str
    template: Path | None = None  # set when the key belongs on this pod template's metadata instead


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
    yield from _on_the_object(facts)
    for path, meta in metadata_places(facts):
        for given in (LABEL, ANNOTATION):
            written = mapping(meta.get(given))
            if written.keys().isdisjoint(_READ):
                continue  # none of the keys the systems read (most maps): nothing is misplaced
            for key in written:
                expected, reader = KEYS.get(str(key), (given, ""))
                if expected != given:
                    yield Misplaced((*path, given, key), str(key), expected, reader)


def _on_the_object(facts: ObjectFacts) -> Iterator[Misplaced]:
    """A pod-template annotation on the object's own metadata, where a pod template lacks it (a Pod is
    its own template: nothing to report)."""
    written = mapping(mapping(facts.data.get("metadata")).get(ANNOTATION))
    if written.keys().isdisjoint(FROM_POD_TEMPLATE):
        return
    templates = [site for site in facts.sites() if site.template_path]
    for key in written:
        if str(key) not in FROM_POD_TEMPLATE:
            continue
        lacking = [s for s in templates if str(key) not in mapping(template_metadata(facts.data, s).get(ANNOTATION))]
        if lacking:
            yield Misplaced(("metadata", ANNOTATION, key), str(key), ANNOTATION, "Kueue", lacking[0].template_path)
