"""A fast reader for the YAML that means the same in YAML 1.1 and YAML 1.2: cluster inventories.

gpulint reads YAML as Kubernetes does (go-yaml, YAML 1.1: ``yes`` is a boolean, ``010`` is
octal) through libyaml's composer, keeping a position on every node (gpulint/lint/loader.py).
For a 5,000-node ``kubectl get nodes -o yaml`` snapshot (60 MB) that costs ~15 s, while
yaml-rs (a Rust parser, YAML 1.2) reads it in ~2 s. Inventories need no positions unless
something is wrong with them (the inventory loader then reads the file again, with positions).

yaml-rs is used only when its answer is provably the one gpulint's own loader would give: the
text is scanned for every construct whose meaning differs between the two (plain scalars that
YAML 1.1 reads otherwise - ``yes``/``on``/``n``, ``010``, ``1e3``, ``12:30``, non-string keys -
anchors, aliases, tags, merge keys, complex keys, directives, several documents, very deep
indentation); each candidate scalar is resolved by both and must agree. Anything else, and any
error (duplicate keys, syntax), goes to the full loader, which reports it at its line.
"""

from __future__ import annotations

import re
from typing import Any

import yaml_rs
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from gpulint.kube.lru import short_strings_remembered
from gpulint.lint.loader import _CONSTRUCTOR, _REMEMBERED_LENGTH, _scalar

MAX_INDENT = 100  # deeper block nesting goes to the full loader, which enforces MAX_DEPTH

# Characters that may start a construct the fast path does not take (anchors, aliases, tags,
# merge keys, complex keys, directives); rare in inventories, so each is looked at in Python.
_SPECIAL = re.compile(r"[&*!<?%]")
_NODE_START_BEFORE = " \t\n[{,:-"
_DEEP_INDENT = "\n" + " " * (MAX_INDENT + 1)
# A mapping entry with no key (": value" where a node starts): YAML 1.2 reads a null key, libyaml refuses it.
_EMPTY_KEY = re.compile(r"[\n{\[,][ \t-]*:(?=[ \t\n,\]}]|$)")
# Control characters (a binary file) and "{{" (a Helm template) are the full loader's to report.
_NOT_PLAIN_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\{\{")
# A plain scalar that may resolve to something other than a string, where a plain scalar can
# start, up to where it must end (end of line, a flow indicator, a comment, or ": " for a key).
_CANDIDATE = re.compile(
    r"[\s\[{,](?!-?(?:0|[1-9][0-9]{0,17})[ \t]*(?:$|[,\]}#]))([-+.]?[0-9](?:[^\s,\[\]{}#]*[^\s,\[\]{}#:])?|[yYnN]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF"
    r"|true|True|TRUE|false|False|FALSE|null|Null|NULL|~|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN))"
    r"(?=[ \t]*(?:$|[,\]}#]|(:)(?:[ \t]|$)))",
    re.MULTILINE,
)
# What YAML 1.2's core schema (yaml-rs) may read as a number: a token YAML 1.1 reads as a string
# and that is none of these is a string in both, without asking yaml-rs.
_NUMBER_12 = re.compile(
    r"[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?0[oOxXbB][0-9a-fA-F_]+|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)"
)


def load_unambiguous(text: str) -> tuple[bool, Any]:
    """(True, the document's data) when the fast reader's answer is gpulint's; else (False, None)."""
    if _DEEP_INDENT in text or _NOT_PLAIN_TEXT.search(text) or _several_documents(text) or _has_structure(text):
        return False, None
    scanned = text if text[:1].isspace() else "\n" + text  # the first scalar needs a delimiter before it too
    if _EMPTY_KEY.search(scanned):
        return False, None
    for token, colon in _CANDIDATE.findall(scanned):
        if not _agree(token, bool(colon)):
            return False, None
    try:
        data = yaml_rs.loads(text, parse_datetime=False)
    except Exception:  # yaml-rs says what is wrong without our positions: the full loader says it again
        return False, None
    # None: no document at all (only comments) or a null one; the two readers tell those apart differently
    return (False, None) if data is None else (True, data)


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
