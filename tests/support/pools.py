"""Node pools as the nodes that can exist (test_pools.py): the pool inventories under tests/data/elastic, the
GPU Job and Volcano gang asked of them, and `gpulint check --format json` over them (test_node_catalog.py asks
the same of the shipped catalog)."""

from __future__ import annotations

from conftest import DATA, check_json, inventory_args

ELASTIC = DATA / "elastic"
KARPENTER = str(ELASTIC / "karpenter")
CAPI = str(ELASTIC / "capi")
GKE = str(ELASTIC / "gke")
EKS = str(ELASTIC / "eks")
AKS = str(ELASTIC / "aks")


def gpu_job(gpus: int, *, spec: str = "", name: str = "train") -> str:
    """A Job with one GPU container; ``spec`` adds pod-spec lines (indented 6 spaces)."""
    return f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: ml}}
spec:
  template:
    spec:
      restartPolicy: Never
{spec}      containers:
      - name: train
        image: registry.example.com/train:1.0
        resources:
          limits: {{nvidia.com/gpu: {gpus}}}
"""


def findings(write, manifest: str, *inventory: str, extra: tuple[str, ...] = ()) -> list[dict]:
    found = check_json(
        str(write("workload.yaml", manifest)), "--ignore", "dev-shm-missing", *inventory_args(*inventory), *extra
    )
    return [f for f in found if f["rule"] != "schema-invalid"]


def only(found: list[dict], rule: str) -> dict:
    matching = [f for f in found if f["rule"] == rule]
    assert len(matching) == 1, found
    return matching[0]


def volcano_job(workers: int) -> str:
    return f"""\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: mpi-train, namespace: ml}}
spec:
  minAvailable: {workers}
  schedulerName: volcano
  tasks:
  - name: worker
    replicas: {workers}
    template:
      spec:
        restartPolicy: OnFailure
        tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
        containers:
        - name: worker
          image: registry.example.com/mpi:1.0
          resources:
            limits: {{nvidia.com/gpu: 1}}
"""
