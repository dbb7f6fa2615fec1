"""Suppressions: object annotations, line comments, file comments and per-path config.

- ``metadata.annotations["gpulint.io/ignore"]: "rule-a,rule-b # reason"``
- ``# gpulint: disable=rule-a,rule-b`` at the end of the offending line, or alone on the line above
- ``# gpulint: disable-file=rule-a`` anywhere in the file (conventionally at the top)
``all`` matches every rule.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from gpulint.lint.findings import Finding

# The rule ids (comma-separated); anything after them is a free-text reason.
_COMMENT = re.compile(r"#\s*gpulint:\s*(disable|disable-file)\s*=\s*([A-Za-z0-9_-]+(?:\s*,\s*[A-Za-z0-9_-]+)*)")
ANNOTATION = "gpulint.io/ignore"


def _ids(text: str) -> frozenset[str]:
    return frozenset(part.strip() for part in text.split(",") if part.strip())


def annotation_rules(annotations: dict[str, Any]) -> frozenset[str]:
    value = annotations.get(ANNOTATION)
    if not isinstance(value, str):
        return frozenset()
    return _ids(value.split("#", 1)[0])


def template_annotation_rules(data: dict[str, Any]) -> list[tuple[tuple[Any, ...], frozenset[str]]]:
    """The annotation on a pod template (what a Helm chart or a controller passes down to its pods)
    suppresses findings inside that template: (path prefix of the template, rule ids)."""
    from gpulint.kube.workloads import pod_spec_sites, template_metadata

    scoped = []
    for site in pod_spec_sites(data):
        if not site.template_path:
            continue  # a Pod: its own metadata is the object's
        annotations = template_metadata(data, site).get("annotations")
        if isinstance(annotations, dict):
            rules = annotation_rules(annotations)
            if rules:
                scoped.append((tuple(site.template_path), rules))
    return scoped


@dataclass
class FileSuppressions:
    by_line: dict[int, frozenset[str]] = field(default_factory=dict)
    whole_file: frozenset[str] = frozenset()

    @classmethod
    def scan(cls, text: str) -> FileSuppressions:
        found = cls()
        if "gpulint:" not in text:  # the common case costs one substring search
            return found
        whole: set[str] = set()
        for number, line in enumerate(text.splitlines(), 1):
            if "gpulint:" not in line:
                continue
            # A comment on a line of its own covers the next line; a trailing one, its own line.
            target = number + 1 if line.lstrip().startswith("#") else number
            for match in _COMMENT.finditer(line):
                ids = _ids(match.group(2))
                if match.group(1) == "disable-file":
                    whole |= ids
                else:
                    found.by_line[target] = found.by_line.get(target, frozenset()) | ids
        found.whole_file = frozenset(whole)
        return found

    def suppresses(self, finding: Finding) -> bool:
        for ids in (self.whole_file, self.by_line.get(finding.line, frozenset())):
            if finding.rule in ids or "all" in ids:
                return True
        return False


def path_ignores(path: str, per_path: dict[str, tuple[str, ...]], root: str) -> frozenset[str]:
    """Rules ignored for ``path`` by per-path-ignores globs (relative to the config's directory)."""
    if not per_path:
        return frozenset()
    candidates = {path, PurePath(path).as_posix()}
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if not relative.startswith(".."):
        candidates.add(PurePath(relative).as_posix())
    ignored: set[str] = set()
    for glob, ids in per_path.items():
        if any(fnmatch.fnmatch(candidate, glob) or fnmatch.fnmatch(candidate, f"*/{glob}") for candidate in candidates):
            ignored.update(ids)
    return frozenset(ignored)
