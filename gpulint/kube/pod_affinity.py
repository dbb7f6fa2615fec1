"""Required inter-pod affinity terms as kube-scheduler's InterPodAffinity plugin reads them.

kubernetes/kubernetes v1.37 pkg/scheduler/framework/plugins/interpodaffinity/filtering.go: an existing pod
counts for the incoming pod's required affinity only when it matches every term (podMatchesAllAffinityTerms:
the term's namespaces and its label selector), and a node passes when it carries each term's topologyKey and,
for each term, a pod so counted runs in its topology domain (nodeTopologyMatchesAffinity, nodePodsSatisfyAffinity).
The one exception: when no pod anywhere matches and the incoming pod matches its own terms, it passes on every
node that carries the keys (satisfiesSelfAffinityCheck: the first pod of a group that gathers with itself).
``matchLabelKeys``/``mismatchLabelKeys`` add the incoming pod's own label values to the selector
(k8s.io/api/core/v1 PodAffinityTerm; MatchLabelKeysInPodAffinity, on by default since 1.31).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping, sequence, text
from gpulint.kube.selectors import label_text, selector_matches

REASON_POD_AFFINITY = "node(s) didn't match pod affinity rules"
_REQUIRED = ("affinity", "podAffinity", "requiredDuringSchedulingIgnoredDuringExecution")

# Labels the controllers add to the pods they make, which a template does not show: a selector on one may
# match pods whose templates do not carry it, so no template is known not to match.
CONTROLLER_LABEL_PREFIXES = (
    "batch.kubernetes.io/",
    "controller-uid",
    "job-name",
    "pod-template-hash",
    "controller-revision-hash",
    "statefulset.kubernetes.io/",
    "apps.kubernetes.io/",
    "pod-template-generation",
    "jobset.sigs.k8s.io/",
    "leaderworkerset.sigs.k8s.io/",
    "training.kubeflow.org/",
    "trainer.kubeflow.org/",
    "ray.io/",
    "volcano.sh/",
    "kueue.x-k8s.io/",
)


@dataclass(frozen=True)
class AffinityTerm:
    path: tuple[Any, ...]  # from the pod spec
    selector: dict[str, Any] | None  # None: a nil selector, which matches no pod
    namespaces: frozenset[str] | None  # None: any namespace (a namespaceSelector)
    topology_key: str

    def matches(self, labels: dict[str, Any], namespace: str) -> bool:
        """Whether a pod with ``labels`` in ``namespace`` ("" : not written, any) matches the term."""
        if self.selector is None:
            return False
        if self.namespaces is not None and namespace and namespace not in self.namespaces:
            return False
        return selector_matches(self.selector, labels)

    def uses_controller_labels(self) -> bool:
        keys = [*mapping(mapping(self.selector).get("matchLabels"))]
        keys += [text(mapping(e).get("key")) for e in sequence(mapping(self.selector).get("matchExpressions"))]
        return any(key.startswith(CONTROLLER_LABEL_PREFIXES) for key in keys)


def required_affinity_terms(spec: dict[str, Any], labels: dict[str, Any], namespace: str) -> tuple[AffinityTerm, ...]:
    """The pod's required pod affinity terms (its own ``labels`` fill matchLabelKeys and mismatchLabelKeys)."""
    terms = []
    for index, term in enumerate(sequence(mapping(mapping(spec.get("affinity")).get("podAffinity")).get(_REQUIRED[2]))):
        term = mapping(term)
        raw = term.get("labelSelector")
        selector = dict(raw) if isinstance(raw, dict) else None
        if selector is not None:
            extra = [
                {"key": key, "operator": operator, "values": [label_text(labels[key])]}
                for field, operator in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn"))
                for key in map(text, sequence(term.get(field)))
                if key in labels
            ]
            if extra:
                selector["matchExpressions"] = [*sequence(selector.get("matchExpressions")), *extra]
        written = [text(name) for name in sequence(term.get("namespaces")) if text(name)]
        if term.get("namespaceSelector") is not None:
            namespaces = None
        else:
            namespaces = frozenset(written or ([namespace] if namespace else []))
            namespaces = namespaces or None  # the pod's namespace, not written: any
        terms.append(AffinityTerm((*_REQUIRED, index), selector, namespaces, text(term.get("topologyKey"))))
    return tuple(terms)
