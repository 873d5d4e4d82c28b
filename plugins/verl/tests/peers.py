"""verl 0.9.1's own ``default_compute_score``, run in a child process, each sample under a deadline.

For the samples verl cannot score in this process: its code scorer forks and
runs programs, and some inputs make its scorers hang (the differences the
README lists). The child imports verl's scorers once, then forks one process
per sample and kills it at the sample's deadline, so a hang costs only its
deadline and proves itself (``TIMED_OUT``). Every process it starts is in its
own process group, killed on the way out.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TIMED_OUT = "timed out"

# verl's package __init__ imports torch, Ray and transformers (20-30 s on a loaded machine);
# its scorers need none of that. The child gives `verl` and `verl.utils` empty parents with
# the real paths, so the scorer modules (and what they import) load as they are, except
# `verl.utils.metric` (torch, for a type prime_math's timeout helper module names but its
# scorers never use), which is an empty stand-in.
_IMPORT_VERL = r"""
import importlib.util, json, os, sys, time, types
root = importlib.util.find_spec("verl").submodule_search_locations[0]
for name, path in (("verl", root), ("verl.utils", root + "/utils")):
    package = types.ModuleType(name)
    package.__path__ = [path]
    sys.modules[name] = package
metric = types.ModuleType("verl.utils.metric")
metric.Metric = type("Metric", (), {})
sys.modules["verl.utils.metric"] = metric
"""
_SCRIPT = _IMPORT_VERL + r"""
from verl.utils.reward_score import default_compute_score

rows, timeout_s, out_dir = json.load(open(sys.argv[1])), float(sys.argv[2]), sys.argv[3]
for module in sys.argv[4:]:  # imported once, before the forks
    importlib.import_module("verl.utils.reward_score." + module)
results = []
for index, (data_source, solution_str, ground_truth) in enumerate(rows):
    out = os.path.join(out_dir, f"{index}.json")
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        try:
            value = default_compute_score(data_source, solution_str, ground_truth)
        except Exception as e:
            value = f"raised {type(e).__name__}"
        with open(out + ".tmp", "w") as f:
            json.dump(value, f)
        os.replace(out + ".tmp", out)
        os._exit(0)
    try:
        os.setpgid(pid, pid)  # also here: the group must exist before any killpg below
    except OSError:
        pass
    deadline = time.monotonic() + timeout_s
    reaped = False
    while time.monotonic() < deadline and not reaped:
        reaped = os.waitpid(pid, os.WNOHANG) != (0, 0)
        time.sleep(0.0 if reaped else 0.02)
    try:
        os.killpg(pid, 9)  # the sample's process group: a hang, or what verl left running
    except ProcessLookupError:
        pass
    if not reaped:
        os.waitpid(pid, 0)
    results.append(json.load(open(out)) if os.path.exists(out) else "timed out")
json.dump(results, open(os.path.join(out_dir, "results.json"), "w"))
"""


def verl_scores(
    rows: Sequence[tuple[str, str, Any]], timeout_s: float, preload: Sequence[str] = (), startup_s: float = 300.0
) -> list[Any]:
    """verl's ``default_compute_score`` on each row, each in a process killed after ``timeout_s``
    (its result then ``TIMED_OUT``; an exception's is ``"raised <Type>"``). ``preload``: the
    scorer modules (``prime_code``, ``prime_math``, ...) the rows need, imported once."""
    with tempfile.TemporaryDirectory(prefix="verl-parity-") as tmp:
        rows_file, err_file = Path(tmp, "rows.json"), Path(tmp, "stderr.txt")
        rows_file.write_text(json.dumps([list(r) for r in rows]))
        argv = [sys.executable, "-c", _SCRIPT, str(rows_file), str(timeout_s), tmp, *preload]
        with err_file.open("wb") as err:
            child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
            try:
                child.wait(timeout=startup_s + len(rows) * (timeout_s + 5))
            finally:
                _kill_group(child)
        results_file = Path(tmp, "results.json")
        if not results_file.exists():
            raise RuntimeError(f"verl's scorer exited {child.returncode}: "
                               f"{err_file.read_text(errors='replace')[-2000:]}")
        results: list[Any] = json.loads(results_file.read_text())
        return results


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    """Kill the child's group (verl's prime_code leaves Manager processes there), then reap it."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.wait()


# prime_code's run_test on a program that writes the given text: the output comparison alone.
# run_test disables os functions in its process (reliability_guard): in a child, never here;
# and only once (a second time it fails on what the first disabled), hence the no-op after.
_COMPARE_SCRIPT = _IMPORT_VERL + r"""
from verl.utils.reward_score.prime_code import testing_util
from verl.utils.reward_score.prime_code.testing_util import run_test
testing_util.reliability_guard()
testing_util.reliability_guard = lambda *args, **kwargs: None
verdicts = []
for stdout, expected in json.load(open(sys.argv[1])):
    program = "import sys\nsys.stdout.write(" + repr(stdout) + ")"
    results, _ = run_test({"inputs": [""], "outputs": [expected]}, test=program, timeout=5)
    verdicts.append(results == [True])
json.dump(verdicts, open(sys.argv[2], "w"))
"""


def verl_output_verdicts(pairs: Sequence[tuple[str, str]], timeout_s: float = 120.0) -> list[bool]:
    """Whether verl's prime_code passes each (program output, expected output) pair."""
    with tempfile.TemporaryDirectory(prefix="verl-compare-") as tmp:
        pairs_file, out_file = Path(tmp, "pairs.json"), Path(tmp, "verdicts.json")
        pairs_file.write_text(json.dumps([list(p) for p in pairs]))
        done = subprocess.run([sys.executable, "-c", _COMPARE_SCRIPT, str(pairs_file), str(out_file)],
                              capture_output=True, text=True, timeout=timeout_s)
        if done.returncode != 0:
            raise RuntimeError(f"verl's run_test exited {done.returncode}: {done.stderr[-2000:]}")
        verdicts: list[bool] = json.loads(out_file.read_text())
        return verdicts
