"""Files that are YAML or JSON but no Kubernetes manifest, known by their name or place.

Skipped before they are read, with a debug note: a chart's metadata (``Chart.yaml`` has an
``apiVersion`` and no ``kind``), its values, a kustomization, CI and tool configuration. Other
files without ``apiVersion``/``kind`` (dashboards, devcontainer files) are read and counted as
documents that are not objects, never reported.
"""

from __future__ import annotations

import fnmatch
import os

from gpulint.lint.inputs.render.layout import KUSTOMIZATION_FILES

# basename -> what it is
_BY_NAME = {
    "Chart.yaml": "a Helm chart's metadata",
    "Chart.lock": "a Helm chart's dependency lock",
    "requirements.yaml": "a Helm chart's dependencies (apiVersion v1 charts)",
    "requirements.lock": "a Helm chart's dependency lock",
    "values.schema.json": "a Helm chart's values schema",
    ".pre-commit-config.yaml": "pre-commit's configuration",
    ".pre-commit-hooks.yaml": "pre-commit hook definitions",
    ".gpulint.yaml": "gpulint's configuration",
    ".gitlab-ci.yml": "a GitLab CI pipeline",
    ".golangci.yml": "golangci-lint's configuration",
    ".golangci.yaml": "golangci-lint's configuration",
    ".yamllint": "yamllint's configuration",
    ".yamllint.yaml": "yamllint's configuration",
    "azure-pipelines.yml": "an Azure pipeline",
    "codecov.yml": "Codecov's configuration",
    "mkdocs.yml": "MkDocs' configuration",
    "docker-compose.yml": "a Docker Compose file",
    "docker-compose.yaml": "a Docker Compose file",
    "compose.yaml": "a Docker Compose file",
    "compose.yml": "a Docker Compose file",
    "devcontainer.json": "a devcontainer definition",
    ".devcontainer.json": "a devcontainer definition",
    "package.json": "an npm package manifest",
    "package-lock.json": "an npm lock file",
    "tsconfig.json": "TypeScript's configuration",
    "renovate.json": "Renovate's configuration",
    **{
        name: "a kustomization (kustomize's build instructions, rendered as an overlay)" for name in KUSTOMIZATION_FILES
    },
}
# Helm values files, however a repository names them. Read all the same: a document in one that has
# both apiVersion and kind is a manifest (a values file's own `kind: DaemonSet` option is not).
_VALUES = (
    ("values.yaml", "Helm values"),
    ("values.yml", "Helm values"),
    ("values-*.yaml", "Helm values"),
    ("values-*.yml", "Helm values"),
    ("values.*.yaml", "Helm values"),
    ("values_*.yaml", "Helm values"),
    ("*-values.yaml", "Helm values"),
    ("*-values.yml", "Helm values"),
    ("*.values.yaml", "Helm values"),
)


def values_file(path: str) -> bool:
    lowered = os.path.basename(path).lower()
    return any(fnmatch.fnmatchcase(lowered, pattern) for pattern, _ in _VALUES)


# directory names (anywhere in the path) -> what their YAML is
_BY_DIRECTORY = (
    ((".github", "workflows"), "a GitHub Actions workflow"),
    ((".github",), "GitHub configuration"),
    ((".circleci",), "a CircleCI pipeline"),
    ((".buildkite",), "a Buildkite pipeline"),
    ((".devcontainer",), "a devcontainer definition"),
    ((".gitlab",), "GitLab configuration"),
    ((".vscode",), "editor settings"),
)


def not_kubernetes(path: str) -> str | None:
    """What the file is, when its name or place says it is no Kubernetes manifest; else None."""
    name = os.path.basename(path)
    if name in _BY_NAME:
        return _BY_NAME[name]
    parts = os.path.normpath(path).replace(os.sep, "/").split("/")[:-1]
    for directories, what in _BY_DIRECTORY:
        for start in range(len(parts) - len(directories) + 1):
            if tuple(parts[start : start + len(directories)]) == directories:
                return what
    return None
