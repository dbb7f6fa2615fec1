"""The bounded memo the webhook's reviews share (gpulint/kube/lru.py): a value missing is computed by
one thread while the others wait for it, and another key is never held up."""

from __future__ import annotations

import threading
import time

import pytest

from gpulint.kube.lru import LRU


def test_concurrent_misses_compute_a_value_once():
    memo: LRU[str, list[int]] = LRU(4)
    calls: list[int] = []
    start = threading.Barrier(8)
    got: list[list[int]] = []

    def compute() -> list[int]:
        calls.append(threading.get_ident())
        time.sleep(0.05)  # long enough that the other seven ask while it runs
        return [1, 2]

    def ask() -> None:
        start.wait(5)
        got.append(memo.get_or_compute("nodes", compute))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(calls) == 1
    assert len(got) == 8 and all(value is got[0] for value in got)  # the one value, not eight equal copies
    assert memo._computing == {}  # nothing left behind


def test_a_key_being_computed_does_not_hold_up_another():
    memo: LRU[str, str] = LRU(4)
    computing, release = threading.Event(), threading.Event()

    def slow() -> str:
        computing.set()
        release.wait(10)
        return "slow"

    thread = threading.Thread(target=memo.get_or_compute, args=("a", slow))
    thread.start()
    try:
        assert computing.wait(5)
        assert memo.get_or_compute("b", lambda: "fast") == "fast"  # answered while "a" is still computing
    finally:
        release.set()
        thread.join(10)
    assert memo.get("a") == "slow"


def test_a_failed_computation_leaves_the_key_to_the_next_caller():
    memo: LRU[str, int] = LRU(4)

    def broken() -> int:
        raise ValueError("no")

    with pytest.raises(ValueError):
        memo.get_or_compute("k", broken)
    assert memo.get("k") is None and memo._computing == {}
    assert memo.get_or_compute("k", lambda: 7) == 7
    assert memo.get_or_compute("k", broken) == 7  # kept: not computed again


def test_the_bound_holds_for_computed_values():
    memo: LRU[int, int] = LRU(2)
    for key in range(5):
        assert memo.get_or_compute(key, lambda key=key: key * 10) == key * 10
    assert len(memo) == 2 and memo.get(4) == 40 and memo.get(0) is None


def test_short_strings_are_remembered_and_long_ones_worked_out_each_time():
    """The memos of pure functions of names live as long as a webhook, and its clients choose the names: a long
    string is answered as a short one is, and never kept."""
    from gpulint.kube.lru import MAX_REMEMBERED_CHARS, short_strings_remembered

    calls: list[str] = []

    @short_strings_remembered(2)
    def shout(text: str, times: int = 1) -> str:
        calls.append(text)
        return text.upper() * times

    long = "x" * (MAX_REMEMBERED_CHARS + 1)
    assert [shout("a"), shout("a"), shout("a", 2), shout(long), shout(long)] == [
        "A",
        "A",
        "AA",
        long.upper(),
        long.upper(),
    ]
    assert calls == ["a", "a", long, long] and shout.cache_info().currsize == 2  # ("a",) and ("a", 2)


def test_label_keys_a_review_sends_are_remembered_only_when_short():
    """A custom resource's pod template reaches the webhook unvalidated by the API server: a label key of a
    megabyte is still reported (api-rejected's verdict, the same as for a short wrong key) but not kept by the
    memo of label-key verdicts, which would otherwise hold 8,192 of them for as long as the server runs."""
    from gpulint.kube.validation import core

    core._key_problems.cache_clear()
    huge, short = "a" * 1_000_000 + "/b", "example.com/" + "é"
    assert core._key_problems(huge) and core._key_problems(short)
    assert core._key_problems.cache_info().currsize == 1
