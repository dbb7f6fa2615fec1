"""mpijob-launcher, dra-config-invalid, compute-domain-mismatch, and ComputeDomain channel templates."""

from __future__ import annotations

from rule_harness import assert_findings, findings_of

MPIJOB = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: bench}
spec:
  slotsPerWorker: 2
  launcherCreationPolicy: CREATION
  GANGPOLICY_LINE
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: mpioperator/openmpi:0.6.0
            command: [mpirun, -np, "8", nvbandwidth]
    Worker:
      replicas: 4
      template:
        spec:
          SCHEDULER
          containers:
          - name: worker
            image: mpioperator/openmpi:0.6.0
            resources: {limits: {nvidia.com/gpu: 2}}
"""


def mpijob(policy="WaitForWorkersReady", run_policy="", scheduler=""):
    return (
        MPIJOB.replace("CREATION", policy)
        .replace("  GANGPOLICY_LINE\n", f"  runPolicy: {run_policy}\n" if run_policy else "")
        .replace("          SCHEDULER\n", f"          schedulerName: {scheduler}\n" if scheduler else "")
    )


def test_wait_for_workers_with_a_gang_that_counts_the_launcher():
    found = assert_findings(
        "mpijob-launcher",
        mpijob(run_policy="{schedulingPolicy: {minAvailable: 5}}"),
        [(6, 27, "schedulingPolicy.minAvailable 5 counts the launcher")],
    )
    assert found[0].severity == "error"
    found = assert_findings(
        "mpijob-launcher", mpijob(scheduler="volcano"), [(6, 27, "default minimum of workers + launcher = 5")]
    )
    assert found[0].severity == "warning"


def test_wait_for_workers_without_gang_or_with_a_worker_minimum_is_clean():
    # The NVIDIA DRA driver's nvbandwidth example: WaitForWorkersReady, no gang.
    assert_findings("mpijob-launcher", mpijob(), [])
    assert_findings("mpijob-launcher", mpijob(run_policy="{schedulingPolicy: {minAvailable: 4}}"), [])
    assert_findings("mpijob-launcher", mpijob(policy="AtStartup", scheduler="volcano"), [])


def test_launcher_gpus_idle_unless_it_runs_as_worker():
    with_gpu = mpijob(policy="AtStartup").replace(
        'command: [mpirun, -np, "8", nvbandwidth]',
        'command: [mpirun, -np, "8", nvbandwidth]\n            resources: {limits: {nvidia.com/gpu: 1}}',
    )
    assert_findings("mpijob-launcher", with_gpu, [(16, 34, "asks for 1 nvidia.com/gpu but only runs mpirun")])
    assert_findings(
        "mpijob-launcher", with_gpu.replace("slotsPerWorker: 2", "slotsPerWorker: 2\n  runLauncherAsWorker: true"), []
    )


CLAIM = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: ml}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com}
    config:
    - requests: [gpu]
      opaque:
        driver: gpu.nvidia.com
        parameters:
          apiVersion: resource.nvidia.com/v1beta1
          kind: GpuConfig
          sharing:
SHARING
"""


def claim(sharing: str) -> str:
    return CLAIM.replace("SHARING", sharing)


def test_nvidia_gpu_config_shapes():
    rule = "dra-config-invalid"
    assert_findings(
        rule,
        claim(
            "            strategy: MPS\n            mpsConfig: {defaultActiveThreadPercentage: 50, defaultPinnedDeviceMemoryLimit: 10Gi}"
        ),
        [],
    )
    assert_findings(
        rule,
        claim("            strategy: SpacePartitioning"),
        [
            (
                17,
                23,
                "unknown GPU sharing strategy: SpacePartitioning, supported GPU sharing strategies: TimeSlicing, MPS",
            )
        ],
    )
    assert_findings(
        rule,
        claim("            strategy: TimeSlicing\n            timeSlicingConfig: {interval: VeryLong}"),
        [(18, 43, "unknown time-slice interval: VeryLong")],
    )
    assert_findings(
        rule,
        claim("            strategy: MPS\n            mpsConfig: {defaultActiveThreadPercentage: 150}"),
        [(18, 56, "active thread percentage must not be greater than 100")],
    )
    assert_findings(
        rule,
        claim("            strategy: TimeSlicing\n            mpsConfig: {}"),
        [(18, 13, "cannot use MpsConfig with the 'TimeSlicing' strategy")],
    )


