"""Which taints of a live node Cluster Autoscaler copies into a node group's template.

kubernetes/autoscaler cluster-autoscaler-1.36.1 utils/taints/taints.go: ``SanitizeTaints`` drops
ToBeDeletedByClusterAutoscaler, DeletionCandidateOfClusterAutoscaler, the node-condition taints
(``NodeConditionTaints``), startup taints (the ``ignore-taint.`` and ``startup-taint.`` prefixes, the
``--startup-taint``/``--ignore-taint`` keys and ``--startup-taint-prefix`` prefixes) and status taints (the
``status-taint.`` prefix, the ``--status-taint`` keys); every other taint stays on the template.
``FilterOutNodesWithStartupTaints`` makes a node with a startup taint unready, so it is no template candidate
(core/static_autoscaler.go obtainNodeLists). The flags are read from the autoscaler's own Deployment
(config/flags/flags.go: each flag may be repeated; ``--ignore-taint`` is a deprecated ``--startup-taint``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gpulint.kube.commandline import basename, container_commands, image_name
from gpulint.kube.fields import mapping, sequence, text
from gpulint.kube.scheduler import Taint

TO_BE_DELETED = "ToBeDeletedByClusterAutoscaler"
DELETION_CANDIDATE = "DeletionCandidateOfClusterAutoscaler"
STARTUP_PREFIXES = ("ignore-taint.cluster-autoscaler.kubernetes.io/", "startup-taint.cluster-autoscaler.kubernetes.io/")
STATUS_PREFIXES = ("status-taint.cluster-autoscaler.kubernetes.io/",)
# NodeConditionTaints: transient node states, never copied
CONDITION_TAINTS = frozenset(
    {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.kubernetes.io/unschedulable",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/network-unavailable",
        "node.kubernetes.io/pid-pressure",
        "node.cloudprovider.kubernetes.io/uninitialized",
        "node.cloudprovider.kubernetes.io/shutdown",
        "cloud.google.com/impending-node-termination",
        "NodeWithImpairedVolumes",
    }
)
# flag -> the set it adds to (startup keys, startup prefixes, status keys)
_FLAGS = {
    "startup-taint": "startup",
    "ignore-taint": "startup",
    "startup-taint-prefix": "prefix",
    "status-taint": "status",
}
_BINARY = "cluster-autoscaler"


@dataclass(frozen=True)
class TaintConfig:
    """The autoscaler's taint flags. ``known``: read from its Deployment; otherwise a taint its built-in rules
    keep may still be named by a flag gpulint has not seen."""

    startup: frozenset[str] = frozenset()
    status: frozenset[str] = frozenset()
    startup_prefixes: tuple[str, ...] = ()
    known: bool = False

    def is_startup(self, key: str) -> bool:
        return key in self.startup or key.startswith((*STARTUP_PREFIXES, *self.startup_prefixes))

    def is_status(self, key: str) -> bool:
        return key in self.status or key.startswith(STATUS_PREFIXES)

    def kept(self, taints: Iterable[Taint]) -> tuple[Taint, ...]:
        """The taints SanitizeTaints leaves on a template made from a node carrying ``taints``."""
        return tuple(
            taint
            for taint in taints
            if taint.key not in (TO_BE_DELETED, DELETION_CANDIDATE)
            and taint.key not in CONDITION_TAINTS
            and not self.is_startup(taint.key)
            and not self.is_status(taint.key)
        )

    def merged(self, other: TaintConfig) -> TaintConfig:
        """Both autoscalers' flags (several Deployments read: whichever runs, a taint either drops is unproven)."""
        return TaintConfig(
            self.startup | other.startup,
            self.status | other.status,
            tuple(dict.fromkeys((*self.startup_prefixes, *other.startup_prefixes))),
            self.known and other.known,
        )


UNKNOWN = TaintConfig()


def autoscaler_taint_config(data: dict[str, Any]) -> TaintConfig | None:
    """The taint flags of a Deployment that runs Cluster Autoscaler (None: it runs none). A command line
    gpulint cannot read whole (a variable it cannot resolve) gives a config that is not ``known``."""
    if data.get("kind") != "Deployment":
        return None
    spec = mapping(mapping(mapping(data.get("spec")).get("template")).get("spec"))
    found: TaintConfig | None = None
    for container in sequence(spec.get("containers")):
        container = mapping(container)
        config = _container_config(container)
        if config is not None:
            found = config if found is None else found.merged(config)
    return found


def _container_config(container: dict[str, Any]) -> TaintConfig | None:
    commands = container_commands(container)
    words = [word for command in commands for word in command.words]
    programs = {basename(text(w.text)) for command in commands for w in command.words[:1]}
    runs = _BINARY in programs or image_name(container).endswith("/" + _BINARY) or image_name(container) == _BINARY
    if not runs:
        return None
    if (not commands and (container.get("command") or container.get("args"))) or any(w.text is None for w in words):
        return TaintConfig()  # a command line gpulint cannot read whole: its flags are not known
    values: dict[str, list[str]] = {"startup": [], "prefix": [], "status": []}
    texts = [text(w.text) for w in words]
    for index, word in enumerate(texts):
        name, sep, value = word.removeprefix("-").removeprefix("-").partition("=")
        if not word.startswith("-") or name not in _FLAGS:
            continue
        if not sep:  # Go's flag package: "--flag value"
            if index + 1 >= len(texts):
                continue
            value = texts[index + 1]
        values[_FLAGS[name]].append(value)
    return TaintConfig(frozenset(values["startup"]), frozenset(values["status"]), tuple(values["prefix"]), True)
