"""The admission layer: Kueue queues, flavors and quota (both API versions), queue wiring, and
queued workloads packed whole. Manifests shaped like the Kueue docs' (site/content/en/docs)."""

from __future__ import annotations

import textwrap
from fractions import Fraction

import pytest
from conftest import DATA, said
from rule_harness import assert_findings, findings_of, raw_findings_of

from gpulint.kube.queueing.kueue import ClusterQueue, KueueSetup

RACKS = str(DATA / "racks")


def flavor(name: str = "default-flavor", labels: str = "", taints: str = "", version: str = "v1beta2") -> str:
    spec = []
    if labels:
        spec.append(f"  nodeLabels: {labels}")
    if taints:
        spec.append(f"  nodeTaints: {taints}")
    body = "\n".join(spec) or "  {}"
    return f"apiVersion: kueue.x-k8s.io/{version}\nkind: ResourceFlavor\nmetadata: {{name: {name}}}\nspec:\n{body}\n"


def cluster_queue(
    name: str = "cluster-queue",
    gpus: str = "8",
    flavors: tuple[str, ...] = ("default-flavor",),
    cohort: str = "",
    version: str = "v1beta2",
    extra: str = "",
    covered: str = "cpu, memory, nvidia.com/gpu",
    selector: str = "namespaceSelector: {}",
) -> str:
    cohort_key = "cohortName" if version == "v1beta2" else "cohort"
    cohort_line = f"  {cohort_key}: {cohort}\n" if cohort else ""
    flavor_lines = "".join(
        f"    - name: {f}\n"
        "      resources:\n"
        '      - {name: cpu, nominalQuota: "64"}\n'
        "      - {name: memory, nominalQuota: 512Gi}\n"
        f"      - {{name: nvidia.com/gpu, nominalQuota: {gpus}{extra}}}\n"
        for f in flavors
    )
    selector_line = f"  {selector}\n" if selector else ""
    return (
        f"apiVersion: kueue.x-k8s.io/{version}\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n"
        f"{cohort_line}{selector_line}  resourceGroups:\n  - coveredResources: [{covered}]\n    flavors:\n{flavor_lines}"
    )


def local_queue(
    name: str = "user-queue", namespace: str = "team-a", target: str = "cluster-queue", v: str = "v1beta2"
) -> str:
    return (
        f"apiVersion: kueue.x-k8s.io/{v}\nkind: LocalQueue\nmetadata: {{name: {name}, namespace: {namespace}}}\n"
        f"spec: {{clusterQueue: {target}}}\n"
    )


def job(
    gpus: int = 1, parallelism: int = 1, queue: str = "user-queue", namespace: str = "team-a", extra_spec: str = ""
) -> str:
    text = textwrap.dedent(f"""\
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: sample-job
          namespace: {namespace}
          labels:
            kueue.x-k8s.io/queue-name: {queue}
        spec:
          parallelism: {parallelism}
          completions: {parallelism}
          template:
            spec:EXTRA
              restartPolicy: Never
              containers:
              - name: dummy-job
                image: registry.k8s.io/e2e-test-images/agnhost:2.53
                resources:
                  requests: {{cpu: 100m, memory: 100Mi}}
                  limits: {{nvidia.com/gpu: {gpus}}}
        """)
    return text.replace("EXTRA", extra_spec)


def docs(*parts: str) -> str:
    return "---\n".join(part if part.endswith("\n") else part + "\n" for part in parts)


# The manifests of these tests are one cluster's files (clusters: with no inventory): what they describe of
# the cluster (queues, quotas) is that cluster's, so the quota verdicts are errors. Without the mapping they
# are at most warnings (test_a_repository_is_not_one_cluster below).
ONE_CLUSTER = {"clusters": {"team": {"paths": ["*"]}}}
# The linted files hold every queue object of the cluster: a name found nowhere does not exist.
COMPLETE = {"complete": ["LocalQueue", "ClusterQueue", "ResourceFlavor", "AdmissionCheck", "Queue"]}


def queue_findings(text: str, rule: str = "queue-unadmittable", **kwargs):
    kwargs.setdefault("config", ONE_CLUSTER)
    return findings_of(rule, text, **kwargs)


# ----------------------------------------------------------------- quota boundaries


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_exactly_the_nominal_quota_admits(version):
    text = docs(
        flavor(version=version), cluster_queue(version=version), local_queue(v=version), job(gpus=4, parallelism=2)
    )
    assert queue_findings(text) == []


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_one_gpu_more_than_the_nominal_quota_never_admits(version):
    text = docs(
        flavor(version=version), cluster_queue(version=version), local_queue(v=version), job(gpus=3, parallelism=3)
    )
    (finding,) = queue_findings(text)
    assert finding.severity == "error"
    assert finding.message == (
        "ClusterQueue cluster-queue can never admit this workload (it stays suspended)\ncouldn't assign flavors "
        "to pod set main: insufficient quota for nvidia.com/gpu in flavor default-flavor, previously considered "
        "podsets requests (0) + current podset request (9) > maximum capacity (8)"
    )
    assert (finding.line, finding.column) == (
        text.splitlines().index("    kueue.x-k8s.io/queue-name: user-queue") + 1,
        32,
    )


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_borrowing_within_the_cohort_admits(version):
    text = docs(
        flavor(version=version),
        cluster_queue(cohort="research", version=version),
        cluster_queue("other-queue", cohort="research", version=version),
        local_queue(v=version),
        job(gpus=8, parallelism=2),
    )
    assert queue_findings(text) == []


def test_borrowing_beyond_what_the_cohort_has_never_admits():
    text = docs(
        flavor(),
        cluster_queue(cohort="research"),
        cluster_queue("other-queue", cohort="research"),
        local_queue(),
        job(gpus=17),
    )
    (finding,) = queue_findings(text)
    assert "current podset request (17) > maximum capacity (16)" in finding.message


def test_borrowing_limit_caps_what_the_cohort_lends():
    text = docs(
        flavor(),
        cluster_queue(cohort="research", extra=", borrowingLimit: 2"),
        cluster_queue("other-queue", cohort="research"),
        local_queue(),
    )
    assert queue_findings(docs(text, job(gpus=10))) == []
    (finding,) = queue_findings(docs(text, job(gpus=11)))
    assert "> maximum capacity (10)" in finding.message


def test_lending_limit_keeps_the_rest_of_the_other_queues_quota():
    text = docs(
        flavor(),
        cluster_queue(cohort="research"),
        cluster_queue("other-queue", cohort="research", extra=", lendingLimit: 3"),
        local_queue(),
    )
    assert queue_findings(docs(text, job(gpus=11))) == []
    (finding,) = queue_findings(docs(text, job(gpus=12)))
    assert "> maximum capacity (11)" in finding.message


def test_a_cohort_object_with_its_own_quota_lends_it():
    cohort = textwrap.dedent("""\
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: Cohort
        metadata: {name: research}
        spec:
          resourceGroups:
          - coveredResources: [nvidia.com/gpu]
            flavors:
            - name: default-flavor
              resources:
              - {name: nvidia.com/gpu, nominalQuota: 4}
        """)
    text = docs(flavor(), cohort, cluster_queue(cohort="research"), local_queue())
    assert queue_findings(docs(text, job(gpus=12))) == []
    (finding,) = queue_findings(docs(text, job(gpus=13)))
    assert "> maximum capacity (12)" in finding.message


