"""Kueue's manager Configuration changes the verdict: manageJobsWithoutQueueName suspends an unlabelled
job when no default LocalQueue exists, and a queue-name label on a kind whose integration is off is
ignored. Shaped like Kueue's release manifests (config/components/manager/controller_manager_config.yaml
in the ConfigMap kueue-manager-config) and its docs (tasks/manage/enforce_job_management)."""

from __future__ import annotations

import json
import textwrap

import yaml
from conftest import REPO, run_cli
from rule_harness import findings_of

from gpulint.kube.queueing.workload import queue_name
from gpulint.kube.workloads import ObjectFacts

RULE = "queue-reference-invalid"


def manager_config(body: str, version: str = "v1beta1") -> str:
    embedded = textwrap.indent(
        f"apiVersion: config.kueue.x-k8s.io/{version}\nkind: Configuration\nhealth:\n"
        f"  healthProbeBindAddress: :8081\n{textwrap.dedent(body)}",
        "    ",
    )
    return (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kueue-manager-config\n  namespace: kueue-system\n"
        f"data:\n  controller_manager_config.yaml: |\n{embedded}"
    )


MANAGE_ALL = manager_config("""\
    manageJobsWithoutQueueName: true
    integrations:
      frameworks:
      - "batch/job"
      - "kubeflow.org/pytorchjob"
      - "ray.io/rayjob"
    """)


def job(namespace: str = "ml", labels: str = "") -> str:
    namespace_line = f"  namespace: {namespace}\n" if namespace else ""
    return (
        f"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: finetune\n{namespace_line}{labels}"
        "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
        "      - name: train\n        image: nvcr.io/nvidia/pytorch:24.05-py3\n"
        "        resources:\n          limits:\n            nvidia.com/gpu: 1\n"
    )


def local_queue(name: str, namespace: str = "ml") -> str:
    return (
        f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: {name}\n  namespace: {namespace}\n"
        "spec:\n  clusterQueue: cluster-queue\n"
    )


def docs(*parts: str) -> str:
    return "---\n".join(part if part.endswith("\n") else part + "\n" for part in parts)


QUEUED = "  labels:\n    kueue.x-k8s.io/queue-name: user-queue\n"


def test_an_unlabelled_job_is_suspended_when_kueue_manages_jobs_without_queue_name():
    # The files manage the namespace's queues (user-queue) but define no `default`: likely, a warning.
    (finding,) = findings_of(RULE, docs(MANAGE_ALL, job(), local_queue("user-queue")))
    assert (finding.line, finding.column) == (22, 3)  # the Job's metadata
    assert finding.severity == "warning"  # a default LocalQueue may still exist in the cluster
    # No LocalQueue of the namespace in the files: the default one may be made elsewhere (info, issue #28).
    (alone,) = findings_of(RULE, docs(MANAGE_ALL, job()))
    assert alone.severity == "info"
    assert "Kueue suspends this Job: manageJobsWithoutQueueName is true and it has no kueue.x-k8s.io/queue-name" in (
        finding.message
    )
    assert "ConfigMap kueue-system/kueue-manager-config" in finding.message
    assert "no LocalQueue named default in namespace ml" in finding.message


def test_the_fixed_twin_with_a_queue_name_label_is_clean():
    assert findings_of(RULE, docs(MANAGE_ALL, local_queue("user-queue"), job(labels=QUEUED))) == []


def test_a_default_local_queue_in_the_namespace_takes_the_unlabelled_job():
    assert findings_of(RULE, docs(MANAGE_ALL, local_queue("default"), job())) == []
    # a default LocalQueue of another namespace does not
    (finding,) = findings_of(RULE, docs(MANAGE_ALL, local_queue("default", "other"), job()))
    assert "namespace ml" in finding.message


def test_an_inventory_listing_the_local_queues_proves_there_is_no_default_one(tmp_path):
    (tmp_path / "queues.yaml").write_text(local_queue("user-queue"))
    (finding,) = findings_of(RULE, docs(MANAGE_ALL, job()), inventory=[str(tmp_path)])
    assert finding.severity == "error"
    (tmp_path / "queues.yaml").write_text(docs(local_queue("user-queue"), local_queue("default")))
    assert findings_of(RULE, docs(MANAGE_ALL, job()), inventory=[str(tmp_path)]) == []


