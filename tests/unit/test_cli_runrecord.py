"""`score --resume` continues only the same run: same input, reward and scoring config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verl_rewards.cli.main import main

LOCAL = ["reward.executor=local"]
EXACT = ["reward.plugin=exact_match", *LOCAL]

FILE_REWARD = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return {score}
"""


def _rows(n: int) -> list[dict]:
    return [{"id": i, "data_source": "d", "solution_str": str(i % 2), "ground_truth": "1"}
            for i in range(n)]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _score(source: Path, target: Path, *extra: str) -> int:
    return main(["score", "-i", str(source), "-o", str(target), "--no-progress", *extra])


def _interrupted(tmp_path: Path, *overrides: str, name: str = "out.jsonl") -> tuple[Path, Path]:
    """A run that stopped after 2 of 5 rows (its output cut back as a kill leaves it)."""
    source, target = _jsonl(tmp_path / "in.jsonl", _rows(5)), tmp_path / name
    assert _score(source, target, *overrides) == 0
    target.write_text("".join(target.read_text().splitlines(True)[:2]))
    return source, target


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err.strip().removeprefix("verl-rewards: error: ")


def test_resume_with_another_plugin_is_refused_naming_both(tmp_path, capsys, testkit):
    source, target = _interrupted(tmp_path, *EXACT)
    before = target.read_text()
    assert _score(source, target, "--resume", "reward.plugin=faulty", *LOCAL) == 2
    assert _error(capsys) == (
        f"cannot resume {target}: its rows were scored by another reward (exact_match "
        f"({testkit.label}); now faulty ({testkit.label})); score again with --overwrite, or "
        "write to another output")
    assert target.read_text() == before


def test_resume_with_other_kwargs_or_error_score_is_refused_naming_each_key(tmp_path, capsys):
    source, target = _interrupted(tmp_path, *EXACT, "reward.kwargs.bonus=0.5")
    assert _score(source, target, "--resume", *EXACT, "reward.kwargs.bonus=1.0",
                  "reward.error_score=-1") == 2
    message = _error(capsys)
    assert 'reward.error_score was 0.0, now -1;' in message
    assert 'reward.kwargs was {"bonus": 0.5}, now {"bonus": 1.0}' in message


def test_resume_after_the_input_changed_is_refused(tmp_path, capsys):
    source, target = _interrupted(tmp_path, *EXACT)
    _jsonl(source, _rows(6))
    assert _score(source, target, "--resume", *EXACT) == 2
    message = _error(capsys)
    assert message.startswith(f"cannot resume {target}: its rows came from another input "
                              f"({source}, sha256 ")
    assert len(target.read_text().splitlines()) == 2


def test_resume_after_the_reward_file_changed_is_refused(tmp_path, capsys, reward_file):
    path = reward_file(FILE_REWARD.format(score=1.0))
    source, target = _interrupted(tmp_path, f"reward.path={path}", *LOCAL)
    path.write_text(FILE_REWARD.format(score=0.5))
    assert _score(source, target, "--resume", f"reward.path={path}", *LOCAL) == 2
    assert "its rows were scored by another reward (compute_score (file " in _error(capsys)


def test_resume_with_other_execution_settings_continues(tmp_path, capsys):
    source, target = _interrupted(tmp_path, *EXACT, "reward.num_workers=3")
    assert _score(source, target, "--resume", *EXACT, "reward.num_workers=1",
                  "reward.max_concurrency=4", "--batch-size", "2") == 0
    assert [json.loads(line)["id"] for line in target.read_text().splitlines()] == list(range(5))
    assert "(2 kept from the earlier run)" in capsys.readouterr().out