def test_quota_model_follows_kueue_resource_node_arithmetic():
    data = [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": "root"}},
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Cohort",
            "metadata": {"name": "child"},
            "spec": {"parentName": "root"},
        },
    ]

    def cq(name, cohort, nominal, **limits):
        quota = {"name": "nvidia.com/gpu", "nominalQuota": nominal, **limits}
        return {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {
                "cohortName": cohort,
                "resourceGroups": [
                    {"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "f", "resources": [quota]}]}
                ],
            },
        }

    setup = KueueSetup.of([*data, cq("a", "child", 4), cq("b", "child", 6, lendingLimit=2), cq("c", "root", 10)])
    fr = ("f", "nvidia.com/gpu")
    assert setup.potential_available(setup.cluster_queues["a"], fr) == 16  # 4 + 2 lent by b + 10 from root
    assert setup.potential_available(setup.cluster_queues["b"], fr) == 20  # its 6 + a's 4 + c's 10
    assert setup.available(setup.cluster_queues["a"], fr) == 16
    assert ClusterQueue.of(cq("x", "", "1k")).groups[0].flavors[0].quota("nvidia.com/gpu").nominal == Fraction(1000)


# ----------------------------------------------------------------- flavors


def test_untolerated_flavor_taint_then_next_flavor_admits():
    text = docs(
        flavor("spot", labels="{instance-type: spot}", taints="[{key: spot, value: 'true', effect: NoSchedule}]"),
        flavor("on-demand", labels="{instance-type: on-demand}"),
        cluster_queue(flavors=("spot", "on-demand")),
        local_queue(),
        job(gpus=8),
    )
    assert queue_findings(text) == []


def test_every_flavor_refused_by_taints_and_labels():
    text = docs(
        flavor("spot", labels="{instance-type: spot}", taints="[{key: spot, value: 'true', effect: NoSchedule}]"),
        flavor("on-demand", labels="{instance-type: on-demand}"),
        cluster_queue(flavors=("spot", "on-demand")),
        local_queue(),
        job(gpus=8, extra_spec="\n      nodeSelector: {instance-type: reserved, kubernetes.io/arch: amd64}"),
    )
    (finding,) = queue_findings(text)
    assert (
        "couldn't assign flavors to pod set main: untolerated taint spot=true:NoSchedule in flavor spot, "
        "flavor on-demand doesn't match node affinity" in finding.message
    )


def test_node_selector_keys_the_flavor_does_not_set_are_ignored():
    text = docs(
        flavor("on-demand", labels="{instance-type: on-demand}"),
        cluster_queue(flavors=("on-demand",)),
        local_queue(),
        job(gpus=8, extra_spec="\n      nodeSelector: {kubernetes.io/arch: amd64}"),
    )
    assert queue_findings(text) == []


def test_a_resource_no_resource_group_covers():
    text = docs(flavor(), cluster_queue(covered="nvidia.com/gpu"), local_queue(), job(gpus=1))
    (finding,) = queue_findings(text)
    assert "couldn't assign flavors to pod set main: resource cpu unavailable in ClusterQueue" in finding.message


def test_pod_sets_that_fit_alone_but_not_together():
    pytorch = textwrap.dedent("""\
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata:
          name: pytorch-simple
          namespace: team-a
          labels: {kueue.x-k8s.io/queue-name: user-queue}
        spec:
          pytorchReplicaSpecs:
            Master:
              replicas: 1
              template:
                spec:
                  containers:
                  - {name: pytorch, image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727, resources: {limits: {nvidia.com/gpu: 4}}}
            Worker:
              replicas: 1
              template:
                spec:
                  containers:
                  - {name: pytorch, image: docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727, resources: {limits: {nvidia.com/gpu: 5}}}
        """)
    text = docs(flavor(), cluster_queue(covered="nvidia.com/gpu"), local_queue())
    (finding,) = queue_findings(docs(text, pytorch))
    assert (
        "the pod sets (master, worker) need 9 together > maximum capacity (8) of flavor(s) default-flavor"
        in finding.message
    )
    assert queue_findings(docs(text, pytorch.replace("gpu: 5", "gpu: 4"))) == []


def test_current_usage_is_a_warning_only(tmp_path):
    (tmp_path / "queues.yaml").write_text(
        docs(
            flavor(),
            cluster_queue() + "status:\n  flavorsReservation:\n  - name: default-flavor\n    resources:\n"
            "    - {name: nvidia.com/gpu, total: '6', borrowed: '0'}\n",
            local_queue(),
        )
    )
    (finding,) = queue_findings(job(gpus=4), inventory=[RACKS, str(tmp_path)])
    assert finding.severity == "warning"
    assert "insufficient unused quota for nvidia.com/gpu in flavor default-flavor, 2 more needed" in finding.message
    assert queue_findings(job(gpus=2), inventory=[RACKS, str(tmp_path)]) == []


# ----------------------------------------------------------------- wiring


def test_missing_local_queue_listed_by_the_inventory_is_an_error(tmp_path):
    (tmp_path / "queues.yaml").write_text(docs(flavor(), cluster_queue(), local_queue()))
    (finding,) = queue_findings(job(queue="user-queu"), "queue-reference-invalid", inventory=[str(tmp_path)])
    assert finding.severity == "error"
    assert "LocalQueue user-queu doesn't exist in namespace team-a" in finding.message
    assert "did you mean 'user-queue'?" in finding.message
    assert queue_findings(job(), "queue-reference-invalid", inventory=[str(tmp_path)]) == []


def test_no_queues_known_says_nothing():
    assert queue_findings(job(queue="anything"), "queue-reference-invalid") == []


def test_queue_given_as_an_annotation():
    text = job().replace("  labels:\n    kueue.x-k8s.io/queue-name", "  annotations:\n    kueue.x-k8s.io/queue-name")
    (finding,) = queue_findings(text, "queue-reference-invalid")
    assert finding.severity == "warning"
    assert "which Kueue does not read: it reads the label" in finding.message


def test_local_queue_pointing_at_a_missing_cluster_queue():
    text = docs(flavor(), cluster_queue(), local_queue(target="cluster-queu"), job())
    (finding,) = queue_findings(text, "queue-reference-invalid", config=COMPLETE)
    assert finding.severity == "error"
    assert "points at ClusterQueue cluster-queu, which doesn't exist; did you mean 'cluster-queue'?" in finding.message
    # the ClusterQueues are not declared complete: a platform chart may make it; the likely typo is info
    (finding,) = queue_findings(text, "queue-reference-invalid")
    assert finding.severity == "info"
    assert "ClusterQueue cluster-queu (of LocalQueue user-queue) is not among the linted files" in finding.message
    assert "complete: [ClusterQueue]" in finding.message


def test_null_namespace_selector_selects_no_namespace():
    text = docs(flavor(), cluster_queue(selector=""), local_queue(), job())
    (finding,) = queue_findings(text, "queue-reference-invalid")
    assert finding.severity == "error"
    assert "workload namespace doesn't match ClusterQueue selector" in finding.message
    assert "null selects no namespace" in finding.message


def test_namespace_selector_on_namespace_labels():
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels: {research-cohort: '{value}'}\n"
    queues = docs(
        flavor(), cluster_queue(selector="namespaceSelector: {matchLabels: {research-cohort: 'true'}}"), local_queue()
    )
    assert queue_findings(docs(namespace.replace("{value}", "true"), queues, job()), "queue-reference-invalid") == []
    (finding,) = queue_findings(docs(namespace.replace("{value}", "false"), queues, job()), "queue-reference-invalid")
    assert finding.message == (
        "workload namespace doesn't match ClusterQueue selector: ClusterQueue cluster-queue admits nothing from "
        "namespace team-a\nClusterQueue cluster-queue has a namespaceSelector that excludes namespace team-a"
    )
    # labels unknown (no Namespace object): not judged
    assert queue_findings(docs(queues, job()), "queue-reference-invalid") == []


def test_namespace_selector_on_the_metadata_name_label_needs_no_namespace_object():
    selector = (
        "namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [team-b]}]}"
    )
    (finding,) = queue_findings(
        docs(flavor(), cluster_queue(selector=selector), local_queue(), job()), "queue-reference-invalid"
    )
    assert "excludes namespace team-a" in finding.message


def test_stopped_queues_and_missing_flavors(tmp_path):
    stopped = cluster_queue().replace("spec:\n", "spec:\n  stopPolicy: Hold\n", 1)
    (finding,) = queue_findings(docs(flavor(), stopped, local_queue(), job()), "queue-reference-invalid")
    assert (
        finding.severity == "warning" and "ClusterQueue cluster-queue is stopped (stopPolicy: Hold)" in finding.message
    )
    (tmp_path / "queues.yaml").write_text(docs(flavor("other"), cluster_queue(), local_queue()))
    (finding,) = queue_findings(job(), "queue-reference-invalid", inventory=[str(tmp_path)])
    assert finding.severity == "error"
    assert "references missing ResourceFlavor(s): default-flavor" in finding.message


# ----------------------------------------------------------------- admission checks (the Kueue docs' examples)

MULTIKUEUE = "kueue.x-k8s.io/multikueue"


def admission_check(
    name: str = "sample-prov", controller: str = "kueue.x-k8s.io/provisioning-request", active: str = ""
) -> str:
    kind = "MultiKueueConfig" if controller == MULTIKUEUE else "ProvisioningRequestConfig"
    text = (
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {{name: {name}}}\nspec:\n"
        f"  controllerName: {controller}\n  parameters: {{apiGroup: kueue.x-k8s.io, kind: {kind}, "
        f"name: {name}-config}}\n"
    )
    if active:
        text += f"status:\n  conditions:\n  - {{type: Active, status: '{active}', reason: Active, message: ''}}\n"
    return text


def with_checks(queue: str, *names: str, strategy: bool = True, on_flavors: str = "") -> str:
    """The checks as v1beta2 writes them (admissionChecksStrategy rules), or v1beta1's admissionChecks list."""
    if strategy:
        on = f"\n      onFlavors: {on_flavors}" if on_flavors else ""
        rules = "".join(f"    - name: {n}{on}\n" for n in names)
        return queue.replace("spec:\n", f"spec:\n  admissionChecksStrategy:\n    admissionChecks:\n{rules}", 1)
    return queue.replace("spec:\n", f"spec:\n  admissionChecks: [{', '.join(names)}]\n", 1)


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_a_missing_admission_check_makes_the_cluster_queue_inactive(tmp_path, version):
    queue = with_checks(cluster_queue(version=version), "sample-prov", strategy=version == "v1beta2")
    (tmp_path / "queues.yaml").write_text(
        docs(flavor(version=version), queue, local_queue(v=version), admission_check("other-check"))
    )
    (finding,) = queue_findings(job(), "queue-reference-invalid", inventory=[str(tmp_path)])
    assert finding.severity == "error"  # the inventory lists every AdmissionCheck: Kueue's cache has none by that name
    assert (
        "ClusterQueue cluster-queue is inactive (Can't admit new workloads): it references missing AdmissionCheck(s): "
        "sample-prov" in finding.message
    )
    assert (finding.line, finding.column) == (7, 32)
    # the check exists (as written in the docs, no status yet): admitted as usual
    (tmp_path / "checks.yaml").write_text(admission_check())
    assert queue_findings(job(), "queue-reference-invalid", inventory=[str(tmp_path)]) == []


def test_a_missing_admission_check_is_said_only_when_the_checks_are_known_whole():
    text = docs(
        flavor(), with_checks(cluster_queue(), "sample-prov"), local_queue(), admission_check("prov-test"), job()
    )
    (finding,) = queue_findings(text, "queue-reference-invalid", config=COMPLETE)
    assert finding.severity == "error" and "missing AdmissionCheck(s): sample-prov" in finding.message
    # another AdmissionCheck in the files proves nothing (before: a warning): the platform's chart may make it
    assert queue_findings(text, "queue-reference-invalid") == []
    assert (
        queue_findings(
            docs(flavor(), with_checks(cluster_queue(), "sample-prov"), local_queue(), job()), "queue-reference-invalid"
        )
        == []
    )


def test_a_v1beta2_cluster_queue_has_no_admission_checks_list():
    # v1beta2 dropped spec.admissionChecks (only admissionChecksStrategy): Kueue never sees the list
    listed = docs(
        flavor(), with_checks(cluster_queue(), "sample-prov", strategy=False), local_queue(), admission_check("x")
    )
    assert queue_findings(docs(listed, job()), "queue-reference-invalid", config=COMPLETE) == []
    v1beta1 = with_checks(cluster_queue(version="v1beta1"), "sample-prov", strategy=False)
    text = docs(flavor(), v1beta1, local_queue(), admission_check("x"), job())
    assert len(queue_findings(text, "queue-reference-invalid", config=COMPLETE)) == 1


def test_an_inactive_admission_check_from_the_inventory(tmp_path):
    (tmp_path / "checks.yaml").write_text(admission_check(active="False"))
    text = docs(flavor(), with_checks(cluster_queue(), "sample-prov", strategy=True), local_queue(), job())
    (finding,) = queue_findings(text, "queue-reference-invalid", inventory=[str(tmp_path)])
    assert finding.severity == "warning"
    assert finding.message == (
        "ClusterQueue cluster-queue is inactive (Can't admit new workloads): it references inactive AdmissionCheck(s): "
        "sample-prov\ntheir controller reports Active False; the queue's workloads stay pending until it marks them "
        "Active"
    )
    (tmp_path / "checks.yaml").write_text(admission_check(active="True"))
    assert queue_findings(text, "queue-reference-invalid", inventory=[str(tmp_path)]) == []
    # the linted check (no status) keeps the controller's status from the cluster
    (tmp_path / "checks.yaml").write_text(admission_check(active="False"))
    assert len(queue_findings(docs(text, admission_check()), "queue-reference-invalid", inventory=[str(tmp_path)])) == 1


def test_multikueue_checks_that_kueue_refuses_to_combine():
    multikueue = "kueue.x-k8s.io/multikueue"
    two = docs(
        flavor(),
        with_checks(cluster_queue(), "mk-a", "mk-b"),
        local_queue(),
        admission_check("mk-a", multikueue),
        admission_check("mk-b", multikueue),
        job(),
    )
    (finding,) = queue_findings(two, "queue-reference-invalid")
    assert finding.severity == "error"
    assert (
        "Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, found: mk-a,mk-b" in finding.message
    )
    mixed = docs(
        flavor(),
        with_checks(cluster_queue(), "mk-a", "sample-prov"),
        local_queue(),
        admission_check("mk-a", multikueue),
        admission_check(),
        job(),
    )
    (finding,) = queue_findings(mixed, "queue-reference-invalid")
    assert "Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks together" in finding.message
    one = docs(
        flavor(), with_checks(cluster_queue(), "mk-a"), local_queue(), admission_check("mk-a", multikueue), job()
    )
    assert queue_findings(one, "queue-reference-invalid") == []
    # MultiKueue for some flavors only: refused; onFlavors naming every flavor is all of them
    two_flavors = cluster_queue(flavors=("default-flavor", "spot"))
    some = with_checks(two_flavors, "mk-a", on_flavors="[spot]")
    text = docs(flavor(), flavor("spot"), some, local_queue(), admission_check("mk-a", multikueue), job())
    (finding,) = queue_findings(text, "queue-reference-invalid")
    assert "Cannot specify MultiKueue AdmissionCheck per flavor, found: mk-a" in finding.message
    every = with_checks(two_flavors, "mk-a", on_flavors="[default-flavor, spot]")
    text = docs(flavor(), flavor("spot"), every, local_queue(), admission_check("mk-a", multikueue), job())
    assert queue_findings(text, "queue-reference-invalid") == []
    provisioning_on_one = with_checks(two_flavors, "sample-prov", on_flavors="[spot]")
    text = docs(flavor(), flavor("spot"), provisioning_on_one, local_queue(), admission_check(), job())
    assert queue_findings(text, "queue-reference-invalid") == []  # per flavor is fine for other checks


def test_admission_check_names_stay_on_the_first_line_until_it_is_full_then_go_to_a_note():
    # Kueue's condition lists every name ("Can't admit new workloads: references missing AdmissionCheck(s): a,b");
    # the finding's first line keeps them while it fits in 160 characters, else they are its first note
    short = ["prov-a100"]
    long = [
        "provisioning-request-a100-spot-capacity-europe-west4",
        "provisioning-request-h100-reserved-capacity-us-central1",
    ]
    lead = "ClusterQueue cluster-queue is inactive (Can't admit new workloads): it references missing AdmissionCheck(s)"
    for names, message, notes in [
        (short, f"{lead}: prov-a100", ("its workloads stay pending until they exist",)),
        (long, lead, (f"missing AdmissionCheck(s): {','.join(long)}", "its workloads stay pending until they exist")),
    ]:
        text = docs(
            flavor(), with_checks(cluster_queue(), *names), local_queue(), admission_check("other-check"), job()
        )
        (finding,) = raw_findings_of("queue-reference-invalid", text, config=COMPLETE)
        assert (finding["message"], tuple(finding["notes"])) == (message, notes)
        assert len(finding["message"]) <= 160
    # the boundary: a name that makes the line exactly 160 characters stays on it, one more character moves it
    exact = "x" * (160 - len(lead) - 2)
    for name, inline in [(exact, True), (exact + "y", False)]:
        text = docs(flavor(), with_checks(cluster_queue(), name), local_queue(), admission_check("other-check"), job())
        (finding,) = raw_findings_of("queue-reference-invalid", text, config=COMPLETE)
        assert (finding["message"] == f"{lead}: {name}") is inline
        assert (f"missing AdmissionCheck(s): {name}" in finding["notes"]) is not inline


def test_a_long_did_you_mean_goes_to_a_note():
    names = [f"team-{i}-research-queue" for i in range(8)]
    queues = docs(flavor(), cluster_queue(), *(local_queue(n) for n in names))
    (finding,) = raw_findings_of("queue-reference-invalid", docs(queues, job(queue="user-queue")), config=COMPLETE)
    assert finding["message"] == (
        "LocalQueue user-queue doesn't exist in namespace team-a: Kueue leaves the workload pending (inadmissible)"
    )
    assert finding["notes"] == [f"defined: {', '.join(sorted(names)[:6])} and 2 more"]
    # a close name fits: the suggestion stays on the line
    (finding,) = raw_findings_of(
        "queue-reference-invalid", docs(queues, job(queue="team-1-research-queu")), config=COMPLETE
    )
    assert finding["message"].endswith("; did you mean 'team-1-research-queue'?")
    assert finding["notes"] == []


# ----------------------------------------------------------------- Kueue plain pod groups (examples/pods-kueue)


def group_pod(
    name: str,
    gpus: int = 0,
    total: int = 2,
    queue: str = "user-queue",
    group: str = "sample-group",
    cpu: int = 3,
) -> str:
    """A Pod of the Kueue docs' kueue-pod-group.yaml (the leader and workers differ only by name there)."""
    limits = f"      limits: {{nvidia.com/gpu: {gpus}}}\n" if gpus else ""
    return (
        textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: {name}
          namespace: team-a
          labels:
            kueue.x-k8s.io/queue-name: {queue}
            kueue.x-k8s.io/pod-group-name: "{group}"
          annotations:
            kueue.x-k8s.io/pod-group-total-count: "{total}"
        spec:
          restartPolicy: Never
          containers:
          - name: sleep
            image: busybox
            resources:
              requests: {{cpu: {cpu}}}
        """)
        + limits
    )


def test_a_pod_group_is_one_workload_of_its_pods_not_each_pod_times_the_count():
    # False positive of judging each Pod as `total` copies of itself: a CPU leader and an 8-GPU worker
    # make one Workload of 8 GPUs, which an 8-GPU queue admits
    queues = docs(flavor(), cluster_queue(gpus="8"), local_queue())
    text = docs(queues, group_pod("sample-leader"), group_pod("sample-worker", gpus=8))
    assert queue_findings(text) == []
    assert findings_of("gang-unsatisfiable", text, inventory=RACKS) == []


def test_a_pod_groups_pods_are_summed_across_objects_and_reported_once():
    queues = docs(flavor(), cluster_queue(gpus="8"), local_queue())
    two = docs(queues, *(group_pod(f"worker-{i}", gpus=4, total=2) for i in range(2)))
    assert queue_findings(two) == []  # exactly the nominal quota
    three = docs(queues, *(group_pod(f"worker-{i}", gpus=4, total=3) for i in range(3)))
    (finding,) = queue_findings(three)  # on the first Pod only: the group is one Workload
    assert finding.severity == "error"
    assert finding.line == three.splitlines().index("    kueue.x-k8s.io/queue-name: user-queue") + 1
    assert (
        "insufficient quota for nvidia.com/gpu: the pod sets (worker-0, worker-1, worker-2) need 12 together > "
        "maximum capacity (8) of flavor(s) default-flavor" in finding.message
    )


def test_a_pod_group_larger_than_the_cluster_is_one_gang_across_files(tmp_path):
    import json

    from conftest import run_cli

    # racks: six nodes hold 8 GPUs; seven 8-GPU Pods of one group never run at once, six do
    for count, expected in ((6, 0), (7, 1)):
        folder = tmp_path / str(count)
        folder.mkdir()
        for i in range(count):
            (folder / f"pod-{i}.yaml").write_text(group_pod(f"worker-{i}", gpus=8, total=count, cpu=1))
        result = run_cli(
            "check", str(folder), "--inventory", RACKS, "--select", "gang-unsatisfiable", "--format", "json"
        )

        found = json.loads(result.stdout)["findings"]
        assert len(found) == expected, found
        if expected:
            assert found[0]["path"].endswith("pod-0.yaml") and found[0]["line"] == 8
            assert "Kueue pod group sample-group needs 7 pods x 8 nvidia.com/gpu" in found[0]["message"]


def test_pods_of_a_group_with_a_count_the_files_do_not_reach_are_judged_by_the_known_ones():
    # one Pod of a group of 16 (the manifest created 16 times, or by a controller): the other 15 are not guessed
    queues = docs(flavor(), cluster_queue(gpus="8"), local_queue())
    assert queue_findings(docs(queues, group_pod("worker", gpus=8, total=16))) == []
    assert findings_of("gang-unsatisfiable", group_pod("worker", gpus=8, total=16), inventory=RACKS) == []
    # the known ones alone already exceed the quota: never admitted
    (finding,) = queue_findings(docs(queues, group_pod("big-0", gpus=8, total=4), group_pod("big-1", gpus=8, total=4)))
    assert "need 16 together > maximum capacity (8)" in finding.message


def test_pods_of_one_group_that_disagree_on_queue_or_count():
    queues = docs(flavor(), cluster_queue(), local_queue(), local_queue("other-queue"))
    text = docs(queues, group_pod("sample-leader"), group_pod("sample-worker", queue="other-queue", total=3))
    found = queue_findings(text, "queue-reference-invalid")
    assert [(f.severity, f.message.split(":")[0]) for f in found] == [
        ("error", "pods 'sample-leader' and 'sample-worker' has different queue names"),
        (
            "error",
            "pods 'sample-leader' and 'sample-worker' has different 'kueue.x-k8s.io/pod-group-total-count' values",
        ),
    ]
    assert found[0].message == (
        "pods 'sample-leader' and 'sample-worker' has different queue names: user-queue!=other-queue\n"
        "Kueue never makes the Workload of pod group sample-group, and no pod of it starts"
    )
    assert found[1].message == (
        "pods 'sample-leader' and 'sample-worker' has different 'kueue.x-k8s.io/pod-group-total-count' values: 2!=3\n"
        "Kueue never makes the Workload of pod group sample-group"
    )
    assert (
        queue_findings(docs(queues, group_pod("sample-leader"), group_pod("sample-worker")), "queue-reference-invalid")
        == []
    )


def test_more_pods_of_a_group_than_its_total_count_are_deleted_by_kueue():
    # the docs' kueue-pod-group.yaml with one worker too many: Kueue deletes the Pod created last
    queues = docs(flavor(), cluster_queue(gpus="8"), local_queue())
    exact = docs(queues, group_pod("sample-leader"), group_pod("sample-worker-0", gpus=4))
    assert queue_findings(exact, "queue-reference-invalid") == []
    excess = docs(exact, group_pod("sample-worker-1", gpus=4))
    (finding,) = queue_findings(excess, "queue-reference-invalid")
    assert finding.severity == "error"
    assert finding.message == (
        "pod group sample-group has 3 pods but 'kueue.x-k8s.io/pod-group-total-count' is 2: "
        "Kueue deletes the 1 created last (Excess pod deleted)"
    )
    assert finding.line == excess.splitlines().index('    kueue.x-k8s.io/pod-group-total-count: "2"') + 1
    # one Pod written twice (a base and an overlay) is one Pod: nothing in excess
    assert queue_findings(docs(exact, group_pod("sample-worker-0", gpus=4)), "queue-reference-invalid") == []
    # the Workload is 2 of the 3 Pods, which ones is not known: 12 GPUs of the three are no quota error
    assert queue_findings(excess) == []
    # Pods that disagree on the count are refused before any is deleted: that finding only
    disagree = docs(exact, group_pod("sample-worker-1", gpus=4, total=3))
    messages = [f.message for f in queue_findings(disagree, "queue-reference-invalid")]
    assert len(messages) == 1 and "has different 'kueue.x-k8s.io/pod-group-total-count' values" in messages[0]


# ----------------------------------------------------------------- queued workloads packed whole


def jobset(replicas: int, gpus: int = 8, queue_label: str = "labels") -> str:
    return textwrap.dedent(f"""\
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata:
          name: llm
          namespace: team-a
          {queue_label}:
            kueue.x-k8s.io/queue-name: user-queue
        spec:
          replicatedJobs:
          - name: workers
            replicas: {replicas}
            template:
              spec:
                parallelism: 1
                completions: 1
                template:
                  spec:
                    restartPolicy: Never
                    containers:
                    - name: train
                      image: registry.example.com/llm:1.0
                      resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
        """)


def test_a_queued_distributed_job_larger_than_the_cluster_is_unsatisfiable():
    (finding,) = findings_of("gang-unsatisfiable", jobset(7), inventory=RACKS)  # 6 nodes hold 8 GPUs
    assert finding.severity == "error"
    assert (
        "Kueue workload (queue user-queue) needs 7 'workers' pods x 8 nvidia.com/gpu placed at once" in finding.message
    )
    assert (finding.line, finding.column) == (7, 32)
    assert findings_of("gang-unsatisfiable", jobset(6), inventory=RACKS) == []


def test_the_flavor_narrows_the_nodes_the_workload_packs_onto():
    queues = docs(
        flavor("rack-r2", labels="{topology.kubernetes.io/rack: r2}"),
        cluster_queue(flavors=("rack-r2",), gpus="64", covered="nvidia.com/gpu"),
        local_queue(),
    )
    (finding,) = findings_of("gang-unsatisfiable", docs(queues, jobset(3)), inventory=RACKS)
    assert "on the nodes of flavor rack-r2 (topology.kubernetes.io/rack=r2) needs 3 'workers' pods" in finding.message
    assert "fits 2" in finding.message
    assert findings_of("gang-unsatisfiable", docs(queues, jobset(2)), inventory=RACKS) == []


def test_a_pod_set_with_several_possible_flavors_packs_on_the_nodes_of_any_of_them():
    # Kueue gives the pod set rack-r2 or rack-r3 (both have quota): 8-GPU pods fit only on r2's two nodes,
    # though the cluster as a whole (r1) holds six of them
    queues = docs(
        flavor("rack-r2", labels="{topology.kubernetes.io/rack: r2}"),
        flavor("rack-r3", labels="{topology.kubernetes.io/rack: r3}"),
        cluster_queue(flavors=("rack-r2", "rack-r3"), gpus="64", covered="nvidia.com/gpu"),
        local_queue(),
    )
    (finding,) = findings_of("gang-unsatisfiable", docs(queues, jobset(3)), inventory=RACKS)
    assert "on the nodes of flavor rack-r2 or rack-r3 needs 3 'workers' pods x 8 nvidia.com/gpu" in finding.message
    assert "fits 2" in finding.message
    assert findings_of("gang-unsatisfiable", docs(queues, jobset(2)), inventory=RACKS) == []
    # a flavor without nodeLabels selects every node: no narrowing, r1 holds the gang
    anywhere = queues.replace("rack-r3", "default-flavor").replace(
        "spec:\n  nodeLabels: {topology.kubernetes.io/rack: r3}\n", "spec:\n  {}\n"
    )
    assert findings_of("gang-unsatisfiable", docs(anywhere, jobset(3)), inventory=RACKS) == []


def test_the_flavor_pin_keeps_the_pods_own_node_affinity_terms():
    from gpulint.kube.queueing.assign import FlavorPin

    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["h100"]}]},
                        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100"]}]},
                    ]
                }
            }
        }
    }
    pin = FlavorPin((), (), ("r2", "r3"), ((((("rack", "r2"),), (("rack", "r3"),))),))
    terms = pin.apply(spec)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert [[(e["key"], e["values"][0]) for e in t["matchExpressions"]] for t in terms] == [
        [("gpu", "h100"), ("rack", "r2")],
        [("gpu", "h100"), ("rack", "r3")],
        [("gpu", "a100"), ("rack", "r2")],
        [("gpu", "a100"), ("rack", "r3")],
    ]


GPU_FLAVOR = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
spec:
  nodeLabels: {workload-type: gpu}
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
"""


def test_a_queued_workload_packs_within_what_its_flavors_node_pool_can_add():
    # Karpenter's gpu NodePool (workload-type: gpu, tainted, at most 4 GPUs) is the only place for the
    # flavor's pods; the flavor's toleration is what lets them there. Quota allows 8.
    karpenter = str(DATA / "elastic" / "karpenter")
    queues = docs(GPU_FLAVOR, cluster_queue(flavors=("gpu",), gpus="8", covered="nvidia.com/gpu"), local_queue())
    assert findings_of("gang-unsatisfiable", docs(queues, jobset(4, gpus=1)), inventory=karpenter) == []
    (finding,) = findings_of("gang-unsatisfiable", docs(queues, jobset(5, gpus=1)), inventory=karpenter)
    assert finding.severity == "error"
    assert "Kueue workload (queue user-queue) on the nodes of flavor gpu (workload-type=gpu) needs 5 pods" in (
        finding.message
    )
    assert "hold at most 4" in finding.message


def test_a_pod_groups_pods_pack_with_what_their_flavor_adds():
    # the docs' pod group, 1 GPU a Pod, without a toleration of their own: the flavor's lets them onto
    # Karpenter's tainted gpu pool (at most 4 GPUs). Without it they would fit nowhere.
    karpenter = str(DATA / "elastic" / "karpenter")
    queues = docs(GPU_FLAVOR, cluster_queue(flavors=("gpu",), gpus="8", covered="cpu, nvidia.com/gpu"), local_queue())
    four = docs(queues, *(group_pod(f"worker-{i}", gpus=1, total=4, cpu=1) for i in range(4)))
    assert findings_of("gang-unsatisfiable", four, inventory=karpenter) == []
    five = docs(queues, *(group_pod(f"worker-{i}", gpus=1, total=5, cpu=1) for i in range(5)))
    (finding,) = findings_of("gang-unsatisfiable", five, inventory=karpenter)
    assert finding.message.startswith("Kueue pod group sample-group needs 5 nvidia.com/gpu at once")
    assert "under its limit 4" in finding.message


def test_a_queue_annotation_is_no_gang():
    found = findings_of("gang-missing", jobset(3, queue_label="annotations"))
    assert [f.rule for f in found] == ["gang-missing"]
    assert findings_of("gang-missing", jobset(3)) == []


def test_rule_docs_examples_run():
    # the documented example, with its line numbers, through the harness (the doc test does it for every rule)
    text = docs(flavor(), cluster_queue(), local_queue(), job(gpus=16))
    assert_findings(
        "queue-unadmittable",
        text,
        [(text.splitlines().index("    kueue.x-k8s.io/queue-name: user-queue") + 1, 32, "> maximum capacity (8)")],
    )


def test_two_different_definitions_of_one_queue_are_judged_by_neither():
    text = docs(flavor(), cluster_queue(gpus="8"), cluster_queue(gpus="4"), local_queue(), job(gpus=16))
    assert queue_findings(text) == []


def test_the_linted_queue_replaces_the_clusters_and_keeps_its_usage(tmp_path):
    reserved = "status:\n  flavorsReservation:\n  - name: default-flavor\n    resources:\n    - {name: nvidia.com/gpu, total: '10'}\n"
    (tmp_path / "queues.yaml").write_text(docs(flavor(), cluster_queue(gpus="8") + reserved, local_queue()))
    # the file raises the quota to 16: 12 GPUs fit it, but 10 are in use now
    (finding,) = queue_findings(docs(cluster_queue(gpus="16"), job(gpus=12)), inventory=[str(tmp_path)])
    assert finding.severity == "warning" and "6 more needed" in finding.message
    (finding,) = queue_findings(job(gpus=12), inventory=[str(tmp_path)])
    assert finding.severity == "error" and "> maximum capacity (8)" in finding.message


def test_a_resource_the_queue_may_count_after_a_transformation_is_info_only():
    hami = textwrap.dedent("""\
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: ClusterQueue
        metadata: {name: cluster-queue}
        spec:
          namespaceSelector: {}
          resourceGroups:
          - coveredResources: [nvidia.com/gpu, nvidia.com/total-gpucores]
            flavors:
            - name: default-flavor
              resources:
              - {name: nvidia.com/gpu, nominalQuota: 20}
              - {name: nvidia.com/total-gpucores, nominalQuota: 600}
        """)
    pod = (
        job(gpus=2)
        .replace("requests: {cpu: 100m, memory: 100Mi}", "requests: {}")
        .replace("limits: {nvidia.com/gpu: 2}", "limits: {nvidia.com/gpu: 2, nvidia.com/gpucores: 30}")
    )
    (finding,) = queue_findings(docs(flavor(), hami, local_queue(), pod))
    assert finding.severity == "info"
    assert "resource nvidia.com/gpucores unavailable in ClusterQueue" in finding.message
    assert "resources.transformations" in finding.message


# ----------------------------------------------------------------- topology-aware scheduling

TOPOLOGY = textwrap.dedent("""\
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Topology
    metadata: {name: default}
    spec:
      levels:
      - nodeLabel: cloud.provider.com/topology-block
      - nodeLabel: cloud.provider.com/topology-rack
      - nodeLabel: kubernetes.io/hostname
    """)
TAS_FLAVOR = textwrap.dedent("""\
    kind: ResourceFlavor
    apiVersion: kueue.x-k8s.io/v1beta2
    metadata: {name: tas-flavor}
    spec:
      nodeLabels: {cloud.provider.com/node-group: tas-group}
      topologyName: default
    """)


def tas_job(annotation: str = "") -> str:
    meta = f"\n    metadata:\n      annotations: {{{annotation}}}" if annotation else ""
    return job(gpus=1).replace("  template:\n    spec:", f"  template:{meta}\n    spec:")


def test_a_required_topology_level_the_flavors_topology_lacks():
    queues = docs(TOPOLOGY, TAS_FLAVOR, cluster_queue(flavors=("tas-flavor",)), local_queue())
    text = docs(queues, tas_job("kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-zone"))
    (finding,) = queue_findings(text)
    assert (
        'couldn\'t assign flavors to pod set main: Flavor "tas-flavor" does not contain the requested level'
        in finding.message
    )
    clean = docs(queues, tas_job("kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack"))
    assert queue_findings(clean) == []


def test_topology_requests_and_flavors_without_topology():
    plain = docs(flavor(), cluster_queue(), local_queue())
    text = docs(plain, tas_job("kueue.x-k8s.io/podset-preferred-topology: cloud.provider.com/topology-rack"))
    (finding,) = queue_findings(text)
    assert 'Flavor "default-flavor" does not support TopologyAwareScheduling' in finding.message


def test_a_topology_flavor_serves_only_topology_aware_pod_sets_unless_every_flavor_is_one():
    mixed = docs(TOPOLOGY, TAS_FLAVOR, flavor(), cluster_queue(flavors=("tas-flavor", "default-flavor"), gpus="4"))
    assert queue_findings(docs(mixed, local_queue(), job(gpus=8))) != []  # 8 > 4 in default-flavor; tas-flavor skipped
    (finding,) = queue_findings(docs(mixed, local_queue(), job(gpus=8)))
    assert 'Flavor "tas-flavor" supports only TopologyAwareScheduling' in finding.message
    tas_only = docs(TOPOLOGY, TAS_FLAVOR, cluster_queue(flavors=("tas-flavor",)), local_queue())
    assert queue_findings(docs(tas_only, job(gpus=8))) == []  # TAS implied for every pod set


def test_no_node_carries_the_required_level():
    text = jobset(2).replace(
        "        template:\n          spec:\n            restartPolicy",
        "        template:\n          metadata:\n            annotations:\n"
        "              kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack\n"
        "          spec:\n            restartPolicy",
    )
    assert "podset-required-topology" in text
    (finding,) = findings_of("gang-unsatisfiable", text, inventory=RACKS)
    assert "no node carries the label cloud.provider.com/topology-rack" in finding.message
    assert "no topology domains at level: cloud.provider.com/topology-rack" in finding.message
    on_racks = text.replace("cloud.provider.com/topology-rack", "topology.kubernetes.io/rack")
    assert findings_of("gang-unsatisfiable", on_racks, inventory=RACKS) == []


# ----------------------------------------------------------------- Volcano and KAI Scheduler queues


def volcano_queue(name: str = "research", state: str = "Open") -> str:
    return textwrap.dedent(f"""\
        apiVersion: scheduling.volcano.sh/v1beta1
        kind: Queue
        metadata: {{name: {name}}}
        spec:
          weight: 1
          reclaimable: false
          capability: {{cpu: 2, memory: 4Gi}}
        status: {{state: {state}}}
        """)


def volcano_job(queue: str = "research") -> str:
    return textwrap.dedent(f"""\
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {{name: test-job, namespace: team-a}}
        spec:
          minAvailable: 1
          schedulerName: volcano
          queue: {queue}
          tasks:
          - replicas: 1
            name: nginx
            template:
              spec:
                containers:
                - {{name: nginx, image: nginx, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
                restartPolicy: Never
        """)


def test_volcano_queue_missing_or_closed():
    text = docs(volcano_queue(), volcano_job("reserch"))
    (missing,) = queue_findings(text, "queue-reference-invalid", config=COMPLETE)
    assert missing.severity == "error"  # the linted files hold every Queue
    assert (
        "Volcano Queue reserch doesn't exist: Volcano's admission webhook refuses the Job: unable to find job queue; did you mean 'research'?"
        in missing.message
    )
    (typo,) = queue_findings(text, "queue-reference-invalid")  # only the linted files define queues: no proof
    assert typo.severity == "info" and "Volcano Queue reserch is not among the linted files" in typo.message
    assert queue_findings(docs(volcano_queue(), volcano_job("batch")), "queue-reference-invalid") == []
    (closed,) = queue_findings(docs(volcano_queue(state="Closed"), volcano_job()), "queue-reference-invalid")
    assert closed.severity == "error"
    assert "can only submit job to queue with state `Open`, queue `research` status is `Closed`" in said(closed)
    assert queue_findings(docs(volcano_queue(), volcano_job()), "queue-reference-invalid") == []


def test_volcano_queue_closing_or_closed_for_podgroups_and_a_queue_missing_from_the_inventory(tmp_path):
    (closing,) = queue_findings(docs(volcano_queue(state="Closing"), volcano_job()), "queue-reference-invalid")
    assert "queue `research` status is `Closing`" in said(closing) and closing.severity == "error"
    group = textwrap.dedent("""\
        apiVersion: scheduling.volcano.sh/v1beta1
        kind: PodGroup
        metadata: {name: test-group, namespace: team-a}
        spec: {minMember: 1, queue: research}
        """)
    (closed,) = queue_findings(docs(volcano_queue(state="Closed"), group), "queue-reference-invalid")
    assert closed.message == "Volcano Queue research is Closed: nothing new is scheduled from it"
    assert queue_findings(docs(volcano_queue(), group), "queue-reference-invalid") == []
    # the inventory lists Volcano's queues: a Job to one it lacks is refused (an error, not a guess)
    (tmp_path / "queues.yaml").write_text(volcano_queue("default"))
    (missing,) = queue_findings(volcano_job(), "queue-reference-invalid", inventory=[str(tmp_path)])
    assert missing.severity == "error" and "Volcano Queue research doesn't exist" in missing.message
    assert queue_findings(volcano_job("default"), "queue-reference-invalid", inventory=[str(tmp_path)]) == []


def guaranteed_queue(name: str, gpus: int) -> str:
    """A Volcano Queue with a guarantee, as the Volcano docs' queue examples write it."""
    return textwrap.dedent(f"""\
        apiVersion: scheduling.volcano.sh/v1beta1
        kind: Queue
        metadata: {{name: {name}}}
        spec:
          weight: 1
          reclaimable: true
          deserved: {{nvidia.com/gpu: {gpus}}}
          guarantee:
            resource:
              nvidia.com/gpu: {gpus}
        """)


def test_volcano_guarantees_above_what_the_cluster_offers_are_a_warning_on_the_queues():
    # racks: 60 GPUs. Guarantees of 36 + 24 leave nothing to the default queue but fit; 37 + 24 do not
    fits = docs(guaranteed_queue("research", 36), guaranteed_queue("serving", 24), volcano_queue("default"))
    assert queue_findings(fits, inventory=RACKS) == []
    over = docs(guaranteed_queue("research", 37), guaranteed_queue("serving", 24), volcano_queue("default"))
    found = queue_findings(over, inventory=RACKS)
    assert [(f.severity, f.line) for f in found] == [("warning", 10), ("warning", 21)]
    assert found[0].message.startswith(
        "the Volcano Queues' guarantees sum to 61 nvidia.com/gpu, above the 60 the cluster's nodes offer"
    )
    assert queue_findings(over) == []  # without an inventory the cluster's size is not known


def volcano_gang(workers: int, min_available: int, gpus: int = 2, ps: bool = False) -> str:
    """A Volcano Job shaped like the Volcano docs' TensorFlow example (a ps task and GPU workers)."""
    job = volcano_job().replace("minAvailable: 1", f"minAvailable: {min_available}")
    job = job.replace("  - replicas: 1\n    name: nginx", f"  - replicas: {workers}\n    name: worker")
    job = job.replace("nvidia.com/gpu: 1", f"nvidia.com/gpu: {gpus}")
    if ps:
        job += (
            "  - replicas: 1\n    name: ps\n    template:\n      spec:\n        containers:\n"
            "        - {name: ps, image: tensorflow/tensorflow:2.16.1, resources: {requests: {cpu: 500m}}}\n"
            "        restartPolicy: Never\n"
        )
    return job


def test_a_volcano_gang_above_its_queues_capability_never_runs():
    queue = volcano_queue().replace(
        "capability: {cpu: 2, memory: 4Gi}", "capability: {cpu: 64, memory: 256Gi, nvidia.com/gpu: 4}"
    )
    assert queue_findings(docs(queue, volcano_gang(2, 2))) == []  # exactly the capability
    (finding,) = queue_findings(docs(queue, volcano_gang(3, 3)))
    assert finding.severity == "error" and (finding.line, finding.column) == (queue.count("\n") + 8, 10)  # spec.queue
    assert finding.message == (
        "Volcano Queue research never runs this Job: queue resource quota insufficient (nvidia.com/gpu capability 4)\n"
        "the 3 pods the Job needs at once (minAvailable) ask at least 6 nvidia.com/gpu, above the queue's capability "
        "of 4; it stays Pending"
    )
    # the gang's minimum, not every replica: 2 of 3 workers fit the capability
    assert queue_findings(docs(queue, volcano_gang(3, 2))) == []
    # the smallest pods count first: the ps pod (no GPU) and one worker
    assert queue_findings(docs(queue, volcano_gang(3, 3, ps=True))) == []
    assert len(queue_findings(docs(queue, volcano_gang(3, 4, ps=True)))) == 1
    # the docs' queue limits cpu and memory only: a GPU gang is not judged against it
    assert queue_findings(docs(volcano_queue(), volcano_gang(8, 8))) == []


def test_a_volcano_podgroup_whose_min_resources_exceed_the_capability():
    queue = volcano_queue().replace("capability: {cpu: 2, memory: 4Gi}", "capability: {nvidia.com/gpu: 4, cpu: 0}")
    group = textwrap.dedent("""\
        apiVersion: scheduling.volcano.sh/v1beta1
        kind: PodGroup
        metadata: {name: test, namespace: team-a}
        spec:
          minMember: 2
          queue: research
          minResources: {nvidia.com/gpu: "%s", cpu: "3"}
        """)
    (finding,) = queue_findings(docs(queue, group % 5))
    assert "the PodGroup's minResources ask 5 nvidia.com/gpu, above the queue's capability of 4" in finding.message
    assert queue_findings(docs(queue, group % 4)) == []  # cpu: 0 is no limit


def test_volcano_default_queue_needs_no_definition(tmp_path):
    job = volcano_job().replace("  queue: research\n", "")
    assert queue_findings(docs(volcano_queue(), job), "queue-reference-invalid") == []
    (tmp_path / "queues.yaml").write_text(volcano_queue())
    (finding,) = queue_findings(job, "queue-reference-invalid", inventory=[str(tmp_path)])
    assert finding.severity == "error" and "Volcano Queue default doesn't exist" in finding.message


def kai_pod(label: str = "kai.scheduler/queue", queue: str = "default-queue") -> str:
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: gpu-pod
          labels:
            {label}: {queue}
        spec:
          schedulerName: kai-scheduler
          containers:
          - name: main
            image: ubuntu
            args: ["sleep", "infinity"]
            resources:
              limits:
                nvidia.com/gpu: "1"
        """)


KAI_QUEUES = textwrap.dedent("""\
    apiVersion: scheduling.run.ai/v2
    kind: Queue
    metadata: {name: default-queue}
    spec:
      parentQueue: default
      resources:
        gpu: {quota: -1, limit: -1, overQuotaWeight: 1}
        cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
        memory: {quota: -1, limit: -1, overQuotaWeight: 1}
    """)


def test_kai_queue_missing_and_the_legacy_label(tmp_path):
    (tmp_path / "queues.yaml").write_text(KAI_QUEUES)
    assert queue_findings(kai_pod(), "queue-reference-invalid", inventory=[str(tmp_path)]) == []
    (missing,) = queue_findings(kai_pod(queue="defaul-queue"), "queue-reference-invalid", inventory=[str(tmp_path)])
    assert missing.severity == "error"
    assert (
        "KAI Scheduler Queue defaul-queue doesn't exist: its pods stay Pending; did you mean 'default-queue'?"
        in missing.message
    )
    # the default queue: assumed to exist unless the inventory lists KAI's queues
    assert (
        queue_findings(docs(KAI_QUEUES.replace("default-queue", "team-a"), kai_pod()), "queue-reference-invalid") == []
    )
    (legacy,) = queue_findings(kai_pod("runai/queue"), "queue-reference-invalid")
    assert legacy.severity == "warning" and "legacy label runai/queue" in legacy.message
    # the legacy label on a pod another scheduler places is none of KAI's business
    assert (
        queue_findings(kai_pod("runai/queue").replace("kai-scheduler", "default-scheduler"), "queue-reference-invalid")
        == []
    )


# ----------------------------------------------------------------- explain and inventory


def kai_tree(team_limit: str = "-1", parent_limit: str = "-1") -> str:
    """The KAI quick start's two-level queues: a department (parent) and a team queue under it."""
    parent = KAI_QUEUES.replace("default-queue", "default").replace("  parentQueue: default\n", "")
    parent = parent.replace("gpu: {quota: -1, limit: -1", f"gpu: {{quota: -1, limit: {parent_limit}")
    team = KAI_QUEUES.replace("gpu: {quota: -1, limit: -1", f"gpu: {{quota: -1, limit: {team_limit}")
    return docs(parent, team)


def test_a_pod_asking_for_more_gpus_than_its_kai_queue_limit():
    pod = kai_pod().replace('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "4"')
    assert queue_findings(docs(kai_tree(team_limit="4"), pod)) == []  # exactly the limit
    (finding,) = queue_findings(docs(kai_tree(team_limit="3"), pod))
    assert finding.severity == "error"
    assert finding.message == (
        "KAI Queue default-queue never schedules a pod of this Pod: default-queue quota has reached the allowable "
        "limit of GPUs\nLimit is 3 GPUs, currently 0 GPUs allocated and workload requested 4 GPUs"
    )
    # the parent's limit binds the team queue too
    (finding,) = queue_findings(docs(kai_tree(parent_limit="2"), pod))
    assert finding.message.startswith(
        "KAI Queue default (a parent of default-queue) never schedules a pod of this Pod: default quota has reached"
    )
    # -1 is no limit; a pod another scheduler places is not KAI's
    assert queue_findings(docs(kai_tree(), pod)) == []
    assert queue_findings(docs(kai_tree(team_limit="1"), pod.replace("kai-scheduler", "default-scheduler"))) == []


def kai_pytorch_job(min_available: str = "") -> str:
    """KAI's docs/batch/pytorch-job.yaml: a master and two workers, one GPU each, in one PodGroup."""
    policy = f"  runPolicy:\n    schedulingPolicy: {{minAvailable: {min_available}}}\n" if min_available else ""
    replica = textwrap.dedent("""\
            {role}:
              replicas: {replicas}
              restartPolicy: OnFailure
              template:
                spec:
                  schedulerName: kai-scheduler
                  containers:
                    - name: pytorch
                      image: ghcr.io/kubeflow/training-v1/pytorch-dist-mnist:latest
                      args: ["--backend", "nccl", "--batch-size", "2048", "--epochs", "900"]
                      resources:
                        limits:
                          nvidia.com/gpu: "1"
        """)
    head = (
        'apiVersion: "kubeflow.org/v1"\nkind: "PyTorchJob"\nmetadata:\n  name: "pytorch-dist-mnist-nccl"\n'
        "  labels:\n    kai.scheduler/queue: default-queue\nspec:\n" + policy + "  pytorchReplicaSpecs:\n"
    )
    return head + textwrap.indent(
        replica.format(role="Master", replicas=1) + replica.format(role="Worker", replicas=2), "    "
    )


def test_kai_sums_a_kubeflow_jobs_pod_group_against_the_queue_limit():
    # KAI's pod grouper makes one PodGroup of every replica (minAvailable): 3 GPUs asked at once
    assert queue_findings(docs(kai_tree(team_limit="3"), kai_pytorch_job())) == []  # exactly the limit
    (finding,) = queue_findings(docs(kai_tree(team_limit="2"), kai_pytorch_job()))
    assert finding.severity == "error"
    assert "Limit is 2 GPUs, currently 0 GPUs allocated and workload requested 3 GPUs" in finding.message
    assert "never schedules this PyTorchJob (its PodGroup's 3 pods at once)" in finding.message
    # runPolicy.schedulingPolicy.minAvailable: the PodGroup needs only 2 of them at once
    assert queue_findings(docs(kai_tree(team_limit="2"), kai_pytorch_job("2"))) == []
    # a plain Job's pods are each a PodGroup of their own: 3 pods of 1 GPU fit a 1-GPU limit one at a time
    job_pods = job(gpus=1, parallelism=3).replace(
        "kueue.x-k8s.io/queue-name: user-queue", "kai.scheduler/queue: default-queue"
    )
    job_pods = job_pods.replace(
        "      restartPolicy: Never", "      schedulerName: kai-scheduler\n      restartPolicy: Never"
    )
    assert queue_findings(docs(kai_tree(team_limit="1"), job_pods)) == []
    assert len(queue_findings(docs(kai_tree(team_limit="0.5"), job_pods))) == 1


def test_a_kai_limit_not_written_allows_nothing_and_minus_one_is_no_limit():
    # KAI's docs/queues "Hierarchical Queue" example writes no limits: the float64 is 0, and 0 allows nothing
    unwritten = textwrap.dedent("""\
        apiVersion: scheduling.run.ai/v2
        kind: Queue
        metadata:
          name: default-queue
        spec:
          displayName: "ML Team"
          parentQueue: "default"
          priority: 200
          resources:
            cpu:
              quota: 500
              overQuotaWeight: 2
            gpu:
              quota: 1
              overQuotaWeight: 1
        """)
    parent = KAI_QUEUES.replace("default-queue", "default").replace("  parentQueue: default\n", "")
    (finding,) = queue_findings(docs(parent, unwritten, kai_pod()))
    assert finding.message == (
        "KAI Queue default-queue never schedules a pod of this Pod: default-queue quota has reached the allowable "
        "limit of GPUs\nLimit is 0 GPUs, currently 0 GPUs allocated and workload requested 1 GPUs\n"
        "spec.resources.gpu.limit is not written: KAI reads 0; -1 is no limit"
    )
    written = unwritten.replace("      overQuotaWeight: 1\n", "      overQuotaWeight: 1\n      limit: -1\n")
    assert queue_findings(docs(parent, written, kai_pod())) == []
    # the pod asks no CPU or memory: the unwritten cpu and memory limits do not refuse it
    assert "limit: -1" in written and "memory" not in written


def test_kai_cpu_limits_are_millicpus_and_memory_limits_megabytes():
    limits = KAI_QUEUES.replace("cpu: {quota: -1, limit: -1", "cpu: {quota: -1, limit: 2000").replace(
        "memory: {quota: -1, limit: -1", "memory: {quota: -1, limit: 8000"
    )
    parent = KAI_QUEUES.replace("default-queue", "default").replace("  parentQueue: default\n", "")

    def pod(cpu: str, memory: str) -> str:
        text = kai_pod().replace(
            "      limits:\n", f"      requests: {{cpu: {cpu}, memory: {memory}}}\n      limits:\n"
        )
        assert "requests:" in text
        return text

    assert queue_findings(docs(parent, limits, pod("2", "8G"))) == []  # 2000 millicpus, 8000 MB: exactly
    found = queue_findings(docs(parent, limits, pod("2500m", "8Gi")))
    assert [f.message.split("\n")[1].split(":")[0] for f in found] == [
        "Limit is 2 cores, currently 0 cores allocated and workload requested 2.5 cores",
        "Limit is 8 GB, currently 0 GB allocated and workload requested 8.59 GB",
    ]
    assert found[1].message.startswith(
        "KAI Queue default-queue never schedules a pod of this Pod: default-queue quota has reached the allowable "
        "limit of memory\n"
    )


def test_explain_shows_the_admission_step_before_the_scheduler(tmp_path):
    from conftest import run_cli

    path = tmp_path / "job.yaml"
    path.write_text(docs(flavor(), cluster_queue(), local_queue(), job(gpus=3, parallelism=3)))
    result = run_cli("explain", str(path), "--inventory", RACKS, "--format", "json")
    import json

    (explanation,) = json.loads(result.stdout)["explanations"]
    first = explanation["steps"][0]
    assert first["title"] == "Admission (queue and quota)" and first["status"] == "FAIL"
    assert first["lines"][0] == "Kueue: LocalQueue user-queue -> ClusterQueue cluster-queue"
    assert (
        "pod set main, flavor default-flavor: cpu 0.3 of at most 64, memory 300Mi of at most 512Gi, nvidia.com/gpu 9 of at most 8"
        in first["lines"][1]
    )
    assert first["lines"][-1].startswith("never admitted: couldn't assign flavors to pod set main: insufficient quota")
    # explain and check agree: the same verdict is check's finding
    assert any("queue-unadmittable" in line for line in explanation["steps"][-1]["lines"])


def test_explain_shows_the_volcano_capability_and_the_pod_group_verdicts(tmp_path):
    import json

    from conftest import run_cli

    queue = volcano_queue().replace("capability: {cpu: 2, memory: 4Gi}", "capability: {nvidia.com/gpu: 4}")
    path = tmp_path / "job.yaml"
    path.write_text(docs(queue, volcano_gang(3, 3)))
    result = run_cli("explain", str(path), "--inventory", RACKS, "--format", "json", "--object", "Job/team-a/test-job")
    (explanation,) = json.loads(result.stdout)["explanations"]
    step = explanation["steps"][0]
    assert step["title"] == "Admission (queue and quota)" and step["status"] == "FAIL"
    assert step["lines"] == [
        "Volcano Queue research never runs this Job: queue resource quota insufficient (nvidia.com/gpu capability 4)",
        "the 3 pods the Job needs at once (minAvailable) ask at least 6 nvidia.com/gpu, above the queue's capability "
        "of 4; it stays Pending",
    ]
    # a pod group: the second Pod's explain shows the group's one Workload, and the queue it disagrees on
    queues = docs(flavor(), cluster_queue(gpus="8"), local_queue(), local_queue("other-queue"))
    path.write_text(docs(queues, group_pod("leader"), group_pod("worker", gpus=8, queue="other-queue")))
    result = run_cli("explain", str(path), "--inventory", RACKS, "--format", "json", "--object", "Pod/team-a/worker")
    (explanation,) = json.loads(result.stdout)["explanations"]
    lines = explanation["steps"][0]["lines"]
    assert any(line.startswith("pods 'leader' and 'worker' has different queue names") for line in lines)


def test_inventory_lists_queues_with_quota_and_use(tmp_path):
    from conftest import run_cli

    reserved = "status:\n  flavorsReservation:\n  - name: default-flavor\n    resources:\n    - {name: nvidia.com/gpu, total: '6'}\n"
    (tmp_path / "kueue.yaml").write_text(
        docs(flavor(), cluster_queue(cohort="research") + reserved, cluster_queue("other-queue", cohort="research"))
    )
    result = run_cli("inventory", "--inventory", RACKS, "--inventory", str(tmp_path))
    assert (
        "  cluster-queue (cohort research)  default-flavor  nvidia.com/gpu: nominal 8, maximum 16  used 6"
        in result.stdout
    )
    result = run_cli("inventory", "--inventory", RACKS, "--inventory", str(tmp_path), "--format", "json")
    import json

    queues = json.loads(result.stdout)["summary"]["clusterQueues"]
    assert queues["other-queue"]["flavors"]["default-flavor"]["nvidia.com/gpu"] == {
        "nominalQuota": 8,
        "maximum": 16,
        "used": None,
    }


def test_inventory_lists_each_cluster_queues_admission_checks_and_whether_they_leave_it_active(tmp_path):
    import json

    from conftest import run_cli

    multikueue = "kueue.x-k8s.io/multikueue"
    (tmp_path / "kueue.yaml").write_text(
        docs(
            flavor(),
            with_checks(cluster_queue(), "sample-prov"),
            with_checks(cluster_queue("other-queue"), "mk-a", "gone"),
            cluster_queue("plain-queue"),
            admission_check(active="True"),
            admission_check("mk-a", multikueue, active="False"),
        )
    )
    result = run_cli("inventory", "--inventory", RACKS, "--inventory", str(tmp_path))
    lines = result.stdout.splitlines()
    start = lines.index(
        "Kueue AdmissionChecks per ClusterQueue (Kueue admits nothing from a queue they make inactive):"
    )
    assert lines[start + 1 : start + 5] == [
        "  cluster-queue: sample-prov (kueue.x-k8s.io/provisioning-request, Active)",
        "  other-queue: mk-a (kueue.x-k8s.io/multikueue, not Active), gone (missing)",
        "    ClusterQueue other-queue is inactive (Can't admit new workloads): it references missing AdmissionCheck(s): "
        "gone; its workloads stay pending until they exist",
        "    ClusterQueue other-queue is inactive (Can't admit new workloads): it references inactive AdmissionCheck(s): "
        "mk-a; their controller reports Active False; the queue's workloads stay pending until it marks them Active",
    ]
    assert not any(line.startswith("  plain-queue:") for line in lines)  # no checks: not listed
    result = run_cli("inventory", "--inventory", RACKS, "--inventory", str(tmp_path), "--format", "json")
    queues = json.loads(result.stdout)["summary"]["clusterQueues"]
    assert queues["cluster-queue"]["admissionChecks"] == {
        "sample-prov": {"controllerName": "kueue.x-k8s.io/provisioning-request", "state": "Active"}
    }
    assert queues["cluster-queue"]["inactiveReasons"] == []
    assert queues["other-queue"]["admissionChecks"]["gone"] == {"controllerName": None, "state": "missing"}
    assert len(queues["other-queue"]["inactiveReasons"]) == 2
    assert "admissionChecks" not in queues["plain-queue"]
    # a check as its manifest is written (no status yet): its state is not known, the queue is not called inactive
    (tmp_path / "kueue.yaml").write_text(docs(flavor(), with_checks(cluster_queue(), "sample-prov"), admission_check()))
    result = run_cli("inventory", "--inventory", RACKS, "--inventory", str(tmp_path))
    assert "  cluster-queue: sample-prov (kueue.x-k8s.io/provisioning-request, status unknown)" in result.stdout
    assert "is inactive" not in result.stdout


# ----------------------------------------------------------------- scheduler names


def pod_for(scheduler: str) -> str:
    return kai_pod().replace("kai-scheduler", scheduler)


def test_a_scheduler_name_typo():
    # no API lists the schedulers a cluster runs: a close name is a likely typo (info), not proof
    (finding,) = findings_of("scheduler-name-unknown", pod_for("kai-schedular"))
    assert finding.severity == "info"
    assert "did you mean 'kai-scheduler'?" in finding.message
    complete = {"complete": ["KubeSchedulerConfiguration"]}  # the files hold every scheduler profile
    (finding,) = findings_of("scheduler-name-unknown", pod_for("kai-schedular"), config=complete)
    assert finding.severity == "warning" and "did you mean 'kai-scheduler'?" in finding.message
    (finding,) = findings_of("scheduler-name-unknown", pod_for("batch-runner"), config=complete)
    assert finding.message.startswith("schedulerName 'batch-runner' is the name of no scheduler\n")
    assert findings_of("scheduler-name-unknown", pod_for("batch-runner")) == []
    for name in ("kai-scheduler", "volcano", "default-scheduler"):
        assert findings_of("scheduler-name-unknown", pod_for(name)) == []


def test_a_shared_suffix_is_no_typo():
    """The AWS Neuron scheduler extension's docs deploy a second kube-scheduler named my-scheduler: it is
    no misspelling of hami-scheduler (difflib finds the two 85% alike), and nothing says it is missing."""
    neuron = textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: inf2-bert, namespace: default}
        spec:
          schedulerName: my-scheduler
          containers:
          - name: neuron
            image: public.ecr.aws/neuron/pytorch-inference-neuronx:2.1.2-neuronx-py310-sdk2.18.2-ubuntu20.04
            resources:
              limits: {aws.amazon.com/neuroncore: 2}
        """)
    assert findings_of("scheduler-name-unknown", neuron) == []
    (finding,) = findings_of("scheduler-name-unknown", neuron.replace("my-scheduler", "hami-schedluer"))
    assert "did you mean 'hami-scheduler'?" in finding.message  # a swapped pair still is


def test_a_typo_is_an_edit_or_two_not_a_sibling():
    from gpulint.kube.typos import typo_of

    assert typo_of("volcnao", ["volcano", "yunikorn"]) == "volcano"
    assert typo_of("kai-schedular", ["kai-scheduler", "hami-scheduler"]) == "kai-scheduler"
    assert typo_of("my-scheduler", ["hami-scheduler", "kai-scheduler", "koord-scheduler"]) is None
    assert typo_of("queue-2", ["queue-1"]) is None  # another number: a sibling
    assert typo_of("ab", ["ac"]) is None  # too short to tell
    assert typo_of("x" * 300, ["x" * 299]) is None


def test_a_scheduler_profile_declared_in_a_linted_config_map():
    config = textwrap.dedent("""\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: gpu-scheduler-config, namespace: kube-system}
        data:
          config.yaml: |
            apiVersion: kubescheduler.config.k8s.io/v1
            kind: KubeSchedulerConfiguration
            profiles:
            - schedulerName: gpu-binpack-scheduler
              plugins:
                score:
                  enabled: [{name: NodeResourcesFit}]
        """)
    assert findings_of("scheduler-name-unknown", docs(config, pod_for("gpu-binpack-scheduler"))) == []
    (finding,) = findings_of("scheduler-name-unknown", docs(config, pod_for("gpu-binpack-schedular")))
    assert "did you mean 'gpu-binpack-scheduler'?" in finding.message


def test_an_unknown_scheduler_no_running_pod_was_placed_by(tmp_path):
    running = textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: placed, namespace: default}
        spec:
          nodeName: r1-0
          schedulerName: my-scheduler
          containers: [{name: c, image: i}]
        status: {phase: Running}
        """)
    (tmp_path / "pods.yaml").write_text(running)
    assert findings_of("scheduler-name-unknown", pod_for("my-scheduler"), inventory=[RACKS, str(tmp_path)]) == []
    (finding,) = findings_of("scheduler-name-unknown", pod_for("gang-binder"), inventory=[RACKS, str(tmp_path)])
    assert finding.severity == "info" and "no running pod in the inventory was placed by" in finding.message
    assert findings_of("scheduler-name-unknown", pod_for("gang-binder")) == []  # nothing to compare with


