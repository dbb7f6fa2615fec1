"""Reading manifests defensively: any field may be missing or of the wrong type in user input."""

from __future__ import annotations

from typing import Any


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, dict) else {}


def sequence(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def dig(data: Any, *path: Any) -> Any:
    """The value at ``path`` (keys and list indexes), or None where the path breaks."""
    for step in path:
        if isinstance(data, dict):
            data = data.get(step)
        elif isinstance(data, list) and isinstance(step, int) and 0 <= step < len(data):
            data = data[step]
        else:
            return None
    return data


def integer(value: Any, default: int | None = None) -> int | None:
    """An integer field (booleans are not integers); ``default`` when absent (null); None (unknown) when of
    another type: ``replicas: $NUM_NODES`` is a value still to be filled in, not the API's default."""
    if value is None:
        return default
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def decimal(word: str) -> int | None:
    """A number written as text (an annotation, a flag, a label): a decimal of ASCII digits that an int64 holds,
    else None. ``str.isdigit`` takes superscripts (``"²"``) that ``int`` refuses, and Python converts no more
    than 4,300 digits: either would end a check in an internal error."""
    if not 0 < len(word) <= 18 or not word.isascii() or not word.isdigit():
        return None
    return int(word)


def counted(word: str) -> int | None:
    """A count written as text (``host:slots``, ``--np 4``): a positive :func:`decimal`, else None."""
    return decimal(word) or None


def type_name(value: Any) -> str:
    """How a value's type is named in messages, in YAML's words ("a number", "a list", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def text(value: Any) -> str:
    """``value`` when it is a string, else an empty one."""
    return value if isinstance(value, str) else ""
