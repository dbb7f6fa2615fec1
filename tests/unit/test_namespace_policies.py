"""LimitRange and ResourceQuota as the API server applies them at pod creation (limit-range-violation,
resource-quota-exceeded), and the LimitRange defaults Kueue counts. Objects shaped like the
Kubernetes docs' (concepts/policy/limit-range, resource-quotas)."""

from __future__ import annotations

import textwrap

from conftest import said
from rule_harness import findings_of as _findings_of

# The manifests of these tests are one cluster's files (clusters: with no inventory): their quotas and limits
# are that cluster's, so a refusal is an error. Without the mapping it is at most a warning that names the
# assumption (tests/unit/test_clusters.py).
ONE_CLUSTER = {"clusters": {"team": {"paths": ["*"]}}}


def findings_of(rule_id, text, **kwargs):
    kwargs.setdefault("config", ONE_CLUSTER)
    return _findings_of(rule_id, text, **kwargs)


def limit_range(body: str, name: str = "cpu-resource-constraint", namespace: str = "ml") -> str:
    return (
        f"apiVersion: v1\nkind: LimitRange\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec:\n  limits:\n"
        f"  - type: Container\n{textwrap.indent(textwrap.dedent(body).strip(), '    ')}\n"
    )


def quota(hard: str, name: str = "gpu-quota", namespace: str = "ml", status: str = "") -> str:
    text = f"apiVersion: v1\nkind: ResourceQuota\nmetadata: {{name: {name}, namespace: {namespace}}}\nspec:\n  hard: {hard}\n"
    return text + (f"status:\n  hard: {hard}\n  used: {status}\n" if status else "")


