"""scheduling.k8s.io Workloads, PodGroups and CompositePodGroups with what the 1.37 API server says when they are created, as the
oracle's gang_validate family answered (docs/oracle.md): tests/unit/test_scheduling_validation.py checks
gpulint's api-rejected says it, tests/upstream/test_oracle.py that Kubernetes still does. The shapes are
JobSet's (jobset.x-k8s.io controllerRef, a gang of workers sharing a claim template) and the DRA example
driver's (PodGroups sharing a ResourceClaimTemplate)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

ALL_ON = {
    "GenericWorkload": True,
    "TopologyAwareWorkloadScheduling": True,
    "DRAWorkloadResourceClaims": True,
    "PodGroupPreemptionPolicy": True,
    "CompositePodGroup": True,
}
ALL_OFF = {**dict.fromkeys(ALL_ON, False), "GenericWorkload": True}


@dataclass(frozen=True)
class GangObject:
    name: str
    text: str
    gates: dict[str, bool] | None  # None: the configuration states none
    errors: tuple[str, ...]  # api-rejected's: each the start of the API server's field error

    @property
    def settings(self) -> list[dict[str, bool]]:
        """The clusters the configuration may describe: its gates, those it leaves unstated all on, then all
        off (api-rejected reports the errors of both)."""
        stated = self.gates or {}
        if all(gate in stated for gate in ALL_ON):
            return [stated]
        return [{**ALL_ON, **stated}, {**ALL_OFF, **stated}]


def workload(templates: str, head: str = "", version: str = "v1beta1", name: str = "training-workload") -> str:
    body = textwrap.indent(textwrap.dedent(templates).strip("\n"), "  ")
    return (
        f"apiVersion: scheduling.k8s.io/{version}\nkind: Workload\n"
        f"metadata: {{name: {name}, namespace: default}}\n"
        f"spec:\n{textwrap.indent(textwrap.dedent(head), '  ')}{body}\n"
    )


def pod_group(spec: str, version: str = "v1beta1") -> str:
    body = textwrap.indent(textwrap.dedent(spec).strip("\n"), "  ")
    return (
        f"apiVersion: scheduling.k8s.io/{version}\nkind: PodGroup\n"
        f"metadata: {{name: group-1, namespace: default}}\nspec:\n{body}\n"
    )


def composite_pod_group(spec: str, name: str = "lws-train-0") -> str:
    body = textwrap.indent(textwrap.dedent(spec).strip("\n"), "  ")
    return (
        "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\n"
        f"metadata: {{name: {name}, namespace: default}}\nspec:\n{body}\n"
    )


# what a LeaderWorkerSet-like controller creates from a Workload's composite template: one replica, its groups
# gang-scheduled in one rack
LWS_REPLICA = """
workloadRef: {workloadName: lws-train, templateName: replica}
schedulingPolicy:
  gang: {minGroupCount: 2}
schedulingConstraints:
  topology:
  - key: example.com/rack
disruptionMode: {all: {}}
priorityClassName: high-priority
priority: 1000
"""
JOBSET_TEMPLATES = """
podGroupTemplates:
- name: workers
  schedulingPolicy:
    gang:
      minCount: 6
  resourceClaims:
  - name: shared-gpu
    resourceClaimTemplateName: gpu-claim-template
"""
CONTROLLER = "controllerRef: {apiGroup: jobset.x-k8s.io, kind: JobSet, name: training-job}\n"
DRA_POD_GROUP = """
schedulingPolicy: {gang: {minCount: 2}}
resourceClaims:
- {name: gpu, resourceClaimTemplateName: one-gpu}
"""
GATED_POD_GROUP = """
schedulingPolicy: {gang: {minCount: 2}}
schedulingConstraints:
  topology: [{key: topology.kubernetes.io/zone}, {key: rack}]
resourceClaims: [{name: a, resourceClaimName: a}, {name: b, resourceClaimName: b},
  {name: c, resourceClaimName: c}, {name: d, resourceClaimName: d}, {name: e, resourceClaimName: e}]
preemptionPolicy: never
"""
COMPOSITE_ONLY = """
compositePodGroupTemplates:
- name: replica
  schedulingPolicy: {basic: {}}
  podGroupTemplates:
  - name: workers
    schedulingPolicy: {gang: {minCount: 8}}
