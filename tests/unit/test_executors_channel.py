"""Frames between the host and a worker process: the host side never blocks, whatever
the other end does (stops halfway through a frame, writes garbage, stops reading)."""

from __future__ import annotations

import os
import time

import pytest

from verl_rewards.executors.channel import (
    ChannelError,
    FrameReader,
    frame,
    read_frame,
    send_frame,
    write_frame,
)


@pytest.fixture
def pipe():
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        try:
            os.close(fd)
        except OSError:
            pass


def test_a_message_round_trips_through_a_pipe(pipe):
    r, w = pipe
    write_frame(w, ("piece", {"score": 1.0}, [1, 2]))
    assert read_frame(r) == ("piece", {"score": 1.0}, [1, 2])


def test_the_reader_takes_a_frame_written_in_parts_without_waiting_for_the_rest(pipe):
    r, w = pipe
    os.set_blocking(r, False)
    reader = FrameReader(r)
    data = frame(("end",))
    os.write(w, data[:5])
    reader.fill()  # returns at once: half a header
    assert not reader.ready()
    os.write(w, data[5:-1])
    reader.fill()
    assert not reader.ready()  # the writer stopped one byte short: still not a frame
    os.write(w, data[-1:] + frame(("closed",)))
    reader.fill()
    assert reader.next() == ("end",) and reader.next() == ("closed",)
    os.close(w)
    reader.fill()
    assert reader.ready() and reader.closed
    with pytest.raises(ChannelError, match="closed its channel"):
        reader.next()


def test_bytes_that_are_not_a_frame_end_the_stream(pipe):
    r, w = pipe
    os.set_blocking(r, False)
    reader = FrameReader(r)
    os.write(w, b"\xff" * 8 + b"garbage")  # a length no frame has
    reader.fill()
    assert reader.ready()
    with pytest.raises(ChannelError, match="is not one of ours"):
        reader.next()
    os.write(w, (7).to_bytes(8, "little") + b"garbage")
    reader = FrameReader(r)
    reader.fill()
    with pytest.raises(ChannelError, match="unreadable frame"):
        reader.next()


def test_sending_to_a_reader_that_never_reads_gives_up_at_its_deadline(pipe):
    _, w = pipe
    os.set_blocking(w, False)
    began = time.monotonic()
    with pytest.raises(ChannelError, match="did not read its request within 0.5 s"):
        send_frame(w, b"x" * (4 << 20), 0.5)  # far past the pipe's buffer
    assert time.monotonic() - began < 5


def test_sending_to_a_reader_that_is_gone_says_so(pipe):
    r, w = pipe
    os.close(r)
    os.set_blocking(w, False)
    with pytest.raises(ChannelError, match="the worker is gone"):
        send_frame(w, frame(("close",)), 5.0)
