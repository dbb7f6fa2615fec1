"""The Spark operator's SparkApplication as the pods Spark and the operator make (kube/spark.py), and its mutating
webhook's switch (lint/world/spark_install.py): with the webhook known off, the fields only the webhook applies
(tolerations, affinity, the role's nodeSelector, gpu, ...) never reach the pods. Shapes follow the operator's own
examples (kubeflow/spark-operator v2.5.2 examples/, the v1beta2-1.3.8 chart's Deployment args) and the RAPIDS
accelerator's Kubernetes guide (spark.executor.resource.gpu.* in sparkConf)."""

from __future__ import annotations

import yaml
from conftest import check_serious
from support.trees import write_tree

from gpulint.kube.spark import BoundSparkApplication
from gpulint.kube.workloads import pod_spec_sites

# Two CPU nodes and two T4 nodes tainted nvidia.com/gpu=present:NoSchedule (a GPU pool created with a taint).
INVENTORY = """
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: cpu-1
    labels: {kubernetes.io/hostname: cpu-1, kubernetes.io/os: linux}
  status:
    allocatable: {cpu: "15", memory: 60Gi, pods: "110"}
- apiVersion: v1
  kind: Node
  metadata:
    name: cpu-2
    labels: {kubernetes.io/hostname: cpu-2, kubernetes.io/os: linux}
  status:
    allocatable: {cpu: "15", memory: 60Gi, pods: "110"}
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-1
    labels: {kubernetes.io/hostname: gpu-1, kubernetes.io/os: linux, nvidia.com/gpu.product: Tesla-T4}
  spec:
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
  status:
    allocatable: {cpu: "47", memory: 186Gi, nvidia.com/gpu: "4", pods: "110"}
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-2
    labels: {kubernetes.io/hostname: gpu-2, kubernetes.io/os: linux, nvidia.com/gpu.product: Tesla-T4}
  spec:
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
  status:
    allocatable: {cpu: "47", memory: 186Gi, nvidia.com/gpu: "4", pods: "110"}
"""

# The v1 operator as the v1beta2-1.3.8 chart renders it; WEBHOOK_ARGS is what webhook.enable=true adds.
OPERATOR = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: spark-operator
  namespace: spark-operator
spec:
  selector:
    matchLabels: {app.kubernetes.io/name: spark-operator}
  template:
    metadata:
      labels: {app.kubernetes.io/name: spark-operator}
    spec:
      serviceAccountName: spark-operator
      containers:
      - name: spark-operator
        image: ghcr.io/googlecloudplatform/spark-operator:v1beta2-1.3.8-3.1.1
        args:
        - -v=2
        - -logtostderr
        - -namespace=spark-jobs
        - -enable-metrics=true{webhook}
"""
WEBHOOK_ARGS = """
        - -enable-webhook=true
        - -webhook-svc-namespace=spark-operator
        - -webhook-port=8080"""

# A RAPIDS job: each executor takes one GPU through Spark's resource conf, and tolerates the GPU nodes' taint.
RAPIDS_APP = """
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: etl-gpu
  namespace: spark-jobs
spec:
  type: Scala
  mode: cluster
  image: registry.example.com/spark-rapids:3.5.1
  mainClass: com.example.Etl
  mainApplicationFile: local:///opt/jobs/etl.jar
  sparkVersion: 3.5.1
  restartPolicy:
    type: Never
  sparkConf:
    spark.plugins: com.nvidia.spark.SQLPlugin
    spark.executor.resource.gpu.amount: "1"
    spark.executor.resource.gpu.vendor: nvidia.com
    spark.task.resource.gpu.amount: "0.25"
  driver:
    cores: 2
    memory: 4g
    serviceAccount: spark
  executor:
    instances: 4
    cores: 4
    memory: 24g
    tolerations:
    - key: nvidia.com/gpu
      operator: Exists
      effect: NoSchedule
"""

HELM_RELEASE = """
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: spark-operator
  namespace: spark-operator
spec:
  interval: 10m
  chart:
    spec:
      chart: spark-operator
      version: 2.1.0
      sourceRef: {kind: HelmRepository, name: spark-operator}
  values:
    spark:
      jobNamespaces: [spark-jobs]
    webhook:
      enable: {enable}
