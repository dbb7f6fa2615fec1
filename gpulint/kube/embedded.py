"""Documents held in a string of another document (an Argo ``podSpecPatch``, kustomize's origin annotations),
parsed apart with a bound on their nesting.

The manifest around them is bounded by the loader (gpulint.lint.inputs.loader.MAX_DEPTH); a string inside it is
not, and PyYAML's constructor, like every walk of the value afterwards (a strategic merge, a path search),
recurses once per level: a podSpecPatch nested 1,000 levels deep ended the run with RecursionError. The
nesting is counted on libyaml's event stream, which is not recursive, before anything is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# A pod spec nests about ten levels (spec.affinity.nodeAffinity...matchExpressions[].values[]); a patch of one
# sits within a manifest that may itself be 256 deep, and the walks of both together stay under Python's
# recursion limit.
MAX_EMBEDDED_DEPTH = 64
# A pod spec patch holds tens of values. Composing costs ~400 bytes of memory a node, so a 3 MiB string of
# one-character flow items (`[1,1,...]`, 1.5 million nodes) would take ~600 MiB of one webhook review, past the
# 35 bytes a body byte its memory budget assumes (docs/webhook-limits.md); 100,000 nodes is ~40 MiB.
MAX_EMBEDDED_NODES = 100_000


@dataclass(frozen=True)
class NotParsed:
    """Why an embedded document was not read."""

    reason: str


def load_embedded(text: str, max_depth: int = MAX_EMBEDDED_DEPTH, max_nodes: int = MAX_EMBEDDED_NODES) -> Any:
    """The value a YAML (or JSON) string holds, or NotParsed: not YAML, nested deeper than ``max_depth``
    levels, holding more than ``max_nodes`` values, lists and maps, or holding aliases (an alias can expand
    without bound)."""
    import yaml

    refused = _refused(text, max_depth, max_nodes)
    if refused is not None:
        return refused
    try:
        return yaml.load(text, Loader=_loader())
    except yaml.YAMLError:
        return NotParsed("not YAML")


def compose_embedded(text: str) -> Any:
    """The node tree (with positions in ``text``) of the one document a YAML string holds, within the bounds of
    load_embedded; None when it holds none or is refused."""
    import yaml

    if _refused(text, MAX_EMBEDDED_DEPTH, MAX_EMBEDDED_NODES) is not None:
        return None
    try:
        return yaml.compose(text, Loader=_loader())
    except yaml.YAMLError:  # several documents, or none readable
        return None


def _loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _refused(text: str, max_depth: int, max_nodes: int) -> NotParsed | None:
    """Why the string is not read (see load_embedded), counted on libyaml's event stream; None: it may be."""
    import yaml
    from yaml.events import AliasEvent, CollectionEndEvent, CollectionStartEvent, ScalarEvent

    depth = 0
    nodes = 0
    try:
        for event in yaml.parse(text, Loader=_loader()):
            if isinstance(event, (ScalarEvent, CollectionStartEvent)):
                nodes += 1
                if nodes > max_nodes:
                    return NotParsed(f"it holds more than {max_nodes:,} values, lists and maps")
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    return NotParsed(f"it nests deeper than {max_depth} levels")
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
            elif isinstance(event, AliasEvent):
                return NotParsed("YAML aliases, which gpulint does not expand in a document held in a string")
    except yaml.YAMLError as error:
        if "nesting depth" in str(getattr(error, "problem", "")):  # libyaml's own bound (1,000 flow levels)
            return NotParsed(f"it nests deeper than {max_depth} levels")
        return NotParsed("not YAML")
    return None


def nests_deeper(value: Any, max_depth: int) -> bool:
    """``value`` (dicts and lists) nests deeper than ``max_depth`` levels; walked without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
