"""The DRA rules on a DGX-style test cluster (tests/data/dra): failing and clean cases."""

import json
import textwrap

import pytest
from conftest import DATA, by_rule, lint_text, run_cli, said
from rule_harness import assert_findings
from support.manifests import TWO_CLAIM_POD

from gpulint.lint.config import Config
from gpulint.lint.findings import Severity
from gpulint.lint.inputs.sources import Source
from gpulint.lint.world.inventory import load_inventory

DRA = str(DATA / "dra")


def shown(finding) -> str:
    """A finding's message and the notes under it: what the user reads."""
    if isinstance(finding, dict):
        return "\n".join((finding["message"], *finding["notes"]))
    return "\n".join((finding.message, *finding.notes))


@pytest.fixture(scope="module")
def cluster():
    return load_inventory([DRA])


def lint(text: str, inventory=None, **config):
    """Lint ``text`` as gpulint check does (one LintRun: its DRA objects join the cluster's)."""
    return lint_text(text, "claims.yaml", Config(**config), inventory)


def template(requests: str, constraints: str = "", name: str = "t", api: str = "resource.k8s.io/v1") -> str:
    body = f"""
        apiVersion: {api}
        kind: ResourceClaimTemplate
        metadata: {{name: {name}, namespace: ml}}
        spec:
          spec:
            devices:
              requests:
        """
    text = textwrap.dedent(body).lstrip("\n") + textwrap.indent(textwrap.dedent(requests).strip("\n"), " " * 6) + "\n"
    if constraints:
        text += "      constraints:\n" + textwrap.indent(textwrap.dedent(constraints).strip("\n"), " " * 6) + "\n"
    return text


def gpus(count: int, selector: str = "", name: str = "gpus", klass: str = "gpu.nvidia.com") -> str:
    sel = f"\n    selectors:\n    - cel:\n        expression: '{selector}'" if selector else ""
    return f"- name: {name}\n  exactly:\n    deviceClassName: {klass}\n    count: {count}{sel}\n"


# ----------------------------------------------------------------- cel-invalid


def test_cel_error_points_into_a_block_scalar(cluster):
    text = template("""
        - name: gpu
          exactly:
            deviceClassName: gpu.nvidia.com
            selectors:
            - cel:
                expression: |
                  device.attributes["gpu.nvidia.com"].type == "gpu" &&
                    device.productName.startsWith("NVIDIA")
    """)
    (finding,) = by_rule(lint(text, cluster), "cel-invalid")
    assert "undefined field 'productName'" in finding.message
    assert (finding.line, finding.column) == (15, 26)
    assert text.splitlines()[14][25:36] == "productName"


def test_cel_error_points_into_a_folded_and_a_quoted_scalar():
    folded = template("""
        - name: gpu
          exactly:
            deviceClassName: gpu.nvidia.com
            selectors:
            - cel:
                expression: >-
                  device.driver == "gpu.nvidia.com" &&
                  device.attributes["gpu.nvidia.com"].type ==
    """)
    (finding,) = by_rule(lint(folded), "cel-invalid")
    assert "compilation failed" in finding.message and finding.line == 15
    quoted = template(gpus(1, selector="device.driver.frobnicate()"))
    (finding,) = by_rule(lint(quoted), "cel-invalid")
    assert "undeclared reference to 'frobnicate'" in finding.message
    assert (finding.line, finding.column) == (14, 52)
    assert quoted.splitlines()[13][51] == "("


def test_new_selectors_get_the_libraries_of_the_clusters_compatibility_version():
    """base.go: the IP library arrives in 1.30; a 1.30 API server gives new expressions 1.29's libraries."""
    text = template(gpus(1, selector='isIP(device.attributes["dra.net"].ip) && device.driver == "dra.net"'))
    (finding,) = by_rule(lint(text, kubernetes_version="1.30"), "cel-invalid")
    assert finding.severity is Severity.ERROR
    assert "undeclared reference to 'isIP'" in finding.message
    assert "arrives in 1.30, usable in new expressions from 1.31" in shown(finding)
    assert (finding.line, finding.column) == (14, 32)  # the call, as cel-go places it: at its parenthesis
    assert text.splitlines()[13][27:32] == "isIP("
    assert by_rule(lint(text, kubernetes_version="1.31"), "cel-invalid") == []
    assert by_rule(lint(text), "cel-invalid") == []
    # the format library (1.31): evaluated on 1.37 (a valid selector: no finding), refused by 1.31
    formatted = template(gpus(1, selector="!format.dns1123Subdomain().validate(device.driver).hasValue()"))
    assert by_rule(lint(formatted), "cel-invalid") == []
    (refused,) = by_rule(lint(formatted, kubernetes_version="1.31"), "cel-invalid")
    assert refused.severity is Severity.ERROR and "usable in new expressions from 1.32" in shown(refused)


