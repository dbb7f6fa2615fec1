"""The one edit distance and the one "did you mean" test every hint in gpulint uses."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpulint.kube.typos import edit_distance, typo_of
from gpulint.lint.checks.device_class_unknown import closest
from gpulint.lint.config import similar_rules

NAMES = st.text(alphabet="abcde-1", max_size=9)


def _reference(a: str, b: str) -> int:
    """Optimal string alignment by its textbook recursion, for comparison."""
    rows = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        for j in range(len(b) + 1):
            if min(i, j) == 0:
                rows[i][j] = max(i, j)
                continue
            rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
    return rows[len(a)][len(b)]


@given(NAMES, NAMES)
def test_the_distance_is_optimal_string_alignment_and_symmetric(a, b):
    assert edit_distance(a, b) == _reference(a, b) == edit_distance(b, a)


@given(NAMES, NAMES, st.integers(min_value=0, max_value=4))
def test_a_limited_distance_is_exact_up_to_the_limit_and_above_it_otherwise(a, b, limit):
    full, limited = edit_distance(a, b), edit_distance(a, b, limit)
    assert limited == full if full <= limit else limited > limit


def test_a_swap_is_one_edit():
    assert edit_distance("queue", "qeuue") == 1
    assert edit_distance("queue", "qeuue", limit=1) == 1


def test_a_shared_suffix_or_another_number_is_no_typo():
    assert typo_of("my-scheduler", ["hami-scheduler"]) is None
    assert typo_of("queue-2", ["queue-1"]) is None
    assert typo_of("user-queu", ["user-queue", "other"]) == "user-queue"


def test_rule_and_device_class_hints_count_a_swap_as_one_edit():
    assert similar_rules("gpu-reqeust-without-limit", {"gpu-request-without-limit", "gpu-limit-mismatch"}) == [
        "gpu-request-without-limit"
    ]
    assert closest("gpu.vndiia.com", ["gpu.nvidia.com", "tpu.google.com"]) == "gpu.nvidia.com"
