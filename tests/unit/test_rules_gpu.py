"""gpu-request-without-limit and gpu-non-integer on real manifests, with exact positions."""

import pytest
from conftest import by_rule, lint_text, said

POD = """
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers:
  - name: main
    image: img
    resources:
{resources}
"""


def pod(resources: str) -> str:
    return POD.replace("{resources}", "\n".join("      " + line for line in resources.strip("\n").splitlines()))


def test_request_without_limit_points_at_the_request_key():
    findings = by_rule(lint_text(pod("requests:\n  nvidia.com/gpu: 2\n")), "gpu-request-without-limit")
    (finding,) = findings
    assert (finding.line, finding.column) == (10, 9)
    assert (
        finding.message
        == "container 'main' requests nvidia.com/gpu: 2 but sets no limit for it; the API server rejects the Pod"
    )
    assert finding.notes[0] == (
        "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"
    )
    assert finding.fix is not None and finding.fix.safe
    assert finding.obj.kind == "Pod" and finding.obj.namespace == "ml" and finding.obj.name == "p"
    assert finding.fix is not None and finding.fix.path[-2:] == ("limits", "nvidia.com/gpu")


def test_request_differing_from_limit_quotes_the_api_server():
    (finding,) = by_rule(
        lint_text(pod("requests:\n  nvidia.com/gpu: 1\nlimits:\n  nvidia.com/gpu: 2\n")), "gpu-request-without-limit"
    )
    assert (
        finding.message
        == "container 'main' requests nvidia.com/gpu: 1 but its limit is 2; the API server rejects the Pod"
    )
    assert (
        finding.notes[0]
        == 'spec.containers[0].resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2'
    )
    assert "either set the request to 2" in finding.notes[1] and "or lower the limit to 1" in finding.notes[1]
    assert finding.fix is not None and not finding.fix.safe  # which of the two was meant is a guess
    assert (finding.line, finding.column) == (10, 25)


@pytest.mark.parametrize(
    "resources",
    [
        "limits:\n  nvidia.com/gpu: 2\n",  # limit only: the request is defaulted
        "requests:\n  nvidia.com/gpu: 2\nlimits:\n  nvidia.com/gpu: 2\n",  # equal
        "requests:\n  nvidia.com/gpu: '2'\nlimits:\n  nvidia.com/gpu: 2000m\n",  # equal as quantities
        "requests:\n  cpu: 1\n  memory: 1Gi\n",  # native resources may be overcommitted
        "requests:\n  hugepages-2Mi: 1Gi\nlimits:\n  hugepages-2Mi: 1Gi\n",
        "requests:\n  example.kubernetes.io/foo: 1\n",  # kubernetes.io namespace: native
    ],
)
def test_clean_resources(resources):
    findings = lint_text(pod(resources))
    assert by_rule(findings, "gpu-request-without-limit") == []
    assert by_rule(findings, "gpu-non-integer") == []


@pytest.mark.parametrize("name", ["amd.com/gpu", "nvidia.com/mig-1g.10gb", "gpu.intel.com/i915", "example.com/fpga"])
def test_every_extended_resource_counts(name):
    findings = by_rule(lint_text(pod(f"requests:\n  {name}: 1\n")), "gpu-request-without-limit")
    assert len(findings) == 1 and name in findings[0].message


@pytest.mark.parametrize("value", ["0.5", "1.5", "500m", "1e-1", '"0.5"'])
def test_non_integer_quantities(value):
    (finding,) = by_rule(lint_text(pod(f"limits:\n  nvidia.com/gpu: {value}\n")), "gpu-non-integer")
    assert "must be an integer" in finding.message
    assert (finding.line, finding.column) == (10, 25)


@pytest.mark.parametrize(
    "value, words",
    [
        ("one", "not a valid Kubernetes quantity"),
        ("1K", "suffix"),
        ("-1", "greater than or equal to 0"),
        ("true", "not a quantity"),
    ],
)
def test_invalid_quantities(value, words):
    (finding,) = by_rule(lint_text(pod(f"limits:\n  nvidia.com/gpu: {value}\n")), "gpu-non-integer")
    assert words in said(finding)


@pytest.mark.parametrize("value", ["1", "1000m", "2", "'4'", "1e3", "8"])
def test_integer_quantities_are_clean(value):
    assert by_rule(lint_text(pod(f"limits:\n  nvidia.com/gpu: {value}\n")), "gpu-non-integer") == []


