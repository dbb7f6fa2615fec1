"""The options of `gpulint check` that help a repository adopt gpulint: baselines, unsafe fixes,
unused suppressions. Kept apart from main.py so each option is declared (and read) in one place."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click


@dataclass(frozen=True)
class AdoptionOptions:
    unsafe_fixes: bool = False
    baseline: str | None = None  # --baseline FILE (overrides the configuration's `baseline`)
    write_baseline: str | None = None
    report_unused: bool = False

    @classmethod
    def from_options(cls, values: dict[str, Any]) -> AdoptionOptions:
        return cls(
            unsafe_fixes=bool(values.get("unsafe_fixes")),
            baseline=values.get("baseline"),
            write_baseline=values.get("write_baseline"),
            report_unused=bool(values.get("report_unused")),
        )


def adoption_options(command: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(
        (
            click.option(
                "--unsafe-fixes",
                is_flag=True,
                help="With --fix or --diff, also apply the fixes that change what a pod consumes (each finding "
                "shows its choices).",
            ),
            click.option(
                "--baseline",
                type=click.Path(dir_okay=False),
                help="Report only findings this baseline file does not hold (default: 'baseline' in the configuration).",
            ),
            click.option(
                "--write-baseline",
                type=click.Path(dir_okay=False),
                help="Record every current finding in FILE (atomically) and exit 0; later runs with --baseline "
                "FILE report only new ones.",
            ),
            click.option(
                "--report-unused",
                is_flag=True,
                help="Report suppressions (comments and annotations) that suppress nothing (suppression-unused).",
            ),
        )
    ):
        command = option(command)
    return command
