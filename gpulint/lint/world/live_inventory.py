"""The inventory straight from the cluster: discover what it serves, list it, then watch it.

Which versions of ``resource.k8s.io`` (and of the scheduling APIs gpulint reads) a cluster
serves depends on its Kubernetes version, its feature gates and the CRDs installed. So the
versions are discovered (``/apis`` and each group version's resource list), newest first from
each kind's row (lint/world/kinds.py), and rediscovered now and then (a CRD installed later is picked up). An API
the cluster does not serve means "the cluster holds no such objects", never "not ready".

The kubernetes client is used only for what it does well and keeps stable across releases: its
configuration (kubeconfig contexts, in-cluster service account, exec credential plugins, the
token refresh hook). Requests go through urllib3 (which the client depends on) so that paging,
watch streams, size limits and timeouts are ours.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from gpulint.kube.fields import mapping, sequence
from gpulint.kube.mutating_webhooks import GROUP as ADMISSION_GROUP
from gpulint.kube.pools.autoscaler_taints import autoscaler_taint_config
from gpulint.kube.pools.capi import CapiIndex
from gpulint.kube.pools.gke import gke_auto_creation
from gpulint.kube.pools.kinds import CAPI_GROUP, KARPENTER_GROUP
from gpulint.kube.pools.readers import node_class_kubelets, node_class_zones, pools_in_document
from gpulint.kube.queueing.batch_queues import KAI_GROUP, VOLCANO_GROUP
from gpulint.kube.queueing.kueue_kinds import KUEUE_GROUP, KUEUE_KINDS
from gpulint.lint.crd_schema import crd_essentials
from gpulint.lint.inputs.loader import LocatedDocument
from gpulint.lint.inputs.objects import objects_in
from gpulint.lint.inputs.sources import Source
from gpulint.lint.world.autoscaler_status import (
    STATUS_NAME,
    STATUS_NAMESPACE,
    autoscaler_taints,
    is_status_config_map,
    node_groups,
)
from gpulint.lint.world.inventory import CAPI_MEMBER_KINDS, MAX_INVENTORY_OBJECTS, ClusterInventory, compact_item
from gpulint.lint.world.kinds import BY_KEY, DRA_GROUP, KindRow
from gpulint.lint.world.operator_releases import runs_an_operator

RETRY_SECONDS = 2.0  # after a failed list, watch or discovery
REDISCOVER_SECONDS = 300.0  # look again for APIs (a CRD installed after the webhook started)
PUBLISH_SECONDS = 1.0  # at most one inventory rebuild per second, however many watch events arrive
WATCH_SECONDS = 300  # the API server ends each watch after this (timeoutSeconds); we resume from the last version
PAGE_SIZE = 500  # list in pages (limit/continue): a 20,000-node list is never one 200 MB body
# A CustomResourceDefinition may be as large as etcd stores one object (--max-request-bytes, 1.5 MiB by
# default; Kubeflow's and KubeRay's are 1-3 MB as JSON): 16 a page keeps a page under MAX_BODY_BYTES.
CRD_PAGE_SIZE = 16
MAX_BODY_BYTES = 64 * 1024 * 1024  # one list page or discovery document
# One list, however many pages: twice the largest cluster Kubernetes is tested at (150,000 pods; "Considerations
# for large clusters", kubernetes.io). A list whose every page carries a continue token ends here, not in memory.
# An inventory file is held to the same.
MAX_LIST_ITEMS = MAX_INVENTORY_OBJECTS
MAX_LIST_PAGES = 10_000  # pages may hold fewer items than asked (a field selector filters them), even none
MAX_EVENT_BYTES = 16 * 1024 * 1024  # one watch event (one object)
CONNECT_SECONDS, READ_SECONDS = 10.0, 60.0
LOCATION = "live"  # the "file" of every live object in findings and notes


@dataclass(frozen=True)
class InventoryApi:
    """One kind the inventory reads from a cluster: how the API serves it (its kind row: group, plural, scope and
    the versions gpulint understands, newest first), and how it is read."""

    row: KindRow
    field_selector: str = ""
    optional: bool = False  # read only when asked (large in big clusters)
    namespace: str = ""  # read in this namespace only (with a field selector: one object)
    whole_kind: bool = True  # its list is every object of the kind (absent from it: absent from the cluster)
    page_size: int = PAGE_SIZE
    # What is kept of each object (list items and watch events), beyond the trimmed metadata
    essentials: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # Read by a one-time snapshot (--live-inventory) only, with the user's credentials: the webhook's service
    # account is not granted it, and a snapshot refused it (403) reads on without it.
    snapshot_only: bool = False
    label: str = ""  # added to its source's name, where another API reads the same kind

    @property
    def group(self) -> str:
        return self.row.group  # "" for the core group

    @property
    def kind(self) -> str:
        return self.row.kind

    @property
    def plural(self) -> str:
        return self.row.plural

    @property
    def versions(self) -> tuple[str, ...]:
        return self.row.versions

    @property
    def namespaced(self) -> bool:
        return self.row.namespaced

    def collection_path(self, version: str) -> str:
        prefix = f"/apis/{self.group}/{version}" if self.group else f"/api/{version}"
        scope = f"/namespaces/{self.namespace}" if self.namespace else ""
        return f"{prefix}{scope}/{self.plural}"

    def api_version(self, version: str) -> str:
        return f"{self.group}/{version}" if self.group else version


def _identity(item: dict[str, Any]) -> dict[str, Any]:
    """The metadata every trimmed object keeps: what names it and the version a watch resumes from."""
    metadata = mapping(item.get("metadata"))
    return {key: metadata[key] for key in ("name", "namespace", "uid", "resourceVersion") if key in metadata}


def machine_essentials(item: dict[str, Any]) -> dict[str, Any]:
    """A Machine as gpulint/kube/pools/capi.py reads it: its MachineSet owner and its node's providerID."""
    metadata = mapping(item.get("metadata"))
    owners = [
        {"kind": owner.get("kind"), "name": owner.get("name")}
        for owner in map(mapping, sequence(metadata.get("ownerReferences")))
    ]
    provider = mapping(item.get("spec")).get("providerID")
    spec = {"providerID": provider} if isinstance(provider, str) else {}
    return {
        "apiVersion": item["apiVersion"],
        "kind": item["kind"],
        "metadata": {**_identity(item), "ownerReferences": owners},
        "spec": spec,
    }