def test_an_optional_selector_is_refused_when_compiled_not_on_each_device(cluster):
    """compile.go checks the output type: an optional is neither bool nor the attribute type."""
    text = template(gpus(1, selector='device.attributes["gpu.nvidia.com"].?productName'))
    (finding,) = by_rule(lint(text, cluster), "cel-invalid")
    assert finding.severity is Severity.ERROR
    assert finding.message.endswith(
        "CEL selector must evaluate to bool or the unknown type, not optional_type(google.protobuf.Any)"
    )
    assert (finding.line, finding.column) == (14, 28)  # the expression's first character
    assert text.splitlines()[13][27:44] == "device.attributes"
    made_bool = template(gpus(1, selector='device.attributes["gpu.nvidia.com"].?productName.hasValue()'))
    assert by_rule(lint(made_bool, cluster), "cel-invalid") == []


def test_cel_runtime_errors_only_on_devices_the_class_selects(cluster):
    # productName exists on NVIDIA GPUs; `model` does not: a runtime error, not false
    text = template(gpus(1, selector='device.attributes["gpu.nvidia.com"].model == "H100"'))
    (finding,) = by_rule(lint(text, cluster), "cel-invalid")
    assert "CEL runtime error on device gpu.nvidia.com/" in finding.message
    guarded = template(gpus(1, selector='device.attributes["gpu.nvidia.com"].?model.orValue("") == "H100"'))
    assert by_rule(lint(guarded, cluster), "cel-invalid") == []
    # the fabric class selects only fabric devices, which have no gpu.nvidia.com domain at all: an empty map
    fabric = template(gpus(1, selector='!has(device.attributes["gpu.nvidia.com"].type)', klass="fabric.example.com"))
    assert by_rule(lint(fabric, cluster), "cel-invalid") == []


def test_functions_not_evaluable_offline_are_info():
    text = template(gpus(1, selector='sets.contains(["a"], ["a"])'))
    (finding,) = by_rule(lint(text), "cel-invalid")
    assert finding.severity == Severity.INFO and "cannot be evaluated offline" in finding.message


def test_device_class_selectors_are_checked():
    text = """
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: broken}
        spec:
          selectors:
          - cel: {expression: "device.driver == 1 +"}
    """
    (finding,) = by_rule(lint(text), "cel-invalid")
    assert finding.line == 6 and "compilation failed" in finding.message


def test_a_selector_over_the_cost_limit_is_cel_invalid_at_the_costly_part_and_nothing_else(cluster):
    # each bind quadruples a 64-character attribute (3 concatenations: 0.2 + 0.3 + 0.4 per character of the
    # operand), ten times: 0.9 x 64 x (4**10 - 1) / 3 = 20,132,640, plus 159 for identifiers and selects
    names = "abcdefghij"
    body = 'cel.bind(a, device.attributes["gpu.nvidia.com"].productName,\n'
    for prev, name in zip(names, names[1:]):
        body += f"  cel.bind({name}, {prev} + {prev} + {prev} + {prev},\n"
    body += '  j + j + j + j != ""' + ")" * len(names)
    text = template(
        """
        - name: gpu
          exactly:
            deviceClassName: gpu.nvidia.com
            selectors:
            - cel:
                expression: |
        """.rstrip(" ")
        + textwrap.indent(body, " " * 18)
        + "\n"
    )
    findings = lint(text, cluster)
    (finding,) = by_rule(findings, "cel-invalid")
    assert finding.severity == Severity.ERROR
    assert finding.message.startswith(
        "CEL selector too complex, exceeds cost limit: estimated cost 20,132,799 "
        "exceeds budget by factor of 20.1x (CELSelectorExpressionMaxCost is 1,000,000)"
    )
    line = text.splitlines()[finding.line - 1]
    assert line[finding.column - 1 :].startswith("j + j + j + j")  # 67 million characters: the part over alone
    assert by_rule(findings, "claim-unsatisfiable") == []  # cel-invalid's finding, not an allocation verdict


# ----------------------------------------------------------------- device-class-unknown


def test_unknown_class_with_the_clusters_classes_is_an_error_with_a_suggestion(cluster):
    (finding,) = by_rule(lint(template(gpus(1, klass="gpu.nvidia")), cluster), "device-class-unknown")
    assert finding.severity == Severity.ERROR and "did you mean 'gpu.nvidia.com'?" in said(finding)
    assert (finding.line, finding.column) == (10, 28)


ONE_CLASS = """
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fabric.example.com}
spec:
  selectors:
  - cel: {expression: device.driver == "fabric.example.com"}
"""


