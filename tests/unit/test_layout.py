"""verl_rewards.layout: where a row keeps each sample field (flat, verl's, --columns paths)."""

from __future__ import annotations

import numpy as np
import pytest

from verl_rewards.layout import MISSING, Expansion, expand, fields, listed_responses, lookup, place_of

VERL_ROW = {
    "data_source": "openai/gsm8k",
    "prompt": [{"role": "user", "content": "1 + 1? Let's think step by step."}],
    "ability": "math",
    "reward_model": {"style": "rule", "ground_truth": "2"},
    "extra_info": {"split": "test", "index": 0},
    "responses": ["#### 2", "#### 3"],
}


def test_a_flat_row_is_read_from_its_own_columns():
    row = {"data_source": "d", "solution_str": "s", "ground_truth": "g", "extra_info": {"k": 1}, "x": 0}
    assert fields(row) == {"data_source": "d", "solution_str": "s", "ground_truth": "g", "extra_info": {"k": 1}}


def test_verls_layout_gives_the_ground_truth_from_reward_model_and_the_responses_as_a_list():
    assert fields(VERL_ROW) == {
        "data_source": "openai/gsm8k", "solution_str": ["#### 2", "#### 3"], "ground_truth": "2",
        "extra_info": {"split": "test", "index": 0}, "prompt": VERL_ROW["prompt"]}
    assert expand(VERL_ROW) == Expansion(fields(VERL_ROW), ["#### 2", "#### 3"], "responses")


def test_a_fields_own_column_wins_over_verls_place():
    row = {**VERL_ROW, "ground_truth": "own", "solution_str": "one"}
    assert (fields(row)["ground_truth"], fields(row)["solution_str"]) == ("own", "one")
    assert expand(row).responses is None


def test_columns_name_a_path_into_structs_and_maps():
    row = {"meta": {"gt": {"value": "7"}}, "gen": {"texts": ["a", "b"]}, "data_source": "d"}
    columns = {"ground_truth": "meta.gt.value", "solution_str": "gen.texts"}
    assert fields(row, columns)["ground_truth"] == "7"
    assert expand(row, columns) == Expansion(fields(row, columns), ["a", "b"], "gen.texts")


def test_a_named_column_replaces_the_default_places_even_when_absent():
    assert "ground_truth" not in fields(VERL_ROW, {"ground_truth": "answer"})
    assert place_of(VERL_ROW, "ground_truth", {"ground_truth": "answer"}) is None
    assert place_of(VERL_ROW, "ground_truth") == "reward_model.ground_truth"


@pytest.mark.parametrize(("row", "path", "value"), [
    ({"a.b": 1, "a": {"b": 2}}, "a.b", 1),  # a column whose own name holds the dot comes first
    ({"a": {"b.c": 3}}, "a.b.c", 3),  # a key holding a dot inside a struct
    ({"a": {"b": {"c": 4}}}, "a.b.c", 4),
    ({"a": {"b": None}}, "a.b", None),  # present, null
    ({"a": "text"}, "a.b", MISSING),  # not a struct
    ({"a": {"c": 1}}, "a.b", MISSING),
    ({}, ".", MISSING),
])
def test_lookup(row, path, value):
    assert lookup(row, path) is value if value is None or value is MISSING else lookup(row, path) == value


@pytest.mark.parametrize(("value", "listed"), [
    ("text", None), (None, None), ({"a": 1}, None), (b"x", None), (3, None),
    (["a", "b"], ["a", "b"]), (("a",), ["a"]), (np.array(["a", "b"], dtype=object), ["a", "b"]), ([], []),
])
def test_listed_responses(value, listed):
    assert listed_responses(value) == listed
