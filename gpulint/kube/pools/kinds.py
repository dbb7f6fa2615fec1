"""The API groups and kinds of the node pools gpulint reads from manifests, apart from the readers and the
model (readers.py, model.py): every run collects these objects, and only one that has pools reads them."""

from __future__ import annotations

KARPENTER_GROUP = "karpenter.sh"
CAPI_GROUP = "cluster.x-k8s.io"
CAPI_KINDS = ("MachineDeployment", "MachineSet", "MachinePool")
