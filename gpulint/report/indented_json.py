"""``json.dumps(value, indent=2, ensure_ascii=False)``, the same text, faster.

With an indent, the standard library encodes in pure Python, a generator per container with every
chunk yielded up through each level. Reports are mostly short strings and integers in mappings and
lists: here each string is escaped by the C function json uses itself and each container is one
join. Anything else (a float, keys json converts, a value json refuses) is left to json.dumps,
re-indented to its depth: its text holds no raw newline but the ones that start its lines.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring as json_string  # the C escaping json uses (ensure_ascii=False)
from typing import Any

INDENT = "  "


def _null(_: None) -> str:
    return "null"


def _bool(value: bool) -> str:
    return "true" if value else "false"


# Values written as they are, by their exact type (a str or int subclass goes the longer way, as json does).
_LEAVES: dict[type, Callable[[Any], str]] = {str: json_string, int: int.__repr__, bool: _bool, type(None): _null}


def dumps(value: Any, depth: int = 0) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``; at ``depth``, its lines indented as a value
    nested that deep (its first line is not: it follows a key or an opening bracket)."""
    return _text(value, "\n" + INDENT * depth)


def _text(value: Any, newline: str) -> str:
    """``value`` encoded where its line breaks are ``newline`` (a newline and the indentation of its depth)."""
    leaf = _LEAVES.get(type(value))
    if leaf is not None:
        return leaf(value)
    if type(value) is dict:
        return _mapping(value, newline)
    if type(value) is list or type(value) is tuple:
        if not value:
            return "[]"
        inner = newline + INDENT
        return "[" + inner + ("," + inner).join([_text(item, inner) for item in value]) + newline + "]"
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", newline)


def _mapping(mapping: dict[Any, Any], newline: str) -> str:
    if not mapping:
        return "{}"
    inner = newline + INDENT
    parts = []
    for key, item in mapping.items():
        if type(key) is not str:  # json turns 1, 1.5, True, None into keys, and refuses others: its way
            return json.dumps(mapping, indent=2, ensure_ascii=False).replace("\n", newline)
        leaf = _LEAVES.get(type(item))
        parts.append(f"{json_string(key)}: {_text(item, inner) if leaf is None else leaf(item)}")
    return "{" + inner + ("," + inner).join(parts) + newline + "}"
