"""JobSet's exclusive placement: each child Job alone in one domain of a topology key
(kubernetes-sigs/jobset v0.12.0 api/jobset/v1alpha2/jobset_types.go ExclusiveKey, NodeSelectorStrategyKey).

The controller copies the annotation into every child Job's pod template, the JobSet's first and a
replicatedJob template's over it (pkg/controllers/jobset_controller.go labelAndAnnotateObject). Unless the
node-selector strategy is chosen, JobSet's pod webhook gives each Job's leader pod (completion index 0) a
required podAffinity and podAntiAffinity with that topologyKey, and its followers the leader's domain as a
nodeSelector (pkg/webhooks/pod_webhook.go patchPod, setExclusiveAffinities, setNodeSelector).
"""

from __future__ import annotations

from typing import Any

from gpulint.kube.fields import dig, mapping, sequence
from gpulint.kube.refs import Path

GROUP = "jobset.x-k8s.io"
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODE_SELECTOR_STRATEGY = "alpha.jobset.sigs.k8s.io/node-selector"
JOB_KEY = "jobset.sigs.k8s.io/job-key"  # the controller's label on a child Job's pods: a hash of its name
PRIORITY_KEY = "jobset.sigs.k8s.io/priority"


def exclusive_topology(data: dict[str, Any], site_path: Path) -> tuple[str, Path, bool] | None:
    """(topology key, the annotation's path, the node-selector strategy is on) of the JobSet pod template at
    ``site_path`` (spec, replicatedJobs, i, template, spec, template, spec); None: no exclusive placement."""
    found: tuple[str, Path, bool] | None = None
    jobset = mapping(dig(data, "metadata", "annotations"))
    if isinstance(jobset.get(EXCLUSIVE), str):
        found = (jobset[EXCLUSIVE], ("metadata", "annotations", EXCLUSIVE), NODE_SELECTOR_STRATEGY in jobset)
    if tuple(site_path[:2]) == ("spec", "replicatedJobs"):
        job = mapping(dig(data, *site_path[:4], "metadata", "annotations"))
        if isinstance(job.get(EXCLUSIVE), str):
            strategy = NODE_SELECTOR_STRATEGY in job or (found is not None and found[2])
            found = (job[EXCLUSIVE], (*site_path[:4], "metadata", "annotations", EXCLUSIVE), strategy)
    return found


def leader_spec(spec: dict[str, Any], topology_key: str) -> dict[str, Any]:
    """The leader pod's spec (completion index 0) as JobSet's pod webhook makes it (setExclusiveAffinities): a
    required podAffinity to its own Job's pods and a podAntiAffinity to every other Job's of its priority, both
    over ``topology_key`` in every namespace. The job key and priority are the controller's labels, whose values
    no file holds: the selectors name the keys only."""
    own = {"key": JOB_KEY, "operator": "In", "values": [f"<{JOB_KEY}>"]}
    others = [
        {"key": JOB_KEY, "operator": "Exists"},
        {"key": JOB_KEY, "operator": "NotIn", "values": [f"<{JOB_KEY}>"]},
        {"key": PRIORITY_KEY, "operator": "In", "values": [f"<{PRIORITY_KEY}>"]},
    ]
    affinity = mapping(spec.get("affinity"))
    added = []
    for field, expressions in (("podAffinity", [own]), ("podAntiAffinity", others)):
        written = mapping(affinity.get(field))
        term = {
            "labelSelector": {"matchExpressions": expressions},
            "topologyKey": topology_key,
            "namespaceSelector": {},
        }
        terms = [*sequence(written.get("requiredDuringSchedulingIgnoredDuringExecution")), term]
        added.append((field, {**written, "requiredDuringSchedulingIgnoredDuringExecution": terms}))
    return {**spec, "affinity": {**affinity, **dict(added)}}
