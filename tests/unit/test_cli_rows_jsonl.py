"""JSONL input as `score` reads it: lines end at \\n only, one value per key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verl_rewards.cli.errors import InputError
from verl_rewards.cli.main import main
from verl_rewards.cli.rows_jsonl import read_batches

ROW = {"data_source": "d", "solution_str": "1", "ground_truth": "1"}


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_a_raw_carriage_return_between_tokens_is_json_whitespace(tmp_path):
    source = _write(tmp_path / "in.jsonl", '{"data_source": "d",\r "solution_str": "1",'
                                           ' "ground_truth": "1"}\n' + json.dumps(ROW) + "\r\n")
    (batch,) = read_batches(source, 10)
    assert batch.rows == [ROW, ROW] and batch.where == ["line 1", "line 2"]


def test_a_file_with_a_raw_carriage_return_scores(tmp_path):
    source = _write(tmp_path / "in.jsonl", '{"data_source": "d", "solution_str":\r"1", '
                                           '"ground_truth": "1"}\n')
    target = tmp_path / "out.jsonl"
    assert main(["score", "-i", str(source), "-o", str(target), "reward.plugin=exact_match",
                 "reward.executor=local"]) == 0
    assert json.loads(target.read_text())["score"] == 1.0


def test_a_duplicate_key_is_refused_naming_the_line_and_the_key(tmp_path):
    source = _write(tmp_path / "in.jsonl", json.dumps(ROW) + "\n"
                    '{"data_source": "d", "solution_str": "1", "ground_truth": "1", '
                    '"extra_info": {"a": 1}, "ground_truth": "2"}\n')
    with pytest.raises(InputError) as caught:
        list(read_batches(source, 10))
    assert str(caught.value) == (f"{source}, line 2: key 'ground_truth' appears twice in one "
                                 "object; JSON readers disagree on which value wins: keep one")


def test_a_duplicate_key_in_a_nested_object_is_refused_too(tmp_path, capsys):
    source = _write(tmp_path / "in.jsonl", '{"data_source": "d", "solution_str": "1", '
                                           '"ground_truth": "1", "extra_info": {"k": 1, "k": 2}}\n')
    assert main(["score", "-i", str(source), "-o", str(tmp_path / "o.jsonl"),
                 "reward.plugin=exact_match", "reward.executor=local"]) == 2
    assert "line 1: key 'k' appears twice in one object" in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()
