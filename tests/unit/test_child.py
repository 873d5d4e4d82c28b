"""verl_rewards.child: a warm JSON-lines child whose deadline holds, with real faults (a handler
that computes in C holding the GIL, sleeps, exits, prints, floods its reply, reads stdin)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from verl_rewards import child as child_module
from verl_rewards.child import ChildError, JsonLineWorker, reply_channel, stdout_diverted
from verl_rewards.limits import deadline_of

HANDLERS = '''
    import os
    import sys
    import time


    class Handler:
        def __init__(self, init):
            self.init = init or {}
            print("building the handler", flush=True)  # fd 1: stderr now
            time.sleep(self.init.get("start_s", 0))

        def __call__(self, request):
            op = request["op"]
            if op == "echo":
                return {"echo": request, "init": self.init, "pid": os.getpid()}
            if op == "sleep":
                time.sleep(request["s"])
                return "slept"
            if op == "gil":
                return str(9 ** 9 ** 9 ** 9)  # one C call, holding the GIL, for ever
            if op == "exit":
                sys.stderr.write("about to exit\\n")
                sys.stderr.flush()
                os._exit(request["code"])
            if op == "print":
                print('{"id": 1, "reply": "forged by print"}', flush=True)
                os.write(1, b'{"id": 1, "reply": "forged from C"}\\n')
                return "honest"
            if op == "stdin":
                return sys.stdin.read()
            if op == "big":
                return "x" * request["n"]
            if op == "raise":
                raise ValueError("not this one")
            if op == "close":
                os.closerange(3, 4096)  # its reply channel among them
                time.sleep(120)
            raise KeyError(op)
'''


@pytest.fixture
def handlers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A handler module the children import (they get this process's ``sys.path``)."""
    (tmp_path / "tp_child_handlers.py").write_text(textwrap.dedent(HANDLERS))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "tp_child_handlers:Handler"


@pytest.fixture
def worker(handlers: str) -> Iterator[JsonLineWorker]:
    made = JsonLineWorker(handlers, init={"k": 1}, name="test child")
    yield made
    made.close()


def _children() -> set[int]:
    """Our child processes that run a worker (``verl_rewards.child``'s boot line)."""
    me = str(os.getpid())
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and b"verl_rewards.child import serve" in cmdline:
            found.add(int(entry.name))
    return found


def _gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_a_request_gets_the_handlers_reply_and_init_reaches_the_handler(worker: JsonLineWorker) -> None:
    reply = worker.request({"op": "echo", "x": [1, 2.5, None]}, 30.0)
    assert reply["echo"] == {"op": "echo", "x": [1, 2.5, None]} and reply["init"] == {"k": 1}
    assert worker.request({"op": "echo"}, 30.0)["pid"] == reply["pid"]  # warm: the same child


def test_a_late_request_is_killed_and_the_next_one_gets_a_fresh_child(worker: JsonLineWorker) -> None:
    first = worker.request({"op": "echo"}, 30.0)["pid"]
    began = time.monotonic()
    with pytest.raises(ChildError) as caught:
        worker.request({"op": "sleep", "s": 60}, 0.5)
    assert time.monotonic() - began < 2.0
    assert (caught.value.reason, caught.value.starting) == ("late", False)
    assert str(caught.value) == "test child: late: no answer within 0.5 s (answering a request)"
    assert _gone(first, 5.0)
    assert worker.request({"op": "echo"}, 30.0)["pid"] != first


def test_a_handler_holding_the_gil_in_c_is_cut_at_its_deadline_and_the_caller_stays_responsive(
        worker: JsonLineWorker) -> None:
    assert worker.start()
    ticks = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(0.05):
            ticks.append(time.monotonic())

    ticker = threading.Thread(target=tick)
    ticker.start()
    began = time.monotonic()
    try:
        with pytest.raises(ChildError, match="late"):
            worker.request({"op": "gil"}, 1.0)
    finally:
        stop.set()
        ticker.join()
    assert time.monotonic() - began < 2.5
    assert len(ticks) >= 10  # this process kept running Python while the child held its GIL


def test_the_reward_calls_time_left_bounds_a_request(worker: JsonLineWorker) -> None:
    assert worker.start()
    began = time.monotonic()
    with deadline_of(1.5), pytest.raises(ChildError) as caught:
        worker.request({"op": "gil"}, 60.0)
    assert 0.9 < time.monotonic() - began < 1.5  # it ends RETURN_MARGIN_S before the call's time
    assert "before the reward call's time ran out" in str(caught.value)
    with deadline_of(0.2), pytest.raises(ChildError, match="no time left"):
        worker.request({"op": "echo"}, 60.0)


