"""training-runtime-unknown: a TrainJob's runtimeRef names a (Cluster)TrainingRuntime that does not exist."""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.kube import trainjob
from gpulint.kube.fields import dig, mapping
from gpulint.kube.typos import typo_of
from gpulint.lint.checks import CheckContext
from gpulint.lint.findings import Diagnostic, Severity
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.rule_spec import RuleSpec
from gpulint.lint.world.kinds import unproven

SPEC = RuleSpec("training-runtime-unknown", Severity.ERROR, kinds=frozenset({"TrainJob"}))
RULE_ID = SPEC.id
PATH = ("spec", "runtimeRef", "name")
# The runtimes Kubeflow Trainer's manifests install (manifests/base/runtimes): a cluster running the
# Trainer has them unless its operator removed them.
SHIPPED = frozenset(
    {
        "torch-distributed",
        "torch-distributed-with-cache",
        "deepspeed-distributed",
        "mlx-distributed",
        "jax-distributed",
        "xgboost-distributed",
        "torchtune-llama3.2-1b",
        "torchtune-llama3.2-3b",
        "torchtune-qwen2.5-1.5b",
    }
)


def check(obj: KubeObject, ctx: CheckContext) -> Iterator[Diagnostic]:
    ref = trainjob.runtime_ref(obj.data)
    if obj.ref.group != trainjob.GROUP or ref is None or ref.group != trainjob.GROUP:
        return
    resolver = ctx.resolver
    if resolver.workload_runtime(ref.group, ref.kind, obj.ref.namespace, ref.name) is not None:
        return
    defined = resolver.workload_runtime_names(ref.group, ref.kind)
    # one TrainJob reviewed alone may come with its runtime in the same apply: only a whole set proves
    complete = resolver.reference_proven_absent and resolver.catalog_complete(ref.kind, obj.document.path)
    plural = ref.kind.lower() + "s"
    if ref.name in defined:  # a TrainingRuntime of another namespace
        yield Diagnostic(
            RULE_ID,
            PATH,
            f"{ref.kind} '{ref.name}' is defined only in another namespace: a TrainJob uses the TrainingRuntime of "
            f"its own namespace ('{obj.ref.namespace}'), or a ClusterTrainingRuntime (runtimeRef.kind)",
            notes=() if complete else (unproven(ref.kind),),
            severity=Severity.WARNING if complete else Severity.INFO,
            pinned=not complete,
        )
        return
    known = sorted(defined | (SHIPPED if ref.kind == "ClusterTrainingRuntime" else set()))
    close = typo_of(ref.name, known)
    hint = f"; did you mean '{close}'?" if close else ""
    if complete:
        word = ref.kind[0].lower() + ref.kind[1:]
        yield Diagnostic(
            RULE_ID,
            PATH,
            f"{ref.kind} '{ref.name}' does not exist: the Trainer webhook rejects the TrainJob{hint}",
            notes=(
                f"specified {word} must be created before the TrainJob is created",
                f"{plural}.{trainjob.GROUP} in the cluster: {', '.join(known) or 'none'}",
                *_namespaced_instead(obj, ctx, ref),
            ),
        )
    elif ref.kind == "ClusterTrainingRuntime" and ref.name in SHIPPED:
        return  # the Trainer's manifests install it; its pods are not known here, and that proves nothing
    elif close:
        yield Diagnostic(
            RULE_ID,
            PATH,
            f"{ref.kind} '{ref.name}' is neither in the linted files nor in the inventory{hint}",
            severity=Severity.INFO,
            pinned=True,  # made elsewhere (a chart, an operator) or a typo: no verdict either way
            notes=(unproven(ref.kind),),
        )
    else:
        yield Diagnostic(
            RULE_ID,
            PATH,
            f"the pods of TrainJobs using {ref.kind} '{ref.name}' were not checked: the runtime is neither in the "
            "linted files nor in the inventory",
            notes=(f"add `kubectl get {plural} -o yaml` to the inventory",),
            severity=Severity.INFO,
            run_note=True,
        )


def _namespaced_instead(obj: KubeObject, ctx: CheckContext, ref: trainjob.RuntimeRef) -> tuple[str, ...]:
    """A TrainingRuntime of the name in the TrainJob's namespace, while runtimeRef says (or defaults to) the
    cluster's kind: the CRD defaults runtimeRef.kind to ClusterTrainingRuntime (kubeflow/sdk#536)."""
    if ref.kind != "ClusterTrainingRuntime":
        return ()
    if ctx.resolver.workload_runtime(ref.group, "TrainingRuntime", obj.ref.namespace, ref.name) is None:
        return ()
    written = "says" if "kind" in mapping(dig(obj.data, "spec", "runtimeRef")) else "defaults to"
    return (
        f"a TrainingRuntime '{ref.name}' is in namespace '{obj.ref.namespace}', but runtimeRef.kind {written} "
        "ClusterTrainingRuntime: set kind: TrainingRuntime to use it",
    )
