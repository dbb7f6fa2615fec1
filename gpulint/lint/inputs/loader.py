"""Text -> located documents.

YAML is composed with libyaml (PyYAML's CSafeLoader), which keeps a start mark on
every node; the node tree is kept beside the plain data so a finding can be placed
on its exact line and column without paying for positions nobody asks about.

Values are read the way Kubernetes reads them (go-yaml, YAML 1.1: ``yes``/``on``
are booleans; keys become strings as in the YAML-to-JSON conversion), duplicate
keys are reported rather than silently dropped, and alias bombs are refused
rather than expanded.
"""

from __future__ import annotations

import gc
import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from gpulint.kube.embedded import compose_embedded
from gpulint.kube.placeholders import (
    KEY_EXPRESSION,
    KEY_PLACEHOLDER,
    MARKER_PLACEHOLDER,
    MARKER_WORDS,
    SHORT,
    SHORT_PLACEHOLDER,
    SUBSTITUTION,
    WORDED_PLACEHOLDER,
)
from gpulint.lint.findings import Fix, Path, Severity
from gpulint.lint.inputs.sed_words import FolderScripts

try:  # libyaml is present in every PyYAML wheel; the pure-Python loader is ~15x slower
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

# libyaml's composer asks the loader, in Python, for the tag of every node it makes (one it was not
# given): PyYAML's YAML 1.1 resolver (regular expressions per first character) was ~40% of composing a
# manifest. Without path resolvers its answer is the kind's default tag, except for a plain scalar
# (implicit[0]), whose tag depends on its value alone. Manifests repeat their keys and values, so the
# resolver's answers for plain scalars are remembered, keyed by the string (its hash is kept by the
# string; a key of (kind, value, implicit) was hashed on every node). Only short values are: a
# remembered value stays in memory (a ConfigMap's script would, for as long as a webhook runs), and a
# long one is seldom repeated.
_RESOLVER = Resolver()
_DEFAULT_TAGS = {
    ScalarNode: _RESOLVER.DEFAULT_SCALAR_TAG,
    SequenceNode: _RESOLVER.DEFAULT_SEQUENCE_TAG,
    MappingNode: _RESOLVER.DEFAULT_MAPPING_TAG,
}
_REMEMBERED_LENGTH = 128


@lru_cache(maxsize=4096)
def _plain_tag(value: str) -> str:
    return _RESOLVER.resolve(ScalarNode, value, (True, False))


def _tag(kind: type, value: str | None, implicit: Any) -> str:
    if kind is ScalarNode and implicit[0]:
        if len(value) <= _REMEMBERED_LENGTH:  # type: ignore[arg-type]  # a scalar's value is a str
            return _plain_tag(value)
        return _RESOLVER.resolve(kind, value, implicit)
    return _DEFAULT_TAGS[kind]


class _Loader(_SafeLoader):
    """PyYAML's safe loader, its tags resolved exactly as PyYAML's resolver resolves them."""

    resolve = staticmethod(_tag)

    # Path resolvers (add_path_resolver) are not used: the resolver's bookkeeping for them is a no-op.
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None


class _AnchorsRedefined(yaml.SafeLoader):
    """PyYAML's pure loader, an anchor defined again naming the later node as go-yaml reads it (gopkg.in/yaml.v3
    decode.go ``parser.anchor``: ``p.anchors[n.Anchor] = n``; YAML 1.2 §3.2.2.2 lets an alias refer to the most recent
    node of its anchor). libyaml's composer refuses it ("found duplicate anchor"): the file is read again with this."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if not isinstance(event, AliasEvent) and getattr(event, "anchor", None) in self.anchors:
            del self.anchors[event.anchor]
        return super().compose_node(parent, index)


MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 256
# An alias may be used freely; a document whose aliases expand it beyond both
# limits is an alias bomb ("billion laughs") and is refused, as go-yaml does.
MAX_EXPANDED_NODES = 200_000
MAX_EXPANSION_RATIO = 10

_TEMPLATED_MESSAGE = (
    "templated file: it contains Go/Helm template syntax ({{ ... }}) and is not plain YAML, so it was not checked"
)
_TEMPLATED_NOTES = (
    "lint its chart's directory (gpulint renders it with helm) or the rendered output: "
    "helm template RELEASE CHART | gpulint check -",
)
NOT_RENDERED = "not-rendered"
# A printf verb where a value goes (`name: %s`): a format string a program fills in before it is read (Go's
# fmt.Sprintf over a test's testdata, Python's % operator). YAML refuses '%' at the start of a value (it
# starts directives), so such a file fails to parse: it is a template, not a broken manifest.
PRINTF_VERB = re.compile(r"%[-+# 0]*[0-9]*(?:\.[0-9]+)?[sdvqfgxXt]")
# Terraform's template directives (templatefile(), "String Templates": %{ if }, %{ for }, %{ else }, %{ endif },
# %{ endfor }, with ~ strip markers): YAML reads a '%' at a line's start as a directive of its own and refuses.
_TERRAFORM_DIRECTIVE = re.compile(r"%\{~?\s*(?:if|for|else|endif|endfor)\b[^}]*~?\}")
_TERRAFORM_NOTES = ("lint the file Terraform writes from it",)
# Jinja's statements ({% if deploy_ofed %}, {%- for node in nodes %}, {% endif %}), as an Ansible playbook's
# template module or another Jinja renderer reads them: YAML reads '{' as a flow mapping and refuses the '%'.
_JINJA_STATEMENT = re.compile(
    r"\{%[-+]?\s*(?:if|elif|else|endif|for|endfor|set|endset|macro|endmacro|call|endcall|filter|endfilter|"
    r"include|import|from|block|endblock|extends|raw|endraw|with|endwith)\b[^%]*[-+]?%\}"
)
_JINJA_NOTES = ("lint the file the template renders to (ansible's template module, jinja2)",)
# Single-brace fill-ins joined to more text (`image: {IMAGE_REGISTRY}/{IMAGE_REPOSITORY}/spark:4.0.4`, kubeflow/
# spark-operator's examples, for the reader to replace): YAML reads the first `{` as a flow mapping and refuses
# what follows it. One alone as the whole value parses, and is a placeholder field (_BRACED_NAME). A lower-case
# name counts where a plain value starts (`image: {username}/torchserve:latest`, KServe's torchserve samples, whose
# README says "replace {username} with your Docker Hub username"): there YAML refuses it, in a quoted string it is text.
BRACED_FILL_IN = re.compile(r"(?:\{[A-Z][A-Z0-9_]*\}|(?<=[:-] )\{[a-z][A-Za-z0-9_]*\})(?=[^\s,}\]#])")
_BRACED_NOTES = ("lint the file once its {NAME} fill-ins are replaced",)


@dataclass(frozen=True)
class _TemplateSyntax:
    """A template language's statements that make a file fail as YAML before its renderer fills it in."""

    pattern: re.Pattern[str]
    opener: str  # text every statement holds (a cheap test before the pattern's search)
    what: str
    notes: tuple[str, ...]