def deployment(resources: str, replicas: int = 1, sidecar: str = "", namespace: str = "ml") -> str:
    """A GPU Deployment; ``sidecar``: the resources of a second container (none when empty)."""
    text = textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: inference, namespace: {namespace}}}
        spec:
          replicas: {replicas}
          selector: {{matchLabels: {{app: inference}}}}
          template:
            metadata: {{labels: {{app: inference}}}}
            spec:
              containers:
              - name: server
                image: registry.example.com/server:1.0
                resources: {resources}
        """)
    if sidecar:
        text += f"      - name: log-shipper\n        image: registry.example.com/fluent-bit:3.0\n        resources: {sidecar}\n"
    return text


def docs(*parts: str) -> str:
    return "---\n".join(parts)


def messages(found) -> list[str]:
    return [f"{f.line}:{f.column} {f.severity} {f.message}" for f in found]


# ----------------------------------------------------------------- LimitRange


def test_default_limit_below_the_request_is_rejected():
    found = findings_of(
        "limit-range-violation",
        docs(limit_range("default: {cpu: 500m}"), deployment("{requests: {cpu: '1'}, limits: {nvidia.com/gpu: 1}}")),
    )
    (finding,) = found
    assert finding.severity == "error"
    assert "\nafter LimitRange cpu-resource-constraint filled in limits.cpu=500m" in said(finding)
    assert 'Invalid value: "1": must be less than or equal to cpu limit of 500m' in finding.message


def test_a_request_within_the_default_limit_is_fine():
    text = docs(limit_range("default: {cpu: '2'}"), deployment("{requests: {cpu: '1'}, limits: {nvidia.com/gpu: 1}}"))
    assert findings_of("limit-range-violation", text) == []


def test_another_namespace_limit_range_does_not_apply():
    text = docs(limit_range("default: {cpu: 500m}", namespace="other"), deployment("{requests: {cpu: '1'}}"))
    assert findings_of("limit-range-violation", text) == []


def test_gpu_max_per_container():
    text = docs(limit_range("max: {nvidia.com/gpu: 4}"), deployment("{limits: {nvidia.com/gpu: 8}}"))
    (finding,) = findings_of("limit-range-violation", text)
    assert "maximum nvidia.com/gpu usage per Container is 4, but limit is 8" in finding.message
    assert (
        findings_of(
            "limit-range-violation",
            docs(limit_range("max: {nvidia.com/gpu: 4}"), deployment("{limits: {nvidia.com/gpu: 4}}")),
        )
        == []
    )


def test_a_gpu_max_gives_every_container_gpus_it_does_not_ask_for():
    text = docs(
        limit_range("max: {nvidia.com/gpu: 4}"),
        deployment("{limits: {nvidia.com/gpu: 4}}", sidecar="{limits: {cpu: 100m}}"),
    )
    (finding,) = findings_of("limit-range-violation", text)
    assert finding.severity == "warning"
    assert "gives container log-shipper 4 nvidia.com/gpu it does not ask for (from its max" in finding.message


def test_gpu_minimum_per_container():
    text = docs(
        limit_range("min: {nvidia.com/gpu: 2}\ndefault: {nvidia.com/gpu: 2}"),
        deployment("{limits: {nvidia.com/gpu: 1}}"),
    )
    (finding,) = findings_of("limit-range-violation", text)
    assert "minimum nvidia.com/gpu usage per Container is 2, but request is 1" in finding.message


def test_limit_range_from_the_inventory(tmp_path):
    (tmp_path / "limits.yaml").write_text(limit_range("default: {memory: 1Gi}"))
    found = findings_of("limit-range-violation", deployment("{requests: {memory: 2Gi}}"), inventory=[str(tmp_path)])
    assert [f.severity for f in found] == ["error"]
    assert "must be less than or equal to memory limit of 1Gi" in found[0].message


# ----------------------------------------------------------------- ResourceQuota


def test_replicas_times_gpus_at_the_hard_limit_fit_one_more_does_not():
    q = quota("{requests.nvidia.com/gpu: 4}")
    assert (
        findings_of("resource-quota-exceeded", docs(q, deployment("{limits: {nvidia.com/gpu: 2}}", replicas=2))) == []
    )
    (finding,) = findings_of(
        "resource-quota-exceeded", docs(q, deployment("{limits: {nvidia.com/gpu: 2}}", replicas=3))
    )
    assert finding.severity == "error"
    assert (finding.line, finding.column) == (10, 1)
    assert (
        "the Deployment runs 3 pods that together need 6 requests.nvidia.com/gpu, above the namespace's quota of 4\n"
        "ResourceQuota gpu-quota: the ReplicaSet creates 2 and the others fail with FailedCreate\nexceeded quota: "
        "gpu-quota, requested: requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=4, limited: "
        "requests.nvidia.com/gpu=4" == finding.message
    )


def test_one_pod_above_the_quota():
    (finding,) = findings_of(
        "resource-quota-exceeded",
        docs(quota("{requests.nvidia.com/gpu: 4}"), deployment("{limits: {nvidia.com/gpu: 8}}")),
    )
    assert "no pod of this template can be created in the namespace\nexceeded quota: gpu-quota," in said(finding)


def test_quota_keys_never_charged():
    found = findings_of(
        "resource-quota-exceeded",
        quota(
            "{nvidia.com/gpu: 4, limits.amd.com/gpu: 2, requests.nvidia.com/gpu: 4, count/pods: 10, gold.storageclass.storage.k8s.io/requests.storage: 500Gi}"
        ),
    )
    assert [(f.severity, f.message.split(":")[0]) for f in found] == [
        ("warning", "the quota key nvidia.com/gpu is accepted but never charged"),
        ("warning", "the quota key limits.amd.com/gpu is accepted but never charged"),
    ]
    assert "write requests.amd.com/gpu" in found[1].message


def test_a_bare_gpu_key_does_not_limit_the_workload():
    found = findings_of(
        "resource-quota-exceeded",
        docs(quota("{nvidia.com/gpu: 1}"), deployment("{limits: {nvidia.com/gpu: 8}}", replicas=4)),
    )
    assert [(f.line, f.severity) for f in found] == [(5, "warning")]  # on the quota only: the pods are never charged


def test_cpu_limits_quota_needs_every_container_to_set_them():
    q = quota("{limits.cpu: '64', limits.memory: 256Gi}")
    (finding,) = findings_of(
        "resource-quota-exceeded", docs(q, deployment("{limits: {nvidia.com/gpu: 1, memory: 8Gi}}"))
    )
    assert "failed quota: gpu-quota: must specify limits.cpu for: server" in finding.message
    # a LimitRange default supplies it: the pod is admitted
    text = docs(limit_range("default: {cpu: '1'}"), q, deployment("{limits: {nvidia.com/gpu: 1, memory: 8Gi}}"))
    assert findings_of("resource-quota-exceeded", text) == []


def test_batch_jobs_wait_instead_of_failing():
    job = textwrap.dedent("""\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: sweep, namespace: ml}
        spec:
          parallelism: 4
          completions: 16
          template:
            spec:
              restartPolicy: Never
              containers:
              - {name: trial, image: registry.example.com/trial:1.0, resources: {limits: {nvidia.com/gpu: 1}}}
        """)
    (finding,) = findings_of("resource-quota-exceeded", docs(quota("{requests.nvidia.com/gpu: 2}"), job))
    assert finding.severity == "warning" and "at most 2 run at once" in finding.message


def test_scoped_quota_that_does_not_cover_the_pod():
    scoped = quota("{requests.nvidia.com/gpu: 1}").replace("  hard:", "  scopes: [Terminating]\n  hard:")
    assert findings_of("resource-quota-exceeded", docs(scoped, deployment("{limits: {nvidia.com/gpu: 8}}"))) == []


def test_current_use_from_the_inventory_is_a_warning(tmp_path):
    (tmp_path / "quota.yaml").write_text(quota("{requests.nvidia.com/gpu: 8}", status="{requests.nvidia.com/gpu: 7}"))
    (finding,) = findings_of(
        "resource-quota-exceeded", deployment("{limits: {nvidia.com/gpu: 2}}"), inventory=[str(tmp_path)]
    )
    assert finding.severity == "warning"
    assert "used: requests.nvidia.com/gpu=7, limited: requests.nvidia.com/gpu=8" in finding.message


def test_device_class_quota_counts_the_claims_each_pod_gets_from_its_template():
    template = textwrap.dedent("""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {name: two-gpus, namespace: ml}
        spec:
          spec:
            devices:
              requests:
              - name: gpus
                exactly: {deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: 2}
        """)
    pods = textwrap.dedent("""\
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: trainer, namespace: ml}
        spec:
          replicas: 3
          serviceName: trainer
          selector: {matchLabels: {app: trainer}}
          template:
            metadata: {labels: {app: trainer}}
            spec:
              resourceClaims:
              - {name: gpus, resourceClaimTemplateName: two-gpus}
              containers:
              - name: train
                image: registry.example.com/train:1.0
                resources: {claims: [{name: gpus}]}
        """)
    hard = "{gpu.nvidia.com.deviceclass.resource.k8s.io/devices: 4}"
    (finding,) = findings_of("resource-quota-exceeded", docs(quota(hard), template, pods))
    assert (
        "the StatefulSet runs 3 pods that together need 6 gpu.nvidia.com.deviceclass.resource.k8s.io/devices, "
        "above the namespace's quota of 4\nResourceQuota gpu-quota: the ResourceClaims of the pods beyond the first 2 "
        "are refused"
    ) in finding.message
    assert (
        findings_of("resource-quota-exceeded", docs(quota(hard), template, pods.replace("replicas: 3", "replicas: 2")))
        == []
    )


def test_errors_the_limit_range_does_not_cause_are_left_to_other_rules():
    # the request above its own limit is the user's error with or without the LimitRange
    text = docs(
        limit_range("default: {memory: 1Gi}"), deployment("{requests: {cpu: '4'}, limits: {cpu: '2', memory: 1Gi}}")
    )
    assert findings_of("limit-range-violation", text) == []


def test_a_requests_quota_is_met_by_limits_alone():
    # API defaulting: a container that states only limits requests as much
    q = quota("{requests.cpu: '64', requests.memory: 256Gi}")
    assert (
        findings_of(
            "resource-quota-exceeded", docs(q, deployment("{limits: {cpu: '4', memory: 8Gi, nvidia.com/gpu: 1}}"))
        )
        == []
    )


def test_explain_shows_the_namespace_quota_arithmetic(tmp_path):
    import json

    from conftest import DATA, run_cli

    path = tmp_path / "inference.yaml"
    path.write_text(
        docs(
            quota("{requests.nvidia.com/gpu: 4, limits.memory: 64Gi}"),
            deployment("{limits: {nvidia.com/gpu: 2, memory: 16Gi}}", replicas=3),
        )
    )
    result = run_cli(
        "explain",
        str(path),
        "--inventory",
        str(DATA / "racks"),
        "--format",
        "json",
        "--object",
        "Deployment/ml/inference",
    )
    (explanation,) = json.loads(result.stdout)["explanations"]
    step = explanation["steps"][0]
    assert step["title"] == "Admission (queue and quota)" and step["status"] == "FAIL"
    assert step["lines"] == [
        "ResourceQuota gpu-quota: limits.memory 48Gi for 3 pod(s) of 64Gi hard",
        "ResourceQuota gpu-quota: requests.nvidia.com/gpu 6 for 3 pod(s) of 4 hard - above it",
    ]


# ----------------------------------------------------------------- quota scopes (pods.go podMatchesScopeFunc)


def priority_quota(hard: str, operator: str = "In", values: str = "[high]", name: str = "pods-high") -> str:
    """The Kubernetes docs' "Resource Quota per priority class" object."""
    selector = f"    - operator: {operator}\n      scopeName: PriorityClass\n"
    if values:
        selector += f"      values: {values}\n"
    return quota(hard, name=name) + "  scopeSelector:\n    matchExpressions:\n" + selector


