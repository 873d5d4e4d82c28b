"""A worker process of the ``process`` executor (started by :mod:`.process_pool`).

It resolves the reward once, then scores the chunks its host sends, streaming
each chunk's pieces back (:func:`.chunks.score_chunk`, as a Ray actor does).
Requests and replies travel on two private pipes (:mod:`.channel`), never on
stdout, which goes to the host's stderr: a reward may print what it likes. The
scoring loop's progress is written to a block the host maps
(:mod:`.shared_progress`), so the host can tell a call stuck in C even when this
process cannot answer. User code runs on a thread of its own, never the main
thread, so a reward's own ``KeyboardInterrupt`` is its sample's failure
(:func:`~verl_rewards.errors.is_host_interrupt`), as on every executor.

Messages, host to worker: ``{"sys_path", "reward"}`` once (``reward``: the pickled
spec and limits, loaded once ``sys.path`` is set), then
``("score", samples, first_index, precise)`` per chunk and ``("close",)``.
Worker to host: ``("ready", {"pid", "timeout_s"})`` or ``("error", exception)``
once, then per chunk ``("piece", Piece)``... until its samples are all sent (the
host counts them: no frame ends a chunk, one wake-up less per call), or
``("failed", exception)`` if the scoring loop itself broke; ``("closed",)``.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
from collections.abc import Sequence
from typing import Any

from ..child import exit_with_parent
from ..dispatch import LoadedSpec, loaded_rewards, resolve_spec
from ..errors import ExecutorError
from ..limits import Limits, longest
from ..spec import RewardSpec, refs_of
from .channel import ChannelError, read_frame, write_frame
from .chunks import score_chunk
from .shared_progress import SharedProgress, map_block


def main(argv: Sequence[str]) -> None:
    """``argv``: the requests fd, the replies fd, the progress block's fd, the host's pid."""
    requests, replies, block, host = (int(a) for a in argv)
    exit_with_parent(host)
    for fd in (requests, replies, block):  # programs the reward runs do not get them
        os.set_inheritable(fd, False)
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)  # a print is seen before a kill
    progress = SharedProgress(map_block(block))
    worker = threading.Thread(target=_serve, args=(requests, replies, progress),
                              name="verl-rewards-worker")
    worker.start()
    worker.join()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a reward closed it; nothing left to say
            pass
    # Not sys.exit: threads the reward left running must not keep a closed worker alive.
    os._exit(0)


def _serve(requests: int, replies: int, progress: SharedProgress) -> None:
    try:
        setup = read_frame(requests)
    except ChannelError:
        return
    sys.path[:] = setup["sys_path"]
    try:
        spec, limits = pickle.loads(setup["reward"])
    except Exception as e:  # a kwarg of a class this process cannot import
        write_frame(replies, ("error", ExecutorError(
            f"a reward worker process cannot receive the reward: {type(e).__name__}: {e}; its kwargs "
            f"must be importable in a fresh process (or use reward.executor=local)"[:2000])))
        return
    loaded = _ready(spec, limits, replies)
    if loaded is None:
        return
    while True:
        try:
            request = read_frame(requests)
        except ChannelError:  # the host closed our pipe: it is done with us
            return
        if request[0] == "close":
            _close(spec)
            write_frame(replies, ("closed",))
            return
        _, samples, first_index, precise = request
        try:
            for piece in score_chunk(loaded, samples, limits, first_index, precise, progress, _dumps):
                write_frame(replies, ("piece", piece))
        except Exception as e:  # the scoring loop itself, not a sample: the chunk's rest fails
            write_frame(replies, ("failed", sendable(e)))


def _ready(spec: RewardSpec, limits: Limits, replies: int) -> LoadedSpec | None:
    try:
        loaded = resolve_spec(spec)
    except Exception as e:  # a load error: the host raises it
        write_frame(replies, ("error", sendable(e)))
        return None
    write_frame(replies, ("ready", {"pid": os.getpid(), "timeout_s": longest(limits, loaded_rewards(loaded))}))
    return loaded


def _close(spec: RewardSpec) -> None:
    from ..resolve import release

    release(*refs_of(spec))


def _dumps(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def sendable(error: Exception) -> Exception:
    """``error`` if it pickles intact (our errors do), else an :class:`ExecutorError` saying it."""
    try:
        pickle.loads(pickle.dumps(error, protocol=pickle.HIGHEST_PROTOCOL))
        return error
    except Exception:  # a user exception that does not pickle
        return ExecutorError(f"{type(error).__name__}: {error}"[:2000])