def test_fractional_gpu_annotation_is_not_a_quantity():
    findings = lint_text("""
        apiVersion: v1
        kind: Pod
        metadata:
          name: shared
          annotations: {gpu-fraction: "0.5", nvidia.com/gpu-memory: "0.25"}
        spec:
          schedulerName: kai-scheduler
          containers: [{name: a, image: b}]
    """)
    assert findings == []


WORKLOADS = {
    "Deployment": ("apps/v1", "spec:\n  template:\n    spec:\n      containers:\n      - {SPEC}"),
    "StatefulSet": ("apps/v1", "spec:\n  template:\n    spec:\n      containers:\n      - {SPEC}"),
    "DaemonSet": ("apps/v1", "spec:\n  template:\n    spec:\n      containers:\n      - {SPEC}"),
    "ReplicaSet": ("apps/v1", "spec:\n  template:\n    spec:\n      containers:\n      - {SPEC}"),
    "Job": ("batch/v1", "spec:\n  template:\n    spec:\n      initContainers:\n      - {SPEC}"),
    "CronJob": (
        "batch/v1",
        "spec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n          - {SPEC}",
    ),
    "PodTemplate": ("v1", "template:\n  spec:\n    ephemeralContainers:\n    - {SPEC}"),
    "JobSet": (
        "jobset.x-k8s.io/v1alpha2",
        "spec:\n  replicatedJobs:\n  - name: w\n    template:\n      spec:\n"
        "        template:\n          spec:\n            containers:\n"
        "            - {SPEC}",
    ),
    "LeaderWorkerSet": (
        "leaderworkerset.x-k8s.io/v1",
        "spec:\n  leaderWorkerTemplate:\n    workerTemplate:\n      spec:\n        containers:\n        - {SPEC}",
    ),
    "PyTorchJob": (
        "kubeflow.org/v1",
        "spec:\n  pytorchReplicaSpecs:\n    Worker:\n      template:\n        spec:\n"
        "          containers:\n          - {SPEC}",
    ),
    "MPIJob": (
        "kubeflow.org/v2beta1",
        "spec:\n  mpiReplicaSpecs:\n    Launcher:\n      template:\n        spec:\n"
        "          containers:\n          - {SPEC}",
    ),
    "TFJob": (
        "kubeflow.org/v1",
        "spec:\n  tfReplicaSpecs:\n    PS:\n      template:\n        spec:\n          containers:\n          - {SPEC}",
    ),
    "RayCluster": (
        "ray.io/v1",
        "spec:\n  workerGroupSpecs:\n  - groupName: g\n    template:\n      spec:\n"
        "        containers:\n        - {SPEC}",
    ),
    "RayJob": (
        "ray.io/v1",
        "spec:\n  rayClusterSpec:\n    headGroupSpec:\n      template:\n        spec:\n"
        "          containers:\n          - {SPEC}",
    ),
    "RayService": (
        "ray.io/v1",
        "spec:\n  rayClusterConfig:\n    workerGroupSpecs:\n    - template:\n"
        "        spec:\n          containers:\n          - {SPEC}",
    ),
}


@pytest.mark.parametrize("kind", sorted(WORKLOADS))
def test_every_workload_kind_is_checked(kind):
    api_version, body = WORKLOADS[kind]
    spec = "{name: c, image: i, resources: {requests: {nvidia.com/gpu: 1}}}"
    text = f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: w}}\n" + body.replace("{SPEC}", spec) + "\n"
    (finding,) = by_rule(lint_text(text), "gpu-request-without-limit")
    assert finding.line == text.count("\n")  # the last line holds the container
    assert finding.obj.kind == kind


def test_volcano_job_tasks():
    findings = lint_text("""
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {name: vj}
        spec:
          minAvailable: 2
          tasks:
          - name: worker
            replicas: 2
            template:
              spec:
                containers:
                - name: w
                  image: i
                  resources:
                    limits: {nvidia.com/gpu: 0.5}
    """)
    (finding,) = by_rule(findings, "gpu-non-integer")
    assert (finding.line, finding.column) == (15, 38)


def test_kind_list_items_are_objects():
    findings = lint_text("""
        apiVersion: v1
        kind: List
        items:
        - apiVersion: v1
          kind: Pod
          metadata: {name: a}
          spec:
            containers:
            - name: c
              image: i
              resources:
                requests: {nvidia.com/gpu: 1}
    """)
    (finding,) = by_rule(findings, "gpu-request-without-limit")
    assert (finding.line, finding.obj.name) == (12, "a")
    assert finding.fix.path[:2] == ("items", 0)
