"""InventoryObject documents -> Kubernetes objects (``kind: List`` expanded), with their references."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.jupyterhub import values_of
from gpulint.kube.strategic import DIRECTIVE
from gpulint.kube.workloads import ObjectFacts
from gpulint.lint.findings import ObjectRef, Path
from gpulint.lint.inputs.loader import LoadedFile, LocatedDocument
from gpulint.lint.inputs.render.options import DEFAULT_RELEASE


@dataclass(frozen=True)
class KubeObject:
    data: dict[str, Any]
    document: LocatedDocument
    prefix: Path  # where the object sits in its document (("items", 3) inside a List)
    ref: ObjectRef
    # the ref's, as plain attributes (not properties): every rule reads them, ~30 times per object
    api_version: str = field(init=False, repr=False, compare=False)
    kind: str = field(init=False, repr=False, compare=False)
    # what the engine works out of it once while it checks it (with_facts); None: not being checked
    kept_facts: ObjectFacts | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "api_version", self.ref.api_version)
        object.__setattr__(self, "kind", self.ref.kind)

    def with_facts(self) -> KubeObject:
        """The object with facts kept while the engine checks it: a copy, as dataclasses.replace makes it, but
        without running __init__ again (the engine makes one for every object of a run)."""
        checked = object.__new__(KubeObject)
        checked.__dict__.update(self.__dict__, kept_facts=ObjectFacts(self.data))
        return checked

    @property
    def facts(self) -> ObjectFacts:
        """Its facts: kept while the engine checks it, worked out afresh otherwise."""
        kept = self.kept_facts
        return kept if kept is not None else ObjectFacts.afresh(self.data)

    def locate(self, path: Path, on_key: bool = False) -> tuple[int, int]:
        return self.document.locate((*self.prefix, *path), on_key)

    def locate_in_string(self, path: Path, offset: int) -> tuple[int, int]:
        return self.document.locate_in_string((*self.prefix, *path), offset)

    def annotations(self) -> dict[str, Any]:
        return mapping(dig(self.data, "metadata", "annotations"))

    def name_chosen_at_install(self) -> bool:
        """Whether its name holds the release name helm template stands in for a chart rendered without one: its
        length is then the installer's choice, not the repository's."""
        return bool(self.document.render) and DEFAULT_RELEASE in self.ref.name

    def shortest_release_data(self) -> dict[str, Any]:
        """Its data as a release of one character would name it (name_chosen_at_install): what is refused either
        way is the chart's to answer for, what only the stand-in's length brings is not."""
        metadata = {**mapping(self.data.get("metadata")), "name": self.ref.name.replace(DEFAULT_RELEASE, "r")}
        return {**self.data, "metadata": metadata}


def object_ref(data: dict[str, Any]) -> ObjectRef:
    metadata = mapping(data.get("metadata"))
    name = text(metadata.get("name")) or text(metadata.get("generateName"))
    return ObjectRef(text(data.get("apiVersion")), text(data.get("kind")), text(metadata.get("namespace")), name)


def is_object(data: Any) -> bool:
    """A mapping that claims to be a Kubernetes object: apiVersion and kind, or one of them beside metadata (a
    manifest that lost the other). One alone claims nothing: a Helm repository's index.yaml (apiVersion,
    entries) or a tool's `kind:` option is no object; nor does it beside a `metadata` that is no mapping (a
    tokenizer's vocabulary, where the words `kind` and `metadata` map to their ids)."""
    if not isinstance(data, dict):
        return False
    has_kind, has_version = "kind" in data, "apiVersion" in data
    lost_one = "metadata" in data and isinstance(data["metadata"], (dict, type(None)))
    return (has_kind and has_version) or ((has_kind or has_version) and lost_one)