def lws(replicas: int, size: int) -> str:
    return textwrap.dedent(f"""\
        apiVersion: leaderworkerset.x-k8s.io/v1
        kind: LeaderWorkerSet
        metadata:
          name: vllm
          namespace: team-a
          labels: {{kueue.x-k8s.io/queue-name: user-queue}}
        spec:
          replicas: {replicas}
          leaderWorkerTemplate:
            size: {size}
            workerTemplate:
              metadata:
                annotations: {{kueue.x-k8s.io/podset-required-topology: topology.kubernetes.io/rack}}
              spec:
                containers:
                - name: vllm
                  image: vllm/vllm-openai:latest
                  resources: {{limits: {{nvidia.com/gpu: 8}}}}
        """)


def test_each_leaderworkerset_group_is_its_own_workload_in_one_domain():
    # r1 holds one group of 4 x 8 GPUs; the 3 groups are 3 Workloads, each placed on its own
    assert findings_of("gang-unsatisfiable", lws(3, 4), inventory=RACKS) == []
    (finding,) = findings_of("gang-unsatisfiable", lws(3, 5), inventory=RACKS)
    assert "needs 5 worker pods x 8 nvidia.com/gpu placed at once in one topology.kubernetes.io/rack" in finding.message


def test_a_topology_pod_set_packs_on_its_flavors_nodes():
    topology = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: racks}\nspec:\n  levels:\n  - nodeLabel: topology.kubernetes.io/rack\n"
    zone_b = flavor("zone-b", labels="{topology.kubernetes.io/zone: zone-b}").replace(
        "spec:\n", "spec:\n  topologyName: racks\n"
    )
    queues = docs(
        topology, zone_b, cluster_queue(flavors=("zone-b",), gpus="64", covered="nvidia.com/gpu"), local_queue()
    )
    (finding,) = findings_of("gang-unsatisfiable", docs(queues, lws(1, 2)), inventory=RACKS)
    assert "in one topology.kubernetes.io/rack" in finding.message  # zone-b's rack r3 has 4-GPU nodes only
    assert findings_of("gang-unsatisfiable", lws(1, 2), inventory=RACKS) == []  # anywhere: r1 or r2 holds it


