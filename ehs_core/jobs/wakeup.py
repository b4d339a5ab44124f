"""Waking the runners of every host through Redis (`ehs.huey_url`) after
a commit. Redis only wakes: the rows are in the database, and runners poll
when no wake-up comes, so losing Redis loses nothing."""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
from collections.abc import Callable

from ehs_core.jobs.runner import POLL

# The package's logger: operators filter the outbox's lines by "ehs_core.jobs".
log = logging.getLogger(__package__)

# Redis list a commit pushes to, to wake the runners.
WAKE_KEY = "ehs:jobs:wake"


class RedisWaker:
    """Wakes the runners of every host through Redis after a commit. A
    request only sets an event: a thread of its own talks to Redis, so a
    Redis that hangs or is down slows no request, and nothing is lost (the
    runners poll). One LPUSH per burst of commits; the list is kept at one
    entry."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.pending = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._warned = 0.0

    def __call__(self) -> None:
        if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
            self._pid = os.getpid()  # a forked worker starts its own thread
            self._thread = threading.Thread(target=self._loop, name="ehs-jobs-wake", daemon=True)
            self._thread.start()
        self.pending.set()

    def _loop(self) -> None:
        import redis

        client = redis.Redis.from_url(self.url, socket_timeout=2, socket_connect_timeout=2)
        while True:
            self.pending.wait()
            self.pending.clear()
            try:
                with client.pipeline() as pipe:
                    pipe.lpush(WAKE_KEY, "1").ltrim(WAKE_KEY, 0, 0).execute()
            except Exception as exc:
                now = dt.datetime.now().timestamp()
                if now - self._warned > 60:  # one line a minute while Redis is away
                    self._warned = now
                    log.warning("Redis unreachable to wake the job runners (%s); they poll every %ss",
                                exc.__class__.__name__, POLL)


def redis_wait(url: str) -> Callable[[float], bool]:
    """For `ehs worker`: wait up to `timeout` seconds for a wake-up; False
    on a timeout or when Redis is unreachable (then it waits the timeout)."""
    import redis

    client = redis.Redis.from_url(url, socket_timeout=POLL + 3, socket_connect_timeout=2)
    stopping = threading.Event()

    def wait(timeout: float) -> bool:
        try:
            return client.blpop([WAKE_KEY], timeout=max(1, int(timeout))) is not None
        except Exception:
            stopping.wait(timeout)
            return False

    return wait