_TEMPLATE_SYNTAXES = (
    _TemplateSyntax(
        _TERRAFORM_DIRECTIVE,
        "%{",
        "a Terraform template directive (templatefile() fills the file in)",
        _TERRAFORM_NOTES,
    ),
    _TemplateSyntax(
        _JINJA_STATEMENT,
        "{%",
        "a Jinja statement (an Ansible template or another Jinja renderer fills the file in)",
        _JINJA_NOTES,
    ),
    _TemplateSyntax(
        BRACED_FILL_IN,
        "{",
        "a single-brace fill-in joined to more text (a program or the reader replaces it)",
        _BRACED_NOTES,
    ),
)
# Text every template statement above holds: a document with one may make the whole file refused (_directive_refused);
# a braced fill-in is searched for by its pattern (every flow mapping holds a `{`).
TEMPLATE_OPENERS = tuple(syntax.opener for syntax in _TEMPLATE_SYNTAXES if syntax.pattern is not BRACED_FILL_IN)
_PRINTF_NOTES = ("lint the file the program writes, or its output: gpulint check -",)
# The placeholders a field may hold (${VAR}, $VAR, {{ ... }}, <name>, REPLACE_ME) are kube/placeholders.py's, where
# held documents (kube/held_pods.py) take theirs from too. The forms below are the loader's own.
# An object's name or namespace written as an upper-case word to replace, alone or joined to the rest of the name
# by '-': `name: MODEL_NAME-webapp`, `namespace: KUBEFLOW_NAMESPACE` (kubeflow/examples' templates, which a
# pipeline step fills with str.replace before applying them), `RELEASE-NAME-redis` (Helm 2's `helm template` name
# for a release it was not given). A DNS name holds neither capitals nor '_', so nobody writes these as a name;
# a name written wrongly another way (`Gemma_Run`, `GPU-TEST`, `my_app`) is still refused.
_NAME_FILL_IN = re.compile(r"(?:^|-)(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|RELEASE-NAME)(?=-|$)")
_NAME_FIELDS = (("metadata", "name"), ("metadata", "namespace"))
# An upper-case word joined to a name by '-' (`disk-wipe-HOSTNAME`): a fill-in where a script of the file's folder
# replaces it with sed (inputs/sed_words.py); `GPU-TEST` that no script fills in is still a name written wrongly.
_NAME_WORD = re.compile(r"(?<![^-])[A-Z][A-Z0-9]{2,}(?![^-])")
_MAY_HOLD_NAME_WORD = re.compile(r"(?:name|namespace)[\"']?\s*:\s*[\"']?(?:[a-z0-9.-]*-)?[A-Z][A-Z0-9]{2,}")
_MAY_HOLD_NAME_FILL_IN = re.compile(
    r"(?:name|namespace)[\"']?\s*:\s*[\"']?(?:[a-z0-9.-]*-)?(?:[A-Z][A-Z0-9]*_[A-Z0-9]|RELEASE-NAME)"
)
# A `name:` that is a block sequence item's first key (`- name: NCCL_DEBUG`, an env var, in most GPU manifests)
# is never metadata's: its parent is an item of a list. Only a line's text before the key is looked at.
_SEQUENCE_ITEM_KEY = re.compile(r"[ \t]*(?:-[ \t]+)+[\"']?")
# API groups whose controllers fill {{ ... }} and $var in their own objects when they run (Argo Workflows
# parameters, Kyverno variables, Tekton, Prometheus templates): applied as written, not templates.
_RUNTIME_TEMPLATES = frozenset(
    {"argoproj.io", "kyverno.io", "tekton.dev", "triggers.tekton.dev", "monitoring.coreos.com"}
)
_MAY_HOLD_PLACEHOLDER = re.compile(r"\$[{(A-Za-z_]|\{\{|<[A-Za-z_]|\{[A-Z]|__[A-Z]")  # a file without any is not walked
# A single-brace name where a value goes (`repository: {NEMO_REPO}`), replaced by a program's string
# replacement (Go's strings.ReplaceAll, Python's str.format) before the file is read: YAML reads it as a
# flow mapping of one upper-case key without a value, which no Kubernetes field holds.
_BRACED_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
# kustomize vars: $(VAR) as the whole value.
_KUSTOMIZE_VAR = re.compile(r"\$\([A-Za-z_][A-Za-z0-9_]*\)")
# Where such text is data, not a placeholder: Kubernetes expands $(VAR) in command, args and env values
# itself (pkg/kubelet/kuberuntime expansion), and ${VAR} there is shell; configuration data and
# annotations hold any text.
_FREE_TEXT_KEYS = frozenset(
    {"command", "args", "data", "stringData", "binaryData", "script", "annotations", "description"}
)
# Those of them whose value is a list or a mapping: a placeholder as their whole value is that list or mapping
# to come, and no text (an env var's value or a script is text either way).
_COLLECTION_KEYS = frozenset({"command", "args", "data", "stringData", "binaryData", "annotations"})
DOC_START = re.compile(r"^---(?:[ \t]|$)", re.MULTILINE)

_T = "tag:yaml.org,2002:"
_STR, _NULL, _BOOL, _INT, _FLOAT, _MERGE = (_T + t for t in ("str", "null", "bool", "int", "float", "merge"))


