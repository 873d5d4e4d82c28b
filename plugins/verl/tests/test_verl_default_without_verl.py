"""verl_default scores every branch where verl cannot be imported (verl is installed here, for
the parity tests: a package named ``verl`` that refuses to import is put in front of it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REFUSE = 'raise ImportError("verl-rewards-verl must score without {name}")\n'

SCRIPT = """
import json, sys
for name in ("verl", "mathruler"):
    try:
        __import__(name)
    except ImportError as e:
        assert "must score without" in str(e), e
    else:
        raise AssertionError(name + " imported")
from verl_rewards.checking import check_named
from verl_rewards_verl.default import compute_score
report = check_named("verl_default")
extras = compute_score("math_dapo", "Answer: 7", "7")
print(json.dumps({"ok": report.ok, "examples": report.examples_run, "report": report.format(), "extras": extras,
                  "imported": sorted(m for m in sys.modules if m.split(".")[0] in ("verl", "mathruler"))}))
"""


def test_every_branch_scores_where_verl_cannot_be_imported(tmp_path: Path) -> None:
    for name in ("verl", "mathruler"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(REFUSE.format(name=name))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["ok"], result["report"]
    assert result["examples"] == 13  # every branch's self-test examples: gsm8k ... searchR1, code and SymPy
    assert result["extras"] == {"score": 1.0, "acc": True, "pred": "7"}
    assert result["imported"] == []
