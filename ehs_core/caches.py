"""What a worker keeps between requests, in one place: named caches, each
bounded (the least recently used entry goes first), safe under the threads
of a worker, and kept per app in its registry (two apps in one process, a
test's app without a plugin, say, share nothing).

Only what no person could tell from a fresh read belongs here: reference
data under its version (`ehs_core.refdata`) and statements built once per
shape of a query (`incidents.listing`). A value is shared by every request
of the worker: callers read it and never change it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Any, TypeVar

from pyramid.registry import Registry

T = TypeVar("T")
# Where an app's caches live in its registry.
REGISTRY_KEY = "ehs.caches"
_MAKING = threading.Lock()


class Cache:
    """A bounded mapping, least recently used first out, with a lock."""

    def __init__(self, name: str, size: int) -> None:
        self.name = name
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            return self._items[key]

    def __setitem__(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __getitem__(self, key: Hashable) -> Any:
        with self._lock:
            return self._items[key]

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self.keys())

    def keys(self) -> list[Hashable]:
        with self._lock:
            return list(self._items)

    def items(self) -> list[tuple[Hashable, Any]]:
        with self._lock:
            return list(self._items.items())

    def made(self, key: Hashable, make: Callable[[], T]) -> T:
        """The value kept under `key`, else `make()`, kept (made outside
        the lock: two threads may both make it, and either is right)."""
        found = self.get(key, _MISSING)
        if found is _MISSING:
            found = make()
            self[key] = found
        return found

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


_MISSING = object()


def named(registry: Registry, name: str, size: int) -> Cache:
    """The app's cache `name` (made on first use with room for `size` entries)."""
    caches: dict[str, Cache] | None = registry.get(REGISTRY_KEY)
    if caches is None:
        with _MAKING:
            caches = registry.setdefault(REGISTRY_KEY, {})
    found = caches.get(name)
    if found is None:
        with _MAKING:
            found = caches.setdefault(name, Cache(name, size))
    return found


def forget(registry: Registry, name: str | None = None) -> None:
    """Empty the app's cache `name`, or all of them."""
    for cache in list(registry.get(REGISTRY_KEY, {}).values()):
        if name is None or cache.name == name:
            cache.clear()