def test_keys_written_in_the_map_their_reader_does_not_read():
    grouped = textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: worker-0
          namespace: team-a
          labels:
            kueue.x-k8s.io/queue-name: user-queue
            kueue.x-k8s.io/pod-group-name: llm
            kueue.x-k8s.io/pod-group-total-count: "4"
        spec:
          containers:
          - {name: w, image: registry.example.com/llm:1.0, resources: {limits: {nvidia.com/gpu: 8}}}
        """)
    (finding,) = findings_of("queue-reference-invalid", grouped)
    assert finding.severity == "warning" and finding.line == 9
    assert (
        "kueue.x-k8s.io/pod-group-total-count is written as a label, but Kueue reads it from the annotations"
        in finding.message
    )
    fixed = grouped.replace('    kueue.x-k8s.io/pod-group-total-count: "4"\n', "").replace(
        "  labels:\n", '  annotations: {kueue.x-k8s.io/pod-group-total-count: "4"}\n  labels:\n'
    )
    assert findings_of("queue-reference-invalid", fixed) == []
    volcano = volcano_job().replace(
        "    template:\n      spec:",
        "    template:\n      metadata:\n        labels: {scheduling.k8s.io/group-name: test-job}\n      spec:",
    )
    (finding,) = findings_of("queue-reference-invalid", docs(volcano_queue(), volcano))
    assert (
        "scheduling.k8s.io/group-name is written as a label, but Volcano reads it from the annotations"
        in finding.message
    )


def test_hostile_cohort_trees_are_bounded():
    def cohort(name: str, parent: str) -> dict:
        return {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Cohort",
            "metadata": {"name": name},
            "spec": {"parentName": parent},
        }

    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "q"},
        "spec": {
            "cohortName": "c0",
            "resourceGroups": [
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [{"name": "f", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]}],
                }
            ],
        },
    }
    chain = [cohort(f"c{i}", f"c{i + 1}") for i in range(5000)]
    fr = ("f", "nvidia.com/gpu")
    deep = KueueSetup.of([queue, *chain])
    assert not deep.tree_is_sound(deep.cluster_queues["q"])
    assert deep.potential_available(deep.cluster_queues["q"], fr) >= 8  # bounded, no RecursionError
    cyclic = KueueSetup.of(
        [{**queue, "spec": {**queue["spec"], "cohortName": "a"}}, cohort("a", "b"), cohort("b", "a")]
    )
    assert not cyclic.tree_is_sound(cyclic.cluster_queues["q"])
    shallow = KueueSetup.of([queue, *chain[:10]])
    assert shallow.tree_is_sound(shallow.cluster_queues["q"])
    assert shallow.potential_available(shallow.cluster_queues["q"], fr) == 8
    # a queue in a cycle is not judged: no "never admitted" from a quota tree Kueue itself refuses
    text = docs(
        flavor("f"),
        cluster_queue(flavors=("f",), cohort="a"),
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: a}\nspec: {parentName: b}\n",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: b}\nspec: {parentName: a}\n",
        local_queue(),
        job(gpus=16),
    )
    assert queue_findings(text) == []


# ----------------------------------------------------------------- the built-in checks' parameters
# (pkg/controller/admissionchecks/{provisioning,multikueue}: a check whose parameters cannot be loaded is marked
# Active False, and Kueue makes every ClusterQueue naming it inactive)


def provisioning_config(name: str = "sample-prov-config") -> str:
    """The Kueue docs' ProvisioningRequestConfig (admission-check-controllers/provisioning)."""
    return (
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ProvisioningRequestConfig\nmetadata: {{name: {name}}}\nspec:\n"
        "  provisioningClassName: check-capacity.autoscaling.x-k8s.io\n  managedResources: [nvidia.com/gpu]\n"
    )