def test_the_record_holds_the_keys_that_decide_a_score_and_no_run_setting(tmp_path):
    from verl_rewards import Scorer
    from verl_rewards.cli.runrecord import SCORING_KEYS, RunRecord

    source = _jsonl(tmp_path / "in.jsonl", _rows(1))
    scorer = Scorer.from_config({"plugin": "exact_match", "remote_url": "http://10.0.0.5:8000",
                                 "share_pool": True, "workers_only": True})
    record = RunRecord.of(source, scorer.provenance, scorer.config)
    assert SCORING_KEYS == ("kwargs", "timeout_s", "on_error", "error_score", "rewards", "route")
    assert record.config == {"kwargs": {}, "timeout_s": "auto", "on_error": "score", "error_score": 0.0,
                             "rewards": None, "route": None}


def test_a_resume_that_only_moves_to_a_service_or_a_shared_pool_continues(tmp_path):
    from verl_rewards import Scorer
    from verl_rewards.cli.runrecord import RunRecord, check_resume, save

    source, target = _interrupted(tmp_path, *EXACT)
    served = Scorer.from_config({"plugin": "exact_match", "remote_url": "http://10.0.0.5:8000",
                                 "share_pool": "cluster", "workers_only": True, "ship_package": True})
    check_resume(target, RunRecord.of(source, served.provenance, served.config), kept=2)
    # A record written before the run keys left it (they were stored then) continues too.
    stored = json.loads((tmp_path / ".out.jsonl.run.json").read_text())
    stored["config"].update({"remote_url": None, "share_pool": False, "workers_only": False})
    (tmp_path / ".out.jsonl.run.json").write_text(json.dumps(stored))
    check_resume(target, RunRecord.of(source, served.provenance, served.config), kept=2)
    save(target, RunRecord.of(source, served.provenance, served.config))
    assert _score(source, target, "--resume", *EXACT) == 0


def test_a_moved_input_with_the_same_rows_continues(tmp_path):
    source, target = _interrupted(tmp_path, *EXACT)
    moved = source.rename(tmp_path / "moved.jsonl")
    assert _score(moved, target, "--resume", *EXACT) == 0
    assert len(target.read_text().splitlines()) == 5


def test_overwrite_records_the_new_run(tmp_path):
    source, target = _interrupted(tmp_path, *EXACT)
    assert _score(source, target, "--overwrite", "reward.plugin=faulty", *LOCAL) == 0
    target.write_text("".join(target.read_text().splitlines(True)[:3]))
    assert _score(source, target, "--resume", "reward.plugin=faulty", *LOCAL) == 0
    assert len(target.read_text().splitlines()) == 5


def _from_stdin(monkeypatch: pytest.MonkeyPatch, source: Path, target: Path, *extra: str) -> int:
    monkeypatch.setattr("sys.stdin", open(source))
    return main(["score", "-i", "-", "-o", str(target), "--no-progress", *extra, *EXACT])


@pytest.mark.parametrize("name", ["out.jsonl", "out.parquet"])
def test_a_stdin_resume_continues_only_where_the_output_ended(tmp_path, capsys, monkeypatch, name):
    source, target = _jsonl(tmp_path / "in.jsonl", _rows(5)), tmp_path / name
    assert _from_stdin(monkeypatch, _jsonl(tmp_path / "head.jsonl", _rows(2)), target) == 0
    other = _jsonl(tmp_path / "other.jsonl", [{**r, "solution_str": "x"} for r in _rows(5)])
    assert _from_stdin(monkeypatch, other, target, "--resume") == 2
    assert _error(capsys) == (f"cannot resume {target}: its last row (2) is not row 2 of <stdin> "
                              "(solution_str differ): the rows came from another input; score "
                              "again with --overwrite")
    assert _from_stdin(monkeypatch, source, target, "--resume") == 0
    assert "(2 kept from the earlier run)" in capsys.readouterr().out
    if name.endswith(".jsonl"):
        ids = [json.loads(line)["id"] for line in target.read_text().splitlines()]
    else:
        import pyarrow.parquet as pq

        ids = pq.read_table(target).column("id").to_pylist()
    assert ids == list(range(5))
