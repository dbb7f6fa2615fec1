"""A fast reader for the YAML that means the same in YAML 1.1 and YAML 1.2: cluster inventories.

gpulint reads YAML as Kubernetes does (go-yaml, YAML 1.1: ``yes`` is a boolean, ``010`` is
octal) through libyaml's composer, keeping a position on every node (gpulint/lint/inputs/loader.py).
For a 5,000-node ``kubectl get nodes -o yaml`` snapshot (60 MB) that costs ~15 s, while
yaml-rs (a Rust parser, YAML 1.2) reads it in ~2 s. Inventories need no positions unless
something is wrong with them (the inventory loader then reads the file again, with positions).

yaml-rs is used only when its answer is provably the one gpulint's own loader would give: the
text is scanned for every construct whose meaning differs between the two (plain scalars that
YAML 1.1 reads otherwise - ``yes``/``on``/``n``, ``010``, ``1e3``, ``12:30``, non-string keys -
anchors, aliases, tags, merge keys, complex keys, directives, several documents, very deep
indentation); each candidate scalar is resolved by both and must agree. Anything else, and any
error (duplicate keys, syntax), goes to the full loader, which reports it at its line.

The images cached on each Node, two thirds of its text, are dropped as the inventory keeps it: when
kubectl printed them, in its one regular shape, they are cut from the text before it is scanned or
parsed (``_cut_node_images``; 5,000 nodes: 63 -> 23 MB read).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml_rs
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from gpulint.kube.lru import short_strings_remembered
from gpulint.lint.inputs.loader import _CONSTRUCTOR, _REMEMBERED_LENGTH, _scalar
from gpulint.lint.inputs.yaml_budget import MAX_YAML_NODES, ReadStopped, node_bound

Compact = Callable[[Any], Any]  # an item of a List as kept (gpulint/lint/world/inventory.py compact_item)
MAX_INDENT = 100  # deeper block nesting goes to the full loader, which enforces MAX_DEPTH

# Characters that may start a construct the fast path does not take (anchors, aliases, tags,
# merge keys, complex keys, directives); rare in inventories, so each is looked at in Python.
_SPECIAL = re.compile(r"[&*!<?%]")
_NODE_START_BEFORE = " \t\n[{,:-"
_DEEP_INDENT = "\n" + " " * (MAX_INDENT + 1)
# A mapping entry with no key (": value" where a node starts): YAML 1.2 reads a null key, libyaml refuses it.
_EMPTY_KEY = re.compile(r"[\n{\[,][ \t-]*:(?=[ \t\n,\]}]|$)")
# Control characters (a binary file) and "{{" (a Helm template) are the full loader's to report.
_CONTROL = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
# bytes.translate deleting every other byte says in one C pass (~20x faster than a regex search) whether any of
# a few characters occurs: in UTF-8, a byte below 0x80 is always the ASCII character itself.
_ALL_BUT_CONTROL = bytes(sorted(set(range(256)) - set(_CONTROL)))
_ALL_BUT_SPECIAL = bytes(sorted(set(range(256)) - set(b"&*!<?%")))
# For _EMPTY_KEY: its delimiters as NUL, blanks and dashes deleted: an empty key leaves NUL ":" behind (the regex
# then says whether it is one); none, and the regex's pass over every line's indentation is spared. NUL, not a
# letter: a text with a control character never gets here, while a letter before ":" is in most Nodes' labels
# (NFD's `feature.node.kubernetes.io/system-os_release.ID: amzn`), which sent every inventory to the regex.
_EMPTY_KEY_TABLE = bytes.maketrans(b"\n{[,", b"\0\0\0\0")
_BLANKS = b" \t-"
# A plain scalar that may resolve to something other than a string, where a plain scalar can
# start, up to where it must end (end of line, a flow indicator, a comment, or ": " for a key). The
# lookahead names the first characters the alternatives can start with: tried first, it turns away
# the indentation's spaces at once (half the time of a 60 MB scan).
_CANDIDATE = re.compile(
    r"[\s\[{,](?=[-+.0-9yYnNoOtTfF~])(?!-?(?:0|[1-9][0-9]{0,17})[ \t]*(?:$|[,\]}#]))([-+.]?[0-9](?:[^\s,\[\]{}#]*[^\s,\[\]{}#:])?|[yYnN]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF"
    r"|true|True|TRUE|false|False|FALSE|null|Null|NULL|~|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN))"
    r"(?=[ \t]*(?:$|[,\]}#]|(:)(?:[ \t]|$)))",
    re.MULTILINE,
)
# What YAML 1.2's core schema (yaml-rs) may read as a number: a token YAML 1.1 reads as a string
# and that is none of these is a string in both, without asking yaml-rs.
_NUMBER_12 = re.compile(
    r"[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?0[oOxXbB][0-9a-fA-F_]+|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)"
)


def load_unambiguous(
    text: str,
    compact: Compact | None = None,
    encoded: bytes | None = None,
    *,
    node_images_dropped: bool = False,
    max_items: int | None = None,
) -> tuple[bool, Any]:
    """(True, the document's data) when the fast reader's answer is gpulint's; else (False, None).
    ``compact``: applied to each item of a ``kind: List`` as it is read (see ``_read``); ``encoded``: the text's
    UTF-8 bytes, when the caller has them (the file as read: no second copy of a fleet's text);
    ``node_images_dropped``: ``compact`` drops a v1 Node's ``status.images``, so the text of those kubectl printed
    is cut out unread (``_cut_node_images``), and each item reaches ``compact`` without them; ``max_items``: a List
    read a chunk at a time stops (ReadStopped) past that many items."""
    if encoded is None:
        encoded = text.encode("utf-8", "surrogatepass")  # a copy of an ASCII text: ~1 ms per 10 MB
    if _DEEP_INDENT in text or "{{" in text or encoded.translate(None, _ALL_BUT_CONTROL):
        return False, None
    specials = bool(encoded.translate(None, _ALL_BUT_SPECIAL))
    maybe_empty_key = b"\0:" in b"\0" + encoded.translate(_EMPTY_KEY_TABLE, _BLANKS)
    del encoded
    if compact is not None and node_images_dropped:
        cut = _cut_node_images(text)
        if cut.count:
            fast, data = _unambiguous(cut.text, compact, specials, maybe_empty_key, cut.count, max_items)
            if fast:
                return fast, data
    return _unambiguous(text, compact, specials, maybe_empty_key, 0, max_items)


def _unambiguous(
    text: str, compact: Compact | None, specials: bool, maybe_empty_key: bool, cuts: int, max_items: int | None
) -> tuple[bool, Any]:
    """load_unambiguous past its byte scans; ``cuts``: the node images cut from ``text`` (``_cut_node_images``)."""
    if _several_documents(text) or (specials and _has_structure(text)):
        return False, None
    scanned = text if text[:1].isspace() else "\n" + text  # the first scalar needs a delimiter before it too
    if maybe_empty_key and _EMPTY_KEY.search(scanned):
        return False, None
    for token, colon in _CANDIDATE.findall(scanned):
        if not _agree(token, bool(colon)):
            return False, None
    keep = compact if cuts == 0 or compact is None else _CutImages(compact)
    try:
        data = _read(text, keep, max_items)
    except ReadStopped:
        raise
    except Exception:  # yaml-rs says what is wrong without our positions: the full loader says it again
        return False, None
    if isinstance(keep, _CutImages) and len(keep.found) != cuts:
        return False, None  # a cut that did not come back as a Node's images: read the text uncut
    # None: no document at all (only comments) or a null one; the two readers tell those apart differently
    return (False, None) if data is None else (True, data)


# A v1 Node's cached images (`status.images`, two thirds of a node's text) as `kubectl get nodes -o yaml` prints
# them in a List: go-yaml's block style, 2-space indent, a sequence at its key's indent, `names` then `sizeBytes`
# (sigs.k8s.io/yaml sorts keys). Every line is of one of three shapes, each name a plain scalar that is a string
# in YAML 1.1 and 1.2 (it has a "/", or starts with a letter and is no boolean or null word) and each size a
# decimal int64, so the block parses without error in both readers and is a valid []ContainerImage; and it must
# end where its parent's next key, the item's or the next item starts. Anything else is not cut.
_NOT_A_STRING = "(?:[yYnN]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|true|True|TRUE|false|False|FALSE|null|Null|NULL)"
_IMAGE_NAME = rf"(?:[A-Za-z0-9][A-Za-z0-9._@:+=~-]*+/[A-Za-z0-9._@:+=~/-]*+|(?!{_NOT_A_STRING}\n)[A-Za-z][A-Za-z0-9._@:+=~/-]*+)(?<!:)"
_NODE_IMAGES = re.compile(
    rf"\n    images:\n(?:    - names:\n(?:      - {_IMAGE_NAME}\n)++      sizeBytes: (?:0|[1-9][0-9]{{0,17}})\n)++"
    r"(?=(?:    |  )?[A-Za-z]|- |\Z)"
)
_CUT = "gpulint-node-images-cut-"


@dataclass(frozen=True)
class _Cut:
    text: str
    count: int


def _cut_node_images(text: str) -> _Cut:
    """``text`` with each block of Node images kubectl printed (``_NODE_IMAGES``) replaced by a numbered sentinel
    value, unread: never parsed, nor scanned for YAML 1.1 scalars. Whether each cut was a v1 Node's
    ``status.images`` is told once the text is read (``_CutImages``)."""
    if _CUT in text:
        return _Cut(text, 0)
    numbers = itertools.count()
    cut = _NODE_IMAGES.sub(lambda _: f"\n    images: {_CUT}{next(numbers)}\n", text)
    return _Cut(cut, next(numbers))


@dataclass
class _CutImages:
    """``compact`` for a text whose Node images were cut: each cut must come back once, as the ``status.images``
    of a v1 Node item (else ValueError: the text is read uncut), and is dropped before ``compact`` sees the item,
    which then holds what it would hold once compacted."""

    compact: Compact
    found: set[str] = field(default_factory=set)

    def __call__(self, item: Any) -> Any:
        status = item.get("status") if isinstance(item, dict) else None
        if not isinstance(status, dict):
            return self.compact(item)
        images = status.get("images")
        if isinstance(images, str) and images.startswith(_CUT):
            if item.get("apiVersion") != "v1" or item.get("kind") != "Node" or images in self.found:
                raise ValueError("cut text that was no v1 Node's images")
            self.found.add(images)
            del status["images"]
        return self.compact(item)


# `kubectl get -o yaml`: a top-level "items:" whose block sequence starts at column 0, one "- " line per item.
_ITEMS = re.compile(r"^items:[ \t]*\n(?=- )", re.MULTILINE)
# Where that sequence ends: the first line at column 0 that is no item start, indented text, comment or blank.
_ITEMS_END = re.compile(r"\n(?:[^- #\n]|-[^ \n])")  # a literal first: the engine skips to each newline in C
CHUNK_CHARS = 1 << 20  # items are parsed this many characters at a time (a whole item at least)
_SENTINEL = "gpulint-items-read-apart"


def _read(text: str, compact: Compact | None, max_items: int | None = None) -> Any:
    """``yaml_rs.loads(text)``, with the items of a List read a chunk of items at a time and each passed through
    ``compact`` as it is read: a fleet's nodes are never held whole.

    The text is cut only where it must mean the same cut: at a line that starts with "- " at column 0, inside a
    top-level ``items:`` sequence at column 0. Such a line ends any block scalar, plain scalar or indented
    collection before it; a quoted scalar or flow collection open across the cut leaves its chunk unterminated, an
    error (then the whole file goes to the full loader). The rest of the document is read with the items replaced
    by a sentinel, which must come back as the value of its top-level ``items`` key (else: read whole).

    What yaml-rs reads whole (the text, or one item larger than a chunk) is held to the loader's MAX_YAML_NODES: it
    costs up to ~170 bytes a value (a flow list of ``{}``, measured), twice what an inventory's value budget assumes
    of a reader that keeps items compacted one at a time (~80). Past it, the loader reads it, held to that budget."""
    match = _ITEMS.search(text) if compact is not None and _SENTINEL not in text else None
    if match is None or compact is None:
        return _whole(text)
    start = match.end()
    end_match = _ITEMS_END.search(text, start)
    end = len(text) if end_match is None else end_match.start() + 1
    outer = yaml_rs.loads(f'{text[: match.start()]}items: "{_SENTINEL}"\n{text[end:]}', parse_datetime=False)
    if not isinstance(outer, dict) or outer.get("items") != _SENTINEL:
        return _whole(text)
    items: list[Any] = []
    while start < end:
        cut = text.find("\n- ", min(start + CHUNK_CHARS, end), end)
        stop = end if cut < 0 else cut + 1
        chunk = _whole(text[start:stop])
        if not isinstance(chunk, list):
            raise ValueError("an items chunk that is no sequence")
        if max_items is not None and len(items) + len(chunk) > max_items:
            raise ReadStopped(f"more than {max_items} items")
        items.extend(compact(item) for item in chunk)
        start = stop
    outer["items"] = items
    return outer


def _whole(text: str) -> Any:
    """``yaml_rs.loads(text)``, when the values it may hold are within MAX_YAML_NODES (see ``_read``)."""
    # a text of fewer characters than a third of the budget holds fewer values (node_bound: at most 3 a character)
    if len(text) > MAX_YAML_NODES // 3 and node_bound(text.encode("utf-8", "surrogatepass")) > MAX_YAML_NODES:
        raise ValueError("more values than yaml-rs may hold whole: the loader counts them")
    return yaml_rs.loads(text, parse_datetime=False)


def _several_documents(text: str) -> bool:
    """More than one document, or a document end marker: the full loader keeps documents apart."""
    if "\n---" not in text and "\n..." not in text and not text.startswith("..."):
        return False  # one document, perhaps with a leading "---"
    return _marker_lines(text)


def _marker_lines(text: str) -> bool:
    lines = [line for line in text.split("\n") if line.startswith(("---", "..."))]
    starts = [line for line in lines if line == "---" or line.startswith(("--- ", "---\t"))]
    ends = [line for line in lines if line == "..." or line.startswith(("... ", "...\t"))]
    return bool(ends) or len(starts) > 1 or (len(starts) == 1 and not text.startswith("---"))


def _has_structure(text: str) -> bool:
    for match in _SPECIAL.finditer(text):
        at = match.start()
        char, before, after = match.group(), text[at - 1 : at] or "\n", text[at + 1 : at + 2] or "\n"
        if char in "&*!":  # an anchor, alias or tag where a node may start
            if before in _NODE_START_BEFORE and after not in " \t\n,]}":
                return True
        elif char == "<":
            if text.startswith("<<", at) and text[at + 2 : at + 20].lstrip(" \t").startswith(":"):
                return True
        elif char == "?":  # a complex key, block or flow, or a scalar starting with "?": where a node may start
            if before in _NODE_START_BEFORE:
                return True
        elif before == "\n":  # "%" starting a line: a directive
            return True
    return False


# remembered for short tokens only, as the loader's tags are: a webhook reads its inventory again for months,
# and a long one (base64 data that starts with a digit) would stay in memory
@short_strings_remembered(65_536, max_chars=_REMEMBERED_LENGTH)
def _agree(token: str, is_key: bool) -> bool:
    """Whether a plain scalar reads the same in gpulint's loader and in yaml-rs."""
    try:
        ours = _yaml11(token)
    except Exception:  # an explicit tag that does not fit cannot be here; anything odd: not agreed
        return False
    if is_key and not isinstance(ours, str):
        return False  # gpulint turns other keys into their text; yaml-rs does not
    if isinstance(ours, str) and not _NUMBER_12.fullmatch(token) and token not in _WORDS_12:
        return True  # a string in YAML 1.1, and nothing else in YAML 1.2
    try:
        answer: Any = yaml_rs.loads(f"v: {token}\n", parse_datetime=False)
        theirs = answer["v"]
    except Exception:
        return False
    return type(ours) is type(theirs) and ours == theirs


_WORDS_12 = {"true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "~"}
_RESOLVER = Resolver()  # libyaml's loader (CSafeLoader) resolves plain scalars with this class


def _yaml11(token: str) -> Any:
    node = ScalarNode(_RESOLVER.resolve(ScalarNode, token, (True, False)), token)
    return _scalar(node, _CONSTRUCTOR)