def multikueue_config(name: str = "mk-config", clusters: str = "[multikueue-test-worker1]") -> str:
    return f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueConfig\nmetadata: {{name: {name}}}\nspec:\n  clusters: {clusters}\n"


def multikueue_cluster(name: str = "multikueue-test-worker1", active: str = "") -> str:
    text = (
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueCluster\nmetadata: {{name: {name}}}\nspec:\n"
        f"  clusterSource:\n    kubeConfig: {{locationType: Secret, location: {name}-secret}}\n"
    )
    if active:
        text += f"status:\n  conditions:\n  - {{type: Active, status: '{active}', reason: Active, message: ''}}\n"
    return text


def provisioning_queue(*extra: str) -> str:
    return docs(flavor(), with_checks(cluster_queue(), "sample-prov"), local_queue(), admission_check(), *extra, job())


CHECK_CONFIGS = {"complete": [*COMPLETE["complete"], "ProvisioningRequestConfig", "MultiKueueConfig"]}


def test_a_provisioning_check_whose_config_is_missing_is_inactive():
    (finding,) = queue_findings(
        provisioning_queue(), "queue-reference-invalid", config={**ONE_CLUSTER, **CHECK_CONFIGS}
    )
    assert finding.severity == "error"
    assert finding.message == (
        "ClusterQueue cluster-queue is inactive (Can't admit new workloads): it references inactive AdmissionCheck(s): "
        "sample-prov\n"
        "AdmissionCheck sample-prov: Active False (BadParametersRef): provisioningrequestconfigs.kueue.x-k8s.io "
        '"sample-prov-config" not found\n'
        "its controller never marks it Active as written: the queue's workloads stay pending"
    )
    # the config among the files: the check becomes Active
    clean = provisioning_queue(provisioning_config())
    assert queue_findings(clean, "queue-reference-invalid", config={**ONE_CLUSTER, **CHECK_CONFIGS}) == []
    # the configs not known whole: it may be made by the platform's chart
    assert queue_findings(provisioning_queue(), "queue-reference-invalid") == []


