"""An Argo Workflows semaphore's limit, read where Argo reads it: the ConfigMap key a synchronization names.

Source: argoproj/argo-workflows v3.6 workflow/sync (a semaphore's limit is the value under
``configMapKeyRef.key`` of the ConfigMap ``configMapKeyRef.name`` in the workflow's namespace, or in the
semaphore's ``namespace``; a key the ConfigMap lacks fails the lock: "Sync configuration key '%s' not found in
ConfigMap", and the node or workflow errors, argo-workflows#4874); pkg/apis/workflow/
v1alpha1 (``synchronization.semaphore`` and, v3.6 on, ``synchronization.semaphores``, on the workflow spec and on
each template; a CronWorkflow's spec is under ``workflowSpec``). A ClusterWorkflowTemplate's namespace is its
workflow's, unknown here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.kube.fields import dig, mapping, sequence, text
from gpulint.kube.refs import Path
from gpulint.kube.typos import typo_of
from gpulint.lint.inputs.objects import KubeObject
from gpulint.lint.verdicts.queues import Problem
from gpulint.lint.world.resolver import Resolver

GROUP = "argoproj.io"
SPECS: dict[str, Path] = {
    "Workflow": ("spec",),
    "WorkflowTemplate": ("spec",),
    "CronWorkflow": ("spec", "workflowSpec"),
}
FILE_KEY_SUFFIXES = (".yaml", ".yml", ".json", ".properties", ".conf", ".txt", ".env")


def _synchronizations(spec: dict[str, Any], at: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    yield (*at, "synchronization"), mapping(spec.get("synchronization"))
    for index, template in enumerate(sequence(spec.get("templates"))):
        yield (*at, "templates", index, "synchronization"), mapping(mapping(template).get("synchronization"))


def _semaphores(sync: dict[str, Any], at: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    if isinstance(sync.get("semaphore"), dict):
        yield (*at, "semaphore"), sync["semaphore"]
    for index, semaphore in enumerate(sequence(sync.get("semaphores"))):
        if isinstance(semaphore, dict):
            yield (*at, "semaphores", index), semaphore


def semaphore_problems(obj: KubeObject, resolver: Resolver) -> list[Problem]:
    """Each semaphore whose ConfigMap the linted files (every copy alike) or the inventory hold without its key."""
    spec_path = SPECS.get(obj.kind)
    if obj.ref.group != GROUP or spec_path is None:
        return []
    spec = mapping(dig(obj.data, *spec_path))
    found: list[Problem] = []
    for sync_path, sync in _synchronizations(spec, spec_path):
        for at, semaphore in _semaphores(sync, sync_path):
            ref = mapping(semaphore.get("configMapKeyRef"))
            name, key = text(ref.get("name")), text(ref.get("key"))
            namespace = text(semaphore.get("namespace")) or obj.ref.namespace
            if not name or not key or not namespace:
                continue
            keys = resolver.agreed_keys("ConfigMap", namespace, name)
            if keys is None or key in keys:
                continue
            close = typo_of(key, sorted(keys))
            notes = [f"did you mean '{close}'?" if close else f"its keys: {', '.join(sorted(keys)[:8]) or 'none'}"]
            if len(keys) == 1 and next(iter(keys)).endswith(FILE_KEY_SUFFIXES):
                notes.append(
                    "kubectl create configmap --from-file keeps the whole file under one key, the file's name: write "
                    f'each lock as its own key ({key}: "<limit>")'
                )
            notes.append("Argo reads the semaphore's limit, the number of holders at once, from that key")
            found.append(
                Problem(
                    (*at, "configMapKeyRef", "key"),
                    f"Argo cannot take the semaphore: Sync configuration key '{key}' not found in ConfigMap "
                    f"{namespace}/{name}, so the {'workflow' if 'templates' not in sync_path else 'step'} errors",
                    True,
                    tuple(notes),
                )
            )
    return found