def _class_findings(write, *classes: str) -> list[dict]:
    """device-class-unknown's findings on a repository that defines one class of its own and has
    claims against ``classes`` (no inventory: the cluster's classes are not known)."""
    body = "".join("---\n" + template(gpus(1, klass=klass), name=f"t{i}") for i, klass in enumerate(classes))
    linted = write("a.yaml", ONE_CLASS.lstrip() + body)
    report = run_cli("check", str(linted), "--format", "json", "--select", "device-class-unknown").json()
    return report["findings"]


@pytest.mark.parametrize(
    "klass",
    [
        "gpu.nvidia.com",
        "mig.nvidia.com",
        "vfio.gpu.nvidia.com",
        "compute-domain-default-channel.nvidia.com",
        "gpu.intel.com",
        "gaudi.intel.com",
        "gpu.amd.com",
        "cpu.example.com",
    ],
)
def test_a_class_a_driver_installs_is_not_reported_without_the_clusters_classes(write, klass):
    """False positive seen on real repositories: one DeviceClass in the repository made every claim
    on a driver's class a warning, with a suggestion of the repository's class."""
    assert _class_findings(write, klass) == []


def test_without_the_clusters_classes_only_a_typo_is_info(write):
    (typo,) = _class_findings(write, "gpu.nvida.com", "fpga.acme.io", "tpu.example.com")
    assert typo["severity"] == "info" and "did you mean 'gpu.nvidia.com'?" in typo["message"]
    assert (typo["line"], typo["column"]) == (17, 28)  # the value of deviceClassName
    # another driver's class, and one a single letter from gpu.example.com: proof of nothing, so no
    # finding per claim; the run says once per class what it could not check, and where
    linted = write(
        "b.yaml",
        ONE_CLASS.lstrip()
        + "---\n"
        + template(gpus(1, klass="fpga.acme.io"))
        + "---\n"
        + template(gpus(1, klass="fpga.acme.io"), name="t2")
        + "---\n"
        + template(gpus(1, klass="tpu.example.com"), name="t3"),
    )
    report = run_cli("check", str(linted), "--format", "json", "--select", "device-class-unknown").json()
    assert report["findings"] == []
    notes = [note for note in report["notes"] if note.startswith("device-class-unknown:")]
    assert len(notes) == 2
    assert notes[0].split("\n") == [
        "device-class-unknown: DeviceClass 'fpga.acme.io' not checked: the linted files do not define it and the "
        "inventory does not list the cluster's DeviceClasses",
        "drivers install their classes; add `kubectl get deviceclasses -o yaml` to the inventory",
        f"{linted}:17:28",
        f"{linted}:29:28",
    ]
    assert all("did you mean" not in note for note in notes)
    (cut_short,) = _class_findings(write, "fabric.example")
    assert "did you mean 'fabric.example.com'?" in cut_short["message"]
    (finding,) = by_rule(lint(template(gpus(1))), "device-class-unknown") or [None]
    assert finding is None  # gpu.nvidia.com alone, nothing defined: the NVIDIA driver installs it
    (finding,) = by_rule(lint(template(gpus(1, klass="h100.acme.io"))), "device-class-unknown")
    assert finding.severity == Severity.INFO and "not checked" in finding.message and finding.run_note


def test_a_driver_class_missing_from_the_clusters_classes_is_an_error(write, tmp_path):
    inventory = write("inventory/classes.yaml", ONE_CLASS.lstrip())
    linted = write("claims.yaml", template(gpus(1, klass="gpu.amd.com")))
    report = run_cli("check", str(linted), "--inventory", str(inventory.parent), "--format", "json").json()
    (finding,) = [f for f in report["findings"] if f["rule"] == "device-class-unknown"]
    assert finding["severity"] == "error"
    assert "the cluster defines fabric.example.com" in said(finding)
    assert "AMD GPU DRA driver installs it: is the driver installed?" in finding["notes"]


# ----------------------------------------------------------------- claim-reference-invalid

POD_WITH_CLAIMS = """
    apiVersion: v1
    kind: Pod
    metadata: {{name: p, namespace: ml}}
    spec:
      resourceClaims:
      - name: gpus
        resourceClaimTemplateName: {template}
      containers:
      - name: c
        image: i
        resources:
          claims:
          - name: {claim}
            request: {request}
"""


def test_container_claim_not_in_the_pod():
    text = POD_WITH_CLAIMS.format(template="t", claim="gpu", request="gpus")
    (finding,) = [
        f
        for f in by_rule(lint(template(gpus(1)) + "---\n" + textwrap.dedent(text)), "claim-reference-invalid")
        if "must be one of" in f.message
    ]
    assert "Not found: must be one of the names in pod.spec.resourceClaims: gpus" in finding.message


