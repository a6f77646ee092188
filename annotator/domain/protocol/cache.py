"""A per-process cache of what is computed once per protocol document, bounded: the least recently used entry
goes first.

Every screen asks for its protocol's loaded form, reading, description and label styles; computing them once
per document is what keeps the pages fast. But a version is never edited (a change is a new version), so an
unbounded cache keeps every version a process ever saw: 21 new 4 MB versions took a worker from 255 to
559 MB (issue 38, item 7; docs/benchmarks.md, "Memory per protocol version"). ``CACHED_PROTOCOLS`` documents
per cache is more than the projects a worker serves at once, and a protocol that falls out is computed again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from threading import Lock
from typing import Generic, TypeVar

CACHED_PROTOCOLS = 16  # documents per cache and process

Value = TypeVar("Value")


class ProtocolCache(Generic[Value]):
    """At most ``size`` values by key (a document's checksum, or a version's row id), least recently used first out."""

    def __init__(self, size: int = CACHED_PROTOCOLS):
        self.size = size
        self._values: OrderedDict[Hashable, Value] = OrderedDict()
        self._lock = Lock()  # threads of one worker share the cache

    def get(self, key: Hashable) -> Value | None:
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: Hashable, value: Value) -> Value:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)
        return value

    def get_or_make(self, key: Hashable, make: Callable[[], Value]) -> Value:
        """The cached value, else ``make()`` (outside the lock: two threads may both make it, the last one stays)."""
        found = self.get(key)
        return found if found is not None else self.put(key, make())

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def __len__(self) -> int:
        return len(self._values)