_COMMAND_FIELDS = ("name", "image", "command", "args", "env", "envFrom")  # what autoscaler_taints.py reads


def autoscaler_essentials(item: dict[str, Any]) -> dict[str, Any]:
    """A Deployment that runs Cluster Autoscaler, kept as far as its command lines (its taint flags); any other
    Deployment of the namespace only by name (it is read because RBAC cannot name the autoscaler's beforehand)."""
    stub = {"apiVersion": item["apiVersion"], "kind": item["kind"], "metadata": _identity(item)}
    if autoscaler_taint_config(item) is None:
        return stub
    pod = mapping(mapping(mapping(item.get("spec")).get("template")).get("spec"))
    containers = [
        {key: container[key] for key in _COMMAND_FIELDS if key in container}
        for container in map(mapping, sequence(pod.get("containers")))
    ]
    return {**stub, "spec": {"template": {"spec": {"containers": containers}}}}


def operator_essentials(item: dict[str, Any]) -> dict[str, Any]:
    """A Deployment that runs an operator's controller (lint/world/operator_releases.py), kept as far as its
    labels and its containers' names and images (the release they name); any other only by name."""
    stub = {"apiVersion": item["apiVersion"], "kind": item["kind"], "metadata": _identity(item)}
    if not runs_an_operator(item):
        return stub
    labels = mapping(mapping(item.get("metadata")).get("labels"))
    pod = mapping(mapping(mapping(item.get("spec")).get("template")).get("spec"))
    containers = [
        {key: container[key] for key in ("name", "image") if key in container}
        for container in map(mapping, sequence(pod.get("containers")))
    ]
    return {
        **stub,
        "metadata": {**_identity(item), "labels": dict(labels)},
        "spec": {"template": {"spec": {"containers": containers}}},
    }


# What of a DaemonSet's pod template the pool model reads (Resolver.daemon_pods: pod_requirements of
# effective_pod_spec): its requests, node selection and tolerations (hostNetwork adds one). Not its images,
# commands, volumes or probes, most of its bytes.
_DAEMON_POD_FIELDS = ("nodeSelector", "tolerations", "hostNetwork", "overhead", "resources")
_DAEMON_CONTAINER_FIELDS = ("name", "resources", "restartPolicy")  # restartPolicy: a restartable sidecar's


def daemon_set_essentials(item: dict[str, Any]) -> dict[str, Any]:
    """A DaemonSet as the pool model reads it: on a node a pool adds, its pod takes its requests and one of the
    node's pods first (Karpenter's daemonset overhead, gpulint/kube/pools/fit.py daemon_overhead)."""
    pod = mapping(mapping(mapping(item.get("spec")).get("template")).get("spec"))
    spec: dict[str, Any] = {key: pod[key] for key in _DAEMON_POD_FIELDS if key in pod}
    required = mapping(mapping(pod.get("affinity")).get("nodeAffinity")).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required is not None:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}
    for key in ("initContainers", "containers"):
        if key in pod:
            spec[key] = [
                {name: container[name] for name in _DAEMON_CONTAINER_FIELDS if name in container}
                for container in map(mapping, sequence(pod.get(key)))
            ]
    return {
        "apiVersion": item["apiVersion"],
        "kind": item["kind"],
        "metadata": _identity(item),
        "spec": {"template": {"spec": spec}},
    }


