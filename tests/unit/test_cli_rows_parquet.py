"""Parquet in and out of `score`: the input's own types survive, maps reach the reward as dicts."""

from __future__ import annotations

import datetime
import decimal
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from verl_rewards.cli.main import main

LOCAL = ["reward.executor=local"]

EXTRA_LATE = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    late = extra_info["i"] if extra_info["i"] >= 2 else None
    return {"score": 1.0, "late": late}
"""

SEES_EXTRA = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return {"score": float(extra_info["lang"] == "en"), "seen": sorted(extra_info)}
"""


def _score(source: Path, target: Path, *extra: str) -> int:
    return main(["score", "-i", str(source), "-o", str(target), "--no-progress", *extra, *LOCAL])


def _typed_input(path: Path) -> pa.Schema:
    ns = pa.array([1_700_000_000_123_456_789 + i for i in range(4)], pa.timestamp("ns"))
    table = pa.table({
        "data_source": ["d"] * 4,
        "solution_str": ["1", "0", "1", "1"],
        "ground_truth": ["1"] * 4,
        "price": pa.array([decimal.Decimal("12345678.91"), None, decimal.Decimal("0.01"),
                           decimal.Decimal("-3.50")], pa.decimal128(10, 2)),
        "at": ns,
        "note": pa.array([None, None, "late", None], pa.string()),
    })
    pq.write_table(table, path)
    return table.schema


def test_parquet_output_keeps_the_input_schema_decimals_timestamps_and_late_values(tmp_path):
    schema = _typed_input(tmp_path / "in.parquet")
    target = tmp_path / "out.parquet"
    assert _score(tmp_path / "in.parquet", target, "reward.plugin=exact_match",
                  "--batch-size", "2") == 0
    out = pq.read_table(target)
    for field in schema:
        assert out.schema.field(field.name).type == field.type
        assert out.column(field.name).equals(pq.read_table(tmp_path / "in.parquet").column(field.name))
    assert out.column("score").to_pylist() == [1.0, 0.0, 1.0, 1.0]
    assert out.column("error").to_pylist() == [None] * 4
    assert out.column_names[-3:] == ["pid", "error", "status"]


def test_an_extra_key_null_in_the_first_batch_keeps_its_later_values(tmp_path, reward_file):
    path = reward_file(EXTRA_LATE)
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"data_source": "d", "solution_str": "x",
                                          "ground_truth": "y", "extra_info": {"i": i}}) + "\n"
                              for i in range(4)))
    assert _score(source, tmp_path / "out.parquet", f"reward.path={path}", "--batch-size", "2") == 0
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.column("late").to_pylist() == [None, None, 2, 3]
    assert out.column("error").to_pylist() == [None] * 4


def test_a_map_extra_info_reaches_the_reward_as_a_dict(tmp_path, reward_file):
    path = reward_file(SEES_EXTRA)
    table = pa.table({
        "data_source": ["d", "d"], "solution_str": ["a", "b"], "ground_truth": ["a", "b"],
        "extra_info": pa.array([[("lang", "en"), ("split", "test")], [("lang", "fr")]],
                               pa.map_(pa.string(), pa.string())),
    })
    pq.write_table(table, tmp_path / "in.parquet")
    assert _score(tmp_path / "in.parquet", tmp_path / "out.parquet", f"reward.path={path}") == 0
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.column("score").to_pylist() == [1.0, 0.0]
    assert out.column("seen").to_pylist() == [["lang", "split"], ["lang"]]
    assert out.schema.field("extra_info").type == table.schema.field("extra_info").type
    assert out.column("extra_info").equals(table.column("extra_info"))


def test_a_timestamp_input_can_still_be_written_as_jsonl(tmp_path):
    _typed_input(tmp_path / "in.parquet")
    assert _score(tmp_path / "in.parquet", tmp_path / "out.jsonl", "reward.plugin=exact_match") == 0
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["price"] for r in rows] == ["12345678.91", None, "0.01", "-3.50"]
    assert rows[0]["at"].startswith("2023-11-14")
    assert datetime.datetime.fromisoformat(rows[0]["at"][:26]).year == 2023


def _finished_output(path: Path, rows: int) -> bytes:
    pq.write_table(pa.table({"data_source": ["d"] * rows, "score": [1.0] * rows}), path)
    return path.read_bytes()


def test_a_failed_run_whose_parts_were_removed_under_it_leaves_the_finished_output_as_it_was(
        tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from verl_rewards.cli.rowbase import Batch
    from verl_rewards.cli.rows_parquet import ParquetSink, parts_dir

    target = tmp_path / "out.parquet"
    finished = _finished_output(target, 30)
    sink, _ = ParquetSink.open(target, "overwrite")
    sink.begin()
    rows = [{"data_source": "d", "solution_str": "1", "ground_truth": "1"}] * 10
    produced = {"score": [1.0] * 10, "error": [None] * 10, "status": ["ok"] * 10}
    sink.write(Batch(rows, [f"line {i}" for i in range(10)]), produced)
    # What a second run's start did to the first's parts before runs claimed their output:
    # removed them and began its own, continuing nothing.
    shutil.rmtree(parts_dir(target))
    parts_dir(target).mkdir()
    (parts_dir(target) / "base.json").write_text(json.dumps({"keep_rows": 0}))
    sink.close(failed=True)
    assert target.read_bytes() == finished  # not an empty file merged over it
    assert pq.read_table(target).num_rows == 30
    err = capsys.readouterr().err
    assert f"note: cannot finish {target}: this run wrote 10 rows" in err and f"{target} is as it was" in err


def test_a_finished_run_whose_parts_vanished_fails_without_touching_the_output(tmp_path: Path) -> None:
    from verl_rewards.cli.errors import OutputError
    from verl_rewards.cli.rowbase import Batch
    from verl_rewards.cli.rows_parquet import ParquetSink, parts_dir

    target = tmp_path / "out.parquet"
    finished = _finished_output(target, 5)
    sink, _ = ParquetSink.open(target, "overwrite")
    sink.begin()
    sink.write(Batch([{"data_source": "d"}], ["line 1"]), {"score": [0.5], "error": [None], "status": ["ok"]})
    shutil.rmtree(parts_dir(target))
    with pytest.raises(OutputError, match=r"is missing or unreadable .*; .* is as it was"):
        sink.close()
    assert target.read_bytes() == finished