class LoadError(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True)
class LoadProblem:
    """A problem with the file itself (not with one Kubernetes object)."""

    message: str
    line: int  # 1-based
    column: int  # 1-based
    document: int | None = None
    rule: str = "yaml-invalid"  # a rendered chart or overlay reports its failures as render-failed
    severity: Severity | None = None  # None: the rule's (configured) severity
    file: str = ""  # the file it is in, when not the loaded one (a template a renderer names)
    notes: tuple[str, ...] = ()  # what follows the one-line message (see Diagnostic.notes)


@dataclass
class LocatedDocument:
    path: str
    index: int  # position in the file's stream of documents, counting empty ones
    data: Any
    node: Node | None  # None when read without positions (JSON, the API server): located at 1:1
    line_offset: int = 0  # node marks count from the chunk that was parsed, not the file
    text: str = ""  # the text that was parsed (the file, or the chunk after a broken document)
    placeholders: tuple[Path, ...] = ()  # fields holding ${VAR} placeholders: nothing is reported under them
    # the chart or overlay whose one render made it, as displayed ('': a file as written): they deploy together
    render: str = ""
    release: str = ""  # the release of the repository it was rendered as ("release 'x' of helmfile.yaml:3")

    def locate(self, path: Path, on_key: bool = False) -> tuple[int, int]:
        """1-based line and column of the node at ``path`` (or its deepest existing ancestor)."""
        if self.node is None:
            return 1, 1
        target, stopped, reached = _walk(self.node, path, on_key)
        if reached < len(path) and isinstance(stopped, ScalarNode):
            # a document held in the string (kube/held_pods): the field is that far into the string
            offset = held_offset(stopped.value, path[reached:], on_key)
            if offset is not None:
                return LocatedDocument.locate_in_string(self, path[:reached], offset)
        mark = target.start_mark
        return mark.line + self.line_offset + 1, mark.column + 1

    def file_of(self, path: Path, on_key: bool = False) -> str:
        """The file a finding at ``path`` is reported in: this document's (a rendered one may say a patch's)."""
        return self.path

    def retarget(self, fix: Fix) -> Fix:
        """The fix as it applies to the file that holds the field (this document's own, here)."""
        return fix

    def locate_in_string(self, path: Path, offset: int) -> tuple[int, int]:
        """Line and column of character ``offset`` of the string at ``path``, in the file.

        Works for every scalar style (plain, quoted, literal ``|``, folded ``>``): the
        value's non-blank characters are matched in order against the source's.
        """
        if self.node is None:
            return self.locate(path)
        node: Node = self.node
        for step in path:
            child = _child(node, step)
            if child is None:
                return self.locate(path)
            node = child[1]
        if not isinstance(node, ScalarNode) or not self.text:
            return self.locate(path)
        value = node.value
        wanted = sum(1 for ch in value[:offset] if not ch.isspace())
        source = self.text[node.start_mark.index : node.end_mark.index]
        position = 0
        if node.style in ("|", ">"):
            position = source.find("\n") + 1  # past the block header (|, >-, |2 ...)
        elif node.style in ("'", '"'):
            position = 1
        seen = 0
        after_last = position  # just past the last character matched: where an error "at the end" belongs
        while position < len(source):
            ch = source[position]
            if ch.isspace():
                position += 1
                continue
            if seen == wanted:
                break
            if node.style == '"' and ch == "\\":
                position += 1  # an escape is one character of the value
            elif node.style == "'" and source.startswith("''", position):
                position += 1
            seen += 1
            position += 1
            after_last = position
        if seen < wanted or position >= len(source):
            position = after_last
        absolute = node.start_mark.index + position
        line = self.text.count("\n", 0, absolute)
        column = absolute - (self.text.rfind("\n", 0, absolute) + 1)
        return line + self.line_offset + 1, column + 1


def _walk(node: Node, path: Path, on_key: bool) -> tuple[Node, Node, int]:
    """The node a finding at ``path`` points at (its key's when ``on_key``; the key of the deepest ancestor that
    exists when the path goes further), the deepest node reached, and how many steps of ``path`` were taken."""
    key_node: Node | None = None
    reached = 0
    for step in path:
        child = _child(node, step)
        if child is None:
            break
        key_node, node = child
        reached += 1
    complete = reached == len(path)
    target = key_node if ((on_key or not complete) and key_node is not None) else node
    return target, node, reached


def held_offset(value: str, path: Path, on_key: bool = False) -> int | None:
    """Where the field at ``path`` of the YAML document the string ``value`` holds starts in it (as
    LocatedDocument.locate points); None when the string holds no such document or not its first step."""
    node = compose_embedded(value) if path else None
    if node is None:
        return None
    target, _, reached = _walk(node, path, on_key)
    return target.start_mark.index if reached else None


@dataclass
class LoadedFile:
    path: str
    text: str
    documents: list[LocatedDocument] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    templated: bool = False
    encoding: Encoding | None = None  # how the bytes were decoded (None: given as text)
    texts: dict[str, str] = field(default_factory=dict)  # rendered: the text of each file its findings are in
    reported: frozenset[str] | None = None  # rendered for a base named alone: the real paths its findings may be in
    unreported: frozenset[str] = frozenset()  # real paths an earlier render of the run reports (a shared component)
    substituted: dict[str, str] = field(default_factory=dict)  # rendered: a Flux variable -> "'value' from source"


def _child(node: Node, step: Any) -> tuple[Node | None, Node] | None:
    if isinstance(node, MappingNode) and isinstance(step, str):
        for key, value in reversed(node.value):  # the last duplicate wins, as in JSON
            tag = key.tag
            if tag == _STR:  # most keys: their text is the key
                if key.value == step and key.__class__ is ScalarNode:
                    return key, value
            elif tag != _MERGE and isinstance(key, ScalarNode) and _key_text(key) == step:
                return key, value
        for key, value in node.value:  # merged keys (<<: *anchor) come last
            if key.tag == _MERGE:
                sources = value.value if isinstance(value, SequenceNode) else [value]
                for source in sources:
                    hit = _child(source, step)
                    if hit is not None:
                        return hit
        return None
    if isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
        return None, node.value[step]
    return None