def with_priority(text: str, priority_class: str) -> str:
    return text.replace("      containers:\n", f"      priorityClassName: {priority_class}\n      containers:\n", 1)


def test_a_priority_class_quota_covers_only_pods_of_that_class():
    q = priority_quota("{requests.nvidia.com/gpu: 4, pods: '10'}")
    three = deployment("{limits: {nvidia.com/gpu: 2}}", replicas=3)
    (finding,) = findings_of("resource-quota-exceeded", docs(q, with_priority(three, "high")))
    assert finding.severity == "error"
    assert "\nResourceQuota pods-high, scopes PriorityClass In (high): the ReplicaSet creates 2" in finding.message
    assert findings_of("resource-quota-exceeded", docs(q, with_priority(three, "low"))) == []
    # exactly at the hard limit, in the class: admitted
    two = deployment("{limits: {nvidia.com/gpu: 2}}", replicas=2)
    assert findings_of("resource-quota-exceeded", docs(q, with_priority(two, "high"))) == []


def test_a_pod_without_a_priority_class_is_not_judged_against_a_priority_quota():
    # the Priority admission plugin gives it the global default PriorityClass's name first, if one exists
    three = deployment("{limits: {nvidia.com/gpu: 2}}", replicas=3)
    for operator, values in (("In", "[high]"), ("NotIn", "[low]"), ("Exists", "")):
        q = priority_quota("{requests.nvidia.com/gpu: 4}", operator, values)
        assert findings_of("resource-quota-exceeded", docs(q, three)) == [], operator


