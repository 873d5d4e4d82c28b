"""Open sessions (episodes): at most ``limit`` at once, closed after ``ttl_s`` without a
request (the ORS convention: 15 minutes), each remembering its last few tool calls so
a client that lost a stream can read the call's result again by its ``task_id``.

Event-loop only (no lock); a clock is passed in, so the rules test without waiting.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...errors import BadRequest

MAX_SID_CHARS = 128
CALLS_KEPT = 4  # per session: the results a reconnecting client may read again


@dataclass
class Session:
    """One episode: its environment instance, when it was last used, its recent calls."""

    env: Any
    seen: float
    calls: OrderedDict[str, asyncio.Future[str]] = field(default_factory=OrderedDict)

    def remember(self, task_id: str, call: asyncio.Future[str]) -> None:
        """Keep ``call``'s result readable under ``task_id`` (the oldest beyond
        :data:`CALLS_KEPT` are forgotten)."""
        self.calls[task_id] = call
        while len(self.calls) > CALLS_KEPT:
            self.calls.popitem(last=False)


class Sessions:
    """The open sessions by id."""

    def __init__(self, limit: int, ttl_s: float, retry_after_s: int,
                 on_count: Callable[[int], None] = lambda n: None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._open: dict[str, Session] = {}
        self._limit, self._ttl_s, self._retry = limit, ttl_s, retry_after_s
        self._on_count, self._clock = on_count, clock

    def __len__(self) -> int:
        return len(self._open)

    def check_new(self, sid: str) -> None:
        """A 400 for an id in use or too long, a 429 when ``limit`` sessions are open."""
        if len(sid) > MAX_SID_CHARS:
            raise BadRequest(400, f"X-Session-ID is {len(sid)} characters; at most {MAX_SID_CHARS}")
        if sid in self._open:
            raise BadRequest(400, f"session {sid!r} already exists")
        if len(self._open) >= self._limit:
            raise BadRequest(429, f"{len(self._open)} sessions are open, the limit ({self._limit}, "
                                  f"--max-sessions); close finished ones (POST /delete) or retry later",
                             {"Retry-After": str(self._retry)})

    def add(self, sid: str, env: Any) -> Session:
        """Open session ``sid`` (checked by :meth:`check_new`)."""
        self.check_new(sid)
        session = self._open[sid] = Session(env, self._clock())
        self._on_count(len(self._open))
        return session

    def get(self, sid: str) -> Session:
        """The open session ``sid`` (now used), or a 404."""
        session = self._open.get(sid)
        if session is None:
            raise BadRequest(404, f"no open session {sid!r}: create it (POST /create); a session "
                                  f"unused for {self._ttl_s:g} s is closed")
        session.seen = self._clock()
        return session

    def close(self, sid: str) -> bool:
        """Close ``sid``; whether it was open."""
        found = self._open.pop(sid, None) is not None
        self._on_count(len(self._open))
        return found

    def close_idle(self) -> list[str]:
        """Close the sessions unused for ``ttl_s``; their ids."""
        cutoff = self._clock() - self._ttl_s
        idle = [sid for sid, s in self._open.items() if s.seen < cutoff]
        for sid in idle:
            del self._open[sid]
        self._on_count(len(self._open))
        return idle
