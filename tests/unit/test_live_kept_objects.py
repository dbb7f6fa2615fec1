"""What the live inventory keeps of a DaemonSet, a ComputeClass and a MutatingWebhookConfiguration: the least data,
and all the models read."""

from __future__ import annotations

import copy
from fractions import Fraction

from gpulint.kube.mutating_webhooks import CreateRequest, Scope, mutating_webhooks
from gpulint.kube.pools.gke import ComputeClass, compute_class, gke_auto_creation
from gpulint.kube.scheduler import pod_requirements
from gpulint.kube.workloads import effective_pod_spec
from gpulint.lint.world.live_inventory import (
    INVENTORY_APIS,
    compute_class_essentials,
    daemon_set_essentials,
    mutating_webhook_essentials,
)

# Shaped like EKS's aws-node (amazon-vpc-cni-k8s chart) with a native sidecar: host network, an init container,
# required node affinity, every taint tolerated; plus a pod overhead (a RuntimeClass's) and a nodeSelector.
AWS_NODE = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": {
        "name": "aws-node",
        "namespace": "kube-system",
        "uid": "uid-aws-node",
        "resourceVersion": "4711",
        "labels": {"k8s-app": "aws-node"},
        "annotations": {"deprecated.daemonset.template.generation": "3"},
    },
    "spec": {
        "selector": {"matchLabels": {"k8s-app": "aws-node"}},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}},
        "template": {
            "metadata": {"labels": {"k8s-app": "aws-node"}},
            "spec": {
                "priorityClassName": "system-node-critical",
                "serviceAccountName": "aws-node",
                "hostNetwork": True,
                "nodeSelector": {"kubernetes.io/os": "linux"},
                "overhead": {"cpu": "10m", "memory": "16Mi"},
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]},
                                        {
                                            "key": "eks.amazonaws.com/compute-type",
                                            "operator": "NotIn",
                                            "values": ["fargate", "hybrid"],
                                        },
                                    ]
                                }
                            ]
                        },
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 1, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
                        ],
                    }
                },
                "tolerations": [{"operator": "Exists"}],
                "initContainers": [
                    {
                        "name": "aws-vpc-cni-init",
                        "image": "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni-init:v1.18.3",
                        "resources": {"requests": {"cpu": "25m"}},
                        "securityContext": {"privileged": True},
                    },
                    {
                        "name": "log-shipper",
                        "image": "fluent-bit:3.1",
                        "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
                    },
                ],
                "containers": [
                    {
                        "name": "aws-node",
                        "image": "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.18.3",
                        "env": [{"name": "ENABLE_PREFIX_DELEGATION", "value": "true"}],
                        "resources": {"requests": {"cpu": "25m"}},
                        "livenessProbe": {"exec": {"command": ["/app/grpc-health-probe", "-addr=:50051"]}},
                        "volumeMounts": [{"mountPath": "/host/opt/cni/bin", "name": "cni-bin-dir"}],
                    },
                    {
                        "name": "aws-eks-nodeagent",
                        "image": "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon/aws-network-policy-agent:v1.1.2",
                        "resources": {"limits": {"memory": "256Mi"}},
                    },
                ],
                "volumes": [{"name": "cni-bin-dir", "hostPath": {"path": "/opt/cni/bin"}}],
            },
        },
    },
    "status": {"desiredNumberScheduled": 12, "numberReady": 12},
}


def daemon_pod(data: dict):
    spec = data["spec"]["template"]["spec"]
    return pod_requirements(effective_pod_spec("DaemonSet", spec))


def test_a_daemon_set_is_kept_as_the_pool_model_reads_it_and_no_more():
    kept = daemon_set_essentials(copy.deepcopy(AWS_NODE))
    assert daemon_pod(kept) == daemon_pod(AWS_NODE)  # requests (sidecar, overhead), selection, tolerations
    # aws-node's 25m and the sidecar's 50m beside it (the init container's 25m runs before), the overhead's 10m;
    # the node agent's 256Mi (a limit: its request), the sidecar's 64Mi, the overhead's 16Mi
    assert daemon_pod(kept).requests == {"cpu": Fraction(85, 1000), "memory": Fraction(336 * 2**20)}
    assert kept["metadata"] == {
        "name": "aws-node",
        "namespace": "kube-system",
        "uid": "uid-aws-node",
        "resourceVersion": "4711",
    }
    pod = kept["spec"]["template"]["spec"]
    assert set(pod) == {
        "hostNetwork",
        "nodeSelector",
        "overhead",
        "affinity",
        "tolerations",
        "initContainers",
        "containers",
    }
    assert [set(c) for c in pod["initContainers"]] == [{"name", "resources"}, {"name", "resources", "restartPolicy"}]
    assert all(set(c) == {"name", "resources"} for c in pod["containers"])  # no image, env, probes, mounts
    assert "preferredDuringSchedulingIgnoredDuringExecution" not in pod["affinity"]["nodeAffinity"]


