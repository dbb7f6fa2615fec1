"""Required inter-pod affinity terms as kube-scheduler's InterPodAffinity plugin reads them.

kubernetes/kubernetes v1.37 pkg/scheduler/framework/plugins/interpodaffinity/filtering.go: an existing pod
counts for the incoming pod's required affinity only when it matches every term (podMatchesAllAffinityTerms:
the term's namespaces and its label selector), and a node passes when it carries each term's topologyKey and,
for each term, a pod so counted runs in its topology domain (nodeTopologyMatchesAffinity, nodePodsSatisfyAffinity).
The one exception: when no pod anywhere matches and the incoming pod matches its own terms, it passes on every
node that carries the keys (satisfiesSelfAffinityCheck: the first pod of a group that gathers with itself).
``matchLabelKeys``/``mismatchLabelKeys`` add the incoming pod's own label values to the selector
(k8s.io/api/core/v1 PodAffinityTerm; MatchLabelKeysInPodAffinity, on by default since 1.31).

A label, selector or namespace still to be filled in (``app: ${APP}``, ``{{ .Values.app }}``, ``REPLACE_ME``) is no
pod's yet: the API server refuses text no label holds (apimachinery validation IsQualifiedName, IsValidLabelValue,
IsDNS1123Label), so whatever applies it fills it in first, and it may then match or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpulint.kube.fields import mapping, sequence, text
from gpulint.kube.names import dns1123_label, label_key, label_value
from gpulint.kube.placeholders import MARKER_PLACEHOLDER
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
    unfilled: bool = False  # its selector or namespaces hold text still to be filled in (unfilled_labels)

    def matches(self, labels: dict[str, Any], namespace: str) -> bool:
        """Whether a pod with ``labels`` in ``namespace`` ("" : not written, any) matches the term."""
        if self.selector is None:
            return False
        if self.namespaces is not None and namespace and namespace not in self.namespaces:
            return False
        return selector_matches(self.selector, labels)

    def undecided(self, labels: dict[str, Any], namespace: str) -> bool:
        """Whether a pod whose ``labels`` or ``namespace`` are still to be filled in may match the term once
        they are (its namespace, if filled, is one the term reads)."""
        if unfilled_name(namespace):
            return True
        if self.namespaces is not None and namespace and namespace not in self.namespaces:
            return False
        return unfilled_labels(labels) and not self._contradicted(labels)

    def _contradicted(self, labels: dict[str, Any]) -> bool:
        """A label written in full that the selector requires another value of (matchLabels, In): the pod does
        not match, whatever the others are filled in with."""
        selector = mapping(self.selector)
        required = [(str(key), [value]) for key, value in mapping(selector.get("matchLabels")).items()]
        for expression in map(mapping, sequence(selector.get("matchExpressions"))):
            if expression.get("operator") == "In":
                required.append((text(expression.get("key")), sequence(expression.get("values"))))
        return any(
            key in labels
            and isinstance(labels[key], str)
            and not _unfilled(labels[key], label_value)
            and labels[key] not in {label_text(value) for value in values}
            for key, values in required
        )

    def uses_controller_labels(self) -> bool:
        keys = [*mapping(mapping(self.selector).get("matchLabels"))]
        keys += [text(mapping(e).get("key")) for e in sequence(mapping(self.selector).get("matchExpressions"))]
        return any(key.startswith(CONTROLLER_LABEL_PREFIXES) for key in keys)


def unfilled_labels(labels: dict[str, Any]) -> bool:
    """Whether a key or value of ``labels`` is text no label holds, or a marker word, as written: still to be
    filled in. A value that is no string is left to the API server (refused as written, not filled in)."""
    return any(
        _unfilled(str(key), label_key) or (isinstance(value, str) and _unfilled(value, label_value))
        for key, value in labels.items()
    )


def unfilled_name(namespace: str) -> bool:
    return bool(namespace) and _unfilled(namespace, dns1123_label)


def _unfilled(value: str, valid: Any) -> bool:
    return bool(valid(value)) or MARKER_PLACEHOLDER.fullmatch(value) is not None


def _unfilled_selector(selector: dict[str, Any] | None, namespaces: list[str]) -> bool:
    keys = [str(key) for key in mapping(mapping(selector).get("matchLabels"))]
    values = list(mapping(mapping(selector).get("matchLabels")).values())
    for expression in sequence(mapping(selector).get("matchExpressions")):
        keys.append(text(mapping(expression).get("key")))
        values.extend(sequence(mapping(expression).get("values")))
    return (
        any(_unfilled(key, label_key) for key in keys)
        or any(isinstance(value, str) and _unfilled(value, label_value) for value in values)
        or any(unfilled_name(name) for name in namespaces)
    )


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
        unfilled = _unfilled_selector(selector, written)
        terms.append(AffinityTerm((*_REQUIRED, index), selector, namespaces, text(term.get("topologyKey")), unfilled))
    return tuple(terms)
