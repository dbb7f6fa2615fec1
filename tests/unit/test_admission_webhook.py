"""The webhook judges a queued workload at creation - a Job Kueue has just suspended - with the queues,
flavors and namespace quotas of the live watch (a local HTTPS server that speaks the Kubernetes API)."""

from __future__ import annotations

import json

from support.fake_apiserver import cluster, node, serve, wait_for
from webhook_helpers import review

KUEUE = {
    "clusterqueues": [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "cluster-queue", "resourceVersion": "1"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["nvidia.com/gpu"],
                        "flavors": [
                            {"name": "default-flavor", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]}
                        ],
                    }
                ],
            },
        }
    ],
    "localqueues": [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "user-queue", "namespace": "team-a", "resourceVersion": "1"},
            "spec": {"clusterQueue": "cluster-queue"},
        }
    ],
    "resourceflavors": [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "default-flavor", "resourceVersion": "1"},
        }
    ],
    "cohorts": [],
    "topologies": [],
}


def suspended_job(gpus: int, queue: str = "user-queue") -> dict:
    """A Job as Kueue's mutating webhook leaves it at creation: suspended, waiting for admission."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "sample-job", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": queue}},
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "i", "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
                }
            },
        },
    }


def answer(webhook, obj: dict) -> dict:
    return webhook.review(json.dumps(review(obj)).encode()).body["response"]


def test_a_queued_job_is_judged_against_the_live_queues(make_api):
    api = make_api(cluster([node("n0", 16)], **{"kueue.x-k8s.io__v1beta2": KUEUE}))
    webhook = serve(api)
    try:
        assert wait_for(lambda: webhook.ready)
        assert answer(webhook, suspended_job(8))["allowed"] is True  # exactly the nominal quota
        refused = answer(webhook, suspended_job(9))
        assert refused["allowed"] is False
        assert "queue-unadmittable" in refused["status"]["message"]
        assert "> maximum capacity (8)" in refused["status"]["message"]
        missing = answer(webhook, suspended_job(1, queue="user-queu"))
        assert missing["allowed"] is False  # the live watch lists every LocalQueue: absence is proven
        assert "LocalQueue user-queu doesn't exist in namespace team-a" in missing["status"]["message"]
    finally:
        webhook.stop()
