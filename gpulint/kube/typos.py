"""Whether a name is a misspelling of a known one ("did you mean ...?").

A hint is only worth giving for a typo: a character or two dropped, added, changed or swapped.
A shared suffix is not one (``my-scheduler`` is no misspelling of ``hami-scheduler``, though
difflib finds them 85% alike), and neither is another number (``queue-2`` next to ``queue-1``).
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_NAME = 253  # longer strings are no Kubernetes names: no hint (and the distance stays cheap)


def typo_of(name: str, known: Iterable[str]) -> str | None:
    """The known name ``name`` is most likely a misspelling of (the closest, then the first in order)."""
    if len(name) > MAX_NAME:
        return None
    best: tuple[int, str] | None = None
    for candidate in sorted(set(known)):
        if candidate == name or len(candidate) > MAX_NAME or abs(len(candidate) - len(name)) > 2:
            continue
        allowed = _allowed_edits(min(len(name), len(candidate)))
        distance = edit_distance(name, candidate)
        if distance > allowed or _numbered_siblings(name, candidate):
            continue
        if best is None or distance < best[0]:
            best = (distance, candidate)
    return best[1] if best else None


def _allowed_edits(length: int) -> int:
    """One edit in a short name, two from 8 characters on (a typo, not another word)."""
    return 0 if length < 3 else 1 if length < 8 else 2


def _numbered_siblings(a: str, b: str) -> bool:
    """Names that differ only in their digits (``pool-a100-1``, ``pool-a100-2``): siblings, not typos."""
    return [c for c in a if not c.isdigit()] == [c for c in b if not c.isdigit()]


def edit_distance(a: str, b: str, limit: int | None = None) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps.

    With ``limit``, any answer above it may be returned as ``limit + 1``: the scan stops once two rows
    in a row exceed it (a later cell comes from one of them at no smaller cost).
    """
    if limit is not None and abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if limit is not None and min(current) > limit and min(previous) >= limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[len(b)]
