"""The held-out variants of issue #29 keep the outcome their set's outcomes.yaml records.

A variant recorded caught must stay caught with the same shared findings (a regression, or a new finding
on both twins to review); one recorded as a miss must stay missed (a new catch: record it, and the figure
in docs/precision.md). Every set, tests/heldout/ and each tests/heldout<N>/, is held. The definition of caught is in tests/heldout_measure.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from heldout_measure import measure, recorded, variants

VARIANTS = variants()
OUTCOMES = recorded()


def test_every_variant_has_a_recorded_outcome() -> None:
    assert sorted(OUTCOMES) == sorted(v["slug"] for v in VARIANTS)


def test_every_variant_cites_its_report_and_has_both_twins() -> None:
    assert len({v["slug"] for v in VARIANTS}) == len(VARIANTS), "a slug names one variant across the sets"
    for variant in VARIANTS:
        assert variant["source"].startswith("https://github.com/"), variant["slug"]
        assert variant["expect"]["rules"], variant["slug"]
        for twin in ("broken.yaml", "fixed.yaml"):
            assert (variant["folder"] / twin).is_file(), (variant["slug"], twin)


@pytest.mark.parametrize("variant", VARIANTS, ids=[v["slug"] for v in VARIANTS])
def test_variant_keeps_its_outcome(variant: dict[str, Any]) -> None:
    want = OUTCOMES[variant["slug"]]
    got = measure(variant)
    if want["outcome"] == "caught":
        assert got.caught, (got.cause, got.left, got.brought)
        assert list(got.shared) == sorted(want.get("shared", [])), got.shared
    else:
        assert not got.caught, f"{variant['slug']} is caught now: record it in its set's outcomes.yaml"
