"""`verl-rewards score` streams: rows written as batches finish, --resume, output problems
found before scoring or kept per row, and every input fault named by file and line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from verl_rewards.cli.main import main

LOCAL = ["reward.executor=local"]

EXTRAS = """
import math

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "nan":
        return {"score": 1.0, "ratio": math.nan, "inf": [math.inf]}
    if solution_str == "surrogate":
        return {"score": 1.0, "ratio": 0.5, "text": "\\ud800"}
    return {"score": 0.5, "ratio": 0.25, "text": "ok"}
"""

COUNTED = """
from pathlib import Path

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    Path(__file__ + ".called").write_text("yes")
    return 1.0
"""

ALWAYS_FAILS = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    raise KeyError("missing")
"""


def _rows(n: int, truth: str = "1") -> list[dict]:
    return [{"id": i, "data_source": "d", "solution_str": str(i % 2), "ground_truth": truth}
            for i in range(n)]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _score(source: Path, target: Path, *extra: str) -> int:
    return main(["score", "-i", str(source), "-o", str(target), "--no-progress", *extra])


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err.strip().removeprefix("verl-rewards: error: ")


# -- resume -------------------------------------------------------------------


def test_resume_keeps_whole_rows_cuts_a_partial_line_and_scores_each_row_once(tmp_path, capsys):
    source = _jsonl(tmp_path / "in.jsonl", _rows(10))
    target = tmp_path / "out.jsonl"
    assert _score(source, target, "reward.plugin=exact_match", *LOCAL) == 0
    whole = target.read_text().splitlines(True)
    target.write_text("".join(whole[:4]) + whole[4][:10])  # as a killed run leaves it
    assert _score(source, target, "--resume", "reward.plugin=exact_match", *LOCAL) == 0
    assert [r["id"] for r in _read(target)] == list(range(10))
    assert _read(target) == [json.loads(line) for line in whole]
    assert "wrote 10 rows to " in capsys.readouterr().out


STOPS_WHILE_MARKED = """
from pathlib import Path

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if extra_info["id"] == 3 and Path(__file__ + ".stop").exists():
        raise RuntimeError("stopped on purpose")
    return 1.0
"""


def test_resume_of_a_parquet_output_appends_the_rest(tmp_path, reward_file):
    path = reward_file(STOPS_WHILE_MARKED)
    Path(f"{path}.stop").write_text("")
    source = _jsonl(tmp_path / "in.jsonl", [{**r, "extra_info": {"id": r["id"]}} for r in _rows(6)])
    args = [f"reward.path={path}", "reward.on_error=raise", "--batch-size", "1", *LOCAL]
    assert _score(source, tmp_path / "out.parquet", *args) == 1
    assert pq.read_table(tmp_path / "out.parquet").column("id").to_pylist() == [0, 1, 2]
    Path(f"{path}.stop").unlink()
    assert _score(source, tmp_path / "out.parquet", "--resume", *args) == 0
    assert pq.read_table(tmp_path / "out.parquet").column("id").to_pylist() == list(range(6))


def test_resume_of_rows_no_run_recorded_is_refused(tmp_path, capsys):
    source = _jsonl(tmp_path / "in.jsonl", _rows(2))
    target = _jsonl(tmp_path / "out.jsonl", _rows(3))
    assert _score(source, target, "--resume", "reward.plugin=exact_match", *LOCAL) == 2
    assert _error(capsys) == (f"cannot resume {target}: it holds 3 rows but no record of the run "
                              "that made them (.out.jsonl.run.json), so mixing runs cannot be "
                              "ruled out; score again with --overwrite")
    assert len(_read(target)) == 3


def test_resume_from_stdin_when_the_output_holds_more_rows_than_the_input_is_refused(
        tmp_path, capsys, monkeypatch):
    target = tmp_path / "out.jsonl"
    for n, extra in ((3, ()), (2, ("--resume",))):
        monkeypatch.setattr("sys.stdin", open(_jsonl(tmp_path / f"in{n}.jsonl", _rows(n))))
        assert main(["score", "-i", "-", "-o", str(target), "--no-progress", *extra,
                     "reward.plugin=exact_match", *LOCAL]) == (0 if n == 3 else 2)
    assert _error(capsys).startswith("cannot resume: the output already holds 3 rows, more "
                                     "than input <stdin> has")
    assert len(_read(target)) == 3


def test_resume_to_stdout_is_a_usage_error(tmp_path, capsys):
    source = _jsonl(tmp_path / "in.jsonl", _rows(2))
    assert main(["score", "-i", str(source), "-o", "-", "--resume",
                 "reward.plugin=exact_match", *LOCAL]) == 2
    assert _error(capsys) == "--resume needs an output file, not stdout"


