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

from gpulint.kube.fields import dig, mapping
from gpulint.kube.refs import Path

GROUP = "jobset.x-k8s.io"
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODE_SELECTOR_STRATEGY = "alpha.jobset.sigs.k8s.io/node-selector"


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
