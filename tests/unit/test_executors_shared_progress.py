"""A worker's progress in shared memory: the host reads the call in flight without the
worker's help, in another process."""

from __future__ import annotations

import os
import time

from verl_rewards.executors.shared_progress import SharedProgress, map_block, new_block, read


def test_each_call_and_its_end_are_readable_through_another_mapping():
    fd = new_block()
    writer, reader = map_block(fd), map_block(fd)
    os.close(fd)
    progress = SharedProgress(writer)
    assert read(reader).first is None
    progress.begin(7, 1.5, span=3)
    report = read(reader)
    assert (report.first, report.span, report.allowed) == (7, 3, 1.5)
    assert 0 <= report.running_for < 5
    progress.index = None  # what the scoring loop does at a call's end
    assert read(reader).first is None
    progress.begin(8)  # no limit
    assert (read(reader).first, read(reader).allowed) == (8, None)


def test_a_forked_writer_is_read_by_its_parent():
    fd = new_block()
    block = map_block(fd)
    pid = os.fork()
    if pid == 0:  # the worker: writes, then stays in one call
        SharedProgress(map_block(fd)).begin(42, 2.0)
        time.sleep(5)
        os._exit(0)
    try:
        deadline = time.monotonic() + 10
        while read(block).first != 42 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert read(block).first == 42 and read(block).allowed == 2.0
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)
