"""Command line: gpulint check | rules | rule NAME.

Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it,
2 usage or configuration error, 3 internal error (a bug: please report it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from gpulint import __version__
from gpulint.cli.adoption import AdoptionOptions, adoption_options
from gpulint.cli.live import LiveCluster, check_live_or_files, live_options
from gpulint.cli.output import write_report
from gpulint.cli.render_options import apply as apply_render_options
from gpulint.cli.render_options import render_options
from gpulint.lint.config import (
    Config,
    ConfigError,
    KnownRules,
    check_rule_ids,
    check_schema_files,
    discover,
    load,
    parse_feature_gates,
    parse_kubernetes_version,
    parse_schema_location,
    repository_holding,
    repository_of,
)
from gpulint.lint.findings import Finding, Report, Severity, capped
from gpulint.report import FORMATS

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
MAX_JOBS = 64
SEVERITIES = ("error", "warning", "info")


def _split(values: tuple[str, ...]) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _known_rules(extra_policies: tuple[str, ...] = ()) -> Callable[[tuple[str, ...]], set[str]]:
    """Rule ids a configuration may name: the built-in rules and the rules of the policies it loads."""

    def known(policies: tuple[str, ...]) -> set[str]:
        from gpulint.lint.errors import PolicyError
        from gpulint.lint.registry import rule_ids

        try:
            return rule_ids((*policies, *extra_policies))
        except PolicyError as exc:
            raise ConfigError(str(exc)) from None

    return known


def _load_config(config_path: str | None, known: KnownRules, linted: tuple[str, ...] = ()) -> Config:
    """The configuration: --config's file, else the one found above the working directory. A file inside the
    repository being linted (every found one) is the repository's: it may not name programs or outside files."""
    if config_path:
        path = Path(config_path)
        if not path.is_file():
            raise ConfigError(f"--config: {config_path}: no such file")
        return load(path, known, repository_holding(path, (*linted, ".")))
    found = discover(Path.cwd())
    return load(found, known, repository_of(str(found.parent))) if found else Config()


def _use_color(choice: str, output: str | None) -> bool:
    if choice != "auto":
        return choice == "always"
    if output or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpulint")