def test_a_daemon_set_the_pool_model_cannot_read_is_kept_empty_not_an_error():
    for spec in ({}, {"template": None}, {"template": {"spec": {"containers": "nope"}}}):
        kept = daemon_set_essentials({**AWS_NODE, "spec": spec})
        assert kept["spec"]["template"]["spec"] in ({}, {"containers": []})
        assert daemon_pod(kept).requests == {}


def test_a_compute_class_is_kept_as_its_name_auto_creation_and_priorities():
    priorities = [{"machineFamily": "g2", "gpu": {"type": "nvidia-l4", "count": 1}}, {"nodepools": ["l4-pool"]}]
    data = {
        "apiVersion": "cloud.google.com/v1",
        "kind": "ComputeClass",
        "metadata": {"name": "default", "uid": "uid-cc", "resourceVersion": "7", "labels": {"team": "ml"}},
        "spec": {
            "activeMigration": {"optimizeRulePriority": True},
            "priorities": priorities,
            "nodePoolAutoCreation": {"enabled": True},
            "nodePoolConfig": {"imageStreaming": {"enabled": True}, "imageType": "cos_containerd"},
            "whenUnsatisfiable": "DoNotScaleUp",
        },
    }
    kept = compute_class_essentials(data)
    assert kept["spec"] == {
        "nodePoolAutoCreation": {"enabled": True},
        "nodePoolConfig": {"imageType": "cos_containerd"},
        "priorities": priorities,
        "whenUnsatisfiable": "DoNotScaleUp",
    }
    state = gke_auto_creation(kept, None)
    assert state is not None and state.classes == {"default": compute_class(data)}
    assert state.classes["default"].restricts and len(state.classes["default"].priorities) == 2
    # no nodePoolAutoCreation: off, as GKE reads a class without it
    bare = compute_class_essentials({**data, "spec": {"priorities": []}})
    assert bare["spec"] == {"priorities": []}
    state = gke_auto_creation(bare, None)
    assert state is not None and state.classes == {"default": ComputeClass("default", False)}


def test_both_are_read_cluster_wide_at_their_served_versions():
    apis = {api.kind: api for api in INVENTORY_APIS}
    daemons, classes = apis["DaemonSet"], apis["ComputeClass"]
    assert daemons.collection_path("v1") == "/apis/apps/v1/daemonsets" and daemons.whole_kind
    assert classes.collection_path("v1") == "/apis/cloud.google.com/v1/computeclasses" and classes.whole_kind
    assert not daemons.optional and not classes.optional


# Shaped like Istio's sidecar injector registration (istiod chart, trimmed): a caBundle of a few KB, two webhooks told
# apart by their namespace and object selectors.
INJECTOR = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "MutatingWebhookConfiguration",
    "metadata": {"name": "istio-sidecar-injector", "uid": "uid-injector", "resourceVersion": "812", "labels": {}},
    "webhooks": [
        {
            "name": f"{prefix}.sidecar-injector.istio.io",
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Fail",
            "reinvocationPolicy": "Never",
            "clientConfig": {
                "service": {"name": "istiod", "namespace": "istio-system", "path": "/inject", "port": 443},
                "caBundle": "LS0tLS1CRUdJTi" * 300,
            },
            "namespaceSelector": {"matchLabels": {label: "enabled"}},
            "objectSelector": {
                "matchExpressions": [{"key": "sidecar.istio.io/inject", "operator": "NotIn", "values": ["false"]}]
            },
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
        }
        for prefix, label in (("namespace", "istio-injection"), ("object", "istio.io/rev"))
    ],
}


def test_a_mutating_webhook_is_kept_without_where_it_is_served_and_matches_as_written():
    kept = mutating_webhook_essentials(copy.deepcopy(INJECTOR))
    assert all("clientConfig" not in webhook for webhook in kept["webhooks"])
    assert len(str(kept)) < len(str(INJECTOR)) // 5
    assert kept["metadata"] == {"name": "istio-sidecar-injector", "uid": "uid-injector", "resourceVersion": "812"}
    for labels, names in (
        ({"istio-injection": "enabled"}, ["namespace.sidecar-injector.istio.io"]),
        ({"istio.io/rev": "enabled"}, ["object.sidecar-injector.istio.io"]),
        ({}, []),
    ):
        request = CreateRequest("", "v1", "pods", Scope.NAMESPACED, {}, labels)
        assert list(mutating_webhooks(kept, request)) == list(mutating_webhooks(INJECTOR, request)) == names
    apis = {api.kind: api for api in INVENTORY_APIS}
    assert apis["MutatingWebhookConfiguration"].essentials is mutating_webhook_essentials
    assert apis["ValidatingAdmissionPolicy"].whole_kind and apis["ValidatingAdmissionPolicyBinding"].whole_kind