def test_traps_kueue_leaves_alone():
    off = manager_config("integrations:\n  frameworks: [batch/job]\n")  # manageJobsWithoutQueueName defaults to false
    assert findings_of(RULE, docs(off, job())) == []
    assert findings_of(RULE, job()) == []  # no Configuration: nothing is known
    # the default managedJobsNamespaceSelector leaves kube-system and Kueue's namespace alone
    assert findings_of(RULE, docs(MANAGE_ALL, job(namespace="kube-system"))) == []
    assert findings_of(RULE, docs(MANAGE_ALL, job(namespace="kueue-system"))) == []
    # a selector on labels of a namespace gpulint does not know: whether it is managed is unknown
    labelled = manager_config("""\
        manageJobsWithoutQueueName: true
        managedJobsNamespaceSelector:
          matchLabels:
            kueue.x-k8s.io/managed-namespace: "true"
        """)
    assert findings_of(RULE, docs(labelled, job())) == []
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ml\n  labels:\n    kueue.x-k8s.io/managed-namespace: 'true'\n"
    assert len(findings_of(RULE, docs(labelled, namespace, job()))) == 1
    # two configurations that disagree: which one runs is unknown
    assert findings_of(RULE, docs(MANAGE_ALL, off.replace("kueue-manager-config", "other"), job())) == []
    # a Deployment is held too, but serving namespaces often mean it: not judged
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: serve\n  namespace: ml\nspec:\n"
        "  selector:\n    matchLabels: {app: serve}\n  template:\n    metadata:\n      labels: {app: serve}\n"
        "    spec:\n      containers:\n      - name: serve\n        image: vllm/vllm-openai:v0.5.0\n"
    )
    assert findings_of(RULE, docs(MANAGE_ALL, deployment)) == []


def test_a_queue_name_on_a_kind_whose_integration_is_off_is_ignored():
    mpi_only = manager_config("integrations:\n  frameworks:\n  - batch/job\n  - kubeflow.org/mpijob\n")
    rayjob = (
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata:\n  name: tune\n  namespace: ml\n"
        f"{QUEUED}spec:\n  entrypoint: python tune.py\n  shutdownAfterJobFinishes: true\n"
    )
    (finding,) = findings_of(RULE, docs(mpi_only, local_queue("user-queue"), rayjob))
    assert finding.severity == "warning"
    assert "Kueue does not manage this RayJob: ray.io/rayjob is not among the enabled integrations.frameworks" in (
        finding.message
    )
    assert "enables batch/job, kubeflow.org/mpijob" in finding.message
    assert findings_of(RULE, docs(MANAGE_ALL, local_queue("user-queue"), rayjob)) == []
    # no frameworks listed: Kueue enables batch/job alone
    bare = manager_config("manageJobsWithoutQueueName: false\n")
    (finding,) = findings_of(RULE, docs(bare, local_queue("user-queue"), rayjob))
    assert "enables batch/job" in finding.message
    assert findings_of(RULE, docs(bare, local_queue("user-queue"), job(labels=QUEUED))) == []


def test_a_configuration_object_linted_on_its_own_is_read_too():
    config = (
        "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nmanageJobsWithoutQueueName: true\n"
        "integrations:\n  frameworks: [batch/job]\n"
    )
    (finding,) = findings_of(RULE, docs(config, job()))
    assert "the Kueue Configuration in" in finding.message


def test_a_cron_job_is_judged_by_its_job_template_labels():
    cron = (
        "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: nightly\n  namespace: ml\nspec:\n"
        "  schedule: '0 2 * * *'\n  jobTemplate:\n    metadata:\n      labels:\n"
        "        kueue.x-k8s.io/queue-name: user-queue\n    spec:\n      template:\n        spec:\n"
        "          restartPolicy: Never\n          containers:\n          - name: eval\n"
        "            image: nvcr.io/nvidia/pytorch:24.05-py3\n"
    )
    assert findings_of(RULE, docs(MANAGE_ALL, local_queue("user-queue"), cron)) == []
    unlabelled = cron.replace("      labels:\n        kueue.x-k8s.io/queue-name: user-queue\n", "      labels: {}\n")
    assert len(findings_of(RULE, docs(MANAGE_ALL, unlabelled))) == 1


def test_explain_shows_the_same_cause(tmp_path):
    manifest = tmp_path / "train.yaml"
    manifest.write_text(docs(MANAGE_ALL, job()))
    inventory = str(REPO / "examples" / "inventory")
    checked = run_cli("check", str(manifest), "--inventory", inventory, "--format", "json", "--select", RULE)
    (finding,) = json.loads(checked.stdout)["findings"]
    explained = json.loads(run_cli("explain", str(manifest), "--inventory", inventory, "--format", "json").stdout)
    (explanation,) = explained["explanations"]
    admission = next(step for step in explanation["steps"] if step["title"] == "Admission (queue and quota)")
    assert finding["message"] in admission["lines"]


def _deployment(template_labels: str, labels: str = "") -> str:
    """A Deployment as the GKE mix-train-and-inference sample writes it: the queue-name label on its pods."""
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: tgi-gemma\n  namespace: ml\n{labels}"
        "spec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: gemma-server\n  template:\n"
        f"    metadata:\n      labels:\n        app: gemma-server\n{template_labels}"
        "    spec:\n      containers:\n      - name: inference-server\n        image: ghcr.io/huggingface/tgi:2.0\n"
        "        resources:\n          limits:\n            nvidia.com/gpu: 1\n"
    )


