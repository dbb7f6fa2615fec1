"""`gpulint check`'s options for reading inputs: rendering charts and overlays, stdin's name,
--force-exclude and --verbose. Kept together so `check` takes them as one group."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from gpulint.lint.config import Config


@dataclass(frozen=True)
class SourceOptions:
    """How `check` reads its inputs (the command line's --force-exclude, --stdin-filename, --verbose)."""

    force_exclude: bool = False
    stdin_filename: str = ""
    verbose: bool = False  # also show what was skipped as no manifest


_OPTIONS = (
    click.option(
        "--stdin-filename",
        metavar="NAME",
        help="The name of the input read from - (shown in findings; matched against exclude with --force-exclude).",
    ),
    click.option(
        "--force-exclude",
        is_flag=True,
        help="Apply 'exclude' to files named on the command line too (as pre-commit names them).",
    ),
    click.option("--verbose", "-v", is_flag=True, help="Also list the files skipped as no Kubernetes manifests."),
    click.option(
        "--no-render", is_flag=True, help="Do not render Helm charts and kustomize overlays; read their files."
    ),
    click.option(
        "--helm", "helm_path", metavar="PATH", help="The helm binary that renders charts (default: helm on PATH)."
    ),
    click.option("--kustomize", "kustomize_path", metavar="PATH", help="The kustomize binary that builds overlays."),
    click.option(
        "--kubectl",
        "kubectl_path",
        metavar="PATH",
        help="The kubectl binary whose `kubectl kustomize` builds overlays.",
    ),
    click.option(
        "--values",
        "helm_values",
        multiple=True,
        metavar="FILE",
        help="A values file for the charts rendered (as helm template --values; repeatable).",
    ),
    click.option(
        "--set",
        "helm_set",
        multiple=True,
        metavar="KEY=VALUE",
        help="A value for the charts rendered (as helm template --set; repeatable).",
    ),
    click.option("--helm-tests", is_flag=True, help="Also render and check the charts' tests (templates/tests/)."),
    click.option(
        "--kustomize-enable-helm", is_flag=True, help="Let kustomize inflate helmCharts (it runs the helm binary)."
    ),
    click.option(
        "--render-remote-bases",
        is_flag=True,
        help="Let kustomize fetch the remote bases an overlay names, over https only (a network connection; "
        "off by default, and never from a repository's configuration).",
    ),
)


def render_options(command: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def apply(config: Config, given: dict[str, Any]) -> tuple[Config, SourceOptions]:
    """The configuration with the command line's rendering options, and how to read the sources."""
    render = config.render.with_overrides(
        enabled=False if given.get("no_render") else None,
        helm=given.get("helm_path") or None,
        kustomize=given.get("kustomize_path") or None,
        kubectl=given.get("kubectl_path") or None,
        values=tuple(given.get("helm_values") or ()) or None,
        set_values=tuple(given.get("helm_set") or ()) or None,
        helm_tests=True if given.get("helm_tests") else None,
        kustomize_helm=True if given.get("kustomize_enable_helm") else None,
        remote_bases=True if given.get("render_remote_bases") else None,
    )
    sources = SourceOptions(
        force_exclude=bool(given.get("force_exclude")),
        stdin_filename=given.get("stdin_filename") or "",
        verbose=bool(given.get("verbose")),
    )
    return config.with_overrides(render=render), sources
