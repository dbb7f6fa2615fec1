"""An operator's release as an image tag, a chart version or a label writes it, and what a set of them proves."""

from __future__ import annotations

import re
from collections.abc import Iterable

# "v0.13.4", "0.13", "1.13.0": an exact release or its minor line; a range, a branch or a digest names none
_RELEASE = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?")


def release_of(tag: object) -> tuple[int, int] | None:
    """(major, minor) of a tag or version naming a release (v0.13.4), None for any other."""
    match = _RELEASE.fullmatch(tag) if isinstance(tag, str) else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def all_before(written: Iterable[str], boundary: tuple[int, int]) -> bool | None:
    """True when every release found is before ``boundary``, False when every one is at or after it; None when
    none is found, one does not name a release, or they disagree (a repository may hold several clusters)."""
    releases = [release_of(found) for found in written]
    if not releases or None in releases:
        return None
    before = {release < boundary for release in releases if release is not None}
    return before.pop() if len(before) == 1 else None