"""


def operator(webhook: str) -> str:
    return OPERATOR.replace("{webhook}", webhook)


def helm_release(enable: str) -> str:
    return HELM_RELEASE.replace("{enable}", enable)


def _check(write, *documents: str) -> list[tuple]:
    manifests = write("spark.yaml", "---\n".join(d.lstrip("\n") for d in documents))
    inventory = write("inventory.yaml", INVENTORY)
    return check_serious(str(manifests), "--inventory", str(inventory), fields=("line", "rule", "severity", "said"))


def test_webhook_off_drops_the_executors_tolerations(repo, write):
    found = _check(write, operator(""), RAPIDS_APP)
    assert [(line, rule, severity) for line, rule, severity, _ in found] == [
        (46, "gpu-unschedulable", "error")
    ]  # executor:
    said = found[0][3]
    assert "the 'executor' pod template can never be scheduled on this cluster, even empty" in said
    assert "2 node(s) had untolerated taint(s)" in said
    assert (
        "the Spark operator's mutating webhook is off (Deployment spark-operator/spark-operator runs the operator "
        "without -enable-webhook, which defaults to false): the executor's tolerations never reach its pods" in said
    )


def test_webhook_on_keeps_them(repo, write):
    assert _check(write, operator(WEBHOOK_ARGS), RAPIDS_APP) == []


def test_webhook_unknown_judges_as_written(repo, write):
    # No operator among the files: the SparkApplication is judged with the fields it writes (no guess).
    assert _check(write, RAPIDS_APP) == []


def test_chart_values_switch(repo, write):
    found = _check(write, helm_release("false"), RAPIDS_APP)
    assert [(rule, severity) for _, rule, severity, _ in found] == [("gpu-unschedulable", "error")]
    assert "(HelmRelease spark-operator sets webhook.enable: false)" in found[0][3]
    assert _check(write, helm_release("true"), RAPIDS_APP) == []


def test_installs_that_disagree_or_do_not_say_leave_it_unknown(repo, write):
    # One install off, another on: a repository is not one cluster.
    both = (operator(""), helm_release("true"), RAPIDS_APP)
    assert _check(write, *both) == []
    # The v2 chart's controller Deployment has no such flag (its webhook is a Deployment of its own).
    v2 = operator("").replace(
        "        - -v=2\n", "        - controller\n        - start\n        - --zap-log-level=info\n"
    )
    assert _check(write, v2, RAPIDS_APP) == []
    # A release whose values may come from elsewhere (valuesFrom), or that does not write the value.
    from_elsewhere = helm_release("false").replace(
        "  values:\n", "  valuesFrom:\n  - {kind: ConfigMap, name: spark-values}\n  values:\n"
    )
    assert _check(write, from_elsewhere, RAPIDS_APP) == []
    unwritten = helm_release("false").replace("    webhook:\n      enable: false\n", "")
    assert _check(write, unwritten, RAPIDS_APP) == []


def test_the_operator_in_the_inventory(repo, write):
    # The cluster's own operator Deployment (kubectl get deployments -o yaml) sets the switch.
    manifests = write("spark.yaml", RAPIDS_APP)
    nodes = write("inventory/nodes.yaml", INVENTORY)
    deployments = write("inventory/deployments.yaml", operator(""))
    found = check_serious(str(manifests), "--inventory", str(nodes), "--inventory", str(deployments))
    assert [(rule, severity) for _, _, rule, severity, _ in found] == [("gpu-unschedulable", "error")]
    assert "(Deployment spark-operator/spark-operator of the inventory runs the operator without" in found[0][4]
    deployments.write_text(operator(WEBHOOK_ARGS), encoding="utf-8")
    assert check_serious(str(manifests), "--inventory", str(nodes), "--inventory", str(deployments)) == []


def test_the_untolerated_application_is_caught_whatever_the_switch(repo, write):
    untolerated = RAPIDS_APP[: RAPIDS_APP.index("    tolerations:")]
    found = _check(write, untolerated)
    assert [(rule, severity) for _, rule, severity, _ in found] == [("gpu-unschedulable", "error")]
    assert "webhook" not in found[0][3]


def test_executors_beyond_the_gpus(repo, write):
    # 12 executors of 1 GPU each on 8 GPUs: the instances are the pods counted.
    found = _check(write, RAPIDS_APP.replace("instances: 4", "instances: 12"))
    assert [(rule, severity) for _, rule, severity, _ in found] == [("gpu-unschedulable", "warning")]
    assert "12 of these pods" in found[0][3]


def _sites(text: str, where: str = ""):
    data = yaml.safe_load(text)
    return {s.role: s for s in pod_spec_sites(BoundSparkApplication(data, where) if where else data)}


def test_pods_as_spark_builds_them():
    sites = _sites(RAPIDS_APP)
    assert {role: site.pods for role, site in sites.items()} == {"driver": 1, "executor": 4}
    executor = sites["executor"].spec["containers"][0]
    assert executor["name"] == "spark-kubernetes-executor"
    # cores -> the cpu request; 24g + max(10%, 384 MiB) overhead -> memory; the resource conf -> the GPU limit
    assert executor["resources"] == {
        "requests": {"cpu": "4", "memory": "27033Mi"},
        "limits": {"memory": "27033Mi", "nvidia.com/gpu": "1"},
    }
    assert sites["driver"].spec["containers"][0]["resources"]["requests"] == {"cpu": "2", "memory": "4505Mi"}
    assert sites["executor"].spec["tolerations"][0]["key"] == "nvidia.com/gpu"
    # A PySpark application: NON_JVM_MEMORY_OVERHEAD_FACTOR (0.4) unless a factor is set
    python = RAPIDS_APP.replace("  type: Scala\n", "  type: Python\n").replace("memory: 24g", "memory: 10g")
    limits = _sites(python)["executor"].spec["containers"][0]["resources"]["limits"]
    assert limits["memory"] == "14336Mi"
    factor = python.replace("  sparkConf:\n", '  sparkConf:\n    spark.executor.memoryOverheadFactor: "0.2"\n')
    assert _sites(factor)["executor"].spec["containers"][0]["resources"]["limits"]["memory"] == "12288Mi"


def test_webhook_fields_and_their_absence():
    app = RAPIDS_APP.replace(
        "  executor:\n",
        "  executor:\n    gpu: {name: nvidia.com/gpu, quantity: 2}\n    nodeSelector: {pool: gpu}\n"
        "    coreRequest: 3500m\n    memoryOverhead: 2g\n",
    ).replace("  driver:\n", "  nodeSelector: {zone: a}\n  driver:\n")
    on = _sites(app)["executor"]
    assert on.spec["nodeSelector"] == {"zone": "a", "pool": "gpu"}
    assert on.spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 2  # addGPU over the conf's
    assert on.spec["containers"][0]["resources"]["requests"] == {"cpu": "3500m", "memory": "26624Mi"}
    off = _sites(app, "the chart")["executor"]
    assert off.spec["nodeSelector"] == {"zone": "a"}  # the application's: spark.kubernetes.node.selector.*
    assert "tolerations" not in off.spec
    assert off.spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"  # the conf's alone
    assert "(the chart): the executor's nodeSelector, tolerations, gpu never reach its pods" in off.dropped


def test_counts_templates_and_scheduled():
    dynamic = RAPIDS_APP.replace("  driver:\n", "  dynamicAllocation: {enabled: true, maxExecutors: 8}\n  driver:\n")
    assert _sites(dynamic)["executor"].pods is None
    default = RAPIDS_APP.replace("    instances: 4\n", "")
    assert _sites(default)["executor"].pods == 2  # SchedulerBackendUtils.DEFAULT_NUMBER_EXECUTORS
    by_conf = default.replace("  sparkConf:\n", '  sparkConf:\n    spark.executor.instances: "6"\n')
    assert _sites(by_conf)["executor"].pods == 6
    templated = RAPIDS_APP.replace("  executor:\n", "  executor:\n    template:\n      spec: {}\n")
    assert set(_sites(templated)) == {"driver"}  # Spark merges a pod template: not modelled
    data = yaml.safe_load(RAPIDS_APP)
    scheduled = {
        "apiVersion": "sparkoperator.k8s.io/v1beta2",
        "kind": "ScheduledSparkApplication",
        "metadata": data["metadata"],
        "spec": {"schedule": "@every 1h", "template": data["spec"]},
    }
    sites = {s.role: s for s in pod_spec_sites(scheduled)}
    assert sites["executor"].path == ("spec", "template", "executor")
    assert sites["executor"].pods == 4


# ------------------------------------------------------ the switch from a whole MutatingWebhookConfiguration list

# As `kubectl get mutatingwebhookconfigurations -o yaml` lists them: cert-manager's, and (when the v2 chart runs its
# webhook) the chart's own, trimmed to what admission reads (templates/webhook/mutatingwebhookconfiguration.yaml).
CERT_MANAGER_WEBHOOKS = """
apiVersion: v1
kind: List
items:
- apiVersion: admissionregistration.k8s.io/v1
  kind: MutatingWebhookConfiguration
  metadata:
    name: cert-manager-webhook
  webhooks:
  - name: webhook.cert-manager.io
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig:
      service: {name: cert-manager-webhook, namespace: cert-manager, path: /mutate}
    rules:
    - {apiGroups: [cert-manager.io], apiVersions: [v1], operations: [CREATE, UPDATE], resources: ["*/*"]}