def test_request_not_in_the_claim_and_missing_templates(cluster):
    text = (
        template(gpus(1)) + "---\n" + textwrap.dedent(POD_WITH_CLAIMS.format(template="t", claim="gpus", request="nic"))
    )
    (finding,) = by_rule(lint(text, cluster), "claim-reference-invalid")
    assert "asks for request 'nic' of claim 'gpus', which has only gpus" in finding.message
    missing = textwrap.dedent(POD_WITH_CLAIMS.format(template="absent", claim="gpus", request="gpus"))
    # the inventory lists no templates, and no configuration declares them complete: a chart or another
    # overlay may hold it (before: a warning)
    assert by_rule(lint(missing, cluster), "claim-reference-invalid") == []
    (finding,) = by_rule(lint(missing, cluster, complete={"ResourceClaimTemplate": ("*",)}), "claim-reference-invalid")
    assert finding.severity == Severity.ERROR and "'absent' is not among the linted files" in finding.message


def test_malformed_requests():
    both = template("""
        - name: gpu
          exactly: {deviceClassName: gpu.nvidia.com}
          firstAvailable:
          - {name: a, deviceClassName: gpu.nvidia.com}
        - name: all
          exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, count: 2}
    """)
    assert_findings(
        "claim-reference-invalid",
        both,
        [
            (
                8,
                9,
                "request 'gpu': Invalid value: exactly one of `exactly` or `firstAvailable` is required, but multiple",
            ),
            (13, 80, "request 'all': count: Invalid value: 2: must not be specified when allocationMode is 'All'"),
        ],
    )


def test_request_shapes_the_api_server_accepts_or_refuses_as_validate_device_request_does():
    # Neither is Required; an empty firstAvailable is unset (Go's len() == 0), and count 0 is unset
    # with All (a plain int64): the twins of test_malformed_requests that the API server accepts.
    text = template("""
        - name: neither
          count: 1
        - name: empty-list
          exactly: {deviceClassName: gpu.nvidia.com}
          firstAvailable: []
        - name: all
          exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, count: 0}
    """)
    assert_findings(
        "claim-reference-invalid",
        text,
        [(8, 9, "request 'neither': Required value: exactly one of `exactly` or `firstAvailable` is required")],
    )


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("{name: gpus}", "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"),
        (
            "{name: gpus, resourceClaimName: null}",
            "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
        ),
        (
            "{name: gpus, resourceClaimName: c, resourceClaimTemplateName: t}",
            "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified",
        ),
        ("{name: gpus, source: {resourceClaimTemplateName: t}}", "must specify one of"),
        ("{name: gpus, resourceClaimName: null, resourceClaimTemplateName: t}", None),
    ],
)
def test_a_pod_claim_names_exactly_one_source_in_the_api_servers_words(entry, expected, cluster):
    text = template(gpus(1)) + textwrap.dedent(f"""
        ---
        apiVersion: v1
        kind: Pod
        metadata: {{name: p, namespace: ml}}
        spec:
          resourceClaims:
          - {entry}
          containers:
          - name: c
            image: registry.example.com/c:1
            resources: {{claims: [{{name: gpus}}]}}
        """)
    findings = by_rule(lint(text, cluster), "claim-reference-invalid")
    if expected is None:
        assert findings == []
        return
    (finding,) = findings
    assert (finding.line, finding.column) == (19, 5)
    assert f"resourceClaims[0] ('gpus'): Invalid value: {expected}" in finding.message
    assert ("move its key up one level" in " ".join(finding.notes)) == ("source:" in entry)


# ----------------------------------------------------------------- claim-unsatisfiable


def test_more_devices_than_any_node_has(cluster):
    (finding,) = by_rule(lint(template(gpus(9)), cluster), "claim-unsatisfiable")
    assert "request 'gpus' needs 9 devices of class gpu.nvidia.com; 8 pass the class selectors and 8" in shown(finding)
    assert "on the node that comes closest, dgx-0" in shown(finding)
    assert by_rule(lint(template(gpus(8)), cluster), "claim-unsatisfiable") == []


def test_selectors_that_match_nothing(cluster):
    b200 = template(gpus(1, selector='device.attributes["gpu.nvidia.com"].productName.contains("B200")'))
    (finding,) = by_rule(lint(b200, cluster), "claim-unsatisfiable")
    assert "8 pass the class selectors and 0 its own selectors" in shown(finding)
    memory = template(gpus(2, selector='device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("48Gi")) <= 0'))
    assert by_rule(lint(memory, cluster), "claim-unsatisfiable") == []  # the L40S node has 4 of 48Gi


