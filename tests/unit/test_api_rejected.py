"""api-rejected: what the API server refuses beyond the OpenAPI schema, at the field, in its words."""

import textwrap

import pytest
from conftest import by_rule, lint_text

from gpulint.lint.config import Config
from gpulint.lint.findings import FIRST_LINE_MAX


def rejected(text: str, **config) -> list[tuple[int, int, str]]:
    """The API server's errors as it words them: the finding's line, or (when that line is shortened to fit)
    its note, which is the whole error."""
    found = by_rule(lint_text(text, config=Config(**config)), "api-rejected")
    return [(f.line, f.column, _error(f.message, f.notes)) for f in found]


def _error(message: str, notes: tuple[str, ...]) -> str:
    if notes:
        assert len(notes) == 1 and len(message) <= FIRST_LINE_MAX < len(f"{SUBJECT}{notes[0]}"), (message, notes)
        return notes[0]
    return message.removeprefix(SUBJECT)


SUBJECT = "the API server rejects this object: "


def deployment(pod_spec: str, name: str = "trainer") -> str:
    head = f"""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: {name}, namespace: ml}}
        spec:
          selector: {{matchLabels: {{app: trainer}}}}
          template:
            metadata: {{labels: {{app: trainer}}}}
            spec:
        """
    body = textwrap.indent(textwrap.dedent(pod_spec).strip("\n"), " " * 6)
    return textwrap.dedent(head).lstrip("\n") + body + "\n"


CONTAINER = """
containers:
- name: trainer
  image: registry.example.com/trainer:1.0
  resources: {limits: {nvidia.com/gpu: 8}}
"""


def claim(devices: str, api: str = "resource.k8s.io/v1") -> str:
    head = f"""
        apiVersion: {api}
        kind: ResourceClaimTemplate
        metadata: {{name: gpus, namespace: ml}}
        spec:
          spec:
            devices:
        """
    return textwrap.dedent(head).lstrip("\n") + textwrap.indent(textwrap.dedent(devices).strip("\n"), " " * 6) + "\n"


# ----------------------------------------------------------------- pods


@pytest.mark.parametrize(
    ("toleration", "words"),
    [
        ("{key: nvidia.com/gpu, operator: Exists, value: present}", "value must be empty when `operator` is 'Exists'"),
        ("{operator: Equal, value: x}", "operator must be Exists when `key` is empty"),
        (
            "{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule, tolerationSeconds: 60}",
            "effect must be 'NoExecute' when `tolerationSeconds` is set",
        ),
        (
            "{key: nvidia.com/gpu, operator: Matches}",
            'operator: Unsupported value: "Matches": supported values: "Equal", "Exists"',
        ),
        ("{key: nvidia.com/gpu, operator: Exists, effect: NoScheduled}", 'effect: Unsupported value: "NoScheduled"'),
        ("{key: nvidia.com/gpu, value: a b}", 'tolerations[0].operator: Invalid value: "a b": a valid label must be'),
        ("{key: gpu.example.com/memory, operator: Gt, value: '40'}", 'Unsupported value: "Gt"'),
    ],
)
def test_tolerations_the_api_server_refuses(toleration, words):
    text = deployment(f"tolerations:\n- {toleration}\n" + CONTAINER)
    (finding,) = rejected(text)
    assert words in finding[2] and finding[2].startswith("spec.template.spec.tolerations[0]."), finding


def test_gt_tolerations_are_accepted_with_their_gate():
    text = deployment("tolerations:\n- {key: gpu.example.com/memory, operator: Gt, value: '40'}\n" + CONTAINER)
    assert rejected(text, feature_gates={"TaintTolerationComparisonOperators": True}) == []


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("'1e3'", 'value: Invalid value: "1e3": must be a valid decimal integer in canonical form'),
        ("'40Gi'", 'strconv.ParseInt: parsing "40Gi": invalid syntax'),
        ("'040'", "must be a valid decimal integer in canonical form"),
        ("'9223372036854775808'", 'strconv.ParseInt: parsing "9223372036854775808": value out of range'),
        ("''", 'value: Invalid value: "": must be non-empty'),
    ],
)
def test_a_gt_toleration_compares_a_canonical_integer(value, words):
    """ValidateTolerations with the gate on: content.IsDecimalInteger, then strconv.ParseInt (the oracle's
    validate family found "1e3" accepted)."""
    text = deployment(f"tolerations:\n- {{key: gpu.example.com/memory, operator: Gt, value: {value}}}\n" + CONTAINER)
    findings = rejected(text, feature_gates={"TaintTolerationComparisonOperators": True})
    assert findings and all(f[2].startswith("spec.template.spec.tolerations[0].value") for f in findings), findings
    assert any(words in f[2] for f in findings), findings
    clean = deployment("tolerations:\n- {key: gpu.example.com/memory, operator: Lt, value: '-1'}\n" + CONTAINER)
    assert rejected(clean, feature_gates={"TaintTolerationComparisonOperators": True}) == []