def test_a_provisioning_config_listed_by_the_inventory(tmp_path):
    (tmp_path / "kueue.yaml").write_text(provisioning_config("gpu-prov"))  # the cluster has another one
    (finding,) = queue_findings(provisioning_queue(), "queue-reference-invalid", inventory=[str(tmp_path)])
    assert 'provisioningrequestconfigs.kueue.x-k8s.io "sample-prov-config" not found' in finding.message
    # the controller reports the check Active: its word stands
    (tmp_path / "checks.yaml").write_text(admission_check(active="True"))
    assert queue_findings(provisioning_queue(), "queue-reference-invalid", inventory=[str(tmp_path)]) == []


def test_parameters_the_check_controller_can_never_load():
    bare = admission_check().split("  parameters:")[0]  # no parameters at all
    text = docs(flavor(), with_checks(cluster_queue(), "sample-prov"), local_queue(), bare, job())
    (finding,) = queue_findings(text, "queue-reference-invalid")  # no catalog needed: the reference is wrong
    assert finding.severity == "error"
    assert (
        "AdmissionCheck sample-prov: Active False (BadParametersRef): missing parameters reference" in finding.message
    )
    typo = admission_check().replace("kind: ProvisioningRequestConfig", "kind: ProvisioningRequestConfiguration")
    text = docs(flavor(), with_checks(cluster_queue(), "sample-prov"), local_queue(), typo, job())
    (finding,) = queue_findings(text, "queue-reference-invalid")
    assert (
        'wrong kind "ProvisioningRequestConfiguration", expecting "ProvisioningRequestConfig": bad parameters '
        "reference" in finding.message
    )
    # a check of another controller: its parameters are its own business
    other = bare.replace("kueue.x-k8s.io/provisioning-request", "example.com/budget-check")
    text = docs(flavor(), with_checks(cluster_queue(), "sample-prov"), local_queue(), other, job())
    assert queue_findings(text, "queue-reference-invalid") == []