POD_LABEL = "        kueue.x-k8s.io/queue-name: user-queue\n"
POD_ONLY = manager_config('integrations:\n  frameworks:\n  - "batch/job"\n  - "pod"\n')


def test_pods_labelled_in_a_deployment_template_are_the_pod_integrations():
    """With `pod` enabled and `deployment` off, Kueue's pod webhook gates each labelled pod and admits it to
    the LocalQueue (plain pods): the label is not ignored."""
    assert findings_of(RULE, docs(POD_ONLY, local_queue("user-queue"), _deployment(POD_LABEL))) == []


def test_the_label_is_ignored_when_neither_integration_is_on():
    jobs_only = manager_config('integrations:\n  frameworks:\n  - "batch/job"\n')
    (finding,) = findings_of(RULE, docs(jobs_only, local_queue("user-queue"), _deployment(POD_LABEL)))
    assert finding.severity == "warning"
    assert "Kueue does not manage this Deployment: deployment is not among the enabled" in finding.message


def test_a_label_on_the_deployment_itself_is_not_the_pods():
    """Trap: the pod integration reads the pods' labels; one on the Deployment's own metadata never reaches them."""
    own = "  labels:\n    kueue.x-k8s.io/queue-name: user-queue\n"
    (finding,) = findings_of(RULE, docs(POD_ONLY, local_queue("user-queue"), _deployment("", labels=own)))
    assert "Kueue does not manage this Deployment" in finding.message


def test_the_queue_name_says_whether_the_pods_carry_it():
    """The verdict reads where the label was found from the name itself, not from the shape of its path: a
    CronJob's job template label is the Job's, not its pods'."""
    on_pods = queue_name(ObjectFacts.afresh(yaml.safe_load(_deployment(POD_LABEL))))
    labelled = _deployment("", labels="  labels:\n    kueue.x-k8s.io/queue-name: q\n")
    own = queue_name(ObjectFacts.afresh(yaml.safe_load(labelled)))
    cron = yaml.safe_load(
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  jobTemplate:\n"
        "    metadata:\n      labels: {kueue.x-k8s.io/queue-name: q}\n"
    )
    assert on_pods is not None and on_pods.on_pods
    assert own is not None and not own.on_pods
    job_template = queue_name(ObjectFacts.afresh(cron))
    assert job_template is not None and not job_template.on_pods


# kubernetes-sigs/kueue#7929: a Pod of a managed namespace, no queue name, no LocalQueue to default it to.
MANAGE_PODS = manager_config("""\
    manageJobsWithoutQueueName: true
    integrations:
      frameworks:
      - "batch/job"
      - "pod"
    """)


def pod(metadata: str = "") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-debug\n  namespace: ml\n{metadata}"
        "spec:\n  containers:\n  - name: debug\n    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        '    command: ["sleep", "3600"]\n    resources:\n      limits: {nvidia.com/gpu: 1}\n'
    )


def test_a_pod_written_alone_is_gated_by_the_pod_integration():
    """The pod webhook (pkg/controller/jobs/pod/pod_webhook.go Default) gates a Pod no Kueue job owns."""
    (alone,) = findings_of(RULE, docs(MANAGE_PODS, pod()))
    assert alone.severity == "info"  # the default LocalQueue may be made elsewhere
    assert alone.message.startswith("Kueue suspends this Pod: manageJobsWithoutQueueName is true")
    (likely,) = findings_of(RULE, docs(MANAGE_PODS, pod(), local_queue("user-queue")))
    assert likely.severity == "warning"
    assert findings_of(RULE, docs(MANAGE_PODS, pod(QUEUED), local_queue("user-queue"))) == []
    assert findings_of(RULE, docs(MANAGE_PODS, pod(), local_queue("default"))) == []


def test_pods_kueue_leaves_to_others():
    assert findings_of(RULE, docs(MANAGE_ALL, pod(), local_queue("user-queue"))) == []  # pod integration off
    owned = "  ownerReferences:\n  - {apiVersion: v1, kind: ReplicationController, name: rc, uid: u}\n"
    assert findings_of(RULE, docs(MANAGE_PODS, pod(owned), local_queue("user-queue"))) == []
    # podOptions' selectors (kept for backwards compatibility) choose Pods as well: not judged
    selected = MANAGE_PODS.replace(
        '      - "pod"\n',
        '      - "pod"\n      podOptions:\n        podSelector:\n          matchLabels: {queued: "yes"}\n',
    )
    assert "podOptions" in selected
    assert findings_of(RULE, docs(selected, pod(), local_queue("user-queue"))) == []
