"""A RayService's Serve applications against the GPUs of the Ray cluster they run on.

Serve config (``spec.serveConfigV2``, ray-project/ray ``python/ray/serve/schema.py`` ServeDeploySchema):
``applications[].deployments[]`` with ``ray_actor_options.num_gpus`` per replica and ``num_replicas`` (an
integer, or ``auto``) or ``autoscaling_config.min_replicas`` (default 1); a replica with
``placement_group_bundles`` reserves its bundles instead (not modelled). The cluster
(``spec.rayClusterConfig``, KubeRay): each group's nodes hold ``rayStartParams.num-gpus`` GPUs when it is
given, else the Ray container's GPU limit (KubeRay ``pkg/controllers/ray/common/pod.go``); a worker group
has ``replicas`` nodes, at most ``maxReplicas`` with ``enableInTreeAutoscaling``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from gpulint.kube.fields import dig, integer, mapping, sequence, text
from gpulint.kube.refs import Path


@dataclass(frozen=True)
class ServeDeployment:
    application: str
    name: str
    gpus: Fraction  # per replica
    replicas: int  # at least this many run (num_replicas, or autoscaling's min_replicas)
    path: Path  # to num_gpus, inside the Serve config


def serve_deployments(config: Any) -> list[ServeDeployment]:
    """The deployments that ask GPUs per replica through ray_actor_options, with the replicas that must run."""
    found = []
    for app_index, app in enumerate(map(mapping, sequence(mapping(config).get("applications")))):
        for index, deployment in enumerate(map(mapping, sequence(app.get("deployments")))):
            gpus = _number(dig(deployment, "ray_actor_options", "num_gpus"))
            if not gpus or "placement_group_bundles" in deployment:
                continue
            replicas = _replicas(deployment)
            if replicas is None:
                continue
            path = ("applications", app_index, "deployments", index, "ray_actor_options", "num_gpus")
            found.append(ServeDeployment(text(app.get("name")), text(deployment.get("name")), gpus, replicas, path))
    return found


def _replicas(deployment: dict[str, Any]) -> int | None:
    count = deployment.get("num_replicas")
    autoscaling = deployment.get("autoscaling_config")
    if isinstance(autoscaling, dict) or count == "auto":
        minimum = mapping(autoscaling).get("min_replicas", 1)
        return integer(minimum)
    if count is None:
        return 1  # Serve's default
    return integer(count)


def _number(value: Any) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError):
        return None


@dataclass(frozen=True)
class RayGroup:
    name: str
    gpus_per_node: Fraction
    nodes: int | None  # None: unbounded (autoscaling without maxReplicas)


def node_gpus(group: dict[str, Any], container_gpus: int | None) -> Fraction | None:
    """A group's GPUs per Ray node: rayStartParams num-gpus, else the Ray container's limit; None: unknown."""
    params = mapping(group.get("rayStartParams"))
    if "num-gpus" in params:
        return _number(params["num-gpus"])
    return Fraction(container_gpus or 0)


def group_nodes(group: dict[str, Any], autoscaling: bool) -> int | None:
    hosts = integer(group.get("numOfHosts"), 1) or 1
    if autoscaling:
        maximum = integer(group.get("maxReplicas"))
        return None if maximum is None else maximum * hosts
    replicas = integer(group.get("replicas"), integer(group.get("minReplicas"), 0))
    return None if replicas is None else replicas * hosts