def _key_text(key: ScalarNode) -> str:
    value = _scalar(key, _CONSTRUCTOR)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


class _Constructor(SafeConstructor):
    """Only used for its scalar resolvers (int, float and bool spellings of YAML 1.1)."""


_CONSTRUCTOR = _Constructor()
# go-yaml (what Kubernetes reads YAML with) keeps an integer only within int64/uint64; a longer
# decimal becomes a float, and one that overflows a float stays text. Python would build an
# int of any size, and refuse to print one of more than 4,300 digits.
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def _scalar(node: ScalarNode, constructor: SafeConstructor) -> Any:
    tag = node.tag
    if tag == _STR:
        return node.value
    if tag == _NULL:
        return None
    try:
        if tag == _BOOL:
            return constructor.construct_yaml_bool(node)
        if tag == _INT:
            return _integer(node, constructor)
        if tag == _FLOAT:
            value = constructor.construct_yaml_float(node)
            if math.isinf(value) and "inf" not in node.value.lower():
                return node.value  # 1.0e+400 overflows: go-yaml keeps the text
            return value
    except (ValueError, KeyError, TypeError, IndexError) as exc:  # IndexError: PyYAML on "" or "-"
        # Only an explicit tag the text does not fit (``!!int abc``) gets here: go-yaml refuses the document.
        mark = node.start_mark
        raise LoadError(
            f"cannot decode !!str `{_shorten(node.value)}` as a !!{tag.rpartition(':')[2]}: an explicit "
            "YAML tag that does not fit its value (Kubernetes' YAML reader refuses it too)",
            mark.line + 1,
            mark.column + 1,
        ) from exc
    # timestamps, binary and custom tags: Kubernetes sees the text (YAML -> JSON string)
    return node.value


def _integer(node: ScalarNode, constructor: SafeConstructor) -> Any:
    digits = node.value.replace("_", "").lstrip("+-")
    decimal = digits.isdigit() and not digits.startswith("0")
    if decimal and len(digits) > 20:  # beyond uint64 whatever it is: no big-int parse
        value = float(node.value.replace("_", ""))
        return value if math.isfinite(value) else node.value
    value = constructor.construct_yaml_int(node)
    if _INT_MIN <= value <= _INT_MAX:
        return value
    if decimal:
        return float(value)
    return node.value  # hex, octal or binary beyond 64 bits: text, as go-yaml leaves it


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


