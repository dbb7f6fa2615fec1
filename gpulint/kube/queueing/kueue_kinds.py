"""Kueue's API group and the kinds gpulint reads from it, apart from the model that reads them (kueue.py):
every run collects these objects, and only a run that meets a queue needs the model's classes."""

from __future__ import annotations

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_KINDS = (
    "ClusterQueue",
    "LocalQueue",
    "ResourceFlavor",
    "Cohort",
    "Topology",
    "AdmissionCheck",
    "ProvisioningRequestConfig",
    "MultiKueueConfig",
    "MultiKueueCluster",
)
