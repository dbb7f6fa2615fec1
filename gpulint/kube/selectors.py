"""Label selectors (metav1.LabelSelector) as the API machinery matches them (labels.Selector)."""

from __future__ import annotations

from typing import Any

from gpulint.kube.fields import mapping, sequence


def label_text(value: Any) -> str:
    """A label value as YAML gave it: ``true`` is the string "true"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def selector_matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    """matchLabels ANDed with matchExpressions; an empty selector matches everything
    (metav1.LabelSelectorAsSelector). A nil selector is the caller's case: it matches nothing."""
    for key, value in mapping(selector.get("matchLabels")).items():
        if key not in labels or label_text(labels.get(key)) != label_text(value):
            return False
    for expression in sequence(selector.get("matchExpressions")):
        expression = mapping(expression)
        label, operator = expression.get("key"), expression.get("operator")
        values = [label_text(v) for v in sequence(expression.get("values"))]
        present = isinstance(label, str) and label in labels
        current = label_text(labels[label]) if isinstance(label, str) and present else None
        if operator == "In" and not (present and current in values):
            return False
        if operator == "NotIn" and present and current in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True