def test_a_multikueue_check_needs_its_config_and_a_worker_cluster(tmp_path):
    check = admission_check("sample-multikueue", MULTIKUEUE).replace("sample-multikueue-config", "mk-config")
    queue = docs(flavor(), with_checks(cluster_queue(), "sample-multikueue"), local_queue(), check)
    (finding,) = queue_findings(docs(queue, job()), "queue-reference-invalid", config={**ONE_CLUSTER, **CHECK_CONFIGS})
    assert (
        "AdmissionCheck sample-multikueue: Active False (BadConfig): Cannot load the AdmissionChecks parameters: "
        'multikueueconfigs.kueue.x-k8s.io "mk-config" not found' in finding.message
    )
    # the config names a worker cluster the inventory does not hold: NoUsableClusters
    (tmp_path / "clusters.yaml").write_text(multikueue_cluster("multikueue-test-worker2", active="True"))
    text = docs(queue, multikueue_config(), job())
    (finding,) = queue_findings(text, "queue-reference-invalid", inventory=[str(tmp_path)])
    assert finding.severity == "error"
    assert (
        "AdmissionCheck sample-multikueue: Active False (NoUsableClusters): Missing clusters: [multikueue-test-worker1]"
        in finding.message
    )
    # one of two clusters present: the check stays active (SomeActiveClusters)
    text = docs(queue, multikueue_config(clusters="[multikueue-test-worker1, multikueue-test-worker2]"), job())
    assert queue_findings(text, "queue-reference-invalid", inventory=[str(tmp_path)]) == []
    # the only cluster present but not connected now: a warning (a connection can come back)
    (tmp_path / "clusters.yaml").write_text(multikueue_cluster(active="False"))
    (finding,) = queue_findings(
        docs(queue, multikueue_config(), job()), "queue-reference-invalid", inventory=[str(tmp_path)]
    )
    assert finding.severity == "warning"
    assert "Active False (NoUsableClusters): Inactive clusters: [multikueue-test-worker1]" in finding.message
    # the clusters not known whole: not judged
    assert queue_findings(docs(queue, multikueue_config(), job()), "queue-reference-invalid") == []


