"""Server-sent events as the Open Reward Standard uses them: a ``task_id`` event, a
comment every ``ping_s`` while the work runs (clients drop a stream that is silent for
30 s), then the result in ``chunk`` events of 4096 characters and a last ``end`` (or an
``error`` event when the work raised)."""

from __future__ import annotations

import asyncio

from aiohttp import web

PING_S = 10.0  # the openreward server's ping interval
CHUNK_CHARS = 4096  # the openreward server's chunk size
HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def event(name: str, data: str) -> bytes:
    """One event; each line of ``data`` gets its own ``data:`` field."""
    fields = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"event: {name}\n{fields}\n".encode()


def result_events(text: str) -> bytes:
    """``text`` as ``chunk`` events and a final ``end``."""
    parts = [text[i:i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)] or [""]
    return b"".join(event("end" if i == len(parts) - 1 else "chunk", part) for i, part in enumerate(parts))


async def stream(request: web.Request, task_id: str, work: asyncio.Future[str],
                 ping_s: float = PING_S) -> web.StreamResponse:
    """Answer ``request`` with ``work``'s result as events; a client that goes away
    leaves ``work`` running (its result stays readable by ``task_id``). Work that ends
    within ``ping_s`` is answered in one write (several small writes would each wait on
    the client's delayed acknowledgement); longer work streams, with pings."""
    await asyncio.wait({work}, timeout=ping_s)
    if work.done():
        return web.Response(body=event("task_id", task_id) + _outcome(work), headers=HEADERS)
    response = web.StreamResponse(headers=HEADERS)
    await response.prepare(request)
    try:
        await response.write(event("task_id", task_id))
        while not work.done():
            await asyncio.wait({work}, timeout=ping_s)
            if not work.done():
                await response.write(b": ping\n\n")
        await response.write(_outcome(work))
        await response.write_eof()
    except ConnectionError:  # the client went away: nothing more to tell it
        pass
    return response


def _outcome(work: asyncio.Future[str]) -> bytes:
    error = work.exception()
    if error is not None:
        return event("error", f"{type(error).__name__}: {error}")
    return result_events(work.result())


def one_event(name: str, data: str) -> web.Response:
    """One ``name`` event and an empty ``end`` (``/create_session``)."""
    return web.Response(body=event(name, data) + event("end", ""), headers=HEADERS)