@pytest.mark.parametrize(
    ("expression", "words"),
    [
        (
            "{key: nvidia.com/gpu.present, operator: Exists, values: ['true']}",
            "values: Forbidden: may not be specified",
        ),
        (
            "{key: nvidia.com/gpu.product, operator: In}",
            "values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            "{key: nvidia.com/gpu.count, operator: Gt, values: ['4', '8']}",
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        ),
        (
            "{key: nvidia.com/gpu.product, operator: Equals, values: [a]}",
            'operator: Invalid value: "Equals": not a valid selector operator',
        ),
        (
            "{key: nvidia.com/gpu.product, operator: NotIn, values: ['NVIDIA H100']}",
            'values[0]: Invalid value: "NVIDIA H100"',
        ),
        ("{key: 'gpu product', operator: Exists}", 'key: Invalid value: "gpu product": name part must consist of'),
    ],
)
def test_required_node_affinity_the_api_server_refuses(expression, words):
    pod = f"""
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions:
                - {expression}
        """
    (finding,) = rejected(deployment(textwrap.dedent(pod) + CONTAINER))
    assert words in finding[2], finding


def test_match_fields_and_preferred_weights():
    pod = """
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchFields:
                - {key: metadata.name, operator: In, values: [gpu-1, gpu-2]}
              - matchFields:
                - {key: metadata.uid, operator: In, values: [abc]}
            preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 101
              preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}
        """
    found = rejected(deployment(textwrap.dedent(pod) + CONTAINER))
    assert [message.split(": ", 1)[1] for _, _, message in found] == [
        "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        'Invalid value: "metadata.uid": not a valid field selector key',
        "Invalid value: 101: must be in the range 1-100",
    ]
    assert found[2][:2] == (18, 21)  # the weight's value


def test_resource_names_without_a_domain():
    text = deployment("containers:\n- name: c\n  image: x\n  resources: {limits: {gpu: 1, hugepages-2Mi: 1Gi}}\n")
    (finding,) = rejected(text)
    assert finding[2] == (
        'spec.template.spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": '
        "must be a standard resource for containers"
    )


def test_names_and_labels():
    text = deployment(CONTAINER, name="Trainer_1").replace(
        "labels: {app: trainer}}", "labels: {app: trainer, 'team name': ml}}"
    )
    found = [message for _, _, message in rejected(text)]
    assert found[0].startswith('metadata.name: Invalid value: "Trainer_1": a lowercase RFC 1123 subdomain')
    assert found[1].startswith('spec.template.metadata.labels: Invalid value: "team name": name part must consist of')


def test_a_wrong_name_in_several_places_is_reported_at_each():
    """The verdict on a label key or a resource name is remembered from one object to the next (real
    manifests repeat them); each finding is still the object's own: its path, its line."""
    container = "containers:\n- name: c\n  image: x\n  resources: {limits: {gpu: 1}, requests: {gpu: 1}}\n"

    def one(name: str) -> str:
        return deployment(container, name=name).replace("labels: {app: trainer}}", "labels: {'team name': ml}}")

    found = rejected(one("a") + "---\n" + one("b"))
    shown = [(line, message.split(": Invalid value: ")[0]) for line, _, message in found]
    assert shown == [
        (7, "spec.template.metadata.labels"),
        (12, "spec.template.spec.containers[0].resources.limits[gpu]"),
        (12, "spec.template.spec.containers[0].resources.requests[gpu]"),
        (20, "spec.template.metadata.labels"),
        (25, "spec.template.spec.containers[0].resources.limits[gpu]"),
        (25, "spec.template.spec.containers[0].resources.requests[gpu]"),
    ]
    assert {message.split(": Invalid value: ")[1][:12] for _, _, message in found} == {'"team name":', '"gpu": must '}


