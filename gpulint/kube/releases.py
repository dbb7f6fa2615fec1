"""An operator's release as an image tag, a chart version or a label writes it, and what a set of them proves."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
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
    return runs(written, Span((0, 0), boundary))


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


@dataclass(frozen=True)
class Span:
    """The releases of an operator that run a check: from ``first`` up to ``until`` (excluded; None: the newest
    still runs it)."""

    first: tuple[int, int]
    until: tuple[int, int] | None = None

    def holds(self, release: tuple[int, int]) -> bool:
        return self.first <= release and (self.until is None or release < self.until)

    def words(self) -> str:
        """ "v1.13 and later", "v1.6 to v1.14" (the last minor line before ``until``)."""
        first = f"v{self.first[0]}.{self.first[1]}"
        if self.until is None:
            return f"{first} and later"
        major, minor = self.until
        return f"{first} to v{major}.{minor - 1}" if minor else f"{first} to before v{major}.0"


def runs(written: Iterable[str], span: Span) -> bool | None:
    """True when every release found runs the check, False when none does; None when none is found, one does not
    name a release, or they disagree (a repository may hold several clusters)."""
    releases = [release_of(found) for found in written]
    if not releases or None in releases:
        return None
    held = {span.holds(release) for release in releases if release is not None}
    return held.pop() if len(held) == 1 else None


MAX_URL = 2048  # a remote base's URL is a line; a longer string is no URL to read
# A release as a git reference or a path names it beside the tag: a release branch ("release-1.10"), a tag
_REFERENCE = re.compile(r"(?:release-)?(v?\d+\.\d+(?:\.\d+)?)")
# Where a git URL names its reference: kustomize's ?ref= (or ?version=), a release asset's download path, a raw
# file's path (github.com/<repo>/raw/<ref>/, raw.githubusercontent.com/<repo>/<ref>/)
_URL = re.compile(
    r"(?:[a-z+]+://)?(?:[^@/]+@)?(?P<host>github\.com|raw\.githubusercontent\.com)[/:](?P<repo>[\w.-]+/[\w.-]+?)"
    r"(?:\.git)?(?P<rest>(?:/[^?#]*)?)(?:\?(?P<query>[^#]*))?$"
)


def git_release(url: str, repositories: tuple[str, ...]) -> str | None:
    """The release a git URL of one of ``repositories`` ("kubeflow/training-operator") pins, as written ("" when it
    pins none: a branch, a commit, no ref); None for a URL of another repository."""
    if len(url) > MAX_URL:
        return None
    match = _URL.fullmatch(url.strip())
    if match is None or match.group("repo").lower() not in repositories:
        return None
    rest, query = match.group("rest"), match.group("query") or ""
    for part in query.split("&"):
        key, _, value = part.partition("=")
        if key in ("ref", "version"):
            return reference(value)
    parts = [part for part in rest.split("/") if part]
    if match.group("host") == "raw.githubusercontent.com" and parts:
        return reference(parts[0])
    for marker, offset in (("download", 1), ("raw", 1), ("blob", 1), ("tree", 1)):
        if marker in parts and len(parts) > parts.index(marker) + offset:
            return reference(parts[parts.index(marker) + offset])
    return ""


def reference(written: str) -> str:
    """A git reference as a release: "release-1.10" -> "1.10"; a tag as it is; a branch or a commit unchanged."""
    match = _REFERENCE.fullmatch(written)
    return match.group(1) if match else written


@dataclass(frozen=True)
class Installed:
    """Where an operator's release is written: the images tagged with it (their path's end), its charts (each
    versioned as the release, its values' image tag at ``tag_value``), and its git repositories ("owner/name",
    lower case: a kustomize remote base's ref, a release asset's path, an Argo CD or Flux source's revision).
    ``major``: the major version of its releases, when a repository also tags another product's (Trainer v2's tags
    in kubeflow/trainer are no Training Operator's)."""

    images: tuple[str, ...]
    charts: tuple[str, ...] = ()
    tag_value: tuple[str, ...] = ("image", "tag")
    repositories: tuple[str, ...] = ()
    major: int | None = None

    def image_releases(self, deployment: dict[str, Any]) -> list[str]:
        """The release tags of the operator's images a Deployment runs."""
        return [tag for image in self.images for tag in image_tags(deployment, image)]

    def mine(self, release: str) -> bool:
        """Whether a release written in one of the repositories is this operator's (another major is not)."""
        named = release_of(release)
        return self.major is None or named is None or named[0] == self.major