# -- exit codes ---------------------------------------------------------------


def test_every_sample_failing_exits_1_naming_the_most_common_error(tmp_path, capsys,
                                                                   reward_file):
    path = reward_file(ALWAYS_FAILS)
    source = _jsonl(tmp_path / "in.jsonl", _rows(3))
    assert _score(source, tmp_path / "out.jsonl", f"reward.path={path}", *LOCAL) == 1
    err = capsys.readouterr().err
    assert err == (f"verl-rewards: error: every sample failed (3); most common error: KeyError "
                   f"(3), e.g. KeyError: 'missing' (at {path}:3 in compute_score)\n")
    assert len(_read(tmp_path / "out.jsonl")) == 3  # still written, row by row


def test_verbose_shows_the_rewards_own_line_with_its_source(tmp_path, capsys, reward_file,
                                                            monkeypatch):
    path = reward_file(ALWAYS_FAILS)
    source = _jsonl(tmp_path / "in.jsonl", _rows(1))
    from verl_rewards.cli import cmd_score

    real = cmd_score._scorer

    def scorer_then_delete(*args):  # the file is gone by the time anything scores
        built = real(*args)
        path.unlink()
        return built

    monkeypatch.setattr(cmd_score, "_scorer", scorer_then_delete)
    assert main(["-v", "score", "-i", str(source), "-o", str(tmp_path / "o.jsonl"),
                 f"reward.path={path}", *LOCAL]) == 1
    assert not path.exists()
    err = capsys.readouterr().err.splitlines()
    assert err[:3] == [f"error: KeyError: 'missing' (at {path}:3 in compute_score)",
                       f'  File "{path}", line 3, in compute_score',
                       '    raise KeyError("missing")']


EXPLAINED = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "1":
        return 1.0
    return {"score": 0.0, "explanation": f"row id {solution_str}: wrong\\n  second line"}