def test_match_attribute_across_requests(cluster):
    local = "- requests: [gpus]\n  matchAttribute: resource.kubernetes.io/pcieRoot\n"
    (finding,) = by_rule(lint(template(gpus(6), local), cluster), "claim-unsatisfiable")
    assert "6 devices must share one resource.kubernetes.io/pcieRoot; the most on one value is 4" in shown(finding)
    assert by_rule(lint(template(gpus(4), local), cluster), "claim-unsatisfiable") == []
    with_nic = template(
        gpus(4) + gpus(1, name="nic", klass="rdma.example.com"),
        "- requests: [gpus, nic]\n  matchAttribute: resource.kubernetes.io/numaNode\n",
    )
    assert by_rule(lint(with_nic, cluster), "claim-unsatisfiable") == []
    two_nics = template(
        gpus(4) + gpus(2, name="nic", klass="rdma.example.com"),
        "- requests: [gpus, nic]\n  matchAttribute: resource.kubernetes.io/pcieRoot\n",
    )
    assert len(by_rule(lint(two_nics, cluster), "claim-unsatisfiable")) == 1


def test_first_available_and_all_mode(cluster):
    prioritized = template("""
        - name: gpu
          firstAvailable:
          - name: b200
            deviceClassName: gpu.nvidia.com
            selectors:
            - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName.contains("B200")'}
          - name: any
            deviceClassName: gpu.nvidia.com
            count: 2
    """)
    assert by_rule(lint(prioritized, cluster), "claim-unsatisfiable") == []
    all_fabric = template("- name: fabric\n  exactly: {deviceClassName: fabric.example.com, allocationMode: All}\n")
    assert by_rule(lint(all_fabric, cluster), "claim-unsatisfiable") == []


def test_v1beta1_slices_and_claims(cluster):
    flat = template(
        "- name: gpu\n  deviceClassName: gpu.nvidia.com\n  selectors:\n  - cel: {expression: "
        '\'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-40GB"\'}\n',
        api="resource.k8s.io/v1beta1",
    )
    findings = lint(flat, cluster)
    assert by_rule(findings, "claim-unsatisfiable") == [] and by_rule(findings, "claim-reference-invalid") == []


def test_claims_of_one_pod_must_fit_on_one_node(cluster):
    text = template(gpus(6), name="a") + "---\n" + template(gpus(6), name="b") + "---\n" + TWO_CLAIM_POD
    (finding,) = by_rule(lint(text, cluster), "claim-unsatisfiable")
    assert finding.obj.kind == "Pod" and "cannot be allocated together on one node" in finding.message


def test_dra_extended_resource_is_checked_through_the_class(cluster):
    pod = """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: c
            image: i
            resources: {limits: {example.com/dra-gpu: %d}}
    """
    assert by_rule(lint(pod % 8, cluster), "claim-unsatisfiable") == []
    (finding,) = by_rule(lint(pod % 9, cluster), "claim-unsatisfiable")
    assert "served by DRA" in finding.message and finding.line == 8
    assert by_rule(lint(pod % 9, cluster), "gpu-resource-unknown") == []


# ----------------------------------------------------------------- gpu-nic-locality


def test_gpu_and_nic_without_locality_constraint():
    text = template(gpus(4) + gpus(1, name="nic", klass="rdma.example.com"))
    (finding,) = by_rule(lint(text), "gpu-nic-locality")
    assert finding.severity == Severity.WARNING and "matchAttribute: resource.kubernetes.io/pcieRoot" in said(finding)
    ok = template(
        gpus(4) + gpus(1, name="nic", klass="rdma.example.com"), "- matchAttribute: resource.kubernetes.io/numaNode\n"
    )
    assert by_rule(lint(ok), "gpu-nic-locality") == []
    assert by_rule(lint(template(gpus(4))), "gpu-nic-locality") == []


GPU_NIC_PAIRS = """
- name: gpu
  exactly:
    deviceClassName: gpu.nvidia.com
    count: {gpus}{gpu_extra}
- name: nic
  exactly:
    deviceClassName: dranet
    count: 1{nic_extra}
"""


def _pair(gpus: int = 1, gpu_extra: str = "", nic_extra: str = "") -> str:
    return GPU_NIC_PAIRS.format(gpus=gpus, gpu_extra=gpu_extra, nic_extra=nic_extra)


def _pinned(expression: str) -> str:
    return f"\n    selectors:\n    - cel:\n        expression: '{expression}'"


@pytest.mark.parametrize(
    ("requests", "constraints"),
    [
        # a driver's own NUMA attribute (DraNet publishes dra.net/numaNode): the author aligned them
        (_pair(), "- requests: [gpu, nic]\n  matchAttribute: dra.net/numaNode\n"),
        # one constraint over every request (no `requests:` list)
        (_pair(2), "- matchAttribute: resource.kubernetes.io/pcieRoot\n"),
        # both pinned to the same PCIe root by their selectors
        (
            _pair(
                gpu_extra=_pinned('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:17"'),
                nic_extra=_pinned("device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:17'"),
            ),
            "",
        ),
        # every GPU and every NIC of the node: no single domain holds them, a constraint would fail
        (
            _pair(gpu_extra="\n    allocationMode: All").replace(
                "    count: 1\n    allocationMode", "    allocationMode"
            ),
            "",
        ),
    ],
    ids=["driver-numa-constraint", "constraint-over-all-requests", "selectors-on-one-root", "all-devices"],
)
def test_gpu_and_nic_already_aligned_are_not_reported(requests, constraints):
    text = template(requests, constraints)
    assert by_rule(lint(text), "gpu-nic-locality") == [], text