def test_custom_resource_pod_templates_are_rejected_when_their_pods_are_created():
    text = """
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {name: train, namespace: ml}
        spec:
          minAvailable: 2
          tasks:
          - name: worker
            replicas: 2
            template:
              spec:
                tolerations:
                - {key: nvidia.com/gpu, operator: Exists, value: present}
                containers:
                - name: w
                  image: x
                  resources: {limits: {nvidia.com/gpu: 8}}
        """
    (finding,) = by_rule(lint_text(text), "api-rejected")
    assert finding.message == (
        "the API server rejects the pods it creates: spec.tasks[0].template.spec.tolerations[0].operator: Invalid value: "
        "value must be empty when `operator` is 'Exists'"
    )
    assert finding.notes == (
        'spec.tasks[0].template.spec.tolerations[0].operator: Invalid value: {"key":"nvidia.com/gpu","operator":'
        '"Exists","value":"present"}: value must be empty when `operator` is \'Exists\'',
    )


def test_valid_pods_like_real_charts_are_accepted():
    # shapes from the NVIDIA GPU operator, KubeRay and the Kubernetes docs
    pod = """
        nodeSelector: {nvidia.com/gpu.present: "true", kubernetes.io/os: linux}
        tolerations:
        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
        - {operator: Exists}
        - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
        - {key: dedicated, value: gpu, effect: NoSchedule}
        - {key: CriticalAddonsOnly, operator: Exists}
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions:
                - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3, NVIDIA-A100-SXM4-80GB]}
                - {key: nvidia.com/gpu.count, operator: Gt, values: ["3"]}
                - {key: node-role.kubernetes.io/control-plane, operator: DoesNotExist}
              - matchFields:
                - {key: metadata.name, operator: NotIn, values: [gpu-node-7]}
            preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 1
              preference: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}]}
            - weight: 100
              preference: {matchExpressions: [{key: cloud.google.com/gke-accelerator, operator: Exists}]}
        containers:
        - name: trainer
          image: x
          resources:
            limits: {nvidia.com/gpu: 8, cpu: "16", memory: 64Gi, ephemeral-storage: 10Gi, hugepages-1Gi: 2Gi, rdma/rdma_shared_device_a: 1}
        """
    assert rejected(deployment(textwrap.dedent(pod))) == []


# ----------------------------------------------------------------- DRA claims and classes


def test_claim_counts_as_defaulted_before_validation():
    """SetDefaults_ExactDeviceRequest and SetDefaults_DeviceSubRequest (pkg/apis/resource/v1, v1beta1, 1.37) make an
    ExactCount request of count 0 (or none) a request for 1 before validateDeviceAllocationMode (found by the dra
    validate oracle family; a count beside allocationMode All is claim-reference-invalid's)."""
    found = rejected(
        claim("""
        requests:
        - {name: a, exactly: {deviceClassName: gpu.nvidia.com, count: 0}}
        - {name: b, exactly: {deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: 0}}
        - {name: c, firstAvailable: [{name: x, deviceClassName: gpu.nvidia.com, count: 0}]}
        - {name: d, exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, count: 0}}
        - {name: e, exactly: {deviceClassName: gpu.nvidia.com, count: -2}}
        """)
    )
    assert [message for _, _, message in found] == [
        "spec.spec.devices.requests[4].exactly.count: Invalid value: -2: must be greater than zero"
    ]


def test_claim_limits_and_names():
    requests = "\n".join(f"- {{name: r{i}, exactly: {{deviceClassName: gpu.nvidia.com}}}}" for i in range(33))
    (finding,) = rejected(claim("requests:\n" + textwrap.indent(requests, "  ")))
    assert finding[2] == "spec.spec.devices.requests: Too many: 33: must have at most 32 items"
    found = rejected(
        claim("""
        requests:
        - {name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: -1}}
        - {name: gpus, exactly: {deviceClassName: gpu.nvidia.com, allocationMode: Any}}
        - name: nic
          firstAvailable: [{name: a, deviceClassName: x}, {name: a, deviceClassName: y}]
        """)
    )
    assert [message for _, _, message in found] == [
        "spec.spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero",
        'spec.spec.devices.requests[1]: Duplicate value: "gpus"',
        'spec.spec.devices.requests[1].exactly.allocationMode: Unsupported value: "Any": supported values: "All", "ExactCount"',
        'spec.spec.devices.requests[2].firstAvailable[1]: Duplicate value: "a"',
    ]