def test_not_in_and_exists_priority_class_quotas():
    three = deployment("{limits: {nvidia.com/gpu: 2}}", replicas=3)
    not_in = priority_quota("{requests.nvidia.com/gpu: 4}", "NotIn", "[low]")
    assert len(findings_of("resource-quota-exceeded", docs(not_in, with_priority(three, "high")))) == 1
    assert findings_of("resource-quota-exceeded", docs(not_in, with_priority(three, "low"))) == []
    exists = priority_quota("{requests.nvidia.com/gpu: 4}", "Exists", "")
    assert len(findings_of("resource-quota-exceeded", docs(exists, with_priority(three, "batch")))) == 1


def test_a_pod_asking_only_for_gpus_is_best_effort():
    # QoS counts cpu and memory only: a GPU-only pod is BestEffort, outside a NotBestEffort quota
    not_best_effort = quota("{requests.nvidia.com/gpu: 1}").replace("  hard:", "  scopes: [NotBestEffort]\n  hard:")
    assert (
        findings_of("resource-quota-exceeded", docs(not_best_effort, deployment("{limits: {nvidia.com/gpu: 8}}"))) == []
    )
    (finding,) = findings_of(
        "resource-quota-exceeded",
        docs(not_best_effort, deployment("{requests: {cpu: '4'}, limits: {nvidia.com/gpu: 8}}")),
    )
    assert "exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=8" in finding.message
    # a LimitRange default cpu makes it Burstable, so the quota covers it
    defaulted = docs(
        limit_range("defaultRequest: {cpu: 500m}"), not_best_effort, deployment("{limits: {nvidia.com/gpu: 8}}")
    )
    assert len(findings_of("resource-quota-exceeded", defaulted)) == 1
    best_effort = quota("{pods: '1'}").replace("  hard:", "  scopes: [BestEffort]\n  hard:")
    assert (
        len(
            findings_of(
                "resource-quota-exceeded", docs(best_effort, deployment("{limits: {nvidia.com/gpu: 1}}", replicas=2))
            )
        )
        == 1
    )