def test_gpu_and_nic_pinned_to_different_roots_or_distinct_are_reported():
    different = _pair(
        gpu_extra=_pinned('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:17"'),
        nic_extra=_pinned('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:98"'),
    )
    assert len(by_rule(lint(template(different)), "gpu-nic-locality")) == 1
    distinct = template(_pair(2), "- requests: [gpu, nic]\n  distinctAttribute: resource.kubernetes.io/pcieRoot\n")
    assert len(by_rule(lint(distinct), "gpu-nic-locality")) == 1


def test_a_nic_named_only_by_its_selector_is_found_in_every_template_and_in_long_selectors():
    """What a request is (GPU, NIC) is remembered per class and selector text: templates that repeat it are each
    reported; a selector text past what is remembered (2,000 characters) is read all the same."""
    nic = 'device.attributes["example.com"].kind == "rdma"'
    padded = " || ".join(['device.driver == "example.com"'] * 70 + [nic])  # 2,200 characters, "rdma" last
    assert len(padded) > 2000
    for selector in (nic, padded):
        request = gpus(4) + gpus(1, selector, name="fabric", klass="devices.example.com")
        text = template(request, name="a") + "---\n" + template(request, name="b")
        found = by_rule(lint(text), "gpu-nic-locality")
        assert [(f.line, "NICs (fabric)" in f.message) for f in found] == [(8, True), (27, True)], found
        plain = template(
            gpus(4) + gpus(1, selector.replace("rdma", "fpga"), name="fabric", klass="devices.example.com")
        )
        assert by_rule(lint(plain), "gpu-nic-locality") == []


# ----------------------------------------------------------------- api-version-unavailable


def test_api_versions_not_served():
    old = template(gpus(1), api="resource.k8s.io/v1alpha3")
    (finding,) = by_rule(lint(old), "api-version-unavailable")
    assert "use resource.k8s.io/v1" in finding.message and finding.line == 1
    assert by_rule(lint(template(gpus(1), api="resource.k8s.io/v1beta2")), "api-version-unavailable") == []
    workload = "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec: {}\n"
    assert by_rule(lint(workload), "api-version-unavailable") == []
    (finding,) = by_rule(lint(workload, kubernetes_version="1.35"), "api-version-unavailable")
    assert "not served by Kubernetes 1.35" in finding.message and "scheduling.k8s.io/v1alpha1" in finding.message


def test_slices_in_both_the_inventory_and_the_linted_files_count_once(write):
    slices = (DATA / "dra" / "slices.yaml").read_text()
    claim = write("claims.yaml", template(gpus(9)))
    copy = write("cluster/slices.yaml", slices)
    report = run_cli("check", str(claim), str(copy), "--inventory", DRA, "--format", "json").json()
    (finding,) = [f for f in report["findings"] if f["rule"] == "claim-unsatisfiable"]
    assert "8 pass the class selectors" in shown(finding)


def test_a_pods_claim_on_nodes_its_tolerations_exclude(write):
    nodes = (
        (DATA / "dra" / "nodes.yaml")
        .read_text()
        .replace("  status:", "  spec:\n    taints: [{key: nvidia.com/gpu, effect: NoSchedule}]\n  status:", 2)
    )
    inventory = write("inv/nodes.yaml", nodes)
    write("inv/slices.yaml", (DATA / "dra" / "slices.yaml").read_text())
    write("inv/classes.yaml", (DATA / "dra" / "classes.yaml").read_text())
    pod = """
        apiVersion: v1
        kind: Pod
        metadata: {name: p, namespace: ml}
        spec:
          %s
          resourceClaims:
          - {name: gpus, resourceClaimTemplateName: t}
          containers:
          - {name: c, image: i, resources: {claims: [{name: gpus}]}}
    """
    untolerated = write("a.yaml", template(gpus(8)) + "---\n" + textwrap.dedent(pod % "hostNetwork: false"))
    report = run_cli("check", str(untolerated), "--inventory", str(inventory.parent), "--format", "json").json()
    (finding,) = [f for f in report["findings"] if f["rule"] == "claim-unsatisfiable"]
    assert "allow 3 of the 5 nodes" in shown(finding) and finding["object"]["kind"] == "Pod"
    tolerated = write(
        "b.yaml", template(gpus(8)) + "---\n" + textwrap.dedent(pod % "tolerations: [{operator: Exists}]")
    )
    report = run_cli("check", str(tolerated), "--inventory", str(inventory.parent), "--format", "json").json()
    assert [f for f in report["findings"] if f["rule"] == "claim-unsatisfiable"] == []


