"""trainer.data: prompt JSONL rows -> records; seeded, full batches."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from trainer.data import DataError, PromptRecord, batches, load_prompts


def _write(tmp_path, *lines: str):
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_rows_become_records_with_defaults(tmp_path):
    path = _write(tmp_path,
                  json.dumps({"prompt": "12:", "data_source": "toy", "ground_truth": "12",
                              "extra_info": {"k": 1}}),
                  "",
                  json.dumps({"prompt": "hi", "ground_truth": None}))
    assert load_prompts(path) == [
        PromptRecord(0, "12:", "toy", "12", {"k": 1}),
        PromptRecord(1, "hi", "", None, {}),
    ]


@pytest.mark.parametrize("line, message", [
    ("{not json", "line 1: not valid JSON"),
    ('{"text": "x"}', "line 1: expected an object with a string 'prompt'"),
    ('{"prompt": "x", "ground_truth": "", "extra_info": [1]}',
     "line 1: 'extra_info' must be an object"),
    ('{"prompt": "x"}', "line 1: missing required field ground_truth"),
    ('{"prompt": ' + "[" * 100_000 + "]" * 100_000 + "}", "line 1: JSON nested too deeply"),
    ('{"prompt": "x", "ground_truth": ' + "7" * 5000 + "}", "line 1: unreadable JSON value"),
])
def test_malformed_rows_name_the_line(tmp_path, line, message):
    with pytest.raises(DataError, match=message):
        load_prompts(_write(tmp_path, line))


def test_the_line_named_is_the_files_own_line_number_blank_lines_included(tmp_path):
    good = json.dumps({"prompt": "a\u2028b", "ground_truth": ""}, ensure_ascii=False)  # U+2028 is not a line end
    path = _write(tmp_path, good, "", "   ", good, "{not json")
    with pytest.raises(DataError) as info:
        load_prompts(path)
    assert str(info.value) == (f"{path}, line 5: not valid JSON "
                               "(Expecting property name enclosed in double quotes)")
    path = _write(tmp_path, good, "", good)
    assert [(r.row, r.prompt) for r in load_prompts(path)] == [(0, "a\u2028b"), (1, "a\u2028b")]


def test_missing_or_empty_file_is_an_error(tmp_path):
    with pytest.raises(DataError, match="cannot read prompt file"):
        load_prompts(tmp_path / "absent.jsonl")
    with pytest.raises(DataError, match="has no rows"):
        load_prompts(_write(tmp_path, ""))


def test_batches_are_full_seeded_and_cover_each_epoch():
    records = [PromptRecord(i, str(i), "", None, {}) for i in range(10)]
    first = batches(records, 4, seed=1)
    drawn = [next(first) for _ in range(5)]  # 20 prompts = 2 epochs
    assert all(len(b) == 4 for b in drawn)
    assert Counter(r.row for b in drawn for r in b) == Counter({i: 2 for i in range(10)})
    again = batches(records, 4, seed=1)
    assert [next(again) for _ in range(5)] == drawn
    other = batches(records, 4, seed=2)
    assert [next(other) for _ in range(5)] != drawn


def test_shipped_toy_data_is_what_make_toy_writes():
    import importlib.util

    from trainer.settings import PROJECT_ROOT

    spec = importlib.util.spec_from_file_location(
        "make_toy", PROJECT_ROOT / "examples/data/make_toy.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shipped = load_prompts(PROJECT_ROOT / "examples/data/toy_copy.jsonl")
    assert [json.loads(json.dumps(r._asdict())) for r in shipped] == [
        {"row": i, **row} for i, row in enumerate(module.make_rows(256, 4, 0))]
