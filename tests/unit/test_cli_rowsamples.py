"""cli/rowsamples.py and `score` on verl's layout: a list of responses becomes one row per
response (input row and response index), --columns paths reach into structs and maps,
and --resume continues such an output at the right response."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from verl_rewards.cli.errors import InputError
from verl_rewards.cli.main import main
from verl_rewards.cli.rowbase import Batch
from verl_rewards.cli.rowsamples import chunks, expand_batch

LOCAL = ["reward.executor=local", "reward.plugin=exact_match"]


def _verl_rows() -> list[dict]:
    return [{"data_source": "d", "prompt": [{"role": "user", "content": f"q{i}"}],
             "reward_model": {"style": "rule", "ground_truth": str(i)},
             "extra_info": {"index": i}, "responses": [str(i), "x", str(i)][: 3 - i]}
            for i in range(3)]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _read(path: Path) -> list[dict]:
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    return [json.loads(line) for line in path.read_text().splitlines()]


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1].removeprefix("verl-rewards: error: ")


def test_a_row_listing_responses_becomes_one_row_each_in_the_lists_place():
    rows = _verl_rows()
    expanded = expand_batch(Batch(rows, ["line 1", "line 2", "line 3"]), {}, Path("in.jsonl"), first_row=10)
    assert len(expanded) == 6 and expanded.expanded
    assert list(expanded.batch.rows[0]) == ["data_source", "prompt", "reward_model", "extra_info",
                                            "solution_str", "row_index", "response_index"]
    assert [(r["row_index"], r["response_index"], r["solution_str"]) for r in expanded.batch.rows] == [
        (10, 0, "0"), (10, 1, "x"), (10, 2, "0"), (11, 0, "1"), (11, 1, "x"), (12, 0, "2")]
    assert expanded.batch.where[4] == "line 2, response 2"
    assert expanded.fields[4] == {"data_source": "d", "solution_str": "x", "ground_truth": "1",
                                  "extra_info": {"index": 1}, "prompt": [{"role": "user", "content": "q1"}]}


def test_rows_without_a_list_pass_through_untouched():
    batch = Batch([{"data_source": "d", "solution_str": "1", "ground_truth": "1"}], ["line 1"])
    expanded = expand_batch(batch, {}, Path("in.jsonl"), 0)
    assert expanded.batch is batch and not expanded.expanded


def test_arrow_rows_are_repeated_with_their_types_and_the_list_replaced():
    table = pa.Table.from_pylist([{"id": 1, "responses": ["a", "b"], "when": None, "data_source": "d",
                                   "ground_truth": "a"}],
                                 schema=pa.schema([("id", pa.int8()), ("responses", pa.list_(pa.string())),
                                                   ("when", pa.timestamp("ns")), ("data_source", pa.string()),
                                                   ("ground_truth", pa.string())]))
    [record_batch] = table.to_batches()
    expanded = expand_batch(Batch(record_batch.to_pylist(), ["row 1"], record_batch), {}, Path("in.parquet"), 0)
    arrow = expanded.batch.arrow
    assert arrow.schema.names == ["id", "solution_str", "row_index", "response_index", "when", "data_source",
                                  "ground_truth"]
    assert (arrow.schema.field("id").type, arrow.schema.field("when").type) == (pa.int8(), pa.timestamp("ns"))
    assert arrow.column("solution_str").to_pylist() == ["a", "b"]
    assert arrow.column("response_index").to_pylist() == [0, 1]


def test_an_empty_list_of_responses_names_its_row():
    rows = [{"data_source": "d", "responses": [], "ground_truth": "1"}]
    with pytest.raises(InputError, match=r"^in.jsonl, line 4: 'responses' lists no responses: nothing to score$"):
        expand_batch(Batch(rows, ["line 4"]), {}, Path("in.jsonl"), 0)


def test_chunks_skip_samples_and_cut_at_the_size():
    rows = _verl_rows()
    parts = [expand_batch(Batch(rows[:2], ["a", "b"]), {}, Path("x"), 0),
             expand_batch(Batch(rows[2:], ["c"]), {}, Path("x"), 2)]
    got = [[(r["row_index"], r["response_index"]) for r in p.batch.rows] for p in chunks(iter(parts), 2, skip=1)]
    assert got == [[(0, 1), (0, 2)], [(1, 0), (1, 1)], [(2, 0)]]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_score_reads_verls_layout_with_no_flags(tmp_path, capsys, suffix):
    source = tmp_path / f"in{suffix}"
    if suffix == ".jsonl":
        _jsonl(source, _verl_rows())
    else:
        pq.write_table(pa.Table.from_pylist(_verl_rows()), source)
    target = tmp_path / f"out{suffix}"
    assert main(["score", "-i", str(source), "-o", str(target), *LOCAL]) == 0
    assert "scored 6 samples" in capsys.readouterr().out
    rows = _read(target)
    assert [(r["row_index"], r["response_index"], r["score"]) for r in rows] == [
        (0, 0, 1.0), (0, 1, 0.0), (0, 2, 1.0), (1, 0, 1.0), (1, 1, 0.0), (2, 0, 1.0)]
    assert rows[0]["reward_model"] == {"style": "rule", "ground_truth": "0"} and "responses" not in rows[0]


def test_columns_take_dotted_paths_into_struct_and_map_columns(tmp_path, capsys):
    schema = pa.schema([("meta", pa.map_(pa.string(), pa.string())),
                        ("gen", pa.struct([("texts", pa.list_(pa.string()))])), ("data_source", pa.string())])
    source = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist([{"meta": [("answer", "7")], "gen": {"texts": ["7", "8"]},
                                          "data_source": "d"}], schema=schema), source)
    target = tmp_path / "out.jsonl"
    assert main(["score", "-i", str(source), "-o", str(target), "--columns",
                 "ground_truth=meta.answer,solution_str=gen.texts", *LOCAL]) == 0
    rows = _read(target)
    assert [(r["solution_str"], r["score"]) for r in rows] == [("7", 1.0), ("8", 0.0)]
    assert rows[0]["gen"] == {"texts": ["7", "8"]}  # a list inside a struct stays where it is


def test_a_dotted_path_a_row_lacks_names_what_its_struct_holds(tmp_path, capsys):
    source = _jsonl(tmp_path / "in.jsonl", _verl_rows())
    assert main(["score", "-i", str(source), "-o", str(tmp_path / "o.jsonl"), "--columns",
                 "ground_truth=reward_model.answer", *LOCAL]) == 2
    assert _error(capsys) == (
        f"{source}, line 1, response 1: missing required field(s) ground_truth; it has no column "
        "'reward_model.answer' (--columns ground_truth=reward_model.answer) ('reward_model' holds 'style', "
        "'ground_truth'); its columns: 'data_source', 'prompt', 'reward_model', 'extra_info', 'solution_str', "
        "'row_index', 'response_index'")


def test_a_reward_model_without_ground_truth_says_what_it_holds(tmp_path, capsys):
    source = _jsonl(tmp_path / "in.jsonl", [{"data_source": "d", "solution_str": "1",
                                              "reward_model": {"style": "model", "answer": "1"}}])
    assert main(["score", "-i", str(source), "-o", str(tmp_path / "o.jsonl"), *LOCAL]) == 2
    assert _error(capsys).endswith(
        "add --columns ground_truth=COLUMN (a dotted path reaches into a struct: its 'reward_model' holds "
        "'style', 'answer', not verl's 'ground_truth')")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_resume_continues_an_expanded_output_at_the_next_response(tmp_path, capsys, suffix):
    source = _jsonl(tmp_path / "in.jsonl", _verl_rows())
    target = tmp_path / f"out{suffix}"
    common = ["score", "-i", str(source), "-o", str(target), "--batch-size", "2", *LOCAL]
    assert main(common) == 0
    whole = _read(target)
    if suffix == ".jsonl":  # as a run killed after its second batch leaves it
        target.write_text("".join(json.dumps(r) + "\n" for r in whole[:4]))
    else:
        pq.write_table(pa.Table.from_pylist(whole[:4]), target)
    capsys.readouterr()
    assert main([*common, "--resume"]) == 0
    assert "(4 kept from the earlier run)" in capsys.readouterr().out
    assert _read(target) == whole


def test_stdin_rows_listing_responses_expand_too(tmp_path, capsys, monkeypatch):
    source = _jsonl(tmp_path / "in.jsonl", _verl_rows())
    target = tmp_path / "out.jsonl"
    monkeypatch.setattr("sys.stdin", open(source))
    assert main(["score", "-i", "-", "-o", str(target), "--no-progress", *LOCAL]) == 0
    assert [r["response_index"] for r in _read(target)] == [0, 1, 2, 0, 1, 0]