def compute_class_essentials(item: dict[str, Any]) -> dict[str, Any]:
    """A GKE ComputeClass as gpulint/kube/pools/gke.py reads it: its name, spec.nodePoolAutoCreation, and the nodes
    its priorities describe (priorities, whenUnsatisfiable, the node labels and image of nodePoolConfig)."""
    written = mapping(item.get("spec"))
    creation = mapping(written.get("nodePoolAutoCreation"))
    spec: dict[str, Any] = {"nodePoolAutoCreation": {"enabled": creation["enabled"]}} if "enabled" in creation else {}
    config = mapping(written.get("nodePoolConfig"))
    kept = {key: config[key] for key in ("nodeLabels", "imageType") if key in config}
    if kept:
        spec["nodePoolConfig"] = kept
    for key in ("priorities", "whenUnsatisfiable"):
        if key in written:
            spec[key] = written[key]
    return {"apiVersion": item["apiVersion"], "kind": item["kind"], "metadata": _identity(item), "spec": spec}


def mutating_webhook_essentials(item: dict[str, Any]) -> dict[str, Any]:
    """A MutatingWebhookConfiguration as gpulint/kube/mutating_webhooks.py reads it: each webhook's name and what it
    matches (rules, matchPolicy, selectors, matchConditions), not where it is served (clientConfig: its caBundle is
    most of the object's bytes)."""
    webhooks = [
        {key: value for key, value in webhook.items() if key != "clientConfig"}
        for webhook in map(mapping, sequence(item.get("webhooks")))
    ]
    return {"apiVersion": item["apiVersion"], "kind": item["kind"], "metadata": _identity(item), "webhooks": webhooks}


# What the inventory reads, as a table keyed by kind: how the API serves each (group, versions newest first,
# plural, scope) is its row in lint/world/kinds.py; here only how it is read. The RBAC of the Helm chart
# (deploy/chart) grants list and watch on exactly these (tests/integration/test_chart.py holds the two together).
INVENTORY_APIS: tuple[InventoryApi, ...] = (
    # A Node as the inventory files keep it: without its cached images and volumes (lint/world/inventory.py)
    InventoryApi(BY_KEY["", "Node"], essentials=compact_item),
    InventoryApi(BY_KEY["", "Namespace"]),
    # Running pods use node capacity ("does not fit now"); terminal ones do not.
    InventoryApi(BY_KEY["", "Pod"], field_selector="status.phase!=Succeeded,status.phase!=Failed", optional=True),
    InventoryApi(BY_KEY[DRA_GROUP, "ResourceSlice"]),
    InventoryApi(BY_KEY[DRA_GROUP, "DeviceClass"]),
    InventoryApi(BY_KEY[DRA_GROUP, "ResourceClaim"]),
    InventoryApi(BY_KEY[DRA_GROUP, "ResourceClaimTemplate"]),
    # DeviceTaintRules (DRADeviceTaints) taint the devices they select as if their slices did: v1alpha3
    # from 1.33, v1beta2 from 1.36, v1 from 1.37.
    InventoryApi(BY_KEY[DRA_GROUP, "DeviceTaintRule"]),
    InventoryApi(BY_KEY["scheduling.k8s.io", "Workload"]),
    InventoryApi(BY_KEY["scheduling.k8s.io", "PodGroup"]),
    InventoryApi(BY_KEY["scheduling.k8s.io", "CompositePodGroup"]),
    InventoryApi(BY_KEY["scheduling.x-k8s.io", "PodGroup"]),
    InventoryApi(BY_KEY[VOLCANO_GROUP, "PodGroup"]),
    InventoryApi(BY_KEY["node.k8s.io", "RuntimeClass"]),
    # The admission layer: namespace limits and quotas, Kueue's queues and flavors, Volcano and KAI queues.
    InventoryApi(BY_KEY["", "LimitRange"]),
    InventoryApi(BY_KEY["", "ResourceQuota"]),
    InventoryApi(BY_KEY["scheduling.k8s.io", "PriorityClass"]),
    *(InventoryApi(BY_KEY[KUEUE_GROUP, kind]) for kind in KUEUE_KINDS),
    # a queued job naming a class the live list lacks gets no Workload (WorkloadPriorityClassNotFound)
    InventoryApi(BY_KEY[KUEUE_GROUP, "WorkloadPriorityClass"]),
    InventoryApi(BY_KEY[VOLCANO_GROUP, "Queue"]),
    InventoryApi(BY_KEY[KAI_GROUP, "Queue"]),
    # Node pools: the nodes that can exist (gpulint/kube/pools/readers.py). Karpenter's NodePools and the
    # NodeClasses they reference (an EC2NodeClass's subnets name the zones its nodes launch in);
    # cluster-api's MachineDeployments, MachineSets and MachinePools, the node groups of Cluster Autoscaler's
    # clusterapi provider (a MachineSet a MachineDeployment owns is not a group of its own: the reader skips it).
    InventoryApi(BY_KEY[KARPENTER_GROUP, "NodePool"]),
    InventoryApi(BY_KEY["karpenter.k8s.aws", "EC2NodeClass"]),
    InventoryApi(BY_KEY["karpenter.azure.com", "AKSNodeClass"]),
    InventoryApi(BY_KEY[CAPI_GROUP, "MachineDeployment"]),
    InventoryApi(BY_KEY[CAPI_GROUP, "MachineSet"]),
    InventoryApi(BY_KEY[CAPI_GROUP, "MachinePool"]),
    # The Machines link a node to its MachineSet (providerID, ownerReferences: gpulint/kube/pools/capi.py), whose
    # group then takes its template from that live node, as the autoscaler does. Kept: those two fields.
    InventoryApi(BY_KEY[CAPI_GROUP, "Machine"], essentials=machine_essentials),
    # The cluster's DaemonSets (as `kubectl get daemonsets -A` in an inventory file): on a node a pool adds, each
    # whose pod goes there takes its requests and one of the node's pods first. Kept: what the pool model reads.
    InventoryApi(BY_KEY["apps", "DaemonSet"], essentials=daemon_set_essentials),
    # GKE's ComputeClasses (a CRD GKE installs): the class named default, or one whose nodePoolAutoCreation is on,
    # may make GKE create a node pool for a pod (gpulint/kube/pools/gke.py), of a shape its priorities describe
    # (gke_classes.py). Kept: its name, that switch, and what the priorities make.
    InventoryApi(BY_KEY["cloud.google.com", "ComputeClass"], essentials=compute_class_essentials),
    # Cluster Autoscaler's status ConfigMap: the node groups it manages (gpulint/lint/world/autoscaler_status.py). One
    # object: the chart's Role grants list and watch on that name only, in kube-system.
    InventoryApi(
        BY_KEY["", "ConfigMap"],
        field_selector=f"metadata.name={STATUS_NAME}",
        namespace=STATUS_NAMESPACE,
        whole_kind=False,
    ),
    # Cluster Autoscaler's Deployment: its --startup-taint/--status-taint flags decide which taints of a live node
    # its template keeps (gpulint/kube/pools/autoscaler_taints.py). Read where it writes its status ConfigMap
    # (--namespace, kube-system by default); which Deployment runs it shows only in its containers, so the chart's
    # Role grants list and watch on that namespace's Deployments, and only the autoscaler's command lines are kept.
    InventoryApi(
        BY_KEY["apps", "Deployment"], namespace=STATUS_NAMESPACE, whole_kind=False, essentials=autoscaler_essentials
    ),
    # The operators' controller Deployments, in any namespace: their images and labels name the releases of KAI,
    # KServe, Knative Serving, Kueue and KubeRay (lint/world/operator_releases.py). Read by --live-inventory only,
    # with the user's credentials (the webhook's chart grants no cluster-wide Deployment read); each Deployment
    # that runs no such controller is dropped to its name at once.
    InventoryApi(
        BY_KEY["apps", "Deployment"],
        whole_kind=False,
        essentials=operator_essentials,
        snapshot_only=True,
        label="operators",
    ),
    # The cluster's own admission: its ValidatingAdmissionPolicies with their bindings (api-rejected judges an object
    # by those that bind it) and the mutating webhooks the API server calls before it validates an object
    # (schema-invalid: a required field such a webhook may add is not missing). Read whole: few and small.
    InventoryApi(BY_KEY[ADMISSION_GROUP, "ValidatingAdmissionPolicy"]),
    InventoryApi(BY_KEY[ADMISSION_GROUP, "ValidatingAdmissionPolicyBinding"]),
    InventoryApi(BY_KEY[ADMISSION_GROUP, "MutatingWebhookConfiguration"], essentials=mutating_webhook_essentials),
    # A CRD's schema validates its instances (gpulint/lint/crd_schema.py) instead of the bundled one:
    # kept are its names and each version's schema, without descriptions (most of its bytes).
    InventoryApi(
        BY_KEY["apiextensions.k8s.io", "CustomResourceDefinition"], page_size=CRD_PAGE_SIZE, essentials=crd_essentials
    ),
)


