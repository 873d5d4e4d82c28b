"""The entry a sample carries, and the task chosen for it."""

from __future__ import annotations

import numpy as np
import pytest
from verl_rewards_reasoning_gym.entry import entry_of, restored, task_of

GCD = {"question": "GCD of 26, 760?", "answer": "2", "metadata": {"source_dataset": "gcd", "numbers": [26, 760]}}


@pytest.mark.parametrize(
    "extra_info",
    [
        {"entry": GCD},
        {"entry": '{"question": "GCD of 26, 760?", "answer": "2", '
                  '"metadata": {"source_dataset": "gcd", "numbers": [26, 760]}}'},
        {"entry": {**GCD, "metadata": {"source_dataset": "gcd", "numbers": np.array([26, 760])}}},
    ],
)
def test_the_entry_comes_from_extra_info_as_a_dict_json_text_or_a_parquet_row(extra_info: dict) -> None:
    entry = entry_of("ignored", extra_info)
    assert entry == GCD and type(entry["metadata"]["numbers"][0]) is int


def test_without_an_entry_the_ground_truth_is_its_answer() -> None:
    assert entry_of("30", None) == {"question": "", "answer": "30", "metadata": {}}
    assert entry_of("30", {"other": 1}) == {"question": "", "answer": "30", "metadata": {}}


@pytest.mark.parametrize(
    ("extra_info", "message"),
    [
        ({"entry": "{not json"}, "extra_info['entry'] is not valid JSON: Expecting property name"),
        ({"entry": [1, 2]}, "extra_info['entry'] must be a reasoning-gym entry dict (or its JSON text), not list"),
        ({"entry": {"question": "q"}}, "extra_info['entry'] has no 'answer' (keys: ['question'])"),
    ],
)
def test_a_malformed_entry_is_an_error(extra_info: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        entry_of("", extra_info)


@pytest.mark.parametrize(
    ("data_source", "entry", "task"),
    [
        ("reasoning_gym/gcd", GCD, "gcd"),
        ("reasoning_gym/lcm", {"answer": "4"}, "lcm"),
        ("reasoning_gym/composite", GCD, "gcd"),
        ("", GCD, "gcd"),
        ("my_mix", GCD, "gcd"),
    ],
)
def test_the_task_is_the_data_sources_else_the_entrys_source_dataset(data_source: str, entry: dict,
                                                                    task: str) -> None:
    assert task_of(data_source, entry) == task


@pytest.mark.parametrize(
    ("data_source", "entry", "message"),
    [
        ("reasoning_gym/lcm", GCD,
         "data_source 'reasoning_gym/lcm' names task 'lcm', but the entry's metadata.source_dataset is 'gcd'"),
        ("reasoning_gym/composite", {"answer": "2"},
         "no reasoning-gym task for data_source 'reasoning_gym/composite': name it 'reasoning_gym/<task>' "
         "or put the entry, with its metadata.source_dataset, in extra_info['entry']"),
        ("reasoning_gym/leg_count", {"answer": "2"},
         "reasoning-gym 0.1.25 has no task 'leg_count' (data_source 'reasoning_gym/leg_count'); close matches: "
         "leg_counting, rectangle_count, letter_counting; `verl-rewards show reasoning_gym` lists its 106 tasks"),
        ("reasoning_gym/xyzzy", {"answer": "2"},
         "reasoning-gym 0.1.25 has no task 'xyzzy' (data_source 'reasoning_gym/xyzzy'); "
         "`verl-rewards show reasoning_gym` lists its 106 tasks"),
    ],
)
def test_an_unknown_or_contradicted_task_is_an_error_naming_close_matches(data_source: str, entry: dict,
                                                                         message: str) -> None:
    with pytest.raises(ValueError) as caught:
        task_of(data_source, entry)
    assert str(caught.value) == message


def test_an_arc_board_made_a_list_by_json_is_a_tuple_again() -> None:
    entry = {"answer": "1 2", "metadata": {"output": [[1, 2], [3, 4]], "input": [[0]]}}
    assert restored("arc_agi", entry)["metadata"] == {"output": ((1, 2), (3, 4)), "input": [[0]]}
    assert restored("gcd", entry) is entry