def test_a_handler_that_exits_is_reported_with_its_code_and_last_words(worker: JsonLineWorker) -> None:
    with pytest.raises(ChildError) as caught:
        worker.request({"op": "exit", "code": 7}, 30.0)
    assert (caught.value.reason, caught.value.returncode) == ("died", 7)
    assert caught.value.last_words.endswith("about to exit\n")
    assert "building the handler" in caught.value.last_words  # what it printed went to stderr
    assert worker.request({"op": "echo"}, 30.0)["init"] == {"k": 1}


def test_a_handler_that_raises_keeps_its_child(worker: JsonLineWorker) -> None:
    pid = worker.request({"op": "echo"}, 30.0)["pid"]
    with pytest.raises(ChildError) as caught:
        worker.request({"op": "raise"}, 30.0)
    assert caught.value.reason == "raised" and "ValueError: not this one" in str(caught.value)
    assert worker.request({"op": "echo"}, 30.0)["pid"] == pid


def test_what_the_handler_prints_cannot_be_read_as_a_reply(worker: JsonLineWorker) -> None:
    for _ in range(2):
        assert worker.request({"op": "print"}, 30.0) == "honest"


def test_a_handler_reading_stdin_cannot_take_a_request(worker: JsonLineWorker) -> None:
    assert worker.request({"op": "stdin"}, 30.0) == ""
    assert worker.request({"op": "echo"}, 30.0)["echo"] == {"op": "echo"}


def test_an_oversized_reply_is_refused_and_its_child_replaced(handlers: str) -> None:
    worker = JsonLineWorker(handlers, max_reply_bytes=10_000)
    try:
        pid = worker.request({"op": "echo"}, 30.0)["pid"]
        assert worker.request({"op": "big", "n": 9_000}, 30.0) == "x" * 9_000
        with pytest.raises(ChildError, match="oversized: a reply longer than 10000 bytes"):
            worker.request({"op": "big", "n": 5_000_000}, 30.0)
        assert _gone(pid, 5.0)
        assert worker.request({"op": "echo"}, 30.0)["pid"] != pid
    finally:
        worker.close()


def test_a_child_that_closes_its_reply_channel_is_reported_silent(handlers: str) -> None:
    worker = JsonLineWorker(handlers, exit_grace_s=0.5)
    try:
        with pytest.raises(ChildError) as caught:
            worker.request({"op": "close"}, 30.0)
        assert caught.value.reason == "silent"
    finally:
        worker.close()


def test_a_slow_start_is_not_charged_to_the_request(handlers: str) -> None:
    worker = JsonLineWorker(handlers, init={"start_s": 1.5})
    try:
        began = time.monotonic()
        assert worker.request({"op": "sleep", "s": 0.1}, 0.5) == "slept"
        assert 1.5 <= time.monotonic() - began < 30.0
    finally:
        worker.close()


def test_a_child_that_does_not_start_in_time_is_killed_and_the_error_says_it_was_starting(handlers: str) -> None:
    before = _children()
    worker = JsonLineWorker(handlers, init={"start_s": 60}, startup_timeout_s=1.0)
    try:
        began = time.monotonic()
        with pytest.raises(ChildError) as caught:
            worker.request({"op": "echo"}, 30.0)
        assert time.monotonic() - began < 3.0
        assert (caught.value.reason, caught.value.starting) == ("late", True)
        assert "no answer within 1 s (starting)" in str(caught.value)
    finally:
        worker.close()
    deadline = time.monotonic() + 5
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _children() - before == set()


class Interrupt(BaseException):
    """Stands for verl-rewards' SampleTimeout, raised into the scoring thread at any point."""


