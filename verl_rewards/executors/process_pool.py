"""The ``process`` executor: a pool of worker processes on this machine, without Ray.

Each worker (:mod:`.process_worker`) resolves the reward once and scores the
chunks it is sent, streaming outcomes back on a private pipe. The batch runs
on :mod:`.pool`'s loop, the Ray pool's own, so the fault policy is the same
(:mod:`.faults`): a worker that dies (``os._exit``, a segfault, a signal) is
replaced and its unfinished samples re-run, the culprit charged and failed
after ``max_sample_crashes``; a call past its allowance plus
``faults.GRACE_S`` is killed with its worker, whatever it is doing (catching
every interrupt, or stuck in C with or without the GIL: its progress is read
from shared memory, :mod:`.shared_progress`), that sample a timeout and its
chunk's others re-run; a worker past ``worker_max_calls`` or
``worker_max_rss_mb`` is recycled between chunks.

Workers are started by plain ``subprocess`` (so a host that is itself a
daemonic ``multiprocessing`` worker, AReaL's reward pool, can have them), die
with the host (:mod:`.spawn`), and are killed when the executor is closed,
collected, or the process exits. A forked copy of the executor starts workers
of its own and never touches its parent's.
"""

from __future__ import annotations

import logging
import mmap
import os
import pickle
import select
import signal
import sys
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import RewardConfig
from ..errors import ExecutorError
from ..limits import Limits, limits_for
from ..outcomes import Outcome
from ..samples import Sample
from ..spec import RewardSpec
from . import spawn
from .channel import ChannelError, FrameReader, frame, send_frame
from .chunks import Piece
from .faults import Chunk
from .pool import START_TIMEOUT_S, Event, Heartbeat, Job, Pool, Report, Slot
from .shared_progress import map_block, new_block, read

log = logging.getLogger(__name__)

SEND_TIMEOUT_S = 30.0  # for a worker to take a request off its pipe
CLOSE_TIMEOUT_S = 10.0  # for class rewards' close() when the pool stops
EXIT_WAIT_S = 1.0  # for a worker whose pipe closed to end, so we can say how it ended
_ROOT = str(Path(__file__).resolve().parents[2])  # where verl_rewards itself imports from
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from verl_rewards.executors.process_worker import main; main(sys.argv[2:])")