def test_explain_shows_why_the_check_is_inactive(tmp_path):
    import json

    from conftest import run_cli

    path = tmp_path / "job.yaml"
    path.write_text(provisioning_queue())
    (tmp_path / ".gpulint.yaml").write_text("complete: [ProvisioningRequestConfig]\n")
    result = run_cli(
        "explain", str(path), "--inventory", RACKS, "--format", "json", "--config", str(tmp_path / ".gpulint.yaml")
    )
    (explanation,) = json.loads(result.stdout)["explanations"]
    first = explanation["steps"][0]
    assert first["status"] == "FAIL"
    assert (
        "AdmissionCheck sample-prov: Active False (BadParametersRef): provisioningrequestconfigs.kueue.x-k8s.io "
        '"sample-prov-config" not found' in first["lines"]
    )


# ----------------------------------------------------------------- pod set groups (podset-group-name)

# Two TAS flavors in one resource group: GPU racks tainted for GPU pods, then CPU racks with no GPU quota.
GROUPED_QUEUES = docs(
    TOPOLOGY,
    textwrap.dedent("""\
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: ResourceFlavor
        metadata: {name: h100-racks}
        spec:
          nodeLabels: {cloud.provider.com/node-group: h100}
          nodeTaints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
          topologyName: default
        """),
    textwrap.dedent("""\
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: ResourceFlavor
        metadata: {name: cpu-racks}
        spec:
          nodeLabels: {cloud.provider.com/node-group: cpu}
          topologyName: default
        """),
    textwrap.dedent("""\
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: ClusterQueue
        metadata: {name: tas-cluster-queue}
        spec:
          namespaceSelector: {}
          resourceGroups:
          - coveredResources: [cpu, nvidia.com/gpu]
            flavors:
            - name: h100-racks
              resources:
              - {name: cpu, nominalQuota: "64"}
              - {name: nvidia.com/gpu, nominalQuota: 16}
            - name: cpu-racks
              resources:
              - {name: cpu, nominalQuota: "64"}
              - {name: nvidia.com/gpu, nominalQuota: 0}
        """),
    local_queue("tas-user-queue", "default", "tas-cluster-queue"),
)


def grouped_lws(group: str = "lws-group", leader_tolerates: bool = False) -> str:
    """The Kueue docs' LeaderWorkerSet with TAS (examples/serving-workloads/sample-leaderworkerset-tas.yaml): a
    CPU leader and GPU workers in one rack; the workers tolerate the GPU taint."""
    annotations = "kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack"
    if group:
        annotations += f", kueue.x-k8s.io/podset-group-name: {group}"
    toleration = "        tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
    return (
        "apiVersion: leaderworkerset.x-k8s.io/v1\n"
        "kind: LeaderWorkerSet\n"
        "metadata:\n"
        "  name: nginx-leaderworkerset\n"
        "  namespace: default\n"
        "  labels: {kueue.x-k8s.io/queue-name: tas-user-queue}\n"
        "spec:\n"
        "  replicas: 2\n"
        "  leaderWorkerTemplate:\n"
        "    size: 3\n"
        "    leaderTemplate:\n"
        f"      metadata: {{annotations: {{{annotations}}}}}\n"
        "      spec:\n"
        f"{toleration if leader_tolerates else ''}"
        "        containers:\n"
        "        - name: nginx-leader\n"
        "          image: registry.k8s.io/nginx-slim:0.27\n"
        "          resources: {requests: {cpu: 100m}}\n"
        "    workerTemplate:\n"
        f"      metadata: {{annotations: {{{annotations}}}}}\n"
        "      spec:\n"
        f"{toleration}"
        "        containers:\n"
        "        - name: nginx-worker\n"
        "          image: registry.k8s.io/nginx-slim:0.27\n"
        "          resources: {requests: {cpu: 200m}, limits: {nvidia.com/gpu: 4}}\n"
    )


def test_a_pod_set_group_gets_one_flavor_that_serves_every_pod_set(tmp_path):
    import json

    from conftest import run_cli

    (finding,) = queue_findings(docs(GROUPED_QUEUES, grouped_lws()))
    assert finding.severity == "error"
    # the leader does not tolerate the GPU racks' taint, and the CPU racks hold no GPUs: no flavor serves both
    assert (
        "couldn't assign flavors to pod set leader: untolerated taint nvidia.com/gpu=present:NoSchedule in flavor "
        "h100-racks, insufficient quota for nvidia.com/gpu in flavor cpu-racks" in finding.message
    )
    # explain shows the group's demand per flavor, and the verdict check reports
    path = tmp_path / "lws.yaml"
    path.write_text(docs(GROUPED_QUEUES, grouped_lws()))
    result = run_cli("explain", str(path), "--inventory", RACKS, "--format", "json")
    first = json.loads(result.stdout)["explanations"][0]["steps"][0]
    assert (
        "pod set group lws-group (leader, worker), flavor cpu-racks: cpu 0.5 of at most 64, nvidia.com/gpu 8 of at "
        "most 0: insufficient quota for nvidia.com/gpu in flavor cpu-racks" in "\n".join(first["lines"])
    )
    # the leader tolerates it: the group is given the GPU racks
    assert queue_findings(docs(GROUPED_QUEUES, grouped_lws(leader_tolerates=True))) == []
    # no group: the leader goes to the CPU racks and the workers to the GPU racks, each on its own
    assert queue_findings(docs(GROUPED_QUEUES, grouped_lws(group=""))) == []


def test_a_group_name_without_a_required_or_preferred_level_groups_nothing():
    unconstrained = grouped_lws().replace(
        "kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack",
        'kueue.x-k8s.io/podset-unconstrained-topology: "true"',
    )
    assert "podset-group-name" in unconstrained
    assert queue_findings(docs(GROUPED_QUEUES, unconstrained)) == []


def test_kueues_webhook_refuses_malformed_pod_set_groups():
    # a third pod set in the group: a JobSet's driver, workers and a parameter server all named "trainers"
    annotations = (
        "annotations: {kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack, "
        "kueue.x-k8s.io/podset-group-name: trainers}"
    )

    def replicated(name: str, parallelism: int) -> str:
        return (
            f"  - name: {name}\n    replicas: 1\n    template:\n      spec:\n        parallelism: {parallelism}\n"
            f"        completions: {parallelism}\n        template:\n          metadata:\n            {annotations}\n"
            "          spec:\n            restartPolicy: Never\n            containers:\n            - name: main\n"
            "              image: registry.example.com/trainer:1.0\n"
            "              resources: {limits: {nvidia.com/gpu: 8}}\n"
        )

    head = (
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: trainer\n  namespace: default\n"
        "  labels: {kueue.x-k8s.io/queue-name: tas-user-queue}\nspec:\n  replicatedJobs:\n"
    )
    three = head + replicated("driver", 1) + replicated("workers", 4) + replicated("ps", 2)
    found = findings_of("operator-rejected", three)
    assert [f.line for f in found] == [17, 32, 47]  # each pod set's annotations
    assert found[0].message.startswith("Kueue's webhook rejects this JobSet")
    assert (
        "spec.replicatedJobs[0].template.spec.template.metadata.annotations[kueue.x-k8s.io/podset-group-name]: "
        'Invalid value: "trainers": can only define groups of exactly 2 pod sets, got: 3 pod set(s)' in found[0].message
    )
    # two pod sets, neither of one pod
    two = head + replicated("workers", 4) + replicated("ps", 2)
    found = findings_of("operator-rejected", two)
    assert len(found) == 2
    assert (
        "at least one pod set has only 1 replica, got: 4 replica(s) and 2 replica(s) in the group" in found[0].message
    )
    # the driver of one pod and its workers: accepted
    assert findings_of("operator-rejected", head + replicated("driver", 1) + replicated("workers", 4)) == []
    # not managed by Kueue (no queue label): Kueue's webhook is not the one that judges it
    unmanaged = (head + replicated("workers", 4) + replicated("ps", 2)).replace(
        "  labels: {kueue.x-k8s.io/queue-name: tas-user-queue}\n", ""
    )
    assert findings_of("operator-rejected", unmanaged) == []


def test_kueues_webhook_on_a_leader_worker_set_group():
    # the leader's level differs from the workers': the group must share one topology request
    mixed = grouped_lws().replace(
        "      metadata: {annotations: {kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack,",
        "      metadata: {annotations: {kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-block,",
        1,
    )
    found = findings_of("operator-rejected", mixed)
    assert len(found) == 2
    assert (
        "spec.leaderWorkerTemplate.leaderTemplate.metadata.annotations: Invalid value: must specify "
        "'kueue.x-k8s.io/podset-required-topology' or 'kueue.x-k8s.io/podset-preferred-topology' topology consistent "
        "with 'spec.leaderWorkerTemplate.workerTemplate.metadata.annotations' in group 'lws-group'"
    ) in "\n".join(f.message for f in found)
    # a group name without a level, and a numeric one
    bare = grouped_lws().replace("kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack, ", "")
    messages = "\n".join(f.message for f in findings_of("operator-rejected", bare))
    assert (
        "Forbidden: may not be set when neither 'kueue.x-k8s.io/podset-preferred-topology' nor "
        "'kueue.x-k8s.io/podset-required-topology' is specified" in messages
    )
    numeric = grouped_lws(group='"42"')
    assert 'Invalid value: "42": must not be a number' in findings_of("operator-rejected", numeric)[0].message
    # the docs' example as written: accepted
    assert findings_of("operator-rejected", grouped_lws()) == []