class LiveInventoryError(Exception):
    """The cluster cannot be read (no kubeconfig, unreachable, forbidden): a usage error (exit 2)."""


class ApiStatusError(LiveInventoryError):
    def __init__(self, status: int, path: str, reason: str) -> None:
        super().__init__(f"GET {path}: HTTP {status} {reason}".rstrip())
        self.status = status


def api_configuration(kubeconfig: str | None = None, context: str | None = None) -> Any:
    """The client configuration: the kubeconfig (and context) when given or present, else in-cluster."""
    import os

    try:
        from kubernetes import client, config
    except ImportError as exc:
        raise LiveInventoryError("the live inventory needs the kubernetes client: pip install 'gpulint[live]'") from exc
    configuration = client.Configuration()
    try:
        if kubeconfig or context or not os.environ.get("KUBERNETES_SERVICE_HOST"):
            config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)
        else:
            config.load_incluster_config(client_configuration=configuration)
    except Exception as exc:  # the loaders raise ConfigException, OSError, yaml errors, KeyError...
        where = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
        raise LiveInventoryError(f"cannot load the cluster configuration from {where}: {exc}") from exc
    return configuration


class Transport:
    """GET JSON and watch streams over urllib3, with the client configuration's TLS and credentials."""

    def __init__(self, configuration: Any) -> None:
        import urllib3

        self._configuration = configuration
        host = str(configuration.host).rstrip("/")
        self._host = host
        options: dict[str, Any] = {"num_pools": 4, "maxsize": 16}
        if host.startswith("https"):
            options["cert_reqs"] = "CERT_REQUIRED" if configuration.verify_ssl else "CERT_NONE"
            if configuration.ssl_ca_cert:
                options["ca_certs"] = configuration.ssl_ca_cert
            if configuration.cert_file:
                options["cert_file"] = configuration.cert_file
            if configuration.key_file:
                options["key_file"] = configuration.key_file
            if getattr(configuration, "tls_server_name", None):
                options["server_hostname"] = configuration.tls_server_name
            if getattr(configuration, "assert_hostname", None) is not None:
                options["assert_hostname"] = configuration.assert_hostname
        proxy = getattr(configuration, "proxy", None)
        self._pool = urllib3.ProxyManager(proxy, **options) if proxy else urllib3.PoolManager(**options)
        self._urllib3 = urllib3

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "gpulint"}
        # auth_settings() runs the token refresh hook (exec plugins, rotated service-account tokens)
        # and knows under which key this client release keeps the token.
        for setting in self._configuration.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[str(setting["key"]).title()] = str(setting["value"])
        if "Authorization" not in headers and (self._configuration.username or self._configuration.password):
            headers["Authorization"] = self._configuration.get_basic_auth_token()
        return headers

    def _request(self, path: str, query: dict[str, str], read_seconds: float) -> Any:
        url = self._host + path + (f"?{urlencode(query)}" if query else "")
        timeout = self._urllib3.Timeout(connect=CONNECT_SECONDS, read=read_seconds)
        try:
            response = self._pool.request(
                "GET", url, headers=self._headers(), preload_content=False, timeout=timeout, retries=False
            )
        except self._urllib3.exceptions.HTTPError as exc:
            raise LiveInventoryError(f"GET {path}: {exc}") from exc
        if response.status != 200:
            reason = _status_message(response.read(64 * 1024, decode_content=True))
            response.release_conn()
            raise ApiStatusError(response.status, path, reason or str(response.reason or ""))
        return response

    def get(self, path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
        response = self._request(path, query or {}, READ_SECONDS)
        try:
            body = response.read(MAX_BODY_BYTES + 1, decode_content=True)
        finally:
            response.release_conn()
        if len(body) > MAX_BODY_BYTES:
            raise LiveInventoryError(f"GET {path}: the answer is over {MAX_BODY_BYTES} bytes")
        try:
            answer = json.loads(body)
        except ValueError as exc:
            raise LiveInventoryError(f"GET {path}: the answer is not JSON ({exc})") from exc
        if not isinstance(answer, dict):
            raise LiveInventoryError(f"GET {path}: the answer is not a JSON object")
        return answer

    def watch(self, path: str, query: dict[str, str]) -> Iterator[dict[str, Any]]:
        """The events of one watch, one JSON object a line, until the server ends it."""
        response = self._request(path, query, WATCH_SECONDS + 30.0)
        pending = b""
        try:
            for chunk in response.stream(64 * 1024, decode_content=True):
                pending += chunk
                while b"\n" in pending:
                    line, _, pending = pending.partition(b"\n")
                    if line.strip():
                        yield _event(path, line)
                if len(pending) > MAX_EVENT_BYTES:
                    raise LiveInventoryError(f"watch {path}: an event is over {MAX_EVENT_BYTES} bytes")
            if pending.strip():
                yield _event(path, pending)
        finally:
            response.release_conn()


def _event(path: str, line: bytes) -> dict[str, Any]:
    try:
        event = json.loads(line)
    except ValueError as exc:
        raise LiveInventoryError(f"watch {path}: an event is not JSON ({exc})") from exc
    if not isinstance(event, dict):
        raise LiveInventoryError(f"watch {path}: an event is not a JSON object")
    return event


def _status_message(body: bytes) -> str:
    try:
        status = json.loads(body)
    except ValueError:
        return ""
    return str(status.get("message") or "")[:300] if isinstance(status, dict) else ""


@dataclass(frozen=True)
class Discovery:
    """The version of each inventory API the cluster serves (absent: not served)."""

    served: dict[InventoryApi, str]

    def describe(self) -> str:
        return ", ".join(sorted(f"{api.kind}.{api.group or 'core'}/{version}" for api, version in self.served.items()))


def discover(transport: Transport, apis: tuple[InventoryApi, ...] = INVENTORY_APIS) -> Discovery:
    """Pick, for each API, the newest version gpulint reads that the cluster serves with that resource."""
    groups = transport.get("/apis")
    offered: dict[str, set[str]] = {}
    for group in groups.get("groups") or []:
        if isinstance(group, dict):
            versions = {str(v.get("version")) for v in group.get("versions") or [] if isinstance(v, dict)}
            offered[str(group.get("name"))] = versions
    resources: dict[str, set[str]] = {}

    def serves(api: InventoryApi, version: str) -> bool:
        group_version = api.api_version(version)
        if group_version not in resources:
            prefix = f"/apis/{group_version}" if api.group else f"/api/{version}"
            try:
                listing = transport.get(prefix)
            except ApiStatusError as exc:
                if exc.status != 404:  # 404: the group version went away between the two requests
                    raise
                listing = {}
            resources[group_version] = {
                str(r.get("name")) for r in listing.get("resources") or [] if isinstance(r, dict)
            }
        return api.plural in resources[group_version]

    served: dict[InventoryApi, str] = {}
    for api in apis:
        candidates = api.versions if not api.group else [v for v in api.versions if v in offered.get(api.group, ())]
        for version in candidates:
            if serves(api, version):
                served[api] = version
                break
    return Discovery(served)


def list_all(transport: Transport, api: InventoryApi, version: str) -> tuple[list[dict[str, Any]], str]:
    """Every object of one API (in pages), with the list's resourceVersion to watch from."""
    items: list[dict[str, Any]] = []
    query = {"limit": str(api.page_size)}
    if api.field_selector:
        query["fieldSelector"] = api.field_selector
    for _ in range(MAX_LIST_PAGES):
        page = transport.get(api.collection_path(version), query)
        items.extend(_trimmed(item, api, version) for item in page.get("items") or [] if isinstance(item, dict))
        if len(items) > MAX_LIST_ITEMS:
            raise LiveInventoryError(f"list {_name(api)}: over {MAX_LIST_ITEMS} objects; not read")
        metadata = mapping(page.get("metadata"))
        token = str(metadata.get("continue") or "")
        if not token:
            return items, str(metadata.get("resourceVersion") or "")
        query["continue"] = token
    raise LiveInventoryError(f"list {_name(api)}: over {MAX_LIST_PAGES} pages, each with a continue token; not read")


def _trimmed(item: dict[str, Any], api: InventoryApi, version: str) -> dict[str, Any]:
    """List items carry no apiVersion/kind; managedFields and last-applied copies are dead weight."""
    metadata = dict(item.get("metadata") or {})
    metadata.pop("managedFields", None)
    annotations = metadata.get("annotations")
    if isinstance(annotations, dict) and "kubectl.kubernetes.io/last-applied-configuration" in annotations:
        metadata["annotations"] = {
            k: v for k, v in annotations.items() if k != "kubectl.kubernetes.io/last-applied-configuration"
        }
    trimmed = {**item, "apiVersion": api.api_version(version), "kind": api.kind, "metadata": metadata}
    return api.essentials(trimmed) if api.essentials else trimmed


def build_inventory(
    objects: list[dict[str, Any]], apis: tuple[InventoryApi, ...], unsynced: frozenset[str] = frozenset()
) -> ClusterInventory:
    """The inventory of a cluster's objects; every kind read is listed (absent from it: absent from the cluster),
    except the ``unsynced`` kinds: an API of theirs is not listed now, so their absence proves nothing."""
    inventory = ClusterInventory(sources=(LOCATION,), listed_kinds=listed_kinds(apis) - unsynced)
    # as files are read (inventory.add_sources): the autoscaler's flags, and the links from nodes to their groups
    inventory.autoscaler_taints = autoscaler_taints(item for item in objects if item.get("kind") == "Deployment")
    links = [item for item in objects if item.get("kind") in CAPI_MEMBER_KINDS]
    if links:
        inventory.capi = CapiIndex()
        for item in links:
            inventory.capi.add(item)
    for index, item in enumerate(objects):
        if is_status_config_map(item):  # one ConfigMap: not the kind's whole set, so not an inventory object
            inventory.autoscaler_groups.extend(node_groups((item,)))
            continue
        if item.get("kind") == "Deployment":  # read for its flags only
            continue
        for obj in objects_in(LocatedDocument(LOCATION, index, item, None)):
            inventory.add(obj)
        inventory.pool_specs.extend(pools_in_document(item, LOCATION))  # as files are read (add_sources)
        inventory.node_class_zones.update(node_class_zones(item))
        inventory.node_class_kubelets.update(node_class_kubelets(item))
        inventory.gke = gke_auto_creation(item, inventory.gke)
    inventory.listed_kinds -= unsynced  # add() marks every kind it sees: the last listing's objects are kept
    inventory.unlisted_kinds = unsynced
    inventory.account_running_pods()
    return inventory


def listed_kinds(apis: tuple[InventoryApi, ...]) -> set[str]:
    """The kinds whose every object the APIs list."""
    return {api.kind for api in apis if api.whole_kind}


def partial_kinds(apis: tuple[InventoryApi, ...]) -> set[str]:
    """The kinds of which only some objects are read (a ConfigMap by name): never taken as listed."""
    return {api.kind for api in apis if not api.whole_kind} - listed_kinds(apis)


def selected_apis(include_pods: bool, watching: bool = False) -> tuple[InventoryApi, ...]:
    """The APIs read: the optional ones only when asked, the snapshot-only ones unless ``watching`` (the webhook)."""
    return tuple(
        api for api in INVENTORY_APIS if (include_pods or not api.optional) and not (watching and api.snapshot_only)
    )


WATCHED_APIS = selected_apis(include_pods=True, watching=True)


def read_cluster(
    transport: Transport, apis: tuple[InventoryApi, ...] = INVENTORY_APIS
) -> tuple[list[Source], set[str]]:
    """One snapshot (the CLI's --live-inventory): discover, then list each served API.

    Returns one JSON source per API (``live:nodes``, ``live:resourceslices.resource.k8s.io`` ...),
    read by the same inventory loader as files are, and the kinds read: those the cluster does
    not serve are read too (it holds none of them).
    """
    discovery = discover(transport, apis)
    sources = []
    for api, version in discovery.served.items():
        try:
            items = list_all(transport, api, version)[0]
        except ApiStatusError as exc:
            if api.snapshot_only and exc.status == 403:
                continue  # not granted: what it would tell stays unknown
            raise
        display = (
            f"{LOCATION}:{api.plural}" + (f".{api.group}" if api.group else "") + (f"/{api.label}" if api.label else "")
        )
        # One field a line: a finding's line then points inside the object it is about.
        body = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1, sort_keys=False)
        sources.append(Source(display, None, body.encode()))
    return sources, listed_kinds(apis)


