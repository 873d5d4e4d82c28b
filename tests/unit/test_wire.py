"""wire: one JSON encoding for values, samples, results and provenance, and back."""

from __future__ import annotations

import datetime
import decimal
import json
import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from verl_rewards.results import BatchResult, Provenance
from verl_rewards.samples import Sample, as_samples
from verl_rewards.wire import (
    dumps,
    provenance_from_json,
    provenance_to_json,
    result_from_json,
    result_to_json,
    sample_to_json,
)
from verl_rewards.wire import (
    json_data as plain,
)

PLUGIN = Provenance("plugin", "exact_match", "exact_match (kit 1.0)", "kit", "1.0")
FILE = Provenance("file", "compute_score", "compute_score (file /r.py, sha256 ab12)", path="/r.py",
                  source_hash="ab12" * 16)
COMPOSITE = Provenance("composite", "composite", "composite(a, b)",
                       components=(("a", 1.0, PLUGIN), ("b", 0.5, FILE)))


@dataclass(frozen=True)
class Point:
    x: int
    y: float


class Thing:
    def __repr__(self) -> str:
        return "Thing()"


@pytest.mark.parametrize(("value", "expected"), [
    (float("nan"), None), (-math.inf, None), (np.float32("nan"), None), (np.float64(math.inf), None),
    (torch.tensor(float("nan")), None),
    (np.int64(3), 3), (np.float32(0.5), 0.5), (np.float64(0.1), 0.1), (np.bool_(True), True),
    (np.array([1, 2]), [1, 2]), (np.array([[1.5, np.nan]]), [[1.5, None]]), (np.array(7), 7),
    (torch.tensor([1, 2]), [1, 2]), (torch.tensor([[0.5], [math.inf]]), [[0.5], [None]]),
    (torch.tensor(2.5), 2.5), (torch.tensor([1.0], dtype=torch.bfloat16), [1.0]),
    (b"\x00\xffhi", "AP9oaQ=="), (bytearray(b"hi"), "aGk="),
    (decimal.Decimal("1.10"), "1.10"),
    (datetime.date(2024, 5, 1), "2024-05-01"),
    (datetime.datetime(2024, 5, 1, 12, 30, tzinfo=datetime.timezone.utc), "2024-05-01T12:30:00+00:00"),
    ((1, (2, np.int8(3))), [1, [2, 3]]), ({3, 1, 2}, [1, 2, 3]), (frozenset({"b", 1}), ["b", 1]),
    ({1: "a", None: "b", (1, 2): "c", np.int64(4): "d"}, {"1": "a", "null": "b", "[1, 2]": "c", "4": "d"}),
    (Point(1, math.nan), {"x": 1, "y": None}),
    (Thing(), "Thing()"),
    ({"nested": [{"deep": (np.float16(0.25), b"x")}]}, {"nested": [{"deep": [0.25, "eA=="]}]}),
], ids=lambda v: type(v).__name__)
def test_each_kind_of_value_becomes_plain_json_data(value, expected):
    assert plain(value) == expected
    assert json.loads(dumps({"v": value})) == {"v": expected}


def test_plain_data_is_written_by_json_itself_and_text_keeps_its_characters():
    row = {"score": 1.0, "error": None, "text": "é ✓", "n": [1, 2.5, True]}
    assert dumps(row) == json.dumps(row, ensure_ascii=False)
    assert dumps(row, ascii=True) == json.dumps(row)


def test_provenance_goes_to_json_and_back_for_plugins_files_and_composites():
    assert provenance_to_json(PLUGIN) == {"kind": "plugin", "name": "exact_match",
                                          "display_name": "exact_match (kit 1.0)", "dist": "kit",
                                          "version": "1.0", "path": None, "source_hash": None}
    assert provenance_to_json(COMPOSITE)["components"] == [
        {"key": "a", "weight": 1.0, "provenance": provenance_to_json(PLUGIN)},
        {"key": "b", "weight": 0.5, "provenance": provenance_to_json(FILE)}]
    for provenance in (PLUGIN, FILE, COMPOSITE):
        assert provenance_from_json(json.loads(dumps(provenance_to_json(provenance)))) == provenance


def test_a_sample_goes_to_an_input_row_and_back():
    samples = [Sample("d", "x", ["1", 2], {"k": np.int64(5)}, [{"role": "user", "content": "q"}]),
               Sample("d", "y", None)]
    rows = json.loads(dumps([sample_to_json(s) for s in samples]))
    assert rows[1] == {"data_source": "d", "solution_str": "y", "ground_truth": None}
    assert as_samples(rows) == [Sample("d", "x", ["1", 2], {"k": 5}, [{"role": "user", "content": "q"}]),
                                samples[1]]


def test_a_result_goes_to_the_native_answer_and_back_with_its_values_made_plain():
    result = BatchResult([1.0, 0.0], [None, "ValueError: no"], ["ok", "failed"],
                         {"arr": [np.array([1, 2]), None], "ratio": [math.nan, 0.5]}, COMPOSITE,
                         {"latency_s": 2.0})
    back = result_from_json(json.loads(dumps(result_to_json(result))), {"latency_s": 0.1})
    assert back == BatchResult([1.0, 0.0], [None, "ValueError: no"], ["ok", "failed"],
                               {"arr": [[1, 2], None], "ratio": [None, 0.5]}, COMPOSITE, {"latency_s": 0.1})