def test_a_terminating_quota_covers_pods_with_an_active_deadline():
    terminating = quota("{requests.nvidia.com/gpu: 1}").replace("  hard:", "  scopes: [Terminating]\n  hard:")
    deadline = deployment("{limits: {nvidia.com/gpu: 8}}").replace(
        "      containers:\n", "      activeDeadlineSeconds: 3600\n      containers:\n"
    )
    (finding,) = findings_of("resource-quota-exceeded", docs(terminating, deadline))
    assert finding.message.startswith("no pod of this template can be created in the namespace\nexceeded quota")
    not_terminating = terminating.replace("[Terminating]", "[NotTerminating]")
    assert findings_of("resource-quota-exceeded", docs(not_terminating, deadline)) == []


def test_scopes_are_all_required_and_unknown_ones_are_not_judged():
    from gpulint.kube.queueing.namespace import Quota

    data = {
        "metadata": {"name": "q"},
        "spec": {
            "hard": {"pods": "1"},
            "scopes": ["NotTerminating"],
            "scopeSelector": {"matchExpressions": [{"scopeName": "CrossNamespacePodAffinity", "operator": "Exists"}]},
        },
    }
    cross = {
        "affinity": {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "namespaceSelector": {}, "labelSelector": {}}
                ]
            }
        }
    }
    assert Quota.of(data).applies_to(cross) is True
    assert Quota.of(data).applies_to({}) is False  # no cross-namespace term
    assert Quota.of(data).applies_to({**cross, "activeDeadlineSeconds": 0}) is False  # Terminating at 0
    odd = {"metadata": {"name": "q"}, "spec": {"scopeSelector": {"matchExpressions": [{"scopeName": "Future"}]}}}
    assert Quota.of(odd).applies_to({}) is None
    vac = {"metadata": {"name": "q"}, "spec": {"scopes": ["VolumeAttributesClass"]}}
    assert Quota.of(vac).applies_to({}) is False  # a claim scope: no pod is charged


# A platform repository's per-priority GPU budget (the Kubernetes docs' "Resource Quota per priority class"):
# the high-priority class gets 8 GPUs, everything else 2.
PER_PRIORITY = docs(
    priority_quota("{requests.nvidia.com/gpu: 8}", "In", "[high]", name="gpu-high"),
    priority_quota("{requests.nvidia.com/gpu: 2}", "NotIn", "[high]", name="gpu-rest"),
)


def priority_class(name: str, default: bool = False) -> str:
    return (
        f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: 1000\n"
        f"globalDefault: {str(default).lower()}\n"
    )


def test_a_per_priority_gpu_quota_charges_each_class_its_own_budget():
    three = deployment("{limits: {nvidia.com/gpu: 1}}", replicas=3)
    (finding,) = findings_of("resource-quota-exceeded", docs(PER_PRIORITY, with_priority(three, "low")))
    assert "ResourceQuota gpu-rest, scopes PriorityClass NotIn (high): the ReplicaSet creates 2" in finding.message
    assert "gpu-high" not in finding.message
    # the same pods in the high class are charged gpu-high only, and fit it
    assert findings_of("resource-quota-exceeded", docs(PER_PRIORITY, with_priority(three, "high"))) == []


def test_does_not_exist_covers_only_pods_without_a_priority_class():
    q = priority_quota("{requests.nvidia.com/gpu: 1}", "DoesNotExist", "", name="gpu-unclassed")
    two = deployment("{limits: {nvidia.com/gpu: 2}}")
    assert findings_of("resource-quota-exceeded", docs(q, with_priority(two, "high"))) == []
    # no class written and none known to be the default: not judged (the cluster may have a global default)
    assert findings_of("resource-quota-exceeded", docs(q, two)) == []


def test_a_pod_without_a_class_gets_the_global_default_before_the_quota_sees_it():
    three = deployment("{limits: {nvidia.com/gpu: 1}}", replicas=3)
    # the repository's PriorityClass "low" is the global default: the pods are charged as "low"
    (finding,) = findings_of("resource-quota-exceeded", docs(PER_PRIORITY, priority_class("low", True), three))
    assert "ResourceQuota gpu-rest, scopes PriorityClass NotIn (high)" in finding.message
    # "high" the default: gpu-high charges them, and they fit it
    assert findings_of("resource-quota-exceeded", docs(PER_PRIORITY, priority_class("high", True), three)) == []