"""
TOO_DEEP = """
compositePodGroupTemplates:
- name: a
  schedulingPolicy: {basic: {}}
  compositePodGroupTemplates:
  - name: b
    schedulingPolicy: {basic: {}}
    compositePodGroupTemplates:
    - name: c
      schedulingPolicy: {basic: {}}
      compositePodGroupTemplates:
      - name: d
        schedulingPolicy: {basic: {}}
        podGroupTemplates:
        - {name: workers, schedulingPolicy: {basic: {}}}
"""
NULL_NAMED_COMPOSITE = """
podGroupTemplates:
- {name: workers, schedulingPolicy: {gang: {minCount: 4}}}
compositePodGroupTemplates:
- name: null
  schedulingPolicy: {basic: {}}
  podGroupTemplates:
  - {name: inner, schedulingPolicy: {basic: {}}}
"""
NO_TEMPLATES = 'spec: Invalid value: "": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`'
NINE = "podGroupTemplates:\n" + "\n".join(f"- {{name: w{i}, schedulingPolicy: {{basic: {{}}}}}}" for i in range(9))

CASES: tuple[GangObject, ...] = (
    *(
        GangObject(f"jobset {version} {label}", workload(JOBSET_TEMPLATES, CONTROLLER, version), gates, ())
        for version in ("v1beta1", "v1alpha3")
        for label, gates in (("gates unstated", None), ("gates on", ALL_ON), ("gates off", ALL_OFF))
    ),
    *(
        GangObject(f"dra driver pod group {label}", pod_group(DRA_POD_GROUP), gates, ())
        for label, gates in (("gates unstated", None), ("gates on", ALL_ON), ("gates off", ALL_OFF))
    ),
    GangObject(
        "basic and gang, and none",
        workload("""
        podGroupTemplates:
        - name: workers
          schedulingPolicy: {basic: {}, gang: {minCount: 0}}
        - name: leader
          schedulingPolicy: {}
        """),
        ALL_ON,
        (
            'spec.podGroupTemplates[0].schedulingPolicy: Invalid value: "{basic, gang}": '
            "must specify exactly one of: `basic`, `gang`",
            "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Required value",
            'spec.podGroupTemplates[1].schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`',
        ),
    ),
    GangObject("no templates", workload("podGroupTemplates: []"), ALL_ON, (NO_TEMPLATES,)),
    GangObject(
        "nine templates", workload(NINE), ALL_ON, ("spec.podGroupTemplates: Too many: 9: must have at most 8 items",)
    ),
    GangObject(
        "a template name and priorities",
        workload("""
        podGroupTemplates:
        - {name: Workers, schedulingPolicy: {basic: {}}, priority: 10}
        - {name: leader, schedulingPolicy: {basic: {}}, priority: 2000000000}
        """),
        ALL_ON,
        (
            'spec.podGroupTemplates[0].name: Invalid value: "Workers": a lowercase RFC 1123 label',
            "spec.podGroupTemplates[1].priority: Invalid value: 2000000000: must be less than or equal to 1000000000",
            "spec: Invalid value: null: detected multiple priority configurations",
        ),
    ),
    GangObject(
        "gated fields on",
        pod_group(GATED_POD_GROUP),
        ALL_ON,
        (
            'spec.preemptionPolicy: Unsupported value: "never": supported values: "Never", "PreemptLowerPriority"',
            "spec.resourceClaims: Too many: 5: must have at most 4 items",
            "spec.schedulingConstraints.topology: Too many: 2: must have at most 1 item",
        ),
    ),
    GangObject("gated fields off: dropped", pod_group(GATED_POD_GROUP), ALL_OFF, ()),
    GangObject("gated fields, gates unstated", pod_group(GATED_POD_GROUP), None, ()),
    GangObject("composite templates alone, gate on", workload(COMPOSITE_ONLY), ALL_ON, ()),
    GangObject("composite templates alone, gate off", workload(COMPOSITE_ONLY), ALL_OFF, (NO_TEMPLATES,)),
    GangObject("composite templates alone, gate unstated", workload(COMPOSITE_ONLY), {"GenericWorkload": True}, ()),
    GangObject(
        "composites four deep",
        workload(TOO_DEEP),
        ALL_ON,
        ("spec.compositePodGroupTemplates[0]: Invalid value: null: maximum template hierarchy depth is 4",),
    ),
    GangObject(
        "a composite named as a template, without children",
        workload("""
        podGroupTemplates:
        - {name: workers, schedulingPolicy: {basic: {}}}
        compositePodGroupTemplates:
        - name: workers
          schedulingPolicy: {basic: {}}
        """),
        ALL_ON,
        (
            'spec.compositePodGroupTemplates[0].name: Duplicate value: "workers"',
            'spec.compositePodGroupTemplates[0]: Invalid value: "workers": '
            "must have at least one child PodGroupTemplate or CompositePodGroupTemplate",
            'spec: Invalid value: "{podGroupTemplates, compositePodGroupTemplates}": '
            "must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates`",
        ),
    ),
    GangObject(
        "a parent composite without a workload",
        pod_group("parentCompositePodGroupName: replica-0\nschedulingPolicy: {basic: {}}"),
        ALL_ON,
        ("spec.workloadRef: Required value: must be set when parentCompositePodGroupName is set",),
    ),
    GangObject(
        "a parent composite without its gate: dropped",
        pod_group("parentCompositePodGroupName: replica-0\nschedulingPolicy: {basic: {}}"),
        ALL_OFF,
        (),
    ),
    GangObject(
        "workload reference names",
        pod_group("workloadRef: {workloadName: Train, templateName: ''}\nschedulingPolicy: {basic: {}}"),
        None,
        ("spec.workloadRef.templateName: Required value", 'spec.workloadRef.workloadName: Invalid value: "Train"'),
    ),
    GangObject("a null name in composites the gate drops", workload(NULL_NAMED_COMPOSITE), ALL_OFF, ()),
    GangObject(
        "a null name in composites the gate keeps",
        workload(NULL_NAMED_COMPOSITE),
        ALL_ON,
        (
            "spec.compositePodGroupTemplates[0].name: Required value",
            'spec: Invalid value: "{podGroupTemplates, compositePodGroupTemplates}": must specify exactly one of',
        ),
    ),
    GangObject(
        "the object's name",
        workload(JOBSET_TEMPLATES, name="Training"),
        ALL_ON,
        ('metadata.name: Invalid value: "Training": a lowercase RFC 1123 subdomain',),
    ),
    # CompositePodGroup (v1alpha3, 1.37): the oracle's family found gpulint accepted every one Kubernetes refuses
    GangObject("an lws replica", composite_pod_group(LWS_REPLICA), ALL_ON, ()),
    GangObject(
        "an lws replica, preemption policy without its gate: dropped",
        composite_pod_group(LWS_REPLICA + "preemptionPolicy: never\n"),
        {**ALL_ON, "PodGroupPreemptionPolicy": False},
        (),
    ),
    GangObject(
        "an lws replica, preemption policy with its gate",
        composite_pod_group(LWS_REPLICA + "preemptionPolicy: never\n"),
        ALL_ON,
        ('spec.preemptionPolicy: Unsupported value: "never"',),
    ),
    GangObject(
        "a composite pod group without its workload and policy",
        composite_pod_group("parentCompositePodGroupName: Outer\nschedulingPolicy: {}\ndisruptionMode: {}"),
        ALL_ON,
        (
            "spec.workloadRef: Required value",
            'spec.parentCompositePodGroupName: Invalid value: "Outer"',
            "spec.schedulingPolicy: Invalid value",
            "spec.disruptionMode: Invalid value",
        ),
    ),
    GangObject(
        "a composite pod group's counts and constraints",
        composite_pod_group(
            """
            workloadRef: {workloadName: lws-train, templateName: Replica}
            schedulingPolicy: {gang: {minGroupCount: 0}}
            schedulingConstraints: {topology: [{key: example.com/rack}, {key: topology.kubernetes.io/zone}]}
            priority: 1000000001
            """,
            name="Replica-0",
        ),
        ALL_ON,
        (
            'metadata.name: Invalid value: "Replica-0"',
            'spec.workloadRef.templateName: Invalid value: "Replica"',
            "spec.schedulingPolicy.gang.minGroupCount: Required value",
            "spec.schedulingConstraints.topology: Too many: 2",
            "spec.priority: Invalid value: 1000000001",
        ),
    ),
)
