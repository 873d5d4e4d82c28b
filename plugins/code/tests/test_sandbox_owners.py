"""Which leftovers are stale: made in this PID namespace by a process that is gone."""

from __future__ import annotations

import os
import subprocess
import sys

from verl_rewards_code.sandbox.owners import made_by_a_dead_process, owner_tag


def test_only_names_of_dead_processes_of_this_namespace_are_stale() -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    namespace = owner_tag().split("-")[0]
    assert made_by_a_dead_process(f"{namespace}-{int(dead.stdout)}-abc")
    assert not made_by_a_dead_process(f"{owner_tag()}-abc")  # this process
    assert not made_by_a_dead_process(f"{int(namespace) + 1}-{int(dead.stdout)}-abc")  # another namespace
    assert not made_by_a_dead_process("muuqudcn")  # an older name: not ours to judge
    assert owner_tag().endswith(f"-{os.getpid()}")
