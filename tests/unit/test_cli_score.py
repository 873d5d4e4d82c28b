"""`verl-rewards score` in-process, on the local executor: files in and out,
the summary, and every kind of bad input."""

from __future__ import annotations

import importlib
import io
import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from verl_rewards.cli.main import main

LOCAL = ["reward.executor=local"]
FAULTS = Path(importlib.import_module("verl_rewards_testkit.faults").__file__)

EXTRA_SOMETIMES = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    score = float(solution_str == ground_truth)
    return {"score": score, "hit": solution_str} if score else score
"""


def _rows(*texts: str, truth: str = "1") -> list[dict]:
    return [{"id": i, "data_source": "d", "solution_str": t, "ground_truth": truth,
             "extra_info": {"k": i}} for i, t in enumerate(texts)]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _score(tmp_path: Path, rows: list[dict], *overrides: str, out: str = "out.jsonl") -> int:
    source = _jsonl(tmp_path / "in.jsonl", rows)
    return main(["score", "--input", str(source), "--output", str(tmp_path / out), *overrides])


def _score_file(source: Path, target: Path, plugin: str = "exact_match") -> int:
    """Score an existing ``source`` file into ``target`` on the local executor."""
    return main(["score", "-i", str(source), "-o", str(target), f"reward.plugin={plugin}", *LOCAL])


def test_jsonl_rows_are_kept_with_score_extra_keys_and_error(tmp_path, capsys, testkit):
    code = _score(tmp_path, _rows("1", "0", "raise", "nan"), "reward.plugin=faulty", *LOCAL)
    assert code == 0
    out = _read_jsonl(tmp_path / "out.jsonl")
    assert out[0] == {"id": 0, "data_source": "d", "solution_str": "1", "ground_truth": "1",
                      "extra_info": {"k": 0}, "score": 1.0, "error": None, "status": "ok"}
    assert [r["score"] for r in out] == [1.0, 0.0, 0.0, 0.0]
    assert out[2]["error"] == f"RuntimeError: the reward raised on purpose (at {FAULTS}:25 in faulty)"
    assert out[3]["error"] == (f"RewardValueError: reward faulty ({testkit.label}) returned an "
                               "invalid value for sample 3: nan is not a finite number")
    summary = capsys.readouterr().out.splitlines()
    assert summary[0].startswith(f"scored 4 samples with faulty ({testkit.label}) "
                                 "on the local executor in ")
    assert summary[1:] == ["  ok 2, failed 2, timed out 0",
                           "  mean score 0.5000 (over ok samples)",
                           "  errors by type: RuntimeError 1, RewardValueError 1",
                           f"wrote 4 rows to {tmp_path / 'out.jsonl'}"]


def test_kwargs_and_extra_keys_from_the_reward(tmp_path):
    assert _score(tmp_path, _rows("1", "2"), "reward.plugin=exact_match",
                  "reward.kwargs.bonus=0.5", *LOCAL) == 0
    out = _read_jsonl(tmp_path / "out.jsonl")
    assert [r["score"] for r in out] == [1.5, 0.5]
    assert list(out[0]) == ["id", "data_source", "solution_str", "ground_truth", "extra_info",
                            "score", "pid", "error", "status"]


def test_an_extra_key_is_a_column_of_the_batches_that_return_it(tmp_path, reward_file):
    path = reward_file(EXTRA_SOMETIMES)
    assert _score(tmp_path, _rows("0", "0", "1", "0"), f"reward.path={path}", "--batch-size", "2",
                  *LOCAL) == 0
    out = _read_jsonl(tmp_path / "out.jsonl")  # written as batches finish: no look-ahead
    assert [r.get("hit", "absent") for r in out] == ["absent", "absent", "1", None]
    assert [r["score"] for r in out] == [0.0, 0.0, 1.0, 0.0]


def test_the_rewards_columns_replace_input_columns_of_the_same_name(tmp_path):
    rows = [{**r, "score": "old", "error": "old"} for r in _rows("1")]
    assert _score(tmp_path, rows, "reward.plugin=faulty", *LOCAL) == 0
    (out,) = _read_jsonl(tmp_path / "out.jsonl")
    assert (out["score"], out["error"], out["status"]) == (1.0, None, "ok")
    assert list(out)[-3:] == ["score", "error", "status"]


def test_jsonl_rows_are_kept_as_they_were_not_padded(tmp_path):
    rows = [{"data_source": "d", "solution_str": "1", "ground_truth": "1"},
            {"data_source": "d", "solution_str": "1", "ground_truth": "1", "extra_info": {"a": 1}}]
    assert _score(tmp_path, rows, "reward.plugin=faulty", *LOCAL) == 0
    out = _read_jsonl(tmp_path / "out.jsonl")
    assert out[0] == {**rows[0], "score": 1.0, "error": None, "status": "ok"}
    assert out[1] == {**rows[1], "score": 1.0, "error": None, "status": "ok"}


def test_parquet_output_has_one_schema_with_input_columns_first(tmp_path):
    rows = [{"data_source": "d", "solution_str": "1", "ground_truth": "1"},
            {"data_source": "d", "solution_str": "1", "ground_truth": "1", "note": "late"}]
    assert _score(tmp_path, rows, "reward.plugin=exact_match", *LOCAL, out="out.parquet") == 0
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.column_names == ["data_source", "solution_str", "ground_truth", "note", "score",
                                  "pid", "error", "status"]
    assert table.column("note").to_pylist() == [None, "late"]


def test_parquet_in_and_out(tmp_path, capsys):
    source = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(_rows("1", "0", "1")), source)
    target = tmp_path / "sub" / "out.parquet"
    assert _score_file(source, target) == 0
    out = pq.read_table(target).to_pylist()
    assert [r["score"] for r in out] == [1.0, 0.0, 1.0]
    assert out[1]["extra_info"] == {"k": 1} and out[1]["error"] is None
    assert "ok 3, failed 0, timed out 0" in capsys.readouterr().out


def test_jsonl_to_parquet_and_back(tmp_path):
    assert _score(tmp_path, _rows("1", "0"), "reward.plugin=exact_match", *LOCAL,
                  out="out.parquet") == 0
    assert _score_file(tmp_path / "out.parquet", tmp_path / "again.jsonl", "faulty") == 0
    assert [r["score"] for r in _read_jsonl(tmp_path / "again.jsonl")] == [1.0, 0.0]


def test_a_timed_out_sample_is_counted(tmp_path, capsys):
    assert _score(tmp_path, _rows("loop", "1"), "reward.plugin=faulty", "reward.timeout_s=0.3",
                  *LOCAL) == 0
    out = _read_jsonl(tmp_path / "out.jsonl")
    assert out[0]["error"] == "SampleTimeout: exceeded timeout_s=0.3" and out[1]["score"] == 1.0
    summary = capsys.readouterr().out
    assert "ok 1, failed 0, timed out 1" in summary
    assert "errors by type: SampleTimeout 1" in summary


def test_config_file_with_a_trainer_reward_section_and_overrides(tmp_path):
    config = tmp_path / "trainer.yaml"
    config.write_text("trainer:\n  total_steps: 3\nreward:\n  plugin: exact_match\n"
                      "  executor: local\n  kwargs:\n    bonus: 1.0\n")
    assert _score(tmp_path, _rows("1"), "--config", str(config), "reward.kwargs.bonus=2.0") == 0
    assert _read_jsonl(tmp_path / "out.jsonl")[0]["score"] == 3.0


def test_on_error_raise_exits_1_naming_sample_and_line_keeping_the_batches_before(
        tmp_path, capsys, testkit):
    rows = _rows("1", "1", "1", "raise", "1")
    assert _score(tmp_path, rows, "reward.plugin=faulty", "reward.on_error=raise",
                  "--batch-size", "2", *LOCAL) == 1
    assert capsys.readouterr().err == (
        f"verl-rewards: error: reward faulty ({testkit.label}) failed on sample 3: "
        f"RuntimeError: the reward raised on purpose (at {FAULTS}:25 in faulty) "
        f"({tmp_path / 'in.jsonl'}, line 4); {tmp_path / 'out.jsonl'} holds 2 whole rows; "
        f"add --resume to continue\n")
    assert [r["id"] for r in _read_jsonl(tmp_path / "out.jsonl")] == [0, 1]
    assert [p.name for p in tmp_path.glob(".out.jsonl*")] == [".out.jsonl.run.json"]  # for --resume


def test_empty_input_with_allow_empty_writes_an_empty_output(tmp_path, capsys):
    assert _score(tmp_path, [], "reward.plugin=exact_match", "--allow-empty", *LOCAL) == 0
    assert (tmp_path / "out.jsonl").read_text() == ""
    assert "scored 0 samples" in capsys.readouterr().out


def test_progress_bar_on_a_terminal_only(tmp_path, capsys, monkeypatch):
    assert _score(tmp_path, _rows("1", "0"), "reward.plugin=exact_match", *LOCAL) == 0
    assert capsys.readouterr().err == ""  # not a tty: quiet

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert _score(tmp_path, _rows("1", "0"), "reward.plugin=exact_match", "--overwrite",
                  *LOCAL) == 0
    assert "2/2" in terminal.getvalue() and "100%" in terminal.getvalue()


# -- bad input and config: exit 2, one clear line -----------------------------


def _error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.removeprefix("verl-rewards: error: ").rstrip("\n")


def test_missing_input_file(tmp_path, capsys):
    assert _score_file(tmp_path / "nope.jsonl", tmp_path / "o.jsonl") == 2
    assert _error(capsys) == f"input file not found: {tmp_path / 'nope.jsonl'}"


def test_malformed_jsonl_line_names_its_line(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(_rows("1")[0]) + "\n\n{\"data_source\": oops}\n")
    assert _score_file(source, tmp_path / "o.jsonl") == 2
    assert _error(capsys) == f"{source}, line 3: malformed JSON: Expecting value (column 17)"


def test_a_line_that_is_not_an_object(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text("[1, 2]\n")
    assert _score_file(source, tmp_path / "o.jsonl") == 2
    assert _error(capsys) == f"{source}, line 1: expected a JSON object, got list"


def test_a_row_without_a_required_field(tmp_path, capsys):
    rows = _rows("1", "1")
    del rows[1]["ground_truth"]
    assert _score(tmp_path, rows, "reward.plugin=exact_match", *LOCAL) == 2
    assert _error(capsys) == (f"{tmp_path / 'in.jsonl'}, line 2: missing required field(s) ground_truth; "
                              "its columns: 'id', 'data_source', 'solution_str', 'extra_info'; if one holds "
                              "it under another name, add --columns ground_truth=COLUMN")


def test_a_parquet_row_without_a_required_field(tmp_path, capsys):
    source = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist([{"data_source": "d", "solution_str": "1"}]), source)
    assert _score_file(source, tmp_path / "o.jsonl") == 2
    assert _error(capsys) == (f"{source}, row 1: missing required field(s) ground_truth; its columns: "
                              "'data_source', 'solution_str'; if one holds it under another name, add "
                              "--columns ground_truth=COLUMN")


def _qa(path: Path) -> Path:
    return _jsonl(path, [{"data_source": "d", "response": r, "answer": "1", "id": i}
                         for i, r in enumerate(["1", "0", "1"])])


def test_columns_map_other_names_onto_the_sample_and_the_output_keeps_them(tmp_path, capsys):
    source, target = _qa(tmp_path / "qa.jsonl"), tmp_path / "out.jsonl"
    assert main(["score", "-i", str(source), "-o", str(target), "--columns",
                 "solution_str=response,ground_truth=answer", "reward.plugin=exact_match", *LOCAL]) == 0
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert [(r["response"], r["answer"], r["score"]) for r in rows] == [("1", "1", 1.0), ("0", "1", 0.0),
                                                                       ("1", "1", 1.0)]
    assert "solution_str" not in rows[0] and "ground_truth" not in rows[0]


def test_a_column_the_mapping_names_but_a_row_lacks_is_named_with_the_columns_found(tmp_path, capsys):
    source = _qa(tmp_path / "qa.jsonl")
    assert main(["score", "-i", str(source), "-o", str(tmp_path / "o.jsonl"), "--columns",
                 "solution_str=reply,ground_truth=answer", "reward.plugin=exact_match", *LOCAL]) == 2
    assert _error(capsys) == (f"{source}, line 1: missing required field(s) solution_str; it has no column "
                              "'reply' (--columns solution_str=reply); its columns: 'data_source', 'response', "
                              "'answer', 'id'")


@pytest.mark.parametrize(("spec", "message"), [
    ("solution_str", "expected FIELD=COLUMN[,FIELD=COLUMN...], e.g. solution_str=response, got 'solution_str'"),
    ("solution=response", "'solution' is not a sample field; the fields are data_source, solution_str, "
                          "ground_truth, extra_info, prompt"),
    ("solution_str=a,solution_str=b", "'solution_str' is mapped twice in 'solution_str=a,solution_str=b'"),
])
def test_a_malformed_column_mapping_is_a_usage_error(tmp_path, capsys, spec, message):
    assert main(["score", "-i", "a.jsonl", "-o", "b.jsonl", "--columns", spec]) == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"argument --columns: {message}")


def test_resume_with_another_column_mapping_is_refused(tmp_path, capsys):
    source, target = _qa(tmp_path / "qa.jsonl"), tmp_path / "out.jsonl"
    common = ["score", "-i", str(source), "-o", str(target), "reward.plugin=exact_match", *LOCAL]
    assert main([*common, "--columns", "solution_str=response,ground_truth=answer"]) == 0
    target.write_text(target.read_text().splitlines(keepends=True)[0])  # as an interrupted run leaves it
    capsys.readouterr()
    assert main([*common, "--resume", "--columns", "solution_str=answer,ground_truth=response"]) == 2
    assert "its rows were read with --columns ground_truth=answer,solution_str=response, now " \
           "ground_truth=response,solution_str=answer" in _error(capsys)


def test_a_file_that_is_not_parquet(tmp_path, capsys):
    source = tmp_path / "in.parquet"
    source.write_text("not parquet")
    assert _score_file(source, tmp_path / "o.jsonl") == 2
    assert _error(capsys).startswith(f"cannot read {source} as Parquet: ")


@pytest.mark.parametrize("role", ["input", "output"])
def test_an_unknown_extension(tmp_path, capsys, role):
    files = {"input": _jsonl(tmp_path / "in.jsonl", _rows("1")), "output": tmp_path / "o.jsonl"}
    files[role] = tmp_path / f"{role}.csv"
    files[role].write_text("")
    assert _score_file(files["input"], files["output"]) == 2
    assert _error(capsys) == (f"cannot tell the format of {role} file {files[role]} from its "
                              "extension; use one of .jsonl, .ndjson, .parquet, .pq "
                              "(or - for JSONL on stdin/stdout)")


@pytest.mark.parametrize(("overrides", "message"), [
    ([], "set exactly one of reward.plugin"),
    (["reward.plugin=exact_mach"], "no reward plugin named 'exact_mach' is installed. "
                                   "Did you mean 'exact_match'"),
    (["reward.plugin=exact_match", "reward.plugn=x"], "unknown key 'reward.plugn'. Did you mean "),
    (["reward.plugin=exact_match", "reward.executor=spark"], "reward.executor must be one of ray, local"),
    (["reward.plugin=exact_match", "reward.num_workers"], "override 'reward.num_workers' is not of "
                                                          "the form reward.KEY=VALUE"),
])
def test_config_errors(tmp_path, capsys, overrides, message):
    assert _score(tmp_path, _rows("1"), *overrides) == 2
    assert message in _error(capsys)


def test_a_missing_config_file(tmp_path, capsys):
    assert _score(tmp_path, _rows("1"), "--config", str(tmp_path / "nope.yaml")) == 2
    assert _error(capsys) == f"config file not found: {tmp_path / 'nope.yaml'}"


def test_a_config_file_that_is_not_yaml(tmp_path, capsys):
    config = tmp_path / "bad.yaml"
    config.write_text("reward: [plugin: \n  - : :\n")
    assert _score(tmp_path, _rows("1"), "--config", str(config)) == 2
    assert _error(capsys).startswith(f"cannot parse config file {config}: ")


def test_a_plugin_that_fails_to_load_is_a_failure(tmp_path, capsys, broken_dist):
    assert _score(tmp_path, _rows("1"), "reward.plugin=broken", *LOCAL) == 1
    assert _error(capsys) == (
        "cannot load reward broken (broken-rewards 0.2): importing plug_broken failed: it imports "
        f"'numpyy_not_installed' (at {broken_dist.parent}/plug_broken.py:1), which is not installed "
        f"in this Python environment ({sys.prefix}); install 'numpyy_not_installed' here, or "
        "correct the name: ModuleNotFoundError: No module named 'numpyy_not_installed'")
    assert not (tmp_path / "out.jsonl").exists()


def test_weighted_and_routed_rewards_from_a_config_file(tmp_path, capsys):
    config = tmp_path / "reward.yaml"
    config.write_text(
        "reward:\n"
        "  executor: local\n"
        "  rewards:\n"
        "    exact: {plugin: exact_match, weight: 1.0}\n"
        "    batch: {plugin: batch_exact, weight: 2.0}\n"
        "  route: {d: [exact, batch], other: batch}\n"
    )
    rows = [*_rows("1", "0"), {"data_source": "other", "solution_str": "1", "ground_truth": "1"}]
    assert _score(tmp_path, rows, "--config", str(config), "reward.rewards.batch.weight=0.5") == 0
    out = _read_jsonl(tmp_path / "out.jsonl")
    assert [r["score"] for r in out] == [1.5, 0.0, 0.5]
    assert [r["exact"] for r in out] == [1.0, 0.0, None]
    assert [r["batch"] for r in out] == [1.0, 0.0, 1.0]



@pytest.mark.parametrize(("route", "message"), [
    ("{d: {exact: 1.0, batch: 0.0}}",
     "reward.route['d'] is a mapping ({'exact': 1.0, 'batch': 0.0}); a route names the rewards "
     "that score a data source (a name or a list of names) and does not weight them: set each "
     "weight in reward.rewards.NAME.weight"),
    ("{d: 5}", "reward.route['d'] must be a reward name or a list of names, not int 5"),
    ("{d: [exact, [batch]]}", "reward.route['d'] must list reward names, not list ['batch']"),
])
def test_a_route_target_that_is_not_names_is_a_config_error_naming_the_key(
        tmp_path, capsys, route, message):
    config = tmp_path / "reward.yaml"
    config.write_text("reward:\n  executor: local\n  rewards:\n"
                      "    exact: {plugin: exact_match}\n    batch: {plugin: batch_exact}\n"
                      f"  route: {route}\n")
    assert _score(tmp_path, _rows("0"), "--config", str(config)) == 2
    assert _error(capsys).startswith(message)
    assert not (tmp_path / "out.jsonl").exists()

# -- never destroying work: existing outputs, empty inputs --------------------------


@pytest.mark.parametrize("name", ["out.jsonl", "out.parquet"])
def test_an_existing_output_is_refused_unless_overwrite(tmp_path, capsys, name):
    assert _score(tmp_path, _rows("1", "0"), "reward.plugin=exact_match", *LOCAL, out=name) == 0
    target = tmp_path / name
    before = target.read_bytes()
    capsys.readouterr()
    assert _score(tmp_path, _rows("1"), "reward.plugin=exact_match", *LOCAL, out=name) == 2
    assert _error(capsys) == (f"output file {target} exists: add --overwrite to replace it, "
                              "or --resume to continue it")
    assert target.read_bytes() == before
    assert _score(tmp_path, _rows("1"), "reward.plugin=exact_match", "--overwrite", *LOCAL,
                  out=name) == 0
    assert target.read_bytes() != before


def test_overwrite_and_resume_together_are_a_usage_error(tmp_path, capsys):
    assert _score(tmp_path, _rows("1"), "reward.plugin=exact_match", "--overwrite", "--resume",
                  *LOCAL) == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_an_empty_input_is_an_error_unless_allow_empty(tmp_path, capsys):
    for name in ("out.jsonl", "out.parquet"):
        assert _score(tmp_path, [], "reward.plugin=exact_match", *LOCAL, out=name) == 2
        assert _error(capsys) == (f"input {tmp_path / 'in.jsonl'} holds no rows; add "
                                  "--allow-empty to write an empty output")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_an_empty_stdin_is_an_error_and_leaves_no_output(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", open(_jsonl(tmp_path / "in.jsonl", [])))
    assert main(["score", "-i", "-", "-o", str(tmp_path / "out.jsonl"),
                 "reward.plugin=exact_match", *LOCAL]) == 2
    assert _error(capsys) == "input <stdin> holds no rows; add --allow-empty to write an empty output"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


# -- on_error=skip: failed samples are left out, not scored -------------------------


@pytest.mark.parametrize("name", ["out.jsonl", "out.parquet"])
def test_on_error_skip_writes_a_null_score_with_the_error_and_a_status_on_every_row(
        tmp_path, capsys, name):
    assert _score(tmp_path, _rows("1", "raise", "0", "loop"), "reward.plugin=faulty",
                  "reward.on_error=skip", "reward.timeout_s=0.5", *LOCAL, out=name) == 0
    target = tmp_path / name
    out = _read_jsonl(target) if name.endswith(".jsonl") else pq.read_table(target).to_pylist()
    assert [(r["score"], r["status"]) for r in out] == [(1.0, "ok"), (None, "failed"),
                                                        (0.0, "ok"), (None, "timeout")]
    assert [r["error"] is None for r in out] == [True, False, True, False]
    assert out[1]["error"].startswith("RuntimeError: the reward raised on purpose")
    summary = capsys.readouterr().out.splitlines()
    assert summary[1] == "  ok 2, failed 1, timed out 1; skipped 2 (score null: reward.on_error=skip)"
    assert summary[2] == "  mean score 0.5000 (over ok samples)"


def test_on_error_score_keeps_error_score_and_marks_the_status(tmp_path):
    assert _score(tmp_path, _rows("1", "raise"), "reward.plugin=faulty",
                  "reward.error_score=-1", *LOCAL) == 0
    out = _read_jsonl(tmp_path / "out.jsonl")
    assert [(r["score"], r["status"]) for r in out] == [(1.0, "ok"), (-1.0, "failed")]


@pytest.mark.parametrize("name", ["out.jsonl", "out.parquet"])
def test_an_overwrite_that_fails_before_its_first_row_keeps_the_earlier_output(
        tmp_path, capsys, broken_dist, name):
    assert _score(tmp_path, _rows("1", "0"), "reward.plugin=exact_match", *LOCAL, out=name) == 0
    target = tmp_path / name
    before, record = target.read_bytes(), (tmp_path / f".{name}.run.json").read_bytes()
    assert _score(tmp_path, _rows("1", "0"), "reward.plugin=broken", "--overwrite", *LOCAL,
                  out=name) == 1
    assert "No module named 'numpyy_not_installed'" in _error(capsys)
    assert target.read_bytes() == before
    assert (tmp_path / f".{name}.run.json").read_bytes() == record
    assert _score(tmp_path, _rows("1", "0"), "reward.plugin=exact_match", "--resume", *LOCAL,
                  out=name) == 0