def test_mig_devices_by_profile(cluster):
    profile = 'device.attributes["gpu.nvidia.com"].profile == "1g.10gb"'
    assert (
        by_rule(lint(template(gpus(7, selector=profile, klass="mig.nvidia.com")), cluster), "claim-unsatisfiable") == []
    )
    (finding,) = by_rule(
        lint(template(gpus(8, selector=profile, klass="mig.nvidia.com")), cluster), "claim-unsatisfiable"
    )
    assert "needs 8 devices of class mig.nvidia.com; 7 pass" in shown(finding)
    # the MIG slices are not whole GPUs: the gpu class never selects them
    big = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("9Gi")) >= 0'
    (finding,) = by_rule(lint(template(gpus(9, selector=big)), cluster), "claim-unsatisfiable")
    assert "needs 9 devices of class gpu.nvidia.com; 8 pass" in shown(finding)


def test_distinct_attribute(cluster):
    distinct = "- requests: [{names}]\n  distinctAttribute: resource.kubernetes.io/pcieRoot\n"
    assert by_rule(lint(template(gpus(2), distinct.format(names="gpus")), cluster), "claim-unsatisfiable") == []
    # The allocator compares each device with the last one of every named request, so one request of
    # three devices fits two PCIe roots (17, 97, 17); three requests of one device each do not.
    assert by_rule(lint(template(gpus(3), distinct.format(names="gpus")), cluster), "claim-unsatisfiable") == []
    three = gpus(1, name="a") + gpus(1, name="b") + gpus(1, name="c")
    (finding,) = by_rule(lint(template(three, distinct.format(names="a, b, c")), cluster), "claim-unsatisfiable")
    assert "distinctAttribute resource.kubernetes.io/pcieRoot needs at least 3 different values" in shown(finding)


def test_devices_held_by_allocated_claims(write):
    results = [
        {"request": "gpus", "driver": "gpu.nvidia.com", "pool": node, "device": f"gpu-{i}"}
        for node in ("dgx-0", "dgx-1")
        for i in range(6)
    ]
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "running-job", "namespace": "ml"},
        "spec": {
            "devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 6}}]}
        },
        "status": {"allocation": {"devices": {"results": results}}},
    }
    inventory = write("cluster/claims.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": [claim]}))
    for name in ("nodes.yaml", "slices.yaml", "classes.yaml"):
        write(f"cluster/{name}", (DATA / "dra" / name).read_text())
    h100 = 'device.attributes["gpu.nvidia.com"].productName.contains("H100")'
    manifest = write("claims.yaml", template(gpus(4, selector=h100)))
    report = run_cli("check", str(manifest), "--inventory", str(inventory.parent), "--format", "json").json()
    (finding,) = [f for f in report["findings"] if f["rule"] == "claim-unsatisfiable"]
    assert (
        finding["severity"] == "warning"
        and "not the devices that allocated claims leave free now" in finding["message"]
    )
    small = write("small.yaml", template(gpus(2, selector=h100)))
    report = run_cli("check", str(small), "--inventory", str(inventory.parent), "--format", "json").json()
    assert [f for f in report["findings"] if f["rule"] == "claim-unsatisfiable"] == []


def test_exact_positions_of_reference_and_locality_findings():
    text = (
        template(gpus(1)) + "---\n" + textwrap.dedent(POD_WITH_CLAIMS.format(template="t", claim="gpu", request="gpus"))
    )
    (finding,) = [f for f in by_rule(lint(text), "claim-reference-invalid") if "must be one of" in f.message]
    assert (finding.line, finding.column) == (26, 15)  # resources.claims[0].name's value
    assert text.splitlines()[25][14:17] == "gpu"
    nic = template(gpus(4) + gpus(1, name="nic", klass="rdma.example.com"))
    (locality,) = by_rule(lint(nic), "gpu-nic-locality")
    assert (locality.line, locality.column) == (8, 7)  # the requests list


def test_a_runtime_error_in_a_later_subrequest_is_a_warning(cluster):
    """allocator_stable.go tries a firstAvailable subrequest only when those before it cannot be allocated: its
    selector's runtime error aborts the claim only then (dra allocate oracle, seed 6), so not an error."""
    plain = "- name: any\n  deviceClassName: gpu.nvidia.com\n  count: 1\n"
    failing = (
        "- name: h100\n  deviceClassName: gpu.nvidia.com\n  count: 1\n  selectors:\n  - cel:\n"
        '      expression: \'device.attributes["gpu.nvidia.com"].model == "H100"\'\n'
    )

    def request(*subrequests: str) -> str:
        return "- name: gpus\n  firstAvailable:\n" + textwrap.indent("".join(subrequests), "  ")

    (later,) = by_rule(lint(template(request(plain, failing)), cluster), "cel-invalid")
    assert later.severity is Severity.WARNING
    assert "CEL runtime error on device gpu.nvidia.com/" in later.message
    assert "only when the subrequests before it cannot be allocated" in shown(later)
    (first,) = by_rule(lint(template(request(failing, plain)), cluster), "cel-invalid")
    assert first.severity is Severity.ERROR  # the first subrequest is always tried


