"""field.Error from k8s.io/apimachinery pkg/util/validation/field: a path, a type, the bad value, a detail."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from gpulint.kube.go_text import quote
from gpulint.kube.refs import Path

REQUIRED = "Required value"
INVALID = "Invalid value"
FORBIDDEN = "Forbidden"
DUPLICATE = "Duplicate value"
NOT_SUPPORTED = "Unsupported value"
TOO_LONG = "Too long"
TOO_MANY = "Too many"
NOT_FOUND = "Not found"
_NO_VALUE = (REQUIRED, FORBIDDEN, TOO_LONG)
OMIT = object()  # a bad value the message leaves out


@dataclass(frozen=True)
class FieldError:
    path: Path  # into the object, as the finding's location
    kind: str
    value: Any = OMIT
    detail: str = ""
    shown: Path | None = None  # the path the message names when it is not where the value is (a map's key)
    keys: frozenset[int] = frozenset()  # positions in the path that are map keys: printed as [key]
    at_key: bool = False  # the map key at the end of the path is what is wrong (the finding points at it)

    @cached_property  # a message is asked for several times (deduplication, the first line, the note)
    def field(self) -> str:
        """The path as field.Path prints it: spec.devices.requests[0].exactly.count, metadata.labels[app]."""
        out = ""
        for position, step in enumerate(self.path if self.shown is None else self.shown):
            if isinstance(step, int):
                out += f"[{step}]"
            elif out and (position in self.keys or self._is_key(step)):
                out += f"[{step}]"
            else:
                out += ("." if out else "") + str(step)
        return out

    @staticmethod
    def _is_key(step: Any) -> bool:
        return isinstance(step, str) and not step.replace("_", "a").isalnum()

    @cached_property
    def _message(self) -> str:
        return self._worded(True)

    def message(self, detail: bool = True) -> str:
        """field.Error.Error(); without its detail when ``detail`` is false."""
        return self._message if detail else self._worded(False)

    def _worded(self, detail: bool) -> str:
        if self.kind in _NO_VALUE or self.value is OMIT:
            body = self.kind
        elif isinstance(self.value, bool):
            body = f"{self.kind}: {'true' if self.value else 'false'}"
        elif isinstance(self.value, (int, float)):
            body = f"{self.kind}: {self.value}"
        elif isinstance(self.value, str):
            body = f"{self.kind}: {quote(self.value)}"
        else:
            body = f"{self.kind}: {json.dumps(self.value, separators=(',', ':'), default=str)}"
        return f"{self.field}: {body}" + (f": {self.detail}" if self.detail and detail else "")


def too_many(path: Path, actual: int, maximum: int) -> FieldError:
    return FieldError(path, TOO_MANY, actual, f"must have at most {maximum} item{'s' if maximum != 1 else ''}")


def too_long(path: Path, maximum: int) -> FieldError:
    return FieldError(path, TOO_LONG, OMIT, f"may not be more than {maximum} byte{'s' if maximum != 1 else ''}")


def not_supported(path: Path, value: Any, supported: tuple[str, ...]) -> FieldError:
    return FieldError(path, NOT_SUPPORTED, value, "supported values: " + ", ".join(quote(str(v)) for v in supported))