"""
SPARK_WEBHOOKS = """
- apiVersion: admissionregistration.k8s.io/v1
  kind: MutatingWebhookConfiguration
  metadata:
    name: spark-operator-webhook
  webhooks:
  - name: mutate--v1-pod.sparkoperator.k8s.io
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig:
      service: {name: spark-operator-webhook-svc, namespace: spark-operator, port: 9443, path: /mutate--v1-pod}
    objectSelector:
      matchLabels: {sparkoperator.k8s.io/launched-by-spark-operator: "true"}
    rules:
    - {apiGroups: [""], apiVersions: [v1], resources: [pods], operations: [CREATE]}
"""


def _with_webhooks(write, webhooks: str, *documents: str) -> list[tuple]:
    manifests = write("spark.yaml", "---\n".join(d.lstrip("\n") for d in documents))
    nodes = write("inventory/nodes.yaml", INVENTORY)
    listed = write("inventory/webhooks.yaml", webhooks)
    found = check_serious(str(manifests), "--inventory", str(nodes), "--inventory", str(listed))
    return [(rule, severity, said) for _, _, rule, severity, said in found]


def test_an_inventory_without_the_pod_webhook_has_it_off(repo, write):
    # failing before: the v2 chart installs no Deployment that says, so the switch stayed unknown
    found = _with_webhooks(write, CERT_MANAGER_WEBHOOKS, RAPIDS_APP)
    assert [(rule, severity) for rule, severity, _ in found] == [("gpu-unschedulable", "error")]
    assert (
        "the Spark operator's mutating webhook is off (the inventory holds no MutatingWebhookConfiguration with the "
        "operator's pod webhook (mutate--v1-pod.sparkoperator.k8s.io)): the executor's tolerations never reach its "
        "pods" in found[0][2]
    )


def test_an_inventory_with_the_pod_webhook_has_it_on(repo, write):
    assert _with_webhooks(write, CERT_MANAGER_WEBHOOKS + SPARK_WEBHOOKS, RAPIDS_APP) == []


def test_an_install_that_may_turn_it_on_leaves_the_inventorys_off_unknown(repo, write):
    # the trap: the change under review releases the chart with its webhook; a repository is not one cluster
    assert _with_webhooks(write, CERT_MANAGER_WEBHOOKS, helm_release("true"), RAPIDS_APP) == []


def test_webhook_configurations_in_the_linted_files_alone_prove_nothing(repo, write):
    # the trap: a repository's MutatingWebhookConfigurations are not the cluster's whole list
    webhooks = CERT_MANAGER_WEBHOOKS.split("items:\n- ", 1)[1].replace("\n  ", "\n")
    assert _check(write, webhooks, RAPIDS_APP) == []


# ------------------------------------------------------ the switch from the v2 chart rendered here

# kubeflow/spark-operator v2.5.2 charts/spark-operator-chart, trimmed to the controller and the webhook's
# configuration as its templates write them (labels from _helpers.tpl, the `if .Values.webhook.enable` guard).
CHART = {
    "charts/spark-operator/Chart.yaml": """
        apiVersion: v2
        name: spark-operator
        version: 2.5.2
        appVersion: 2.5.2
        """,
    "charts/spark-operator/values.yaml": """
        image: {registry: ghcr.io, repository: kubeflow/spark-operator/controller, tag: 2.5.2}
        webhook:
          enable: true
          port: 9443
        spark:
          jobNamespaces: [spark-jobs]
        """,
    "charts/spark-operator/templates/_helpers.tpl": """
        {{- define "spark-operator.labels" -}}
        helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
        app.kubernetes.io/name: spark-operator
        app.kubernetes.io/instance: {{ .Release.Name }}
        app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
        {{- end }}
        """,
    "charts/spark-operator/templates/controller/deployment.yaml": """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {{ .Release.Name }}-controller
          labels:
            {{- include "spark-operator.labels" . | nindent 4 }}
            app.kubernetes.io/component: controller
        spec:
          selector:
            matchLabels: {app.kubernetes.io/component: controller}
          template:
            metadata:
              labels: {app.kubernetes.io/component: controller}
            spec:
              containers:
              - name: spark-operator-controller
                image: {{ .Values.image.registry }}/{{ .Values.image.repository }}:{{ .Values.image.tag }}
                args:
                - controller
                - start
                - --namespaces={{ .Values.spark.jobNamespaces | join "," }}
        """,
    "charts/spark-operator/templates/webhook/mutatingwebhookconfiguration.yaml": """
        {{- if .Values.webhook.enable }}
        apiVersion: admissionregistration.k8s.io/v1
        kind: MutatingWebhookConfiguration
        metadata:
          name: {{ .Release.Name }}-webhook
          labels:
            {{- include "spark-operator.labels" . | nindent 4 }}
            app.kubernetes.io/component: webhook
        webhooks:
        - name: mutate--v1-pod.sparkoperator.k8s.io
          admissionReviewVersions: ["v1"]
          clientConfig:
            service:
              name: {{ .Release.Name }}-webhook-svc
              namespace: {{ .Release.Namespace }}
              port: {{ .Values.webhook.port }}
              path: /mutate--v1-pod
          sideEffects: None
          objectSelector:
            matchLabels:
              sparkoperator.k8s.io/launched-by-spark-operator: "true"
          rules:
          - apiGroups: [""]
            apiVersions: ["v1"]
            resources: ["pods"]
            operations: ["CREATE"]
        {{- end }}
        """,
}


def _rendered(repo, helm, enable: str, chart: dict[str, str] = CHART) -> list[tuple]:
    values = chart["charts/spark-operator/values.yaml"].replace("enable: true", f"enable: {enable}")
    write_tree(repo, {**chart, "charts/spark-operator/values.yaml": values, "jobs/etl.yaml": RAPIDS_APP})
    write_tree(repo, {"inventory/nodes.yaml": INVENTORY}, dedent=False)
    found = check_serious("charts", "jobs", "--helm", str(helm), "--inventory", "inventory")
    return [(path, rule, severity, said) for path, _, rule, severity, said in found]


def test_the_chart_rendered_without_its_webhook_has_it_off(repo, helm):
    found = _rendered(repo, helm, "false")
    assert [(path, rule, severity) for path, rule, severity, _ in found] == [
        ("jobs/etl.yaml", "gpu-unschedulable", "error")
    ]
    assert (
        "the Spark operator's mutating webhook is off (the render of charts/spark-operator holds no "
        "MutatingWebhookConfiguration with the operator's pod webhook (mutate--v1-pod.sparkoperator.k8s.io))"
        in found[0][3]
    )


def test_the_chart_rendered_with_its_webhook_has_it_on(repo, helm):
    assert _rendered(repo, helm, "true") == []


def test_the_chart_rendered_with_another_release_s_webhook_names_has_it_on(repo, helm):
    # the trap: a release not known here may name its pod webhook otherwise; the chart renders any of its webhooks
    # only under webhook.enable, so one of the operator's webhooks by another name leaves the switch on
    template = "charts/spark-operator/templates/webhook/mutatingwebhookconfiguration.yaml"
    renamed = CHART[template].replace("mutate--v1-pod.sparkoperator.k8s.io", "mutate-v1-pod.sparkoperator.k8s.io")
    assert renamed != CHART[template]
    assert _rendered(repo, helm, "true", {**CHART, template: renamed}) == []
