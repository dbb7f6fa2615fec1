"""Bounded memos: a thread-safe LRU (the CEL engine's, the scheduler's and the checks' caches), and the
lru_cache of a pure function of short strings.

Its own module so that a run that evaluates no CEL does not import the CEL engine for it."""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

K = TypeVar("K")
V = TypeVar("V")
F = TypeVar("F", bound=Callable[..., Any])

# Strings longer than this are worked out each time, never remembered: valid names are shorter (a qualified
# name is at most 317 characters), and a memo keeps what it is asked for as long as the process runs.
MAX_REMEMBERED_CHARS = 512


def short_strings_remembered(maxsize: int, max_chars: int = MAX_REMEMBERED_CHARS) -> Callable[[F], F]:
    """A bounded functools.lru_cache of a pure function whose first argument is a string, for strings of at
    most ``max_chars`` characters; a longer one is worked out each time. Manifests repeat their names, so the
    memo pays; but it lives as long as a webhook, whose clients send the strings: a custom resource's pod
    template reaches it unvalidated, and thousands of megabyte-long label keys must not stay in memory."""

    def remember(function: F) -> F:
        remembered = functools.lru_cache(maxsize=maxsize)(function)

        def call(text: str, *rest: Any) -> Any:
            return remembered(text, *rest) if len(text) <= max_chars else function(text, *rest)

        def call_one(text: str) -> Any:  # most are functions of one name: called without packing the others
            return remembered(text) if len(text) <= max_chars else function(text)

        if function.__code__.co_argcount == 1:
            call = call_one
        functools.update_wrapper(call, function)
        call.cache_info = remembered.cache_info  # type: ignore[attr-defined]
        call.cache_clear = remembered.cache_clear  # type: ignore[attr-defined]
        return cast(F, call)

    return remember


class LRU(Generic[K, V]):
    """A bounded mapping that forgets the least recently used entry (thread-safe: the webhook's threads share it)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self._computing: dict[K, threading.Lock] = {}  # keys being computed by get_or_compute, under _lock

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def get_or_compute(self, key: K, compute: Callable[[], V]) -> V:
        """The value of ``key``, computed by ``compute()`` when absent - by one thread at a time: the
        webhook's concurrent first reviews of an inventory wait for the one computing a fact instead
        of each computing it (eight connections computed the 1,000 nodes' facts eight times). Another
        key is never held up; when ``compute`` raises, the next waiter computes it itself."""
        value = self.get(key)
        if value is not None:
            return value
        with self._lock:
            flight = self._computing.setdefault(key, threading.Lock())
        try:
            with flight:
                value = self.get(key)  # computed while this thread waited
                if value is None:
                    value = compute()
                    self.put(key, value)
                return value
        finally:
            with self._lock:
                if self._computing.get(key) is flight:
                    del self._computing[key]

    def __len__(self) -> int:
        return len(self._items)
