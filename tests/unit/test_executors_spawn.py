"""Worker processes tied to their host: killed with their process group, started from a
thread that outlives the caller's."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from verl_rewards.executors import spawn


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


HELPER = "import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); print(p.pid, flush=True); time.sleep(600)"


def test_killing_a_worker_kills_what_it_started_in_its_session_and_reaps_it():
    r, w = os.pipe()
    worker = spawn.launch([sys.executable, "-c", f"import os; os.dup2({w}, 1); " + HELPER], [w])
    os.close(w)
    with open(r) as out:
        helper = int(out.readline())
    assert spawn.alive(worker)
    spawn.kill_group(worker)
    assert worker.returncode is not None and not spawn.alive(worker)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{helper}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    state = _stat(helper)[0] if Path(f"/proc/{helper}").exists() else "gone"
    assert state in ("gone", "Z")  # a zombie until its parent's parent reaps it: not running


def test_a_worker_launched_from_a_thread_that_ends_is_ours_and_leads_a_session_of_its_own():
    started: list[subprocess.Popen[bytes]] = []
    caller = threading.Thread(target=lambda: started.append(
        spawn.launch([sys.executable, "-c", "import time; time.sleep(600)"], [])))
    caller.start()
    caller.join(60)
    (worker,) = started
    try:
        time.sleep(0.5)  # a worker tied to the caller thread's life would be going now
        fields = _stat(worker.pid)
        assert fields[0] != "Z" and int(fields[1]) == os.getpid() and int(fields[3]) == worker.pid
    finally:
        spawn.kill_group(worker)
