"""Every built-in rule: its module in gpulint.lint.checks, its SPEC and whether it has a check.

Generated from the rule modules by ``python scripts/generate_rule_index.py``: do not edit. The registry
reads it so that a run imports only the rule modules its objects need (tests/rules/test_rule_index.py holds it in
step with the modules).
"""

from gpulint.lint.findings import Severity
from gpulint.lint.rule_spec import Need, RuleSpec, Scope

RULE_INDEX: tuple[tuple[str, RuleSpec, bool], ...] = (
    ("api_rejected", RuleSpec("api-rejected", Severity.ERROR), True),
    ("api_version_unavailable", RuleSpec("api-version-unavailable", Severity.ERROR), True),
    ("autopilot_rejected", RuleSpec("autopilot-rejected", Severity.ERROR, scope=Scope.POD_TEMPLATE), True),
    (
        "cel_invalid",
        RuleSpec(
            "cel-invalid", Severity.ERROR, kinds=frozenset({"DeviceClass", "ResourceClaim", "ResourceClaimTemplate"})
        ),
        True,
    ),
    ("claim_reference_invalid", RuleSpec("claim-reference-invalid", Severity.ERROR), True),
    (
        "claim_unsatisfiable",
        RuleSpec("claim-unsatisfiable", Severity.ERROR, needs=frozenset({Need.DEVICES, Need.NODES})),
        True,
    ),
    (
        "compute_domain_mismatch",
        RuleSpec("compute-domain-mismatch", Severity.WARNING, kinds=frozenset({"ComputeDomain"})),
        True,
    ),
    (
        "daemonset_coverage",
        RuleSpec(
            "daemonset-coverage",
            Severity.ERROR,
            kinds=frozenset({"Application", "ClusterPolicy", "DaemonSet", "DeviceConfig", "HelmRelease"}),
            needs=frozenset({Need.NODES}),
            of_pods=True,
        ),
        True,
    ),
    ("dev_shm_missing", RuleSpec("dev-shm-missing", Severity.WARNING, scope=Scope.POD_TEMPLATE, of_pods=True), True),
    (
        "device_class_unknown",
        RuleSpec("device-class-unknown", Severity.ERROR, kinds=frozenset({"ResourceClaim", "ResourceClaimTemplate"})),
        True,
    ),
    ("device_plugin_config", RuleSpec("device-plugin-config", Severity.ERROR), True),
    (
        "dra_config_invalid",
        RuleSpec(
            "dra-config-invalid",
            Severity.ERROR,
            kinds=frozenset({"DeviceClass", "ResourceClaim", "ResourceClaimTemplate"}),
        ),
        True,
    ),
    (
        "env_reference_invalid",
        RuleSpec("env-reference-invalid", Severity.ERROR, scope=Scope.POD_TEMPLATE, of_pods=True),
        True,
    ),
    ("feature_gate_required", RuleSpec("feature-gate-required", Severity.INFO), True),
    ("gang_inconsistent", RuleSpec("gang-inconsistent", Severity.ERROR, of_pods=True), True),
    ("gang_missing", RuleSpec("gang-missing", Severity.WARNING, of_pods=True), True),
    (
        "gang_unsatisfiable",
        RuleSpec("gang-unsatisfiable", Severity.ERROR, needs=frozenset({Need.NODES}), of_pods=True),
        True,
    ),
    (
        "gpu_nic_locality",
        RuleSpec("gpu-nic-locality", Severity.WARNING, kinds=frozenset({"ResourceClaim", "ResourceClaimTemplate"})),
        True,
    ),
    ("gpu_non_integer", RuleSpec("gpu-non-integer", Severity.ERROR, scope=Scope.POD_TEMPLATE), True),
    (
        "gpu_request_without_limit",
        RuleSpec("gpu-request-without-limit", Severity.ERROR, scope=Scope.POD_TEMPLATE),
        True,
    ),
    (
        "gpu_resource_unknown",
        RuleSpec(
            "gpu-resource-unknown",
            Severity.ERROR,
            needs=frozenset({Need.NODES}),
            scope=Scope.POD_TEMPLATE,
            of_pods=True,
        ),
        True,
    ),
    (
        "gpu_runtime_class",
        RuleSpec("gpu-runtime-class", Severity.WARNING, scope=Scope.POD_TEMPLATE, of_pods=True),
        True,
    ),
    (
        "gpu_sharing",
        RuleSpec(
            "gpu-sharing",
            Severity.WARNING,
            needs=frozenset({Need.NODES}),
            scope=Scope.POD_TEMPLATE,
            in_part=True,
            of_pods=True,
        ),
        True,
    ),
    (
        "gpu_unschedulable",
        RuleSpec(
            "gpu-unschedulable", Severity.ERROR, needs=frozenset({Need.NODES}), scope=Scope.POD_TEMPLATE, of_pods=True
        ),
        True,
    ),
    (
        "gpu_visibility_override",
        RuleSpec("gpu-visibility-override", Severity.WARNING, scope=Scope.POD_TEMPLATE, of_pods=True),
        True,
    ),
    ("host_network_dns", RuleSpec("host-network-dns", Severity.WARNING, scope=Scope.POD_TEMPLATE, of_pods=True), True),
    (
        "knative_field_disallowed",
        RuleSpec(
            "knative-field-disallowed",
            Severity.ERROR,
            kinds=frozenset({"Configuration", "InferenceService", "Service"}),
            scope=Scope.POD_TEMPLATE,
        ),
        True,
    ),
    ("limit_range_violation", RuleSpec("limit-range-violation", Severity.ERROR, scope=Scope.POD_TEMPLATE), True),
    ("mpijob_launcher", RuleSpec("mpijob-launcher", Severity.WARNING, kinds=frozenset({"MPIJob"}), of_pods=True), True),
    (
        "network_reference_invalid",
        RuleSpec("network-reference-invalid", Severity.ERROR, scope=Scope.POD_TEMPLATE, of_pods=True),
        True,
    ),
    ("not_rendered", RuleSpec("not-rendered", Severity.ERROR), False),
    (
        "operator_rejected",
        RuleSpec(
            "operator-rejected",
            Severity.ERROR,
            kinds=frozenset(
                {
                    "ClusterQueue",
                    "ClusterServingRuntime",
                    "ClusterTrainingRuntime",
                    "Configuration",
                    "Experiment",
                    "InferenceService",
                    "JAXJob",
                    "Job",
                    "JobSet",
                    "LeaderWorkerSet",
                    "MPIJob",
                    "NIMService",
                    "PaddleJob",
                    "PyTorchJob",
                    "Queue",
                    "RayCluster",
                    "RayJob",
                    "RayService",
                    "ScheduledSparkApplication",
                    "Service",
                    "ServingRuntime",
                    "SparkApplication",
                    "TFJob",
                    "TrainJob",
                    "TrainingRuntime",
                    "Workspace",
                    "XGBoostJob",
                }
            ),
        ),
        True,
    ),
    (
        "over_tight_affinity",
        RuleSpec(
            "over-tight-affinity",
            Severity.WARNING,
            needs=frozenset({Need.NODES}),
            scope=Scope.POD_TEMPLATE,
            of_pods=True,
        ),
        True,
    ),
    (
        "over_tight_topology",
        RuleSpec("over-tight-topology", Severity.WARNING, needs=frozenset({Need.NODES}), of_pods=True),
        True,
    ),
    ("parallelism_mismatch", RuleSpec("parallelism-mismatch", Severity.WARNING, of_pods=True), True),
    ("queue_reference_invalid", RuleSpec("queue-reference-invalid", Severity.ERROR), True),
    ("queue_unadmittable", RuleSpec("queue-unadmittable", Severity.ERROR, of_pods=True), True),
    (
        "rdma_memlock_missing",
        RuleSpec("rdma-memlock-missing", Severity.WARNING, scope=Scope.POD_TEMPLATE, of_pods=True),
        True,
    ),
    ("resource_quota_exceeded", RuleSpec("resource-quota-exceeded", Severity.ERROR, of_pods=True), True),
    (
        "runtime_class_unknown",
        RuleSpec("runtime-class-unknown", Severity.ERROR, scope=Scope.POD_TEMPLATE, of_pods=True),
        True,
    ),
    ("scheduler_name_unknown", RuleSpec("scheduler-name-unknown", Severity.WARNING, of_pods=True), True),
    ("schema_invalid", RuleSpec("schema-invalid", Severity.ERROR), True),
    (
        "service_dns_mismatch",
        RuleSpec(
            "service-dns-mismatch",
            Severity.WARNING,
            kinds=frozenset(
                {
                    "Job",
                    "JobSet",
                    "LeaderWorkerSet",
                    "MPIJob",
                    "PyTorchJob",
                    "RayCluster",
                    "RayJob",
                    "RayService",
                    "StatefulSet",
                    "TrainJob",
                }
            ),
            scope=Scope.POD_TEMPLATE,
        ),
        True,
    ),
    ("stale_gpu_label", RuleSpec("stale-gpu-label", Severity.WARNING, of_pods=True), True),
    ("suppression_invalid", RuleSpec("suppression-invalid", Severity.WARNING), False),
    ("suppression_unused", RuleSpec("suppression-unused", Severity.WARNING), False),
    (
        "training_runtime_unknown",
        RuleSpec("training-runtime-unknown", Severity.ERROR, kinds=frozenset({"TrainJob"})),
        True,
    ),
    ("yaml_invalid", RuleSpec("yaml-invalid", Severity.ERROR), False),
)
