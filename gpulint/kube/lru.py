"""A bounded, thread-safe memo: the CEL engine's, the scheduler's and the checks' caches.

Its own module so that a run that evaluates no CEL does not import the CEL engine for it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


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