def test_with_every_priority_class_known_and_none_the_default_a_pod_has_no_class(tmp_path):
    three = deployment("{limits: {nvidia.com/gpu: 1}}", replicas=3)
    unclassed = priority_quota("{requests.nvidia.com/gpu: 2}", "DoesNotExist", "", name="gpu-unclassed")
    classes = tmp_path / "priorityclasses.yaml"  # `kubectl get priorityclasses -o yaml`: no global default
    classes.write_text(docs(priority_class("high"), priority_class("low")))
    (finding,) = findings_of("resource-quota-exceeded", docs(unclassed, three), inventory=classes)
    assert "ResourceQuota gpu-unclassed, scopes PriorityClass DoesNotExist" in finding.message
    (finding,) = findings_of("resource-quota-exceeded", docs(PER_PRIORITY, three), inventory=classes)
    assert "ResourceQuota gpu-rest" in finding.message  # NotIn matches a pod without a class
    # declared complete in the repository instead of listed: the same
    config = {**ONE_CLUSTER, "complete": ["PriorityClass"]}
    found = findings_of("resource-quota-exceeded", docs(unclassed, priority_class("high"), three), config=config)
    assert len(found) == 1
    # without either, a pod without a class is not judged against a PriorityClass scope
    assert findings_of("resource-quota-exceeded", docs(unclassed, priority_class("high"), three)) == []


def test_a_best_effort_quota_next_to_a_gpu_pod():
    # A namespace that allows no BestEffort pods (pods: 0) - a GPU pod with no cpu or memory is BestEffort
    # and refused; the same pod stating a cpu request is Burstable and not covered.
    no_best_effort = quota("{pods: '0'}", name="no-best-effort").replace("  hard:", "  scopes: [BestEffort]\n  hard:")
    (finding,) = findings_of(
        "resource-quota-exceeded", docs(no_best_effort, deployment("{limits: {nvidia.com/gpu: 1}}"))
    )
    assert "exceeded quota: no-best-effort, requested: pods=1, used: pods=0, limited: pods=0" in finding.message
    burstable = deployment("{requests: {cpu: '2'}, limits: {nvidia.com/gpu: 1}}")
    assert findings_of("resource-quota-exceeded", docs(no_best_effort, burstable)) == []


def test_priority_class_operators_as_label_selectors():
    from gpulint.kube.queueing.namespace import Quota

    def scoped(operator: str, values: list[str]) -> Quota:
        expression = {"scopeName": "PriorityClass", "operator": operator, "values": values}
        return Quota.of({"metadata": {"name": "q"}, "spec": {"scopeSelector": {"matchExpressions": [expression]}}})

    named = {"priorityClassName": "high"}
    table = [  # (operator, values, a pod of class high, a pod of no class)
        ("In", ["high"], True, False),
        ("NotIn", ["high"], False, True),
        ("NotIn", ["low"], True, True),
        ("Exists", [], True, False),
        ("DoesNotExist", [], False, True),
    ]
    for operator, values, high, none in table:
        assert scoped(operator, values).applies_to(named) is high, operator
        assert scoped(operator, values).applies_to({}, "") is none, operator
        assert scoped(operator, values).applies_to({}) is None, operator  # the default class not known
    assert scoped("In", ["high"]).applies_to({}, "high") is True  # the global default's name


def test_explain_names_the_scoped_quotas_that_do_not_charge_the_pods(tmp_path):
    import json

    from conftest import DATA, run_cli

    path = tmp_path / "inference.yaml"
    three = deployment("{limits: {nvidia.com/gpu: 1}}", replicas=3)
    path.write_text(docs(PER_PRIORITY, with_priority(three, "high")))
    args = ("--inventory", str(DATA / "racks"), "--format", "json", "--object", "Deployment/ml/inference")
    result = run_cli("explain", str(path), *args)
    step = json.loads(result.stdout)["explanations"][0]["steps"][0]
    assert step["status"] == "ok"
    assert step["lines"] == [
        "ResourceQuota gpu-rest (scopes PriorityClass NotIn (high)): does not cover the pods",
        "ResourceQuota gpu-high: requests.nvidia.com/gpu 3 for 3 pod(s) of 8 hard",
    ]
    path.write_text(docs(PER_PRIORITY, three))  # no class, none known to be the default
    step = json.loads(run_cli("explain", str(path), *args).stdout)["explanations"][0]["steps"][0]
    assert (
        "ResourceQuota gpu-high (scopes PriorityClass In (high)): not judged: the pods' PriorityClass is not known"
        in (step["lines"])
    )