def is_patch(data: dict[str, Any]) -> bool:
    """A strategic-merge patch by its own shape: a top-level ``$patch`` directive (``delete`` removes the object
    it names, ``replace`` swaps it whole: k8s.io/apimachinery strategicpatch). Kustomize applies it to an object
    its overlay builds; it is no object to create, whichever kustomization lists it (one gpulint cannot read:
    deployKF's gomplate templates list their `patches/removals/*.yaml` so)."""
    return isinstance(data.get(DIRECTIVE), str)


def is_list(data: dict[str, Any]) -> bool:
    """``kind: List`` (what ``kubectl get -o yaml`` prints), or a typed list such as PodList."""
    kind = data.get("kind")
    return kind == "List" or (isinstance(kind, str) and kind.endswith("List") and isinstance(data.get("items"), list))


def list_is_malformed(data: dict[str, Any]) -> bool:
    """A List whose ``items`` is not a list of mappings: kubectl refuses the whole document."""
    items = data.get("items")
    if items is None:
        return False
    return not isinstance(items, list) or not all(isinstance(item, dict) for item in items)


def objects_in(document: LocatedDocument) -> Iterator[KubeObject]:
    data = document.data
    if not is_object(data):
        return
    if is_list(data):
        for index, item in enumerate(sequence(data.get("items"))):
            if isinstance(item, dict):
                yield KubeObject(item, document, ("items", index), object_ref(item))
        if list_is_malformed(data):  # the List itself, so that schema-invalid can say what is wrong
            yield KubeObject(data, document, (), object_ref(data))
        return
    yield KubeObject(data, document, (), object_ref(data))


@dataclass
class ParsedFile:
    """A source parsed once: its documents (with positions) and the Kubernetes objects in them."""

    loaded: LoadedFile
    objects: list[KubeObject]
    not_objects: int = 0  # documents that are not Kubernetes objects (values files, patches)
    read_error: str | None = None  # the file could not be read (then ``loaded`` is empty)

    @property
    def path(self) -> str:
        return self.loaded.path


def parse_file(loaded: LoadedFile, complete_objects_only: bool = False) -> ParsedFile:
    """``complete_objects_only``: a Helm values file, where only a document with both apiVersion and
    kind is an object (a chart's ``kind: DaemonSet`` option is no manifest missing its apiVersion)."""
    objects: list[KubeObject] = []
    not_objects = 0
    for document in loaded.documents:
        data = document.data
        if (values := values_of(data)) is not None:  # no object, but the pods JupyterHub makes from it
            objects.append(KubeObject(values, document, (), HUB_VALUES))
            continue
        if complete_objects_only and not (
            isinstance(data, dict) and isinstance(data.get("apiVersion"), str) and isinstance(data.get("kind"), str)
        ):
            not_objects += data is not None
            continue
        if is_object(document.data) and not is_patch(document.data):
            objects.extend(objects_in(document))
        elif document.data is not None:
            not_objects += 1
    return ParsedFile(loaded, objects, not_objects)


# How a helmfile's, a kustomization's and a Zarf package's releases of a GPU stack chart of a chart repository are named
# (inputs/chart_entries.py): no object has such a kind
RELEASE_FORMS = ("helmfile release", "kustomize helmChart", "Zarf chart")
# A kustomization's remote bases (resources, bases, components a URL names) and its images' tags, as one object
# at the kustomization: what it installs from another repository (an operator at a release: operator_releases)
REMOTE_BASES = "kustomize remote bases"


# How messages name a zero-to-jupyterhub values document: its user pods are made by the hub's KubeSpawner. No
# object can have this kind (a kind has no space), so no custom resource is routed as one.
HUB_VALUES = ObjectRef("", "JupyterHub values", "", "singleuser")
# Documents read for the pods a program makes from them, no objects themselves: the rules that judge pod
# templates read them, and of the others only these (kind -> rule ids), which judge their pods
NOT_OBJECTS: dict[str, frozenset[str]] = {
    HUB_VALUES.kind: frozenset({"api-rejected"}),
    **{form: frozenset({"device-plugin-config"}) for form in RELEASE_FORMS},
    REMOTE_BASES: frozenset(),
}