def test_constraints_and_config():
    found = rejected(
        claim("""
        requests:
        - {name: gpus, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}
        - name: nic
          firstAvailable: [{name: fast, deviceClassName: rdma.example.com}]
        constraints:
        - {requests: [gpus, nic/fast, nic/slow, nics], matchAttribute: resource.kubernetes.io/pcieRoot}
        - {requests: [gpus], matchAttribute: pcieRoot}
        config:
        - requests: [gpus]
          opaque: {driver: gpu.nvidia.com, parameters: {apiVersion: resource.nvidia.com/v1beta1, kind: GpuConfig}}
        - requests: [gpus]
          opaque: {driver: gpu.nvidia.com}
        """)
    )
    assert [message for _, _, message in found] == [
        "spec.spec.devices.constraints[0].requests[2]: Invalid value: \"nic/slow\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
        "spec.spec.devices.constraints[0].requests[3]: Invalid value: \"nics\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
        'spec.spec.devices.constraints[1].matchAttribute: Invalid value: "pcieRoot": a fully qualified name must be a domain and a name separated by a slash',
        "spec.spec.devices.config[1].opaque.parameters: Required value",
    ]


def test_opaque_parameters_over_ten_kib():
    big = "x" * (10 * 1024)
    (finding,) = rejected(
        claim(f"""
        requests:
        - {{name: gpus, exactly: {{deviceClassName: gpu.nvidia.com}}}}
        config:
        - opaque: {{driver: gpu.nvidia.com, parameters: {{blob: {big}}}}}
        """)
    )
    assert finding[2] == "spec.spec.devices.config[0].opaque.parameters: Too long: may not be more than 10240 bytes"


def test_v1beta1_claims_are_read_in_their_shape():
    found = rejected(
        claim(
            """
            requests:
            - {name: gpus, deviceClassName: gpu.nvidia.com, count: -1}
            """,
            api="resource.k8s.io/v1beta1",
        )
    )
    assert [message for _, _, message in found] == [
        "spec.spec.devices.requests[0].count: Invalid value: -1: must be greater than zero"
    ]


def test_device_class():
    text = """
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: gpu.example.com}
        spec:
          selectors:
          - cel: {expression: device.driver == "gpu.example.com"}
          - {}
          extendedResourceName: gpu
        """
    assert [message for _, _, message in rejected(text)] == [
        "spec.selectors[1].cel: Required value",
        'spec.extendedResourceName: Invalid value: "gpu": must be a valid extended resource name',
    ]
    fine = text.replace("  - {}\n", "").replace("extendedResourceName: gpu", "extendedResourceName: example.com/gpu")
    assert rejected(fine) == []


def test_valid_claims_like_the_drivers_docs_are_accepted():
    found = rejected(
        claim("""
        requests:
        - name: gpus
          exactly:
            deviceClassName: gpu.nvidia.com
            allocationMode: ExactCount
            count: 2
            selectors:
            - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")'}
        - name: all-nics
          exactly: {deviceClassName: rdma.example.com, allocationMode: All}
        - name: nic
          firstAvailable:
          - {name: fast, deviceClassName: rdma.example.com, count: 1}
          - {name: any, deviceClassName: nic.example.com}
        constraints:
        - {requests: [gpus, nic], matchAttribute: resource.kubernetes.io/pcieRoot}
        - {requests: [gpus, nic/fast], distinctAttribute: gpu.nvidia.com/uuid}
        config:
        - requests: [gpus]
          opaque:
            driver: gpu.nvidia.com
            parameters: {apiVersion: resource.nvidia.com/v1beta1, kind: GpuConfig, sharing: {strategy: TimeSlicing}}
        """)
    )
    assert found == []


# ----------------------------------------------------------------- annotations, qualified resource names, drivers


