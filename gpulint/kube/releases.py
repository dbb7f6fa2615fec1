"""An operator's release as an image tag, a chart version or a label writes it, and what a set of them proves."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence, text

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


def image_tags(deployment: dict[str, Any], repository: str) -> list[str]:
    """The tags of a Deployment's containers whose image is ``repository`` (its path's end, the registry aside:
    "/kueue/kueue"), a digest dropped; none for another Deployment."""
    pod = mapping(dig(deployment, "spec", "template", "spec"))
    found = []
    for container in map(mapping, sequence(pod.get("containers"))):
        name, _, tag = text(container.get("image")).partition("@")[0].rpartition(":")
        if name.endswith(repository) and "/" not in tag:
            found.append(tag)
    return found


def chart_release(version: str, values: dict[str, Any], tag: tuple[str, ...]) -> str:
    """The release an operator's chart runs: the image tag its values set at ``tag``, else the chart's version."""
    given = dig(values, *tag)
    return given if isinstance(given, str) and given else version
