"""serve.app: answers JSON can always hold."""

from __future__ import annotations

import json
import math

from verl_rewards.serve.app import dumps


def test_dumps_writes_plain_values_as_json():
    assert json.loads(dumps({"scores": [1.0, 0.5], "errors": [None, "E: x"]})) == {
        "scores": [1.0, 0.5], "errors": [None, "E: x"]}


def test_non_finite_extra_values_become_null_so_the_answer_stays_valid_json():
    text = dumps({"extra_info": {"ratio": [math.nan, 1.0, math.inf], "nested": [{"x": -math.inf}]}})
    assert json.loads(text) == {"extra_info": {"ratio": [None, 1.0, None], "nested": [{"x": None}]}}


def test_values_json_cannot_hold_are_written_as_text():
    class Thing:
        def __repr__(self) -> str:
            return "Thing()"

    assert json.loads(dumps({"extra_info": {"obj": [Thing()]}})) == {"extra_info": {"obj": ["Thing()"]}}