def test_mig_config_has_no_time_slicing_settings_and_old_versions_are_named():
    text = claim("            strategy: TimeSlicing\n            timeSlicingConfig: {interval: Long}").replace(
        "kind: GpuConfig", "kind: MigDeviceConfig"
    )
    assert_findings(
        "dra-config-invalid", text, [(18, 13, 'strict decoding error: unknown field "sharing.timeSlicingConfig"')]
    )
    old = claim("            strategy: TimeSlicing").replace("resource.nvidia.com/v1beta1", "gpu.nvidia.com/v1alpha1")
    assert_findings("dra-config-invalid", old, [(14, 23, 'is registered for version "gpu.nvidia.com/v1alpha1"')])


def test_other_drivers_parameters_are_not_read():
    text = claim("            strategy: SpacePartitioning").replace("driver: gpu.nvidia.com", "driver: gpu.example.com")
    assert findings_of("dra-config-invalid", text) == []


COMPUTE_DOMAIN = """
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: imex, namespace: ml}
spec:
  numNodes: NODES
  channel:
    resourceClaimTemplate: {name: imex-channel}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ranks, namespace: ml}
spec:
  replicas: 2
  serviceName: ranks
  selector: {matchLabels: {app: ranks}}
  template:
    metadata: {labels: {app: ranks}}
    spec:
      containers:
      - name: rank
        image: ghcr.io/nvidia/k8s-samples:nvbandwidth-v0.7-8d103163
        resources:
          limits: {nvidia.com/gpu: 4}
          claims: [{name: channel, request: channel}]
      resourceClaims:
      - {name: channel, resourceClaimTemplateName: imex-channel}
"""


def test_compute_domain_creates_the_channel_template_pods_reference():
    assert findings_of("claim-reference-invalid", COMPUTE_DOMAIN.replace("NODES", "2")) == []
    missing = COMPUTE_DOMAIN.replace("NODES", "2").replace("{name: imex-channel}", "{name: other-channel}")
    # another ComputeDomain's channel: the template found nowhere is reported once the linted files are
    # declared to hold every template (a chart may make it otherwise: nothing said, before a warning)
    assert findings_of("claim-reference-invalid", missing) == []
    complete = {"complete": ["ResourceClaimTemplate"]}
    (reported,) = findings_of("claim-reference-invalid", missing, config=complete)
    assert reported.severity == "error"
    assert reported.message.startswith("ResourceClaimTemplate 'imex-channel' is not among the linted files")
    wrong_request = COMPUTE_DOMAIN.replace("NODES", "2").replace("request: channel", "request: imex")
    assert_findings(
        "claim-reference-invalid",
        wrong_request,
        [(24, 45, "asks for request 'imex' of claim 'channel', which has only channel")],
    )


def test_compute_domain_num_nodes_against_its_pods():
    assert_findings("compute-domain-mismatch", COMPUTE_DOMAIN.replace("NODES", "2"), [])
    assert_findings("compute-domain-mismatch", COMPUTE_DOMAIN.replace("NODES", "0"), [])
    assert_findings(
        "compute-domain-mismatch",
        COMPUTE_DOMAIN.replace("NODES", "4"),
        [
            (
                5,
                13,
                "numNodes 4 but the pods that use its channel template 'imex-channel' are 2, on at most 2 nodes\nthe pods: StatefulSet/ranks",
            )
        ],
    )


def test_compute_domain_channel_config_needs_a_domain_id():
    text = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: channel, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: channel
        exactly: {deviceClassName: compute-domain-default-channel.nvidia.com}
      config:
      - requests: [channel]
        opaque:
          driver: compute-domain.nvidia.com
          parameters: {apiVersion: resource.nvidia.com/v1beta1, kind: ComputeDomainChannelConfig, allocationMode: All}
"""
    assert_findings("dra-config-invalid", text, [(14, 23, "domainID cannot be empty")])