Log = Callable[..., None]


@dataclass
class _Watcher:
    api: InventoryApi
    version: str
    stop: threading.Event = field(default_factory=threading.Event)
    tried: bool = False  # a list has succeeded or failed once
    listed: bool = False  # the objects are those of the last list (and its watch): absence is evidence
    synced_at: float | None = None  # time.time() of the last list that succeeded
    errors: int = 0  # lists and watches that failed
    error: str = ""  # the last failure, while the API is not listed


@dataclass(frozen=True)
class ApiSyncState:
    """One watched API, for /metrics and /readyz."""

    name: str  # plural.group, e.g. clusterqueues.kueue.x-k8s.io
    listed: bool
    synced_at: float | None
    errors: int
    error: str


class LiveInventory:
    """Lists and watches the served inventory APIs; hands a new ClusterInventory to ``on_change``.

    Synced once discovery has answered and every served API has been listed; ready once the first
    inventory built then has been handed over.
    Watch events mark the inventory dirty; it is rebuilt at most once per PUBLISH_SECONDS. The
    publisher sleeps on a condition until the inventory is both dirty and synced (or stopping):
    no polling while an API is still being listed.
    """

    def __init__(
        self,
        transport: Transport,
        on_change: Callable[[ClusterInventory], None],
        log: Log,
        apis: tuple[InventoryApi, ...] = WATCHED_APIS,
    ) -> None:
        self._transport = transport
        self._on_change = on_change
        self._log = log
        self._apis = apis
        self._objects: dict[InventoryApi, dict[str, dict[str, Any]]] = {}
        self._watchers: dict[InventoryApi, _Watcher] = {}
        self._discovered = False
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # notified with _dirty, a listing or stop
        self._stop = threading.Event()
        self._dirty = False  # guarded by _lock
        self.published_at: float | None = None
        # 401 answers (an expired or revoked token): counted, and whether the API server's last answer was one
        self.unauthorized = 0
        self.credentials_rejected = False

    @property
    def ready(self) -> bool:
        """An inventory has been handed over (then a later API only adds to it once listed)."""
        return self.published_at is not None

    @property
    def synced(self) -> bool:
        with self._lock:
            return self._discovered and all(w.listed for w in self._watchers.values())

    def _settled(self) -> bool:
        """With _lock held: discovery has answered and every served API has been listed, or has failed to be.
        One API that cannot be listed (a CRD whose conversion webhook is down) must not hold back the others:
        what is listed is published, and the kinds of what is not are marked unlisted."""
        return self._discovered and all(w.tried for w in self._watchers.values())

    def _mark_dirty(self) -> None:
        """With _lock held: wake the publisher."""
        self._dirty = True
        self._changed.notify_all()

    def pending(self) -> list[str]:
        """What readiness waits for, for /readyz and the logs."""
        with self._lock:
            if not self._discovered:
                return ["API discovery"]
            return sorted(_name(w.api) for w in self._watchers.values() if not w.tried)

    def sync_states(self) -> list[ApiSyncState]:
        """Every watched API's state, by name."""
        with self._lock:
            watchers = list(self._watchers.values())
        return sorted(
            (ApiSyncState(_name(w.api), w.listed, w.synced_at, w.errors, w.error) for w in watchers),
            key=lambda state: state.name,
        )

    def stale(self) -> list[str]:
        """The APIs not listed now, each with its last error (for /readyz)."""
        return [f"{state.name} ({state.error or 'not listed yet'})" for state in self.sync_states() if not state.listed]

    def start(self) -> None:
        threading.Thread(target=self._discover_loop, name="inventory-discovery", daemon=True).start()
        threading.Thread(target=self._publish_loop, name="inventory-publish", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            for watcher in self._watchers.values():
                watcher.stop.set()
            self._changed.notify_all()

    def _discover_loop(self) -> None:
        while not self._stop.is_set():
            try:
                discovery = discover(self._transport, self._apis)
                self.credentials_rejected = False
            except Exception as exc:
                self._credentials(exc)
                self._log("live_inventory_error", stage="discovery", error=f"{type(exc).__name__}: {exc}"[:300])
                self._stop.wait(RETRY_SECONDS)
                continue
            self._reconcile(discovery)
            self._stop.wait(REDISCOVER_SECONDS)

    def _reconcile(self, discovery: Discovery) -> None:
        started: list[_Watcher] = []
        with self._lock:
            changed = not self._discovered
            for api in self._apis:
                version = discovery.served.get(api)
                current = self._watchers.get(api)
                if current is not None and current.version == version:
                    continue
                changed = True
                if current is not None:  # the served version changed, or the API went away
                    current.stop.set()
                    del self._watchers[api]
                    self._objects.pop(api, None)
                if version is not None:
                    watcher = _Watcher(api, version)
                    self._watchers[api] = watcher
                    started.append(watcher)
            self._discovered = True
            if changed:
                self._mark_dirty()
        if changed:
            self._log("live_inventory_discovered", served=discovery.describe() or "none of the inventory APIs")
        for watcher in started:
            threading.Thread(
                target=self._watch_loop, args=(watcher,), name=f"watch-{watcher.api.plural}", daemon=True
            ).start()

    def _watch_loop(self, watcher: _Watcher) -> None:
        api, version = watcher.api, watcher.version
        while not (watcher.stop.is_set() or self._stop.is_set()):
            stage = "list"
            try:
                items, resource_version = list_all(self._transport, api, version)
                with self._lock:
                    if watcher.stop.is_set():
                        return
                    self._objects[api] = {_key(item): item for item in items}
                    watcher.tried = watcher.listed = True
                    watcher.synced_at, watcher.error = time.time(), ""
                    self.credentials_rejected = False
                    self._mark_dirty()
                stage = "watch"  # a watch that ends in error is followed by a relist: the list says if it is stale
                self._follow(watcher, resource_version)
            except Exception as exc:
                if watcher.stop.is_set() or self._stop.is_set():
                    return
                message = f"{type(exc).__name__}: {exc}"[:300]
                self._credentials(exc)
                with self._lock:
                    watcher.errors += 1
                    if stage == "list":
                        # Not listed now: what it held stays (the last listing) but its absence proves nothing,
                        # and the other APIs are published without waiting for it.
                        watcher.error = message
                        if watcher.listed or not watcher.tried:
                            watcher.tried, watcher.listed = True, False
                            self._mark_dirty()
                self._log("live_inventory_error", resource=api.plural, group=api.group, stage=stage, error=message)
            watcher.stop.wait(RETRY_SECONDS)

    def _credentials(self, error: BaseException) -> None:
        """Count a 401: the token expired or was revoked, and until a new one works nothing is listed."""
        if isinstance(error, ApiStatusError) and error.status == 401:
            with self._lock:
                self.unauthorized += 1
                self.credentials_rejected = True

    def _follow(self, watcher: _Watcher, resource_version: str) -> None:
        """Watch from resource_version; resume after the server ends a watch; return to relist on 410 Gone."""
        api, version = watcher.api, watcher.version
        while not (watcher.stop.is_set() or self._stop.is_set()):
            query = {"watch": "true", "allowWatchBookmarks": "true", "timeoutSeconds": str(WATCH_SECONDS)}
            if resource_version:
                query["resourceVersion"] = resource_version
            if api.field_selector:
                query["fieldSelector"] = api.field_selector
            for event in self._transport.watch(api.collection_path(version), query):
                if watcher.stop.is_set() or self._stop.is_set():
                    return
                kind, raw = event.get("type"), event.get("object")
                if not isinstance(raw, dict):
                    continue
                if kind == "ERROR":  # a Status: 410 Gone means our version is too old: relist
                    raise LiveInventoryError(f"watch {api.plural}: {raw.get('code')} {raw.get('message', '')}"[:300])
                metadata = mapping(raw.get("metadata"))
                resource_version = str(metadata.get("resourceVersion") or resource_version)
                if kind == "BOOKMARK":
                    continue
                with self._lock:
                    table = self._objects.setdefault(api, {})
                    if kind == "DELETED":
                        table.pop(_key(raw), None)
                    else:
                        table[_key(raw)] = _trimmed(raw, api, version)
                    self._mark_dirty()

    def _publish_loop(self) -> None:
        while not self._stop.is_set():
            with self._changed:
                self._changed.wait_for(lambda: self._stop.is_set() or (self._dirty and self._settled()))
                if self._stop.is_set():
                    return
                self._dirty = False
                snapshot = [item for table in self._objects.values() for item in table.values()]
                unsynced = frozenset(w.api.kind for w in self._watchers.values() if not w.listed)
            try:
                inventory = build_inventory(snapshot, self._apis, unsynced)
            except Exception as exc:  # an object gpulint cannot model must not stop the updates
                self._log("live_inventory_error", stage="build", error=f"{type(exc).__name__}: {exc}"[:300])
            else:
                self._on_change(inventory)
                self.published_at = time.time()
            self._stop.wait(PUBLISH_SECONDS)


def _name(api: InventoryApi) -> str:
    return f"{api.plural}.{api.group or 'core'}"


def _key(item: dict[str, Any]) -> str:
    metadata = item.get("metadata") or {}
    return str(metadata.get("uid") or f"{metadata.get('namespace', '')}/{metadata.get('name', '')}")