def test_a_runtime_error_an_exact_count_may_never_reach_is_a_warning(cluster):
    """allocator_stable.go stops an ExactCount request at its count: where every node with the failing device has
    at least that many devices the selectors match without an error, whether the allocator reaches it depends on
    its order (dra allocate oracle, seed 6); where one has fewer, the allocator visits every device there."""
    # each DGX node: 4 GPUs on NUMA node 0 (true), 4 on NUMA node 1 (no `model`: a runtime error); the other
    # nodes' GPUs have no NUMA node (true)
    numa0 = 'device.attributes["resource.kubernetes.io"].?numaNode.orValue(0) == 0'
    selector = numa0 + ' || device.attributes["gpu.nvidia.com"].model == "x"'
    (enough,) = by_rule(lint(template(gpus(4, selector=selector)), cluster), "cel-invalid")
    assert enough.severity is Severity.WARNING
    assert "CEL runtime error on device gpu.nvidia.com/dgx-" in enough.message
    assert "only when it reaches the device before 4 device(s) the selectors match" in shown(enough)
    (fewer,) = by_rule(lint(template(gpus(5, selector=selector)), cluster), "cel-invalid")
    assert fewer.severity is Severity.ERROR and "reaches the device" not in shown(fewer)
    # trap: old-0's GPUs have no NUMA node, a runtime error on each: the allocator reaches one there at any count
    strict = (
        'device.attributes["resource.kubernetes.io"].numaNode == 0 || device.attributes["gpu.nvidia.com"].model == "x"'
    )
    (old,) = by_rule(lint(template(gpus(1, selector=strict)), cluster), "cel-invalid")
    assert old.severity is Severity.ERROR and "gpu.nvidia.com/old-0/" in old.message


HELD_CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: gpu-a, labels: {kubernetes.io/hostname: gpu-a}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: device.driver == "gpu.example.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-a-gpu.example.com}
spec:
  driver: gpu.example.com
  nodeName: gpu-a
  pool: {name: gpu-a, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: a100}}}
  - {name: gpu-1, attributes: {model: {string: a100}, index: {int: 1}}}
---
# another pod's claim holds gpu-0, the device without an index
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held, namespace: ml}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: gpu-a, device: gpu-0}
  reservedFor:
  - {resource: pods, name: other, uid: 0d9c3f5e-8a1b-4c2d-9e7f-000000000003}
"""


def test_a_runtime_error_on_a_device_another_claim_holds_is_a_warning():
    """allocateOne skips a device in use before it evaluates selectors (allocator_stable.go v0.37.2): the first
    subrequest never meets gpu-0's error while another claim holds it, and the pod gets gpu-1 through the second
    (the dra allocate oracle: Kubernetes allocates now, and fails every attempt once gpu-0 is freed)."""
    index = """{cel: {expression: 'device.attributes["gpu.example.com"].index < 2'}}"""
    two_then_one = f"""
    - name: gpu
      firstAvailable:
      - {{name: two, deviceClassName: gpu.example.com, count: 2, selectors: [{index}]}}
      - {{name: one, deviceClassName: gpu.example.com}}
    """
    cluster = load_inventory(["cluster.yaml"], [Source("cluster.yaml", content=HELD_CLUSTER.encode())])
    (held,) = by_rule(lint(template(two_then_one), cluster), "cel-invalid")
    assert held.severity is Severity.WARNING
    assert "CEL runtime error on device gpu.example.com/gpu-a/gpu-0: no such key: index" in held.message
    assert "another claim holds this device now" in shown(held)
    # trap: freed, the device is the first the request visits, and the claim aborts on every attempt
    freed = HELD_CLUSTER.split("---\n# another pod")[0]
    assert "kind: ResourceClaim" not in freed
    free = load_inventory(["cluster.yaml"], [Source("cluster.yaml", content=freed.encode())])
    (error,) = by_rule(lint(template(two_then_one), free), "cel-invalid")
    assert error.severity is Severity.ERROR and "another claim" not in shown(error)
    # trap: a request for all devices gathers every selectable device first, the held one too
    every = f"- {{name: gpu, exactly: {{deviceClassName: gpu.example.com, allocationMode: All, selectors: [{index}]}}}}"
    (gathered,) = by_rule(lint(template(every), cluster), "cel-invalid")
    assert gathered.severity is Severity.ERROR