def cli() -> None:
    """gpulint: find GPU workloads that would stay Pending, land on the wrong accelerator, or deadlock."""


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report to FILE instead of stdout.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Configuration file (default: .gpulint.yaml or pyproject.toml found walking up).",
)
@click.option("--select", multiple=True, help="Only these rules (comma-separated, repeatable).")
@click.option("--ignore", multiple=True, help="Skip these rules (comma-separated, repeatable).")
@click.option("--kubernetes-version", help="Target Kubernetes version: 1.30 to 1.37 (default 1.37).")
@click.option("--fail-on", type=click.Choice(SEVERITIES), help="Lowest severity that fails the run (default error).")
@click.option(
    "--feature-gates", help="Feature gates of the target cluster, e.g. GenericWorkload=true,CompositePodGroup=false."
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings are reported.")
@click.option(
    "--inventory",
    "inventory_paths",
    multiple=True,
    type=click.Path(),
    help="Cluster inventory: kubectl get nodes,resourceslices,deviceclasses -o yaml (file or directory; repeatable).",
)
@click.option(
    "--node-catalog",
    "catalog_paths",
    multiple=True,
    type=click.Path(),
    help="Instance-type catalog file that extends or overrides the shipped one (repeatable).",
)
@click.option(
    "--schema-location",
    "schema_locations",
    multiple=True,
    help="Folder of JSON schemas as kubeconform reads them ({kind}_{version}.json, {group}/{kind}_{version}.json), "
    "or a kubeconform template ending in .json (repeatable; custom resources only).",
)
@click.option(
    "--policy",
    "policy_paths",
    multiple=True,
    help="Policy file or directory (gpulint Policies, ValidatingAdmissionPolicies), or gpulint:NAME / "
    "gpulint:all from the shipped library (repeatable).",
)
@click.option("--fix", is_flag=True, help="Apply safe fixes in place.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a unified diff; change no file.")
@click.option(
    "--jobs",
    "-j",
    # each worker is a process with two pipes: thousands would exhaust file descriptors, not go faster
    type=click.IntRange(min=0, max=MAX_JOBS),
    default=0,
    show_default=True,
    help=f"Worker processes (0: one per usable CPU for large inputs; at most {MAX_JOBS}).",
)
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
@live_options
@render_options
@adoption_options
def check(
    paths: tuple[str, ...],
    output_format: str,
    output: str | None,
    config_path: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    kubernetes_version: str | None,
    fail_on: str | None,
    feature_gates: str | None,
    exit_zero: bool,
    inventory_paths: tuple[str, ...],
    catalog_paths: tuple[str, ...],
    schema_locations: tuple[str, ...],
    policy_paths: tuple[str, ...],
    fix: bool,
    show_diff: bool,
    jobs: int,
    color: str,
    live: LiveCluster | None,
    **reading: Any,
) -> None:
    """Lint manifests in PATHS (files, directories, or - for stdin; default: the current directory)."""
    try:
        config = _load_config(config_path, _known_rules(policy_paths), paths)
        known = _known_rules()(policy_paths or config.policies)
        selected, ignored = _split(select), _split(ignore)
        if selected:
            check_rule_ids(selected, known, "--select", "select")
        if ignored:
            check_rule_ids(ignored, known, "--ignore", "ignore")
        config = config.with_overrides(
            select=selected,
            ignore=ignored,
            kubernetes_version=parse_kubernetes_version(kubernetes_version) if kubernetes_version else None,
            fail_on=Severity.parse(fail_on) if fail_on else None,
            inventory=tuple(inventory_paths) if inventory_paths else None,
            node_catalog=tuple(catalog_paths) if catalog_paths else None,
            feature_gates=parse_feature_gates(feature_gates) if feature_gates is not None else None,
            policies=tuple(policy_paths) if policy_paths else None,
            schema_locations=tuple(parse_schema_location(p) for p in schema_locations) if schema_locations else None,
        )
        check_schema_files(config)
        config, sources = apply_render_options(config, reading)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    check_live_or_files(config, live)
    adopting = AdoptionOptions.from_options(reading)  # one **kwargs holds every option group
    from gpulint.cli.check import run_check
    from gpulint.report import encode_pieces

    if output and _is_one_of(output, paths):
        raise click.UsageError(f"--output: {output} is one of the files to check; the report would overwrite it")
    if adopting.write_baseline and _is_one_of(adopting.write_baseline, paths):
        raise click.UsageError(
            f"--write-baseline: {adopting.write_baseline} is one of the files to check; the baseline would overwrite it"
        )
    use_color = _use_color(color, output)
    result = run_check(
        list(paths) or ["."],
        config,
        output_format,
        fix=fix,
        show_diff=show_diff,
        jobs=jobs,
        color=use_color,
        live=live,
        sources=sources,
        adoption=adopting,
    )
    for message in result.messages:
        click.echo(message, err=True)
    rendered = encode_pieces(result.pieces(), "text" if show_diff else output_format)  # made as written
    if output:
        try:
            write_report(output, rendered)
        except OSError as exc:
            raise click.UsageError(f"--output: cannot write {output}: {exc.strerror or exc}") from None
    else:
        for block in rendered:
            click.echo(block, nl=False)
    if result.usage_error:
        raise CheckDone(EXIT_USAGE)
    if exit_zero:
        raise CheckDone(EXIT_OK)
    raise CheckDone(EXIT_FINDINGS if result.failed else EXIT_OK)


class CheckDone(SystemExit):
    """``gpulint check`` is over, its report written: main() leaves the process at once (leave_now)."""


def leave_now(status: int) -> NoReturn:
    """Exit with ``status`` without the interpreter's teardown, as mypy does: after a check nothing is left to
    clean up (temporary directories are gone, files closed, workers joined), and freeing the parsed files and
    the modules one object at a time is ~0.1 s of a 5,000-document run and ~10 ms of a one-file one. Output
    still buffered is flushed first; when that fails (a closed pipe), Python's own exit reports it."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(status)
    os._exit(status)


def _is_one_of(output: str, paths: tuple[str, ...]) -> bool:
    for path in paths:
        try:
            if path != "-" and os.path.isfile(path) and os.path.samefile(output, path):
                return True
        except OSError:  # the output does not exist yet (or cannot be looked at): it is no input file
            return False
    return False


def _rules_with_policies(policy_paths: tuple[str, ...], kubernetes_version: str | None = None) -> dict:
    from gpulint.lint.errors import PolicyError
    from gpulint.lint.registry import all_rules, policy_rules

    try:
        return {**all_rules(), **policy_rules(tuple(policy_paths), kubernetes_version)} if policy_paths else all_rules()
    except PolicyError as exc:
        click.echo(f"gpulint: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)


@cli.command("rules")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--policy", "policy_paths", multiple=True, help="Also list these policies' rules.")
def list_rules(output_format: str, policy_paths: tuple[str, ...]) -> None:
    """List every rule with its default severity, then the policies shipped with gpulint."""
    from gpulint.cli.rules import render_rules

    click.echo(render_rules(_rules_with_policies(policy_paths), output_format), nl=False)


@cli.command("rule")
@click.argument("name")
@click.option("--policy", "policy_paths", multiple=True, help="Policies whose rules NAME may name.")
def show_rule(name: str, policy_paths: tuple[str, ...]) -> None:
    """Print the docs of rule NAME (or of gpulint:POLICY from the shipped library): what it does, why,
    the Kubernetes rule, an example and its fix."""
    from gpulint.cli.rules import UnknownRule, rule_docs

    try:
        click.echo(rule_docs(name, _rules_with_policies(policy_paths)), nl=False)
    except UnknownRule as exc:
        raise click.UsageError(str(exc)) from None


def _inventory_config(
    config_path: str | None,
    inventory_paths: tuple[str, ...],
    live: LiveCluster | None,
    catalog_paths: tuple[str, ...] = (),
    linted: tuple[str, ...] = (),
    scoped: bool = False,
) -> Config:
    """The configuration with the inventory options; ``scoped``: the inventories of `clusters:` will do."""
    try:
        config = _load_config(config_path, _known_rules(), linted)
        config = config.with_overrides(
            inventory=tuple(inventory_paths) if inventory_paths else None,
            node_catalog=tuple(catalog_paths) if catalog_paths else None,
        )
        check_schema_files(config)  # the configuration's schema-location, as check reads it
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    if not config.inventory and live is None and not (scoped and config.clusters):
        raise click.UsageError(
            "no inventory: give --inventory PATH (or 'inventory:' in the configuration), or --live-inventory"
            + (", or map paths to clusters (clusters: in the configuration)" if scoped else "")
        )
    check_live_or_files(config, live)
    return config


def _load_cluster_or_exit(config: Config, live: LiveCluster | None, sources: list | None = None, inspect=None):
    """cli.live.load_cluster, with an inventory that cannot be read a usage error (exit 2)."""
    from gpulint.cli.live import load_cluster
    from gpulint.lint.world.inventory import InventoryError

    try:
        return load_cluster(config, live, sources, inspect)
    except InventoryError as exc:
        click.echo(f"gpulint: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def _load_scoped_or_exit(config: Config) -> list:
    """cli.live.load_scoped, with an inventory that cannot be read a usage error (exit 2)."""
    from gpulint.cli.live import load_scoped
    from gpulint.lint.world.inventory import InventoryError

    try:
        return load_scoped(config)
    except InventoryError as exc:
        click.echo(f"gpulint: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def _inventory_options(command: Callable[..., None]) -> Callable[..., None]:
    """--inventory, --live-inventory (and its options), --config and --format, as `inventory` and `explain` take them."""
    command = live_options(command)
    for option in reversed(
        (
            click.option(
                "--inventory",
                "inventory_paths",
                multiple=True,
                type=click.Path(),
                help="Inventory file or directory (repeatable; default: 'inventory:' from the configuration).",
            ),
            click.option(
                "--node-catalog",
                "catalog_paths",
                multiple=True,
                type=click.Path(),
                help="Instance-type catalog file that extends or overrides the shipped one (repeatable).",
            ),
            click.option("--config", "config_path", type=click.Path(dir_okay=False)),
            click.option(
                "--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True
            ),
        )
    ):
        command = option(command)
    return command


@cli.command("inventory")
@_inventory_options
def inventory_command(
    inventory_paths: tuple[str, ...],
    catalog_paths: tuple[str, ...],
    config_path: str | None,
    output_format: str,
    live: LiveCluster | None,
) -> None:
    """Summarize the cluster inventory (GPUs by model, zone, rack; free capacity; DRA devices) and check it."""
    import json

    from gpulint.cli.inventory import OWN_RULES, QuietFiles, render_text, summarize
    from gpulint.lint.registry import all_rules
    from gpulint.lint.run import LintRun
    from gpulint.lint.world.inventory import InventoryError, collect_inventory
    from gpulint.report import FormatOptions, encode
    from gpulint.report.text import render as render_findings

    config = _inventory_config(config_path, inventory_paths, live, catalog_paths)
    files = None
    if live is None:
        try:  # read once: summarized and checked from the same bytes, under the limit every command applies
            files = collect_inventory(list(config.inventory))
        except InventoryError as exc:
            click.echo(f"gpulint: error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
    own_checks = config.with_overrides(select=OWN_RULES, ignore=())
    quiet = QuietFiles(own_checks)  # the files linting would find nothing in are not parsed again
    inventory, sources = _load_cluster_or_exit(config, live, files, quiet.inspect)
    linted, unlinted = quiet.to_lint(sources, inventory) if inventory is not None else (sources, [])
    run = LintRun(own_checks, linted, inventory)
    report = Report([capped(file) for file in (*run.report().files, *unlinted)])
    summary = summarize(run.resolver)
    if output_format == "json":
        click.echo(
            json.dumps({"summary": summary.as_json(), "findings": [f.as_json() for f in report.findings]}, indent=2)
        )
    else:
        click.echo(encode(render_text(summary), "text"), nl=False)
        click.echo("Inventory findings:")
        click.echo(encode(render_findings(report, all_rules(), FormatOptions()), "text"), nl=False)
    worst = report.worst()
    sys.exit(EXIT_FINDINGS if worst is not None and worst >= Severity.ERROR else EXIT_OK)


@cli.command("explain")
@click.argument("paths", nargs=-1, type=click.Path(), required=True)
@click.option("--object", "object_selector", help="Only KIND/NAME or KIND/NAMESPACE/NAME.")
@_inventory_options
@render_options
def explain_command(
    paths: tuple[str, ...],
    object_selector: str | None,
    inventory_paths: tuple[str, ...],
    catalog_paths: tuple[str, ...],
    config_path: str | None,
    output_format: str,
    live: LiveCluster | None,
    **reading: Any,
) -> None:
    """Explain why the pods of the manifests in PATHS would be Pending on the inventory's cluster.

    Charts and overlays are rendered as `check` renders them; findings point at their sources."""
    from gpulint.cli.check import repository_context
    from gpulint.cli.explain import explain_objects, object_matches, render, render_json
    from gpulint.lint.errors import ToolError
    from gpulint.lint.inputs.collect import collect_all
    from gpulint.lint.inputs.render.rendered import RENDER_FAILED
    from gpulint.lint.inputs.sources import CollectOptions, SourceError
    from gpulint.lint.run import LintRun
    from gpulint.report import encode

    config = _inventory_config(config_path, inventory_paths, live, catalog_paths, paths, scoped=True)
    try:
        config, reading_options = apply_render_options(config, reading)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    options = CollectOptions(
        config.exclude,
        force_exclude=reading_options.force_exclude,
        stdin_filename=reading_options.stdin_filename,
        render=config.render.with_overrides(kubernetes_version=config.kubernetes_version),
    )
    try:
        collected = collect_all(list(paths), options=options)
    except (SourceError, ToolError) as exc:
        click.echo(f"gpulint: error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    for note in (*collected.notes, *(collected.debug_notes if reading_options.verbose else ())):
        click.echo(f"note: {note}", err=True)
    # The same run as `check` builds: the same sources (charts and overlays rendered), the same inventory
    # (a bad one fails the same way, exit 2 with file:line:col), the same linted set (with the repository
    # index), the same verdicts and findings.
    context, partial, _notes, indexed = repository_context(list(paths), collected, config)
    cluster, _ = _load_cluster_or_exit(config, live)
    scoped = _load_scoped_or_exit(config)
    run = LintRun(config, collected.sources, cluster, context=context, partial=partial, scoped=scoped, indexed=indexed)
    report = run.report(1)
    unreadable = ("yaml-invalid", RENDER_FAILED)
    for finding in report.findings:
        if finding.rule in unreadable:
            click.echo(f"{finding.file}:{finding.line}:{finding.column}: {finding.message}", err=True)
    # report(1) checks the parsed files in order: each object's findings are its file report's.
    own: dict[int, list[Finding]] = {}
    for parsed, file_report in zip(run.files, report.files, strict=True):
        for obj in parsed.objects:
            own[id(obj)] = [f for f in file_report.findings if f.obj == obj.ref and f.document == obj.document.index]
    objects = [obj for obj in run.objects() if object_matches(obj, object_selector)]
    explanations = [  # each object against the cluster its file deploys to (clusters:), as check judges it
        explanation
        for obj in objects
        for explanation in explain_objects(
            [obj], run.resolver_for(obj.document.path), lambda o: own.get(id(o), []), config.gpu_resources, config
        )
    ]
    # JSON readers get a document whenever the exit code says the run went through, even with nothing to
    # explain (every file templated or unreadable: said on stderr above).
    unexplained = not explanations and any(f.rule in unreadable for f in report.findings)
    if explanations or (unexplained and output_format == "json"):
        text = (render_json if output_format == "json" else render)(explanations)
        click.echo(encode(text, "json" if output_format == "json" else "text"), nl=False)
    elif not unexplained:
        what = f" matching --object {object_selector}" if object_selector else ""
        click.echo(f"gpulint: no pod templates{what} in {', '.join(paths)}", err=True)
        sys.exit(EXIT_USAGE)
    # The exit code `check` gives for the objects explained (and for files it cannot read or render).
    judged = [f for f in report.findings if f.rule in unreadable] + [f for obj in objects for f in own.get(id(obj), [])]
    worst = max((f.severity for f in judged), default=None)
    sys.exit(EXIT_FINDINGS if worst is not None and worst >= config.fail_on else EXIT_OK)


@cli.command("serve")
@click.option("--tls-cert", required=True, type=click.Path(exists=True, dir_okay=False), help="PEM certificate.")
@click.option("--tls-key", required=True, type=click.Path(exists=True, dir_okay=False), help="PEM private key.")
@click.option("--host", default="0.0.0.0", show_default=True)
@click.option("--port", default=8443, show_default=True, type=click.IntRange(0, 65535))
@click.option(
    "--inventory",
    "inventory_paths",
    multiple=True,
    type=click.Path(),
    help="Inventory file or directory, re-read when it changes (repeatable).",
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False))
@click.option(
    "--deny-on",
    type=click.Choice(SEVERITIES),
    default="error",
    show_default=True,
    help="Lowest severity that denies the object; the rest become warnings.",
)
@click.option("--dry-run-mode", is_flag=True, help="Never deny: every finding becomes a warning (for rollout).")
@click.option("--max-body-bytes", default=3 * 1024 * 1024, show_default=True, type=click.IntRange(1024))
@click.option(
    "--failure-mode",
    type=click.Choice(["allow", "deny"]),
    default="allow",
    show_default=True,
    help="The answer when gpulint itself fails on a request.",
)
@click.option("--inventory-poll-seconds", default=10.0, show_default=True, type=click.FloatRange(0.1))
@click.option(
    "--max-concurrency",
    default=64,
    show_default=True,
    type=click.IntRange(1),
    help="Reviews in progress at once; more are answered 503.",
)
@click.option(
    "--max-inflight-bytes",
    default=16 * 1024 * 1024,
    show_default=True,
    type=click.IntRange(1024),
    help="Request bodies being read or reviewed at once, in bytes (a review needs up to ~35 bytes of memory a "
    "byte: docs/webhook-limits.md); a review over it waits, up to its deadline, then is answered 503.",
)
@click.option(
    "--live-inventory",
    is_flag=True,
    help="Watch the cluster through the Kubernetes API (in-cluster service account, or --kubeconfig): nodes, "
    "DRA objects, queues, node pools and the autoscaler (docs/live-inventory.md).",
)
@click.option("--kubeconfig", type=click.Path(dir_okay=False), help="Kubeconfig for --live-inventory.")
@click.option("--context", "kube_context", help="Kubeconfig context for --live-inventory.")
@click.option(
    "--live-pods",
    is_flag=True,
    help="With --live-inventory: watch running Pods too (the 'does not fit now' view; memory grows with pods).",
)
@click.option("--policy", "policy_paths", multiple=True, help="Policies to enforce too (as in gpulint check).")
def serve_command(
    tls_cert: str,
    tls_key: str,
    host: str,
    port: int,
    inventory_paths: tuple[str, ...],
    config_path: str | None,
    deny_on: str,
    dry_run_mode: bool,
    max_body_bytes: int,
    failure_mode: str,
    inventory_poll_seconds: float,
    max_concurrency: int,
    max_inflight_bytes: int,
    live_inventory: bool,
    kubeconfig: str | None,
    kube_context: str | None,
    live_pods: bool,
    policy_paths: tuple[str, ...],
) -> None:
    """Run the validating admission webhook (HTTPS, POST /validate; /healthz, /readyz, /metrics)."""
    from gpulint.webhook.server import ServeOptions, run

    try:
        config = _load_config(config_path, _known_rules())
        config = config.with_overrides(
            inventory=tuple(inventory_paths) if inventory_paths else None,
            policies=tuple(policy_paths) if policy_paths else None,
        )
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    _rules_with_policies(config.policies, config.kubernetes_version)  # a broken policy: a usage error before serving
    options = ServeOptions(
        host=host,
        port=port,
        tls_cert=tls_cert,
        tls_key=tls_key,
        deny_on=Severity.parse(deny_on),
        dry_run=dry_run_mode,
        max_body_bytes=max_body_bytes,
        failure_mode=failure_mode,
        inventory_poll_seconds=inventory_poll_seconds,
        max_concurrency=max_concurrency,
        max_inflight_bytes=max_inflight_bytes,
        live_inventory=live_inventory,
        kubeconfig=kubeconfig or "",
        kube_context=kube_context or "",
        live_pods=live_pods,
    )
    try:
        run(config, options)
    except Exception as exc:
        click.echo(f"gpulint: error: cannot serve: {exc}", err=True)
        sys.exit(EXIT_USAGE)


def main() -> None:
    try:
        cli(standalone_mode=True)
    except CheckDone as done:
        leave_now(done.code if isinstance(done.code, int) else EXIT_INTERNAL)
    except KeyboardInterrupt:
        click.echo("gpulint: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        click.echo(f"gpulint: internal error: {type(exc).__name__}: {exc} (please report this)", err=True)
        if os.environ.get("GPULINT_DEBUG"):
            raise
        sys.exit(EXIT_INTERNAL)
