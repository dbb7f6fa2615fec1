"""The inventory straight from the cluster: list and watch Nodes, ResourceSlices and DeviceClasses.

Uses the official ``kubernetes`` client (its configuration, authentication, TLS and watch
streams): the in-cluster service account by default, a kubeconfig when given. Each resource
is listed, then watched from the list's resourceVersion; an expired watch (410) relists.
Every change rebuilds the inventory and hands it to ``on_change``, which swaps it in whole.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpulint.lint.inventory import ClusterInventory
from gpulint.lint.loader import LocatedDocument
from gpulint.lint.objects import objects_in

RETRY_SECONDS = 2.0


@dataclass(frozen=True)
class Resource:
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str


RESOURCES = (
    Resource("", "v1", "nodes", "Node"),
    Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice"),
    Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass"),
)


def api_client(kubeconfig: str | None = None, configuration: Any = None) -> Any:
    from kubernetes import client, config  # only the live path pays for the client

    if configuration is not None:
        return client.ApiClient(configuration)
    if kubeconfig:
        return config.new_client_from_config(config_file=kubeconfig)
    config.load_incluster_config()
    return client.ApiClient()


class LiveInventory:
    def __init__(self, client: Any, on_change: Callable[[ClusterInventory], None], log: Callable[..., None]) -> None:
        from kubernetes import client as k8s

        self._core = k8s.CoreV1Api(client)
        self._custom = k8s.CustomObjectsApi(client)
        self._on_change = on_change
        self._log = log
        self._objects: dict[str, dict[str, dict[str, Any]]] = {r.plural: {} for r in RESOURCES}
        self._synced: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watches: list[Any] = []

    @property
    def synced(self) -> bool:
        return len(self._synced) == len(RESOURCES)

    def start(self) -> None:
        for resource in RESOURCES:
            threading.Thread(target=self._run, args=(resource,), name=f"watch-{resource.plural}", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        for watch in list(self._watches):
            watch.stop()

    def _list(self, resource: Resource) -> tuple[list[dict[str, Any]], str]:
        answer: object  # decoded JSON
        if resource.group:
            answer = self._custom.list_cluster_custom_object(resource.group, resource.version, resource.plural)
        else:
            import json

            # With _preload_content=False the client returns the raw HTTP response; its annotation says V1NodeList.
            raw = self._core.list_node(_preload_content=False).data  # type: ignore[attr-defined]
            answer = json.loads(raw)
        if not isinstance(answer, dict):
            raise ValueError(f"the list of {resource.plural} is not a JSON object")
        return list(answer.get("items") or []), str((answer.get("metadata") or {}).get("resourceVersion") or "")

    def _watch_call(self, resource: Resource) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        if resource.group:
            return self._custom.list_cluster_custom_object, (resource.group, resource.version, resource.plural)
        return self._core.list_node, ()

    def _run(self, resource: Resource) -> None:
        from kubernetes import watch
        from kubernetes.client.exceptions import ApiException

        while not self._stop.is_set():
            try:
                items, version = self._list(resource)
                with self._lock:
                    self._objects[resource.plural] = {_key(item): _with_kind(item, resource) for item in items}
                    self._synced.add(resource.plural)
                self._publish()
                stream = watch.Watch()
                self._watches.append(stream)
                function, args = self._watch_call(resource)
                for event in stream.stream(function, *args, resource_version=version, allow_watch_bookmarks=True):
                    if self._stop.is_set():
                        break
                    self._apply(resource, event.get("type"), event.get("raw_object"))
            except ApiException as exc:
                if exc.status != 410 and not self._stop.is_set():
                    self._log(
                        "live_inventory_error", resource=resource.plural, status=exc.status, error=str(exc.reason)[:200]
                    )
            except Exception as exc:
                if self._stop.is_set():
                    break
                self._log("live_inventory_error", resource=resource.plural, error=f"{type(exc).__name__}: {exc}"[:300])
            self._stop.wait(RETRY_SECONDS)

    def _apply(self, resource: Resource, kind: str | None, raw: Any) -> None:
        if not isinstance(raw, dict) or kind == "BOOKMARK":
            return
        with self._lock:
            table = self._objects[resource.plural]
            if kind == "DELETED":
                table.pop(_key(raw), None)
            else:
                table[_key(raw)] = _with_kind(raw, resource)
        self._publish()

    def _publish(self) -> None:
        if not self.synced:
            return
        with self._lock:
            snapshot = [item for table in self._objects.values() for item in table.values()]
        inventory = ClusterInventory(sources=("live",), listed_kinds={"Node", "ResourceSlice", "DeviceClass"})
        for index, item in enumerate(snapshot):
            for obj in objects_in(LocatedDocument("live", index, item, None)):
                inventory.add(obj)
        inventory.account_running_pods()
        self._on_change(inventory)


def _key(item: dict[str, Any]) -> str:
    metadata = item.get("metadata") or {}
    return str(metadata.get("uid") or metadata.get("name") or id(item))


def _with_kind(item: dict[str, Any], resource: Resource) -> dict[str, Any]:
    """List items carry no apiVersion/kind; the inventory needs them."""
    api_version = f"{resource.group}/{resource.version}" if resource.group else resource.version
    return {"apiVersion": api_version, "kind": resource.kind, **item}