def test_an_interrupted_request_does_not_leave_its_answer_for_the_next_one(
        worker: JsonLineWorker, monkeypatch: pytest.MonkeyPatch) -> None:
    assert worker.start()
    read_line = child_module._Child.read_line
    interrupt = [True]

    def interrupted(self: object, *args: object) -> bytes:
        if interrupt and interrupt.pop():
            raise Interrupt()  # after the request was sent, before its answer was read
        return read_line(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(child_module._Child, "read_line", interrupted)
    with pytest.raises(Interrupt):
        worker.request({"op": "echo", "n": 1}, 30.0)
    time.sleep(0.2)  # the child answers the abandoned request meanwhile
    assert worker.request({"op": "echo", "n": 2}, 30.0)["echo"]["n"] == 2


def test_threads_each_get_a_child_and_a_full_pool_waits_within_the_start_bound(handlers: str) -> None:
    worker = JsonLineWorker(handlers, max_children=2, startup_timeout_s=1.5)
    try:
        assert worker.start()
        results: list[object] = []
        busy = threading.Thread(target=lambda: results.append(worker.request({"op": "sleep", "s": 4}, 30.0)))
        busy.start()
        time.sleep(0.3)
        began = time.monotonic()
        assert worker.request({"op": "sleep", "s": 0.1}, 30.0) == "slept"  # a second child, started for it
        assert time.monotonic() - began < 1.5 + 1.0
        third = threading.Thread(target=lambda: results.append(worker.request({"op": "sleep", "s": 3}, 30.0)))
        third.start()
        time.sleep(0.3)
        with pytest.raises(ChildError) as caught:  # both busy, no third child: waits 1.5 s at most
            worker.request({"op": "echo"}, 30.0)
        assert (caught.value.reason, caught.value.starting) == ("late", True)
        busy.join(30)
        third.join(30)
        assert results == ["slept", "slept"]
    finally:
        worker.close()


def test_a_spare_takes_over_at_once_from_a_child_killed_for_a_late_answer(handlers: str) -> None:
    """A start of 2 s (SymPy's, reasoning-gym's take 1-5 s) would be waited for by the request after
    a late one, which a short reward call cannot afford; a spare, started while the first request
    ran, is ready instead."""
    before = _children()
    worker = JsonLineWorker(handlers, init={"start_s": 2.0}, spares=1)
    try:
        first = worker.request({"op": "sleep", "s": 5.0}, 30.0)  # the spare starts meanwhile
        assert first == "slept" and len(_children() - before) == 2
        with pytest.raises(ChildError, match="late"):
            worker.request({"op": "sleep", "s": 60}, 0.5)
        began = time.monotonic()
        with deadline_of(1.5):
            assert worker.request({"op": "echo"}, 1.0)["echo"] == {"op": "echo"}
        assert time.monotonic() - began < 1.0  # no start waited for
        deadline = time.monotonic() + 10  # and a new spare is on its way behind it, while the
        while len(_children() - before) != 2 and time.monotonic() < deadline:  # killed one is reaped
            time.sleep(0.05)
        assert len(_children() - before) == 2
    finally:
        worker.close()
    assert not any(not _gone(pid, 5.0) for pid in _children() - before)


def test_spares_stay_within_max_children_and_refuse_a_negative_count(handlers: str) -> None:
    with pytest.raises(ValueError, match="spares must be at least 0, not -1"):
        JsonLineWorker(handlers, spares=-1)
    before = _children()
    worker = JsonLineWorker(handlers, max_children=1, spares=2)
    try:
        for _ in range(3):
            assert worker.request({"op": "echo"}, 30.0)["echo"] == {"op": "echo"}
        time.sleep(2.0)  # the spares' starts
        assert len(_children() - before) == 3  # one in use (now idle) and two spares: never more
    finally:
        worker.close()


def test_a_cpu_budget_ends_a_computing_child_and_charges_no_wall_clock_wait(worker: JsonLineWorker) -> None:
    """A CPU budget is what the child computes, not how long the machine takes to let it:
    a 1.5 s sleep fits a 0.3 s budget; a C call holding the GIL is cut once it used its 0.5 s."""
    assert worker.start()
    slept, used = worker.evaluate_on_cpu({"op": "sleep", "s": 1.5}, 0.3, 30.0)
    assert slept == ("slept", None) and used < 0.3
    began = time.monotonic()
    cut, used = worker.evaluate_on_cpu({"op": "gil"}, 0.5, 30.0)
    assert cut.cut is not None and cut.cut.reason == "late"
    assert "no answer within 0.5 s of CPU time" in cut.cut.detail
    assert used >= 0.5 and cut.cut.cpu_used_s == used
    assert time.monotonic() - began < 20.0  # the 30 s wall bound did not end it
    assert worker.request({"op": "echo"}, 30.0, cpu_s=5.0)["echo"] == {"op": "echo"}  # a replacement


def test_a_cpu_budget_needs_a_worker_without_a_launch_prefix(handlers: str) -> None:
    worker = JsonLineWorker(handlers, prefix=("env",), name="prefixed")
    with pytest.raises(ValueError, match="prefixed: cpu_s needs a worker without a launch prefix"):
        worker.request({"op": "echo"}, 5.0, cpu_s=1.0)


def test_a_cancelled_wait_ends_at_once(worker: JsonLineWorker) -> None:
    assert worker.start()
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    began = time.monotonic()
    with pytest.raises(ChildError, match="cancelled"):
        worker.request({"op": "gil"}, 60.0, cancel=cancel)
    assert time.monotonic() - began < 1.5


def test_close_leaves_no_process_behind(handlers: str) -> None:
    before = _children()
    worker = JsonLineWorker(handlers, max_children=3)
    threads = [threading.Thread(target=worker.request, args=({"op": "sleep", "s": 0.5}, 30.0)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    with pytest.raises(ChildError):
        worker.request({"op": "gil"}, 0.3)  # killed, a replacement warming in the background
    assert len(_children() - before) >= 1
    worker.close()
    time.sleep(1.0)  # a replacement that was still starting is killed as it becomes ready
    deadline = time.monotonic() + 60
    while _children() - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _children() - before == set()


def test_the_parent_dying_takes_the_child_with_it_even_mid_computation(handlers: str, tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f"""
        import sys, threading
        sys.path[:0] = {sys.path!r}
        from verl_rewards.child import JsonLineWorker
        worker = JsonLineWorker({handlers!r})
        print(worker.request({{"op": "echo"}}, 60.0)["pid"], flush=True)
        threading.Thread(target=worker.request, args=({{"op": "gil"}}, 600.0)).start()  # from a short thread
        threading.Event().wait()
        """))
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        time.sleep(1.0)  # it is computing now, holding its GIL
        assert not _gone(pid, 0.1)
        parent.send_signal(signal.SIGKILL)
        parent.wait(30)
        assert _gone(pid, 10.0)
    finally:
        parent.kill()
        parent.wait(30)


def test_a_forked_copy_starts_children_of_its_own(worker: JsonLineWorker) -> None:
    pid = worker.request({"op": "echo"}, 30.0)["pid"]
    read, write = os.pipe()
    forked = os.fork()
    if forked == 0:  # the copy: the parent's child is not its own to use or kill
        code = 1
        try:
            theirs = worker.request({"op": "echo"}, 60.0)["pid"]
            os.write(write, str(theirs).encode())
            worker.close()
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    _, status = os.waitpid(forked, 0)
    theirs = int(os.read(read, 100) or b"0")
    os.close(read)
    assert os.waitstatus_to_exitcode(status) == 0
    assert theirs not in (0, pid)
    assert worker.request({"op": "echo"}, 30.0)["pid"] == pid  # ours lives on


def test_stdout_diverted_and_reply_channel_keep_stdout_for_replies_alone(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import os, sys
        from verl_rewards.child import reply_channel, stdout_diverted
        with stdout_diverted() as rows:
            print("noise")
            os.write(1, b"noise from C\\n")
            rows.write("row 1\\n")
        print("after")
        replies = reply_channel()
        print("more noise", flush=True)
        replies.write("reply\\n")
        replies.flush()
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout == "row 1\nafter\nreply\n"
    assert done.stderr == "noise\nnoise from C\nmore noise\n"
    assert callable(reply_channel) and callable(stdout_diverted)


def test_a_payload_that_is_not_json_is_the_callers_error_and_the_child_lives_on(worker: JsonLineWorker) -> None:
    pid = worker.request({"op": "echo"}, 30.0)["pid"]
    with pytest.raises(TypeError):
        worker.request({"op": "echo", "x": object()}, 30.0)
    assert worker.request({"op": "echo"}, 30.0)["pid"] == pid


def test_evaluate_makes_a_cut_request_the_answers_and_a_failed_start_the_samples(handlers: str) -> None:
    worker = JsonLineWorker(handlers, name="test child")
    try:
        assert worker.evaluate({"op": "sleep", "s": 0}, 30.0) == ("slept", None)
        late = worker.evaluate({"op": "gil"}, 0.5)
        assert late.reply is None and late.cut is not None
        assert late.why == "late: no answer within 0.5 s (answering a request)"
        assert worker.evaluate({"op": "raise"}, 30.0).why.startswith("raised: the handler raised ValueError")
    finally:
        worker.close()
    never = JsonLineWorker(handlers, init={"start_s": 60}, startup_timeout_s=0.5)
    try:
        with pytest.raises(ChildError) as caught:
            never.evaluate({"op": "echo"}, 30.0)
        assert caught.value.starting and not never.start()
    finally:
        never.close()