class _Builder:
    """Turns one composed document into plain Python data."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.duplicates: list[LoadProblem] = []
        self._built: dict[int, Any] = {}
        self._sizes: dict[int, int] = {}
        self._physical = 0
        # False: the text has no alias, so no node is shared (none is recorded for an alias to find),
        # and _build enforces MAX_DEPTH (else _size did, before it)
        self._aliases = True

    def build(self, root: Node, aliases: bool = True) -> Any:
        """The document's data. ``aliases`` False: the text has no ``*``, so no node is shared, nothing
        can expand, and the alias-bomb count (a walk of its own) is skipped; _build checks the depth."""
        self._aliases = aliases
        if not aliases:
            return self._build(root, 0)
        expanded = self._size(root, 0)
        if expanded > MAX_EXPANDED_NODES and expanded > MAX_EXPANSION_RATIO * self._physical:
            mark = root.start_mark
            raise LoadError(
                f"document refused: its aliases expand {self._physical} nodes into {expanded} "
                "(an alias bomb); Kubernetes' YAML reader refuses excessive aliasing too",
                mark.line + 1,
                mark.column + 1,
            )
        return self._build(root, 0)

    def _size(self, node: Node, depth: int) -> int:
        """Expanded node count; also enforces the depth limit. Memoised per node, so aliases are cheap."""
        known = self._sizes.get(id(node))
        if known is not None:
            return known
        if depth > MAX_DEPTH:
            _refuse_depth(node)
        self._physical += 1
        if isinstance(node, MappingNode):
            total = 1 + sum(self._size(k, depth + 1) + self._size(v, depth + 1) for k, v in node.value)
        elif isinstance(node, SequenceNode):
            total = 1 + sum(self._size(item, depth + 1) for item in node.value)
        else:
            total = 1
        self._sizes[id(node)] = total
        return total

    def _build(self, node: Node, depth: int) -> Any:
        if depth > MAX_DEPTH and not self._aliases:  # where _size stops: it visits keys first too
            _refuse_depth(node)
        if isinstance(node, ScalarNode):
            return _scalar(node, _CONSTRUCTOR)
        shared = self._built
        if self._aliases:  # an alias: share the value, never copy it
            built = shared.get(id(node))
            if built is not None:
                return built
        # Scalars (most nodes) are read in their parent's loop, a string without a call; the depth is
        # checked (without aliases) where the old walk did: at the first child one level too deep.
        deep = depth + 1 > MAX_DEPTH and not self._aliases
        if isinstance(node, SequenceNode):
            items: list[Any] = []
            if self._aliases:
                shared[id(node)] = items
            if deep and node.value:
                _refuse_depth(node.value[0])
            for item in node.value:
                if item.__class__ is ScalarNode:
                    items.append(item.value if item.tag == _STR else _scalar(item, _CONSTRUCTOR))
                else:
                    items.append(self._build(item, depth + 1))
            return items
        mapping: dict[str, Any] = {}
        if self._aliases:
            shared[id(node)] = mapping
        if deep and node.value:
            _refuse_depth(node.value[0][0])
        merges: list[Node] = []
        seen: dict[str, Node] = {}
        for key_node, value_node in node.value:
            tag = key_node.tag
            if tag == _STR and key_node.__class__ is ScalarNode:
                key = key_node.value
            elif tag == _MERGE:
                merges.append(value_node)
                continue
            elif isinstance(key_node, ScalarNode):
                key = _key_text(key_node)
            else:
                key = str(self._build(key_node, depth + 1))
            first = seen.get(key)
            if first is not None:
                self._duplicate(key, first, key_node)
            seen[key] = key_node
            if value_node.__class__ is ScalarNode:
                mapping[key] = value_node.value if value_node.tag == _STR else _scalar(value_node, _CONSTRUCTOR)
            else:
                mapping[key] = self._build(value_node, depth + 1)
        for merge in merges:  # explicit keys win over merged ones
            sources = merge.value if isinstance(merge, SequenceNode) else [merge]
            inner = depth + 2 if isinstance(merge, SequenceNode) else depth + 1
            for source in sources:
                merged = self._build(source, inner)
                if isinstance(merged, dict):
                    for key, value in merged.items():
                        mapping.setdefault(key, value)
        return mapping

    def _duplicate(self, key: str, before: Node, again: Node) -> None:
        mark = again.start_mark
        self.duplicates.append(
            LoadProblem(
                f'duplicate key "{key}" (first defined at line {before.start_mark.line + 1}); '
                "Kubernetes rejects it: mapping key already defined",
                mark.line + 1,
                mark.column + 1,
            )
        )


def _refuse_depth(node: Node) -> None:
    mark = node.start_mark
    raise LoadError(f"document nests deeper than {MAX_DEPTH} levels", mark.line + 1, mark.column + 1)


# The byte-order marks YAML allows (YAML 1.2 §5.2), longest first: UTF-32 LE starts like UTF-16 LE.
_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


@dataclass(frozen=True)
class Encoding:
    codec: str  # a Python codec without BOM handling: utf-8, utf-16-le, ...
    bom: bytes  # b"" for UTF-8 without a BOM

    def encode(self, text: str) -> bytes:
        """``text`` as the file had it (same encoding, same BOM): what --fix writes back."""
        return self.bom + text.encode(self.codec)


UTF8 = Encoding("utf-8", b"")


def detect_encoding(raw: bytes) -> Encoding:
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            return Encoding(codec, bom)
    return UTF8


class DecodeError(ValueError):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


def decode(raw: bytes) -> str:
    """Bytes -> text as YAML allows: UTF-8 (with or without a BOM), or UTF-16/32 with a BOM.

    Raises DecodeError with the 1-based line and column of the first undecodable character.
    """
    encoding = detect_encoding(raw)
    body = raw[len(encoding.bom) :]
    try:
        return body.decode(encoding.codec)
    except UnicodeDecodeError as exc:
        before = body[: exc.start].decode(encoding.codec, errors="replace")
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1) + 1
        name = encoding.codec.upper().replace("-LE", "").replace("-BE", "")
        what = f"byte 0x{body[exc.start]:02x}: {exc.reason}"
        hint = (
            "Kubernetes manifests must be UTF-8"
            if encoding is UTF8
            else f"the file starts with a {name} byte-order mark but is not valid {name}"
        )
        raise DecodeError(f"not valid {name} ({what}); {hint}", line, column) from None


def _looks_like_utf16_without_bom(raw: bytes) -> bool:
    head = raw[:512]
    return len(head) >= 4 and (head[1::2].count(0) > len(head) // 4 or head[0::2].count(0) > len(head) // 4)


def load_bytes(
    path: str,
    raw: bytes,
    max_bytes: int = MAX_FILE_BYTES,
    reduced: Callable[[str], str] | None = None,
    scripts: FolderScripts | None = None,
) -> LoadedFile:
    """``reduced``: what of the decoded text to parse (a streamed run's first pass, cross_file.crossing_text);
    ``scripts``: the run's reader of the folders' scripts (load_text)."""
    if len(raw) > max_bytes:
        loaded = LoadedFile(path, "")
        loaded.problems.append(
            LoadProblem(
                f"file is {len(raw) // (1024 * 1024)} MiB, over the {max_bytes // (1024 * 1024)} MiB limit; not read",
                1,
                1,
            )
        )
        return loaded
    encoding = detect_encoding(raw)
    if encoding is UTF8 and b"\x00" in raw[:8192]:
        loaded = LoadedFile(path, "")
        message = (
            "UTF-16 or UTF-32 without a byte-order mark: YAML needs the BOM to tell; save it as UTF-8"
            if _looks_like_utf16_without_bom(raw)
            else "binary file (contains NUL bytes); not a YAML or JSON manifest"
        )
        loaded.problems.append(LoadProblem(message, 1, 1))
        return loaded
    try:
        text = decode(raw)
    except DecodeError as exc:
        loaded = LoadedFile(path, "", encoding=encoding)
        loaded.problems.append(LoadProblem(exc.message, exc.line, exc.column))
        return loaded
    # a JSON file's parse may be retried without its comments, the whole text at once (_retry_as_jsonc): parsed whole
    loaded = load_text(path, text if reduced is None or _read_as_jsonc(path) else reduced(text), scripts)
    loaded.encoding = encoding
    return loaded


@contextmanager
def collector_paused() -> Iterator[None]:
    """Composing keeps every node alive, and CPython's cyclic collector would rescan them all
    again and again (3-4x the parse time on a 10 MB inventory); nodes form no cycles."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def text_offset(value: str, line: int, column: int) -> int:
    """The character offset of a 1-based line and column in ``value`` (a document embedded in a string)."""
    lines = value.split("\n")
    return sum(len(text) + 1 for text in lines[: max(line - 1, 0)]) + max(column - 1, 0)


def load_text(path: str, text: str, scripts: FolderScripts | None = None) -> LoadedFile:
    """``scripts``: the run's reader of the scripts beside the manifests (inputs/sed_words.py), which reads each
    folder once per run; without one, the file's folder is read for this file alone."""
    with collector_paused():
        return _load_text(path, text, scripts if scripts is not None else FolderScripts())


def _not_yaml_yet(loaded: LoadedFile, message: str, line: int, column: int, notes: tuple[str, ...]) -> LoadedFile:
    """A template a tool fills in before the file is YAML: one info finding in place of its parse."""
    loaded.templated = True
    loaded.problems = [LoadProblem(message, line, column, rule=NOT_RENDERED, severity=Severity.INFO, notes=notes)]
    loaded.documents = []
    return loaded


def _load_text(path: str, text: str, scripts: FolderScripts) -> LoadedFile:
    loaded = LoadedFile(path, text)
    _parse_stream(loaded, text, line_offset=0, first_index=0)
    if loaded.problems and _read_as_jsonc(path):
        _retry_as_jsonc(loaded, text)
    if "{{" in text:
        template_line = _template_outside_strings(loaded, text)
        if template_line is not None:
            return _not_yaml_yet(loaded, _TEMPLATED_MESSAGE, template_line, 1, _TEMPLATED_NOTES)
    verb = _printf_verb_refused(loaded, text)
    if verb is not None:
        line, column, written = verb
        message = (
            f"template: {written} is a printf verb (a format string a program fills in), so the file is not "
            "YAML yet and was not checked"
        )
        return _not_yaml_yet(loaded, message, line, column, _PRINTF_NOTES)
    for syntax in _TEMPLATE_SYNTAXES:
        found = _directive_refused(loaded, text, syntax.pattern) if syntax.opener in text else None
        if found is not None:
            line, column, written = found
            message = f"template: {written} is {syntax.what}, so the file is not YAML yet and was not checked"
            return _not_yaml_yet(loaded, message, line, column, syntax.notes)
    if _MAY_HOLD_PLACEHOLDER.search(text) or any(word in text for word in MARKER_WORDS) or _may_hold_name_fill_in(text):
        _find_placeholders(loaded, scripts)
    if loaded.problems and _MANIFEST_WORD.search(text) is None:
        loaded.problems = [_no_manifest(problem) for problem in loaded.problems]
    return loaded


def _sed_filled(value: str, path: str, scripts: FolderScripts) -> re.Match[str] | None:
    """An upper-case word of a name that a script of the file's folder replaces with sed."""
    for found in _NAME_WORD.finditer(value):
        if found.group(0) in scripts.words(path):
            return found
    return None


def _may_hold_name_fill_in(text: str) -> bool:
    """Whether a `name:` in the text may be a metadata name written as a fill-in word (_NAME_FILL_IN)."""
    for match in (*_MAY_HOLD_NAME_FILL_IN.finditer(text), *_MAY_HOLD_NAME_WORD.finditer(text)):
        start = match.start()
        if not _SEQUENCE_ITEM_KEY.fullmatch(text, text.rfind("\n", 0, start) + 1, start):
            return True
    return False


def _decoded_strictly(data: Any) -> bool:
    """A document Kubernetes reads: its duplicate keys are refused (sigs.k8s.io/yaml's strict decoding); a
    values file's or a tool's configuration are read by a YAML library that keeps the last one."""
    return (
        isinstance(data, dict)
        and "apiVersion" in data
        and "kind" in data
        and not str(data["apiVersion"]).startswith(_READ_LOOSELY)
    )


# kustomize reads its own Kustomization and Component with yaml.YAMLToJSON and encoding/json
# (api/types/kustomization.go Unmarshal, kustomize v5): a duplicate key is no error, the last one wins.
_READ_LOOSELY = ("kustomize.config.k8s.io/",)


# A file with neither word is no manifest whatever its syntax (a Terraform template of Helm values, a
# tool's configuration): its YAML errors are its own tool's business, said as info.
_MANIFEST_WORD = re.compile(r"\b(?:apiVersion|kind)\b")


def _no_manifest(problem: LoadProblem) -> LoadProblem:
    if problem.rule != "yaml-invalid" or problem.severity is not None:
        return problem
    return replace(
        problem,
        severity=Severity.INFO,
        notes=(
            *problem.notes,
            "the file names no apiVersion or kind: it is no Kubernetes manifest, and was not checked",
        ),
    )


def _read_as_jsonc(path: str) -> bool:
    return path.lower().endswith(".json")


def _retry_as_jsonc(loaded: LoadedFile, text: str) -> None:
    """JSON with comments (devcontainer.json, VS Code settings) is no broken manifest: read without its
    comments it is a document like any other. kubectl refuses comments, so one in an object still is."""
    cleaned = _strip_json_comments(text)
    if cleaned == text:
        return
    retried = LoadedFile(loaded.path, text)
    _parse_stream(retried, cleaned, line_offset=0, first_index=0)
    if retried.problems:
        return
    objects = [
        d for d in retried.documents if isinstance(d.data, dict) and ("kind" in d.data or "apiVersion" in d.data)
    ]
    if objects:  # a manifest with comments: kubectl refuses it, at the comment
        first = next(i for i, (a, b) in enumerate(zip(text, cleaned)) if a != b)
        line = text.count("\n", 0, first) + 1
        column = first - (text.rfind("\n", 0, first) + 1) + 1
        what = ("a comment", "'/' looking for beginning of object key string", "remove the comment or use YAML")
        if text[first] == ",":
            what = ("a trailing comma", "'}' looking for beginning of object key string", "remove the comma")
        loaded.problems = [
            LoadProblem(
                f"{what[0]} in a JSON manifest: kubectl reads JSON strictly and refuses it",
                line,
                column,
                notes=(f"invalid character {what[1]}", what[2]),
            )
        ]
        return
    loaded.problems = []
    loaded.documents = retried.documents


_TRAILING_COMMA = re.compile(r"\s*(?://[^\n]*\s*|/\*.*?\*/\s*)*[}\]]", re.DOTALL)


def _strip_json_comments(text: str) -> str:
    """``//`` and ``/* */`` comments (outside strings) and trailing commas blanked, lines and columns kept."""
    out = list(text)
    i, n, in_string = 0, len(text), False
    while i < n:
        ch = text[i]
        if in_string:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = ["\n" if c == "\n" else " " for c in text[i:end]]
            i = end
            continue
        elif ch == ",":
            if _TRAILING_COMMA.match(text, i + 1):
                out[i] = " "
        i += 1
    return "".join(out)


def _find_placeholders(loaded: LoadedFile, scripts: FolderScripts) -> None:
    """Fields of objects that hold a substitution placeholder: the file is a template (one info finding),
    and no rule reports on those fields (``${GPUS}`` is no invalid quantity, it is not a value yet)."""
    first: tuple[int, int, str, int] | None = None
    for document in loaded.documents:
        data = document.data
        if document.node is None or not isinstance(data, dict) or not ("kind" in data or "apiVersion" in data):
            continue
        found: list[Path] = []
        short = str(data.get("apiVersion") or "").split("/", 1)[0] not in _RUNTIME_TEMPLATES
        stack: list[tuple[Node, Path]] = [(document.node, ())]
        while stack:
            node, path = stack.pop()
            if isinstance(node, MappingNode):
                braced = _braced_name(node)
                if braced is not None:
                    found.append(path)
                    mark = node.start_mark
                    place = (mark.line + document.line_offset + 1, mark.column + 1, braced, document.index)
                    if first is None or place[:2] < first[:2]:
                        first = place
                    continue
                for key, value in node.value:
                    if isinstance(key, ScalarNode) and key.tag != _MERGE:
                        name = _key_text(key)
                        if short and (keyed := SUBSTITUTION.search(name) or KEY_PLACEHOLDER.fullmatch(name)):
                            found.append((*path, name))  # the field's name is still to come: nothing in it is judged
                            mark = key.start_mark
                            place = (
                                mark.line + document.line_offset + 1,
                                mark.column + 1,
                                keyed.group(0),
                                document.index,
                            )
                            if first is None or place[:2] < first[:2]:
                                first = place
                            continue
                        if name not in _FREE_TEXT_KEYS and not (
                            name == "value" and len(path) >= 2 and path[-2] == "env"
                        ):
                            stack.append((value, (*path, name)))
                        elif name == "annotations" and isinstance(value, MappingNode) and short:
                            # free text as values, but the API server validates the keys: one to fill in is no key
                            for annotation, _ in value.value:
                                text = _key_text(annotation) if isinstance(annotation, ScalarNode) else ""
                                if SUBSTITUTION.search(text) or KEY_EXPRESSION.match(text):
                                    found.append((*path, name, text))
                                    mark = annotation.start_mark
                                    place = (
                                        mark.line + document.line_offset + 1,
                                        mark.column + 1,
                                        text,
                                        document.index,
                                    )
                                    if first is None or place[:2] < first[:2]:
                                        first = place
                        elif (
                            name in _COLLECTION_KEYS
                            and isinstance(value, ScalarNode)
                            and (whole := _whole_placeholder(value, short))
                        ):
                            # `command: ${ENGINE_COMMAND}`: the text is no command but the whole list to come
                            found.append((*path, name))
                            mark = value.start_mark
                            place = (mark.line + document.line_offset + 1, mark.column + 1, whole, document.index)
                            if first is None or place[:2] < first[:2]:
                                first = place
            elif isinstance(node, SequenceNode):
                stack.extend((item, (*path, index)) for index, item in enumerate(node.value))
            elif isinstance(node, ScalarNode) and node.style not in ("|", ">"):
                value = node.value
                match = (
                    SUBSTITUTION.search(value)
                    or _KUSTOMIZE_VAR.fullmatch(value)
                    or (
                        SHORT_PLACEHOLDER.search(value) or WORDED_PLACEHOLDER.fullmatch(value)
                        if short and len(value) <= SHORT and "\n" not in value
                        else None
                    )
                    # an env var's or a key's name may be any upper-case word; a name is valid text anyway
                    or (
                        MARKER_PLACEHOLDER.fullmatch(value)
                        if short and path[-1:] not in (("name",), ("key",))
                        else None
                    )
                    or (_NAME_FILL_IN.search(value) if short and path[-2:] in _NAME_FIELDS else None)
                    or (_sed_filled(value, loaded.path, scripts) if short and path[-2:] in _NAME_FIELDS else None)
                )
                if match:
                    found.append(path)
                    mark = node.start_mark
                    place = (mark.line + document.line_offset + 1, mark.column + 1, match.group(0), document.index)
                    if first is None or place[:2] < first[:2]:
                        first = place
        document.placeholders = tuple(found)
    if first is not None:
        line, column, placeholder, index = first
        loaded.problems.append(
            LoadProblem(
                f"template: {placeholder} is a placeholder (envsubst, Flux, kustomize vars or a value to fill in), so "
                "the fields holding placeholders were not checked",
                line,
                column,
                index,
                rule=NOT_RENDERED,
                severity=Severity.INFO,
                notes=("lint the output of the tool that fills them in (envsubst < FILE | gpulint check -)",),
            )
        )


def _whole_placeholder(node: ScalarNode, short: bool) -> str | None:
    """A placeholder written as the whole of a free-text field's value (``command: ${ENGINE_COMMAND}``,
    ``args: "{{ .Args }}"``): what fills it in may write a list or a mapping there, not only text. One inside
    longer text (``command: "${ENGINE} serve"``) stays text: Kubernetes reads it as written."""
    if node.style in ("|", ">"):
        return None
    value = node.value
    if SUBSTITUTION.fullmatch(value) or (short and len(value) <= SHORT and SHORT_PLACEHOLDER.fullmatch(value)):
        return value
    return None


def _printf_verb_refused(loaded: LoadedFile, text: str) -> tuple[int, int, str] | None:
    """Where YAML refused the file at a printf verb in a value (not a `%YAML` directive at a line's start):
    its line, column and the verb as written."""
    lines = text.split("\n")
    for problem in loaded.problems:
        if not problem.message.startswith("YAML syntax error") or not 1 < problem.column <= 4096:
            continue
        row = lines[problem.line - 1] if 0 < problem.line <= len(lines) else ""
        verb = PRINTF_VERB.match(row, problem.column - 1)
        if verb is not None and row[: problem.column - 1].strip():
            return problem.line, problem.column, verb.group(0)
    return None


def _directive_refused(loaded: LoadedFile, text: str, pattern: re.Pattern[str]) -> tuple[int, int, str] | None:
    """Where YAML refused the file on a line that holds a template directive of ``pattern`` (Terraform's
    ``%{ for r in resources }``, Jinja's ``{% if x %}``): its line, column and the directive as written."""
    lines = text.split("\n")
    for problem in loaded.problems:
        if not problem.message.startswith("YAML syntax error"):
            continue
        row = lines[problem.line - 1] if 0 < problem.line <= len(lines) else ""
        directive = pattern.search(row)
        if directive is not None:
            return problem.line, directive.start() + 1, directive.group(0)
    return None


def _braced_name(node: MappingNode) -> str | None:
    """``{NAME}`` as a program's fill-in placeholder: a flow mapping of one upper-case key with no value."""
    if not node.flow_style or len(node.value) != 1:
        return None
    key, value = node.value[0]
    empty = isinstance(value, ScalarNode) and value.tag == "tag:yaml.org,2002:null" and value.value == ""
    if isinstance(key, ScalarNode) and not key.style and empty and _BRACED_NAME.fullmatch(key.value):
        return "{" + key.value + "}"
    return None


def _template_outside_strings(loaded: LoadedFile, text: str) -> int | None:
    """Line of a ``{{`` that is template syntax rather than text inside a string.

    ``{{ $labels.instance }}`` inside a quoted or block scalar is data (Prometheus and
    Alertmanager templates, Argo parameters); anywhere else - or in a file that does not parse -
    it is a Helm/Go template that must be rendered before it can be linted.
    """
    braces = [match.start() for match in re.finditer(r"\{\{", text)]
    if loaded.problems and any(p.message.startswith("YAML syntax error") for p in loaded.problems):
        return text.count("\n", 0, braces[0]) + 1
    roots = [document.node for document in loaded.documents if document.node is not None]  # parsed: all have one
    spans = sorted(span for root in roots for span in _scalar_spans(root))
    for position in braces:
        if not _inside(spans, position) and not _in_comment(text, position, spans):
            return text.count("\n", 0, position) + 1
    return None


def _inside(spans: list[tuple[int, int]], position: int) -> bool:
    return any(start <= position < end for start, end in spans)


def _in_comment(text: str, position: int, spans: list[tuple[int, int]]) -> bool:
    """Whether ``position`` of a file that parsed follows a ``#`` that opens a comment on its line: one at the
    line's start or after a space, in no scalar (`# hooks.yaml uses {{ getenv ... }}`: prose, not a template)."""
    start = text.rfind("\n", 0, position) + 1
    return any(
        text[index] == "#" and (index == start or text[index - 1] in " \t") and not _inside(spans, index)
        for index in range(start, position)
    )


def _scalar_spans(root: Node) -> list[tuple[int, int]]:
    spans, stack, seen = [], [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):  # a plain scalar cannot start with "{": its braces are text too
            spans.append((node.start_mark.index, node.end_mark.index))
        elif isinstance(node, MappingNode):
            for key, value in node.value:
                stack.extend((key, value))
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return spans


def _parse_stream(loaded: LoadedFile, text: str, line_offset: int, first_index: int) -> None:
    index = first_index
    loader: type[yaml.SafeLoader] | type[_Loader] = _Loader
    while True:
        documents, problems, first = len(loaded.documents), len(loaded.problems), index
        try:
            aliases = "*" in text
            for root in yaml.compose_all(text, Loader=loader):
                if root is not None:
                    builder = _Builder(loaded.path)
                    try:
                        data = builder.build(root, aliases)
                    except LoadError as exc:
                        loaded.problems.append(LoadProblem(exc.message, exc.line + line_offset, exc.column, index))
                    else:
                        if builder.duplicates and _decoded_strictly(data):  # others' duplicate keys are their readers'
                            loaded.problems.extend(
                                LoadProblem(p.message, p.line + line_offset, p.column, index)
                                for p in builder.duplicates
                            )
                        loaded.documents.append(LocatedDocument(loaded.path, index, data, root, line_offset, text))
                index += 1
            return
        except yaml.MarkedYAMLError as exc:
            if loader is _Loader and "found duplicate anchor" in str(exc):
                del loaded.documents[documents:], loaded.problems[problems:]  # read this part again, anchors redefined
                loader, index = _AnchorsRedefined, first
                continue
            mark = exc.problem_mark or exc.context_mark
            line = mark.line if mark is not None else 0
            column = mark.column if mark is not None else 0
            loaded.problems.append(LoadProblem(_yaml_message(exc, text), line + line_offset + 1, column + 1, index))
        except yaml.YAMLError as exc:  # reader errors (control characters) carry a position too
            position = getattr(exc, "position", 0) or 0
            line = text.count("\n", 0, position)
            column = position - (text.rfind("\n", 0, position) + 1)
            loaded.problems.append(LoadProblem(str(exc).splitlines()[0], line + line_offset + 1, column + 1, index))
        except RecursionError:
            loaded.problems.append(
                LoadProblem(f"document nests deeper than {MAX_DEPTH} levels", line_offset + 1, 1, index)
            )
            line = 0
        # Resume at the next document after the broken one, so one bad document
        # does not hide the findings of the rest of the file.
        restart = _next_document_start(text, line)
        if restart is None:
            return
        skipped_lines = text.count("\n", 0, restart)
        text = text[restart:]
        line_offset += skipped_lines
        index += 1


def _next_document_start(text: str, error_line: int) -> int | None:
    """Offset of the first ``---`` at or after the error line that lets parsing make progress."""
    offset = 0
    for _ in range(error_line):
        newline = text.find("\n", offset)
        if newline < 0:
            return None
        offset = newline + 1
    match = DOC_START.search(text, max(offset, 1))
    return match.start() if match else None


def _char_at(text: str, line: int, column: int) -> str:
    lines = text.split("\n", line + 1)
    if line < len(lines) and column < len(lines[line]):
        return lines[line][column]
    return ""


def _yaml_message(exc: yaml.MarkedYAMLError, text: str) -> str:
    parts = [p for p in (exc.context, exc.problem) if p]
    message = "; ".join(parts) if parts else "invalid YAML"
    mark = exc.problem_mark
    if mark is not None and _char_at(text, mark.line, mark.column) == "\t":
        message += " (a tab: YAML does not allow tabs for indentation; use spaces)"
    if exc.context_mark is not None and exc.problem_mark is not None and exc.context_mark.line != exc.problem_mark.line:
        message += f" (the construct starts at line {exc.context_mark.line + 1})"
    return f"YAML syntax error: {message}"