@dataclass(eq=False)
class _Worker:
    """One worker process and this side of its pipes."""

    process: Any  # subprocess.Popen[bytes]
    requests: int  # write end, non-blocking
    replies: FrameReader  # read end, non-blocking
    block: mmap.mmap
    ready: dict[str, Any] | None = None  # its answer once it resolved the reward (pid, timeout_s)
    broken: bool = False  # a request could not be sent: it reads as a death
    finished: bool = False  # its chunk's last piece was taken: its end is the next event
    gone: bool = False  # killed, or left to the parent (a forked copy): its fds are closed

    def kill(self) -> None:
        """Kill its process group, reap it, close our ends (once)."""
        if not self.gone:
            spawn.kill_group(self.process)
            self.let_go()

    def let_go(self) -> None:
        """Close our ends of its pipes and block, leaving the process alone (once)."""
        if self.gone:
            return
        self.gone = True
        for fd in (self.requests, self.replies.fd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.block.close()

    def describe_exit(self, wait_s: float = 0.0) -> str:
        """How it ended, read without reaping it (waiting up to ``wait_s`` for it to end:
        its pipe closes an instant before it does)."""
        ends = time.monotonic() + wait_s
        while True:
            try:
                info = os.waitid(os.P_PID, self.process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return "it ended"
            if info is not None or time.monotonic() >= ends:
                break
            time.sleep(0.01)
        if info is None:
            return "it stopped answering"
        if info.si_code == os.CLD_EXITED:
            return f"it exited with status {info.si_status}"
        try:
            name = f" ({signal.Signals(info.si_status).name})"
        except ValueError:
            name = ""
        return f"it was killed by signal {info.si_status}{name}"


def _start_worker(spec: RewardSpec, limits: Limits) -> _Worker:
    """Launch a worker and send it the reward; it answers once it has resolved it."""
    requests_r, requests_w = os.pipe()
    replies_r, replies_w = os.pipe()
    block_fd = new_block()
    fds = (requests_r, replies_w, block_fd)
    try:
        block = map_block(block_fd)
        process = spawn.launch([sys.executable, "-c", _BOOT, _ROOT, *map(str, fds), str(os.getpid())], fds)
    except BaseException:
        os.close(requests_w)
        os.close(replies_r)
        raise
    finally:
        for fd in fds:
            os.close(fd)
    os.set_blocking(requests_w, False)
    os.set_blocking(replies_r, False)
    worker = _Worker(process, requests_w, FrameReader(replies_r), block)
    # The reward travels pickled inside the set-up, read once sys.path is the host's:
    # its kwargs may hold objects of modules only that path finds (a host's tokenizer).
    setup = {"sys_path": list(sys.path), "reward": pickle.dumps((spec, limits), pickle.HIGHEST_PROTOCOL)}
    try:
        send_frame(requests_w, frame(setup), SEND_TIMEOUT_S)
    except ChannelError:
        worker.broken = True  # it died at once: confirm() says so
    return worker


class ProcessWorkers:
    """The pool's workers as local processes: a chunk is a request on a pipe, a
    heartbeat a read of the worker's shared progress block."""

    def __init__(self, spec: RewardSpec, limits: Limits) -> None:
        self._spec = spec
        self._limits = limits

    def start_one(self) -> _Worker:
        return _start_worker(self._spec, self._limits)

    def send(self, slot: Slot, chunk: Chunk, samples: Sequence[Sample]) -> Any:
        worker: _Worker = slot.worker
        try:
            data = frame(("score", list(samples), chunk.indices[0], chunk.precise))
        except Exception as e:  # a sample that does not pickle: nothing is sent
            return ExecutorError(f"a sample of this chunk cannot be sent to a worker process "
                                 f"({type(e).__name__}: {e}); use reward.executor=local for "
                                 f"samples holding live objects"[:1000])
        try:
            send_frame(worker.requests, data, SEND_TIMEOUT_S)
        except ChannelError as e:
            log.warning("reward worker (pid %d): %s", worker.process.pid, e)
            worker.broken = True
        return None

    def wait(self, jobs: Sequence[Job], starting: Sequence[Slot], timeout: float
             ) -> tuple[list[Job], list[Slot]]:
        ready = self._ready(jobs, starting)
        if ready[0] or ready[1]:
            return ready
        readers = {j.slot.worker.replies.fd: j.slot.worker.replies for j in jobs}
        readers.update({s.worker.replies.fd: s.worker.replies for s in starting})
        if not readers:
            time.sleep(timeout)
            return [], []
        poller = select.poll()
        for fd in readers:
            poller.register(fd, select.POLLIN)
        for fd, _ in poller.poll(timeout * 1000):
            readers[fd].fill()
        return self._ready(jobs, starting)

    @staticmethod
    def _ready(jobs: Sequence[Job], starting: Sequence[Slot]) -> tuple[list[Job], list[Slot]]:
        def ready(worker: _Worker) -> bool:
            return worker.broken or worker.replies.ready()

        return ([j for j in jobs if j.handle is not None or j.slot.worker.finished or ready(j.slot.worker)],
                [s for s in starting if ready(s.worker)])

    def take(self, job: Job) -> Event:
        if isinstance(job.handle, Exception):
            return job.handle
        worker: _Worker = job.slot.worker
        if worker.finished:
            worker.finished = False
            return "end"
        if worker.broken:
            return "died"
        try:
            message = worker.replies.next()
        except ChannelError:
            return "died"
        if message[0] == "piece":
            piece: Piece = message[1]
            worker.finished = piece.offset + len(piece.outcomes) >= len(job.chunk.indices)
            return piece
        if message[0] == "failed":
            return _restored(message[1])
        log.warning("reward worker (pid %d) sent %r in a chunk; replacing it", worker.process.pid,
                    message[0])
        return "died"

    def confirm(self, slot: Slot) -> bool:
        worker: _Worker = slot.worker
        if worker.broken:
            return False
        try:
            message = worker.replies.next()
        except ChannelError:
            return False
        if message[0] == "error":
            error = _restored(message[1])
            raise error from error.__cause__
        if message[0] != "ready":
            return False
        worker.ready = message[1]
        return True

    def heartbeat(self, slot: Slot) -> Heartbeat:
        worker: _Worker = slot.worker
        worker.replies.fill()
        if worker.finished or worker.replies.has_frame():  # answered: not stuck until we read it
            return Report(None, 1, 0.0, None)
        if not spawn.alive(worker.process):
            return "dead"
        report = read(worker.block)
        # Between two calls with a chunk unfinished: not stuck in a call, but not
        # answering either (blocked sending, or our pipe taken over by the reward).
        return "silent" if report.first is None else report

    def ended(self, slot: Slot) -> str | None:
        worker: _Worker = slot.worker
        return worker.describe_exit(wait_s=EXIT_WAIT_S)

    def restart(self, slot: Slot) -> None:
        worker: _Worker = slot.worker
        worker.kill()
        slot.worker = self.start_one()
        slot.starting = True

    def heartbeat_every(self, limit: float) -> float:
        return 0.0  # a read of shared memory: every poll


def _restored(error: Exception) -> Exception:
    """A worker's exception with its cause back (our errors carry it as ``.cause``)."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException) and error.__cause__ is None:
        error.__cause__ = cause
    return error


class ProcessExecutor:
    """Scores on ``num_workers`` local worker processes (no Ray); one batch at a time."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        self._spec = spec
        self._config = config
        self._name = spec.display_name
        self._workers = ProcessWorkers(spec, limits_for(config))
        self._slots: list[Slot] = []
        self._pool: Pool | None = None
        self._pid = os.getpid()
        self._finalizer: weakref.finalize[Any, Any] | None = None

    def start(self) -> None:
        """Start the workers and wait until each has resolved the reward (its load
        error, if any, is raised here)."""
        self._pid = os.getpid()
        # The finalizer holds the slots, not the executor: collected or at exit, they die.
        self._finalizer = weakref.finalize(self, _kill_all, self._slots, self._pid)
        try:
            self._slots.extend(Slot(self._workers.start_one(), starting=True)
                               for _ in range(self._config.num_workers))
            timeout_s = self._await_ready()
        except BaseException:
            self.close()
            raise
        self._pool = Pool(self._workers, self._slots, self._config, self._name, timeout_s,
                          self._cannot_start())

    def _await_ready(self) -> float | None:
        """The longest per-sample timeout, as the workers report it (a reward's own
        ``@reward(timeout_s=...)`` under ``timeout_s: auto``), once every worker is ready."""
        began = time.monotonic()
        waiting = list(self._slots)
        while waiting:
            left = START_TIMEOUT_S - (time.monotonic() - began)
            if left <= 0:
                raise ExecutorError(self._cannot_start())
            _, answered = self._workers.wait([], waiting, min(left, 1.0))
            for slot in answered:
                waiting.remove(slot)
                if not self._workers.confirm(slot):
                    raise ExecutorError(f"a reward worker process for {self._name} died as it "
                                        f"started ({slot.worker.describe_exit()}); see its output "
                                        f"above (on this process's stderr)")
                slot.starting = None
        ready: dict[str, Any] | None = self._slots[0].worker.ready
        return ready["timeout_s"] if ready else limits_for(self._config).timeout_s

    def run(self, samples: Sequence[Sample], stop_on_error: bool) -> tuple[list[Outcome], dict[str, float]]:
        """Score ``samples`` on the workers; outcomes in input order."""
        if self._pid != os.getpid():  # a forked copy: the workers are the parent's
            self._forget()
            self.start()
        if self._pool is None:
            raise ExecutorError(f"the process executor for {self._name} is not started")
        return self._pool.run(samples, stop_on_error)

    def close(self) -> None:
        """Close class rewards on each idle worker (a bounded wait), then kill every worker."""
        self._pool = None
        if self._pid != os.getpid():
            self._forget()
            return
        slots, self._slots[:] = list(self._slots), []
        self._close_rewards([s.worker for s in slots if s.starting is None])
        for slot in slots:
            slot.worker.kill()
        if self._finalizer is not None:
            self._finalizer.detach()

    def _close_rewards(self, workers: list[_Worker]) -> None:
        asked = []
        for worker in workers:
            try:
                send_frame(worker.requests, frame(("close",)), 1.0)
                asked.append(worker)
            except ChannelError:
                continue
        ends = time.monotonic() + CLOSE_TIMEOUT_S
        for worker in asked:
            while not worker.replies.ready() and time.monotonic() < ends:
                poller = select.poll()
                poller.register(worker.replies.fd, select.POLLIN)
                if poller.poll(max(0.0, ends - time.monotonic()) * 1000):
                    worker.replies.fill()
            if not worker.replies.has_frame():
                log.warning("closing reward %s in worker process %d did not end within %.0f s",
                            self._name, worker.process.pid, CLOSE_TIMEOUT_S)

    def _forget(self) -> None:
        """In a forked child: drop the parent's workers without touching them."""
        for slot in self._slots:
            slot.worker.let_go()
        self._slots[:] = []
        self._pool = None
        if self._finalizer is not None:
            self._finalizer.detach()

    def _cannot_start(self) -> str:
        return (f"no reward worker process for {self._name} was ready within {START_TIMEOUT_S:.0f} s: "
                f"the plugin takes that long to import, or the machine is out of memory or "
                f"processes; lower reward.num_workers")


def _kill_all(slots: list[Slot], pid: int) -> None:
    if os.getpid() != pid:  # a forked child's exit: the workers are not its own
        return
    for slot in list(slots):
        slot.worker.kill()
    slots[:] = []


