"""The objects of one file that the checks of another file read.

Forked workers (``--jobs``) and the repository index (a pre-commit run of a few files) hand the
checks of each file only these objects from the other files, so the table must name every kind
the resolver and the checks look up in the linted set: a kind left out makes a split run answer
differently from one process over the whole tree (a queue "not found", a template missing). The
table, not each caller, decides; tests/unit/test_cross_file.py records what a run looks up and holds
this table to it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gpulint.kube.commandline import written_words
from gpulint.kube.fields import mapping, sequence
from gpulint.kube.gangs.members import COSCHEDULING_LABEL, KUEUE_GROUP_LABEL, VOLCANO_ANNOTATIONS, group_references
from gpulint.kube.held_pods import HELD_IN
from gpulint.kube.resources import is_extended
from gpulint.kube.workloads import TEMPLATE_SITES, containers
from gpulint.lint.inputs.chart_entries import REMOTE_CHARTS
from gpulint.lint.inputs.linted_set import LintedObject
from gpulint.lint.inputs.loader import BRACED_FILL_IN, DOC_START, PRINTF_VERB, TEMPLATE_OPENERS
from gpulint.lint.world.inventory import GANG_OBJECT_KINDS, WORKLOAD_RUNTIME_KINDS
from gpulint.lint.world.kinds import crossing_kinds
from gpulint.lint.world.resolver import DRA_GROUP

# Every object of these (group, kind): what the resolver and the checks read by kind or by name
# (the kind table's crosses_files column).
CROSS_FILE_KINDS: frozenset[tuple[str, str]] = crossing_kinds()
# Kinds of which only some objects cross, decided by crosses_files (workloads that start a scheduler).
CROSS_FILE_BY_CONTENT: frozenset[tuple[str, str]] = frozenset({("apps", "Deployment"), ("apps", "StatefulSet")})
# Kinds crossing in any API group (several projects define them).
CROSS_FILE_ANY_GROUP = frozenset({*GANG_OBJECT_KINDS, *WORKLOAD_RUNTIME_KINDS})
SCHEDULER_FLAG = "--scheduler-name="
# The workloads a CronJob of the same file may wait for (kept_of_file), and the words a document holding one has
_HOLDER_KINDS = ("Deployment", "StatefulSet")
_BESIDE_CRONJOB = re.compile("CronJob|Deployment|StatefulSet")
# The labels every Helm chart library puts on a release's objects: alike, they are one release of one chart.
# A Deployment or StatefulSet of a release or a render (LintedObject.render) holding devices crosses: the CronJob
# deployed with it may wait for them (lint/verdicts/holders.py).
RELEASE_LABELS = ("app.kubernetes.io/instance", "helm.sh/chart")


def crosses_files(obj: LintedObject) -> bool:
    """Whether checks of other files may read ``obj``: the kinds above, every DRA object, and the
    workloads that join a group, use a claim template (a ComputeDomain counts its users), start a
    scheduler by flag or hold devices as part of a Helm release or of a chart's or overlay's render."""
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
        if ref.group == "apps" and (obj.render or _released(obj)) and _holds_devices(site.spec):
            return True
    return False


def kept_of_file(
    objects: Sequence[LintedObject], crosses: Callable[[LintedObject], bool] = crosses_files
) -> list[LintedObject]:
    """The objects of one file that a split or streamed run keeps for the checks, which read only these of every
    file (their own file's too): those that cross files, and, in a file that holds a CronJob, its Deployments and
    StatefulSets that hold devices (a file applied whole is one unit: lint/verdicts/holders.py)."""
    beside_cronjob = any(obj.ref.group == "batch" and obj.ref.kind == "CronJob" for obj in objects)
    return [obj for obj in objects if crosses(obj) or (beside_cronjob and _holds_beside(obj))]


def _holds_beside(obj: LintedObject) -> bool:
    return (
        obj.ref.group == "apps"
        and obj.ref.kind in _HOLDER_KINDS
        and any(_holds_devices(site.spec) for site in obj.facts.sites())
    )


def _released(obj: LintedObject) -> bool:
    labels = mapping(mapping(obj.data.get("metadata")).get("labels"))
    return all(labels.get(key) for key in RELEASE_LABELS)


def _holds_devices(spec: dict) -> bool:
    return any(
        is_extended(str(name))
        for _, container in containers(spec)
        for part in ("limits", "requests")
        for name in mapping(mapping(container.get("resources")).get(part))
    )


def _starts_a_scheduler(spec: dict) -> bool:
    return any(
        isinstance(arg, str) and arg.startswith(SCHEDULER_FLAG)
        for container in sequence(spec.get("containers"))
        for arg in written_words(mapping(container)) or []
    )


# Text without which no object of a document crosses files: every name crosses_files reads (a kind, a group, a
# field, a label, an annotation, a flag). A name in a double-quoted scalar may be spelled with escapes, and a
# !!binary value is base64: documents with either are parsed whatever their text.
_CROSSING_WORDS = re.compile(
    "|".join(
        re.escape(word)
        for word in sorted(
            {
                *(kind for _, kind in CROSS_FILE_KINDS),
                *CROSS_FILE_ANY_GROUP,
                *REMOTE_CHARTS,  # a helmfile's or a Zarf package's release of one (inputs/chart_entries.py)
                DRA_GROUP,
                "resourceClaimTemplateName",
                SCHEDULER_FLAG,
                RELEASE_LABELS[1],
                "schedulingGroup",
                "workloadRef",
                COSCHEDULING_LABEL,
                KUEUE_GROUP_LABEL,
                *VOLCANO_ANNOTATIONS,
                "binary",
            },
            key=lambda word: (-len(word), word),
        )
    )
)
# What makes a file's parse depend on more than each document's own text (a directive, a document end marker
# that lets a bare document follow, a template the loader judges on the whole file): such files are parsed whole.
# A line break other than "\n" ("\r\n" aside) counts as a line for libyaml, not for the loader's resumption.
# Each is looked for first with `in` (a scan in C, ~10x the regex's speed), the regex only where one may be.
_WHOLE_FILE = re.compile(r"^(?:%|\.\.\.(?:[ \t]|$))|\r(?!\n)", re.MULTILINE)
_WHOLE_FILE_TEXT = ("{{", "\x85", "\u2028", "\u2029")
# The characters libyaml's reader refuses (reader.c, measured against PyYAML's CSafeLoader): it decodes 16 KiB
# of input ahead, so a file with one ends where it stands (a ReaderError) before the documents ahead of it are
# given, and blanking text would move it.
_UNREAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff]")


def _parsed_whole(text: str) -> bool:
    if any(word in text for word in _WHOLE_FILE_TEXT) or _UNREAD.search(text) is not None:
        return True
    may = text.startswith(("%", "...")) or "\n%" in text or "\n..." in text or "\r" in text
    return may and _WHOLE_FILE.search(text) is not None


# A document's top-level apiVersion and kind as most files write them: its schema is compiled before the
# checking workers fork (a guess: one missed or wrong costs each worker a compile of its own, never a finding).
_TOP_LEVEL = re.compile(
    r"^(apiVersion|kind):[ \t]*[\"']?([A-Za-z0-9][-A-Za-z0-9./]*)[\"']?[ \t\r]*(?:#.*)?$", re.MULTILINE
)


# A streamed run that carries pod outlines (lint/world/pod_outlines.py) parses every document that may hold a
# running pod template as well: one that names `containers` (a pod spec found by shape or by a CRD's schema has
# that key), or whose kind (any group) is one gpulint reads pod templates of by a table (workloads.TEMPLATE_SITES,
# whose views may build a container from other fields: KServe's model shorthand) or in its data (held pods), or
# whose kind is not read from its text.
_POD_WORD = "containers"
_POD_KINDS = frozenset({_POD_WORD, *(kind for _, kind in (*TEMPLATE_SITES, *HELD_IN))})  # the word: no kind read


@dataclass
class CrossingText:
    """A streamed run's first pass over one file: the text to parse for the objects other files read, each
    document that cannot hold one blanked (its lines kept, so that a broken document is resumed after as in
    the whole file's parse), and the apiVersion and kind of the blanked ones, as written. With ``pods``, the
    documents that may hold a running pod template are parsed too (their outlines cross)."""

    kinds: set[tuple[str, str]] = field(default_factory=set)
    pods: bool = False

    def __call__(self, text: str) -> str:
        if _parsed_whole(text):
            return text
        starts = [match.start() for match in DOC_START.finditer(text)]
        if not starts or starts[0] > 0:
            starts.insert(0, 0)  # the bare document before the first marker
        bounds = zip(starts, [*starts[1:], len(text)])
        # its Deployments and StatefulSets may be kept (kept_of_file); a kind may be spelt with escapes
        beside_cronjob = "CronJob" in text or _may_spell_with_escapes(text)
        return "".join(self._kept(text[start:end], beside_cronjob) for start, end in bounds)

    def _kept(self, document: str, beside_cronjob: bool) -> str:
        if may_cross(document) or (beside_cronjob and _BESIDE_CRONJOB.search(document)):
            return document
        if self.pods and _POD_WORD in document:
            return document
        found = {match[1]: match[2] for match in _TOP_LEVEL.finditer(document)}
        if self.pods and found.get("kind", _POD_WORD) in _POD_KINDS:
            return document
        if "kind" in found:
            self.kinds.add((found.get("apiVersion", ""), found["kind"]))
        return ("---" if DOC_START.match(document) else "") + "\n" * document.count("\n")


def _may_spell_with_escapes(text: str) -> bool:
    """A double-quoted YAML or JSON string may spell any word with escapes ("\\x43ronJob")."""
    return "\\" in text and '"' in text


def may_cross(document: str) -> bool:
    """Whether a document's text may hold an object that crosses files (crosses_files): it names what that
    reads, or spells a name in a way a search of the text does not see, or may stop the file's parse at a
    printf verb or a template statement (then none of the file's objects is read: loader._printf_verb_refused,
    loader._directive_refused)."""
    return bool(
        _CROSSING_WORDS.search(document)
        or _may_spell_with_escapes(document)
        or PRINTF_VERB.search(document)
        or any(opener in document for opener in TEMPLATE_OPENERS)
        or BRACED_FILL_IN.search(document)
    )