def test_annotation_keys_and_total_size():
    text = deployment(CONTAINER).replace(
        "metadata: {name: trainer, namespace: ml}",
        "metadata:\n  name: trainer\n  namespace: ml\n  annotations: {'checksum/config': abc, 'Team Name': ml}",
    )
    found = rejected(text)
    assert [message for _, _, message in found] == [
        'metadata.annotations: Invalid value: "Team Name": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
        "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    ]
    assert found[0][:2] == (6, 41)  # at the key, in the flow mapping
    # keys are qualified names whatever their case (ValidateAnnotations lowercases them): a real chart's keys pass
    fine = text.replace("'Team Name': ml", "Helm.sh/Hook: pre-install, prometheus.io/scrape: 'true'")
    assert rejected(fine) == []
    # keys and values together at most 256 KiB: exactly that is accepted, one byte more is not
    limit = 256 * 1024
    at_limit = text.replace("'Team Name': ml", f"big: {'x' * (limit - 3 - len('checksum/config') - 3)}")
    assert rejected(at_limit) == []
    over = at_limit.replace("big: x", "big: xx")
    assert [message for _, _, message in rejected(over)] == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("kubernetes.io/" + "a" * 64, "name part must be no more than 63 bytes"),
        ("example.com/_gpu", "name part must consist of alphanumeric characters"),
        ("kubernetes.io//", "with an optional DNS subdomain prefix and '/'"),
    ],
)
def test_resource_names_are_qualified_names_first(name, words):
    text = deployment(f"containers:\n- name: c\n  image: x\n  resources: {{limits: {{'{name}': 1}}}}\n")
    (finding,) = rejected(text)
    assert finding[2].startswith(
        f'spec.template.spec.containers[0].resources.limits[{name}]: Invalid value: "{name}": '
    )
    assert words in finding[2]


def test_a_native_resource_with_a_63_character_name_is_accepted():
    text = deployment(
        "containers:\n- name: c\n  image: x\n  resources: {limits: {'kubernetes.io/" + "a" * 63 + "': 1}}\n"
    )
    assert rejected(text) == []


def test_opaque_configuration_needs_a_driver():
    found = rejected(
        claim("""
        requests:
        - {name: gpus, exactly: {deviceClassName: gpu.nvidia.com}}
        config:
        - opaque: {parameters: {sharing: {strategy: TimeSlicing}}}
        """)
    )
    assert [message for _, _, message in found] == ["spec.spec.devices.config[0].opaque.driver: Required value"]


def test_opaque_parameters_are_measured_as_utf8_json():
    # 10240 bytes of compact JSON with two-byte characters: within the limit (\\u escapes would count 6 each)
    chars = (10 * 1024 - len('{"blob":""}')) // 2
    text = claim(f"""
        requests:
        - {{name: gpus, exactly: {{deviceClassName: gpu.nvidia.com}}}}
        config:
        - opaque: {{driver: gpu.nvidia.com, parameters: {{blob: {"é" * chars}}}}}
        """)
    assert rejected(text) == []
    assert len(rejected(text.replace("é", "éé", 1))) == 1


LONG_PREFIX = ".".join(["a" * 63] * 4)[:253]  # 253 bytes: the longest DNS subdomain


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("a" * 63, "v", None),
        ("a" * 64, "v", "name part must be no more than 63 bytes"),
        (f"{LONG_PREFIX}/team", "v", None),
        (f"{LONG_PREFIX}b/team", "v", "prefix part must be no more than 253 bytes"),
        ("example.com/team", "x" * 63, None),
        ("example.com/team", "x" * 64, "must be no more than 63 bytes"),
        ("example.com/team", "é", "a valid label must be an empty string"),
        ("example.com/é", "v", "name part must consist of alphanumeric characters"),
        ("example.com/team", "", None),
    ],
)
def test_label_keys_and_values_at_their_limits(key, value, words):
    """The checks every label goes through, at the byte limits (a valid label takes a one-match path)."""
    text = deployment(CONTAINER).replace("labels: {app: trainer}}", f"labels: {{app: trainer, '{key}': '{value}'}}}}")
    found = [message for _, _, message in rejected(text)]
    if words is None:
        assert found == []
    else:
        (message,) = found
        assert message.startswith("spec.template.metadata.labels: Invalid value: ") and words in message
