"""The objects of one file that the checks of another file read.

Forked workers (``--jobs``) and the repository index (a pre-commit run of a few files) hand the
checks of each file only these objects from the other files, so the table must name every kind
the resolver and the checks look up in the linted set: a kind left out makes a split run answer
differently from one process over the whole tree (a queue "not found", a template missing). The
table, not each caller, decides; tests/test_cross_file.py records what a run looks up and holds
this table to it.
"""

from __future__ import annotations

from gpulint.kube.fields import mapping, sequence
from gpulint.kube.gangs.members import group_references
from gpulint.lint.inventory import GANG_OBJECT_KINDS, WORKLOAD_RUNTIME_KINDS
from gpulint.lint.kinds import crossing_kinds
from gpulint.lint.linted_set import LintedObject
from gpulint.lint.resolver import DRA_GROUP

# Every object of these (group, kind): what the resolver and the checks read by kind or by name
# (the kind table's crosses_files column).
CROSS_FILE_KINDS: frozenset[tuple[str, str]] = crossing_kinds()
# Kinds of which only some objects cross, decided by crosses_files (workloads that start a scheduler).
CROSS_FILE_BY_CONTENT: frozenset[tuple[str, str]] = frozenset({("apps", "Deployment"), ("apps", "StatefulSet")})
# Kinds crossing in any API group (several projects define them).
CROSS_FILE_ANY_GROUP = frozenset({*GANG_OBJECT_KINDS, *WORKLOAD_RUNTIME_KINDS})
SCHEDULER_FLAG = "--scheduler-name="


def crosses_files(obj: LintedObject) -> bool:
    """Whether checks of other files may read ``obj``: the kinds above, every DRA object, and the
    workloads that join a group, use a claim template (a ComputeDomain counts its users) or start a
    scheduler by flag."""
    ref = obj.ref
    if ref.group == DRA_GROUP or (ref.group, ref.kind) in CROSS_FILE_KINDS or ref.kind in CROSS_FILE_ANY_GROUP:
        return True
    for site in obj.facts.sites():
        if group_references(obj.facts, site, ref.namespace):
            return True
        if any(mapping(entry).get("resourceClaimTemplateName") for entry in sequence(site.spec.get("resourceClaims"))):
            return True
        if ref.group == "apps" and _starts_a_scheduler(site.spec):
            return True
    return False


def _starts_a_scheduler(spec: dict) -> bool:
    return any(
        isinstance(arg, str) and arg.startswith(SCHEDULER_FLAG)
        for container in sequence(spec.get("containers"))
        for arg in (*sequence(mapping(container).get("args")), *sequence(mapping(container).get("command")))
    )