"""


def test_verbose_shows_the_explanation_of_the_first_rows_that_have_one(tmp_path, capsys, reward_file):
    # Issue 34, item 3: a reward's words on why a sample scored what it did (code_exec: its failing test).
    path = reward_file(EXPLAINED)
    rows = [{"data_source": "d", "solution_str": s, "ground_truth": "1"} for s in ["1", "a", "1", "b", "c", "d"]]
    source = _jsonl(tmp_path / "in.jsonl", rows)
    assert main(["-v", "score", "-i", str(source), "-o", str(tmp_path / "o.jsonl"), "--batch-size", "2",
                 f"reward.path={path}", *LOCAL]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if line.startswith(("row ", "  "))] == [
        "row 2: explanation:", "  row id a: wrong", "    second line",
        "row 4: explanation:", "  row id b: wrong", "    second line",
        "row 5: explanation:", "  row id c: wrong", "    second line",
    ]
    assert [r.get("explanation") for r in _read(tmp_path / "o.jsonl")] == [
        None, "row id a: wrong\n  second line", None, "row id b: wrong\n  second line",
        "row id c: wrong\n  second line", "row id d: wrong\n  second line"]
    assert main(["score", "-i", str(source), "-o", str(tmp_path / "quiet.jsonl"), f"reward.path={path}",
                 *LOCAL]) == 0
    assert "explanation" not in capsys.readouterr().err


# -- output problems: before scoring, or per row --------------------------------


def test_an_unwritable_output_fails_before_any_sample_is_scored(tmp_path, capsys, reward_file):
    path = reward_file(COUNTED)
    source = _jsonl(tmp_path / "in.jsonl", _rows(2))
    (tmp_path / "file").write_text("")
    assert _score(source, tmp_path / "file" / "out.jsonl", f"reward.path={path}", *LOCAL) == 2
    assert _error(capsys).startswith(f"cannot write output file {tmp_path / 'file' / 'out.jsonl'}")
    assert not Path(f"{path}.called").exists()


def test_nan_extra_values_are_written_as_null_and_the_file_stays_json(tmp_path, reward_file):
    path = reward_file(EXTRAS)
    rows = [{"data_source": "d", "solution_str": s, "ground_truth": "g"} for s in ("nan", "x")]
    assert _score(_jsonl(tmp_path / "in.jsonl", rows), tmp_path / "out.jsonl",
                  f"reward.path={path}", *LOCAL) == 0
    text = (tmp_path / "out.jsonl").read_text()
    assert "NaN" not in text and "Infinity" not in text
    out = [json.loads(line, parse_constant=pytest.fail) for line in text.splitlines()]
    assert [(r["score"], r["ratio"], r.get("inf")) for r in out] == [(1.0, None, [None]),
                                                                    (0.5, 0.25, None)]


def test_a_lone_surrogate_is_escaped_and_the_other_rows_keep_utf8(tmp_path, reward_file):
    path = reward_file(EXTRAS)
    rows = [{"data_source": "d", "solution_str": s, "ground_truth": "é"} for s in ("surrogate", "x")]
    assert _score(_jsonl(tmp_path / "in.jsonl", rows), tmp_path / "out.jsonl",
                  f"reward.path={path}", *LOCAL) == 0
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert "\\ud800" in lines[0] and json.loads(lines[0])["text"] == "\ud800"
    assert '"ground_truth": "é"' in lines[1]


def test_a_value_parquet_cannot_hold_is_a_per_row_error_not_a_lost_file(tmp_path):
    rows = [{"data_source": "d", "solution_str": "1", "ground_truth": "1"},
            {"data_source": "d", "solution_str": "1", "ground_truth": {"nested": [1, 2]}}]
    assert _score(_jsonl(tmp_path / "in.jsonl", rows), tmp_path / "out.parquet",
                  "reward.plugin=exact_match", "--batch-size", "1", *LOCAL) == 0
    table = pq.read_table(tmp_path / "out.parquet")
    assert table.column("ground_truth").to_pylist() == ["1", None]
    assert table.column("score").to_pylist() == [1.0, 0.0]
    error = table.column("error").to_pylist()[1]
    assert error.startswith("OutputError: column(s) ground_truth (string) cannot hold this "
                            "row's value (written as null")


# -- input faults: named by file and line, found before scoring ------------------


@pytest.mark.parametrize(("line", "message"), [
    ('{"a": ' * 100_000 + "1" + "}" * 100_000, "line 2: JSON nested too deeply to read"),
    ('{"data_source": "d", "solution_str": "1", "ground_truth": ' + "9" * 5000 + "}",
     "line 2: unreadable JSON value: Exceeds the limit"),
    ('{"data_source": "d", "solution_str": "1"}', "line 2: missing required field(s) ground_truth"),
])
def test_a_bad_line_is_named_before_any_sample_is_scored(tmp_path, capsys, reward_file, line,
                                                         message):
    path = reward_file(COUNTED)
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(_rows(1)[0]) + "\n" + line + "\n")
    assert _score(source, tmp_path / "out.jsonl", f"reward.path={path}", *LOCAL) == 2
    assert _error(capsys).startswith(f"{source}, {message}")
    assert not Path(f"{path}.called").exists() and not (tmp_path / "out.jsonl").exists()


def test_a_utf8_bom_is_accepted(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in _rows(2)).encode())
    assert _score(source, tmp_path / "out.jsonl", "reward.plugin=exact_match", *LOCAL) == 0
    assert [r["id"] for r in _read(tmp_path / "out.jsonl")] == [0, 1]


def test_rows_are_written_in_input_order_across_batches(tmp_path):
    source = _jsonl(tmp_path / "in.jsonl", _rows(25))
    assert _score(source, tmp_path / "out.jsonl", "--batch-size", "4",
                  "reward.plugin=exact_match", *LOCAL) == 0
    out = _read(tmp_path / "out.jsonl")
    assert [r["id"] for r in out] == list(range(25))
    assert all(math.isclose(r["score"], float(r["solution_str"] == "1")) for r in out)


# -- config files ----------------------------------------------------------------


def _one_row(tmp_path: Path) -> Path:
    return _jsonl(tmp_path / "in.jsonl", _rows(1))


def test_a_config_error_names_the_file_it_is_in(tmp_path, capsys):
    config = tmp_path / "reward.yaml"
    config.write_text("reward:\n  plugn: exact_match\n")
    assert _score(_one_row(tmp_path), tmp_path / "o.jsonl", "--config", str(config)) == 2
    assert _error(capsys).endswith(f" (in config file {config})")


def test_an_override_error_says_it_came_from_the_overrides(tmp_path, capsys):
    config = tmp_path / "reward.yaml"
    config.write_text("reward:\n  plugin: exact_match\n")
    assert _score(_one_row(tmp_path), tmp_path / "o.jsonl", "--config", str(config),
                  "reward.executor=lcal") == 2
    assert _error(capsys) == ("reward.executor must be one of ray, local, process; got 'lcal' (did you mean 'local'?) "
                              f"(from the overrides on config file {config})")


def test_a_top_level_rewards_typo_is_pointed_out(tmp_path, capsys):
    config = tmp_path / "reward.yaml"
    config.write_text("rewards:\n  plugin: exact_match\n  executor: local\n")
    assert _score(_one_row(tmp_path), tmp_path / "o.jsonl", "--config", str(config)) == 2
    assert _error(capsys).endswith(f"(in config file {config}; its top-level `rewards:` holds "
                                   "one reward's keys: did you mean `reward:`?)")


def test_a_run_that_fails_before_writing_a_row_leaves_no_new_file(tmp_path, capsys, broken_dist):
    source = _jsonl(tmp_path / "in.jsonl", _rows(2))
    for name in ("out.jsonl", "out.parquet"):
        # numpyy_not_installed is missing here: preflight leaves it to the executor, which fails
        assert _score(source, tmp_path / name, "reward.plugin=broken", *LOCAL) == 1
        assert "No module named 'numpyy_not_installed'" in _error(capsys)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "site-packages"]


def test_verbose_on_error_raise_also_shows_the_rewards_line(tmp_path, capsys, reward_file):
    path = reward_file(ALWAYS_FAILS)
    source = _jsonl(tmp_path / "in.jsonl", _rows(2))
    assert main(["score", "-v", "-i", str(source), "-o", str(tmp_path / "o.jsonl"),
                 f"reward.path={path}", "reward.on_error=raise", *LOCAL]) == 1
    err = capsys.readouterr().err.splitlines()
    at = err.index("in the reward's code:")
    assert err[at + 1:at + 3] == [f'  File "{path}", line 3, in compute_score',
                                  '    raise KeyError("missing")']
    assert err[-1].startswith("verl-rewards: error: reward compute_score (file ")


# -- review fixes: same file, prints on stdout, empty Parquet, SIGTERM ------------


def test_the_output_cannot_be_the_input(tmp_path, capsys):
    source = _jsonl(tmp_path / "in.jsonl", _rows(3))
    assert _score(source, source, "reward.plugin=exact_match", *LOCAL) == 2
    assert _error(capsys) == (f"the output {source} is the input {source} (the same file); write the "
                              "scored rows to another file")
    assert len(_read(source)) == 3  # untouched


def test_a_rewards_prints_never_reach_the_rows_on_stdout(tmp_path, capfd, reward_file):
    path = reward_file('''
        def compute_score(data_source, solution_str, ground_truth, extra_info=None):
            print("debug:", solution_str)
            return 1.0
    ''')
    source = _jsonl(tmp_path / "in.jsonl", _rows(3))
    assert main(["score", "-i", str(source), "-o", "-", f"reward.path={path}", *LOCAL]) == 0
    out, err = capfd.readouterr()
    assert [json.loads(line)["score"] for line in out.splitlines()] == [1.0] * 3
    assert "debug: 0" in err


def test_resume_onto_an_empty_parquet_file_scores_every_row(tmp_path):
    import pyarrow.parquet as pq  # the test extra installs it

    empty = _jsonl(tmp_path / "empty.jsonl", [])
    target = tmp_path / "out.parquet"
    assert _score(empty, target, "reward.plugin=exact_match", "--allow-empty", *LOCAL) == 0
    source = _jsonl(tmp_path / "in.jsonl", _rows(3))
    assert _score(source, target, "--resume", "reward.plugin=exact_match", *LOCAL) == 0
    assert pq.read_table(target).column("id").to_pylist() == [0, 1, 2]


def test_sigterm_ends_a_run_like_ctrl_c_leaving_whole_rows(tmp_path, capsys, reward_file):
    path = reward_file('''
        import os, signal

        def compute_score(data_source, solution_str, ground_truth, extra_info=None):
            if extra_info and extra_info.get("stop"):
                os.kill(os.getpid(), signal.SIGTERM)
            return 1.0
    ''')
    rows = [{**r, "extra_info": {"stop": r["id"] == 5}} for r in _rows(8)]
    source = _jsonl(tmp_path / "in.jsonl", rows)
    target = tmp_path / "out.jsonl"
    assert main(["score", "-i", str(source), "-o", str(target), "--batch-size", "2", "--no-progress",
                 f"reward.path={path}", *LOCAL]) == 130
    assert [r["id"] for r in _read(target)] == [0, 1, 2, 3]  # the batches that finished
    assert "holds 4 whole rows; add --resume to continue" in capsys.readouterr().err


def test_a_reward_that_prints_at_import_never_reaches_the_rows_on_stdout(tmp_path, capfd,
                                                                          reward_file):
    path = reward_file('''
        print("loading my reward")

        def compute_score(data_source, solution_str, ground_truth, extra_info=None):
            return 1.0
    ''', "prints_at_import.py")
    source = _jsonl(tmp_path / "in.jsonl", _rows(2))
    assert main(["score", "-i", str(source), "-o", "-", f"reward.path={path}", *LOCAL]) == 0
    out, err = capfd.readouterr()
    assert [json.loads(line)["score"] for line in out.splitlines()] == [1.0, 1.0]
    assert "loading my reward" in err

