"""The parsers plugins share: the last tagged block (as the regex finds it, in linear time) and
a mapping from JSON text."""

from __future__ import annotations

import re
import time
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verl_rewards.parsing import as_python, json_mapping, json_value, last_block

TAG = st.text(alphabet="ab<>/", min_size=1, max_size=3)


def _regex_last_block(text: str, open_tag: str, close_tag: str) -> str | None:
    pattern = re.escape(open_tag) + "(.*?)" + re.escape(close_tag)
    matches = list(re.finditer(pattern, text, re.DOTALL))
    return matches[-1].group(1) if matches else None


@settings(max_examples=500, deadline=None, database=None)
@given(st.text(alphabet="ab<>/\n", max_size=40), TAG, TAG)
def test_last_block_is_the_regexs_last_match(text: str, open_tag: str, close_tag: str) -> None:
    # A five-letter alphabet makes tags that overlap each other, repeat and nest.
    assert last_block(text, open_tag, close_tag) == _regex_last_block(text, open_tag, close_tag)


@pytest.mark.parametrize(
    ("text", "block"),
    [
        ("<answer> 1 </answer> then <answer>2</answer>", "2"),
        ("<answer>1</answer><answer>2", "1"),  # the unclosed last open tag is no block
        ("<answer><answer>1</answer>", "<answer>1"),  # a block ends at the first close tag
        ("<answer>\n1\n</answer>", "\n1\n"),  # DOTALL, and nothing stripped
        ("<answer></answer>", ""),
        ("</answer><answer>", None),
        ("no tags", None),
    ],
)
def test_last_block_examples(text: str, block: str | None) -> None:
    assert last_block(text, "<answer>", "</answer>") == block


def test_last_block_takes_linear_time_on_a_megabyte_of_unclosed_open_tags() -> None:
    # The regex takes quadratic time here: 8,000 tags (64 kB) take it 10 s, so these
    # 131,072 tags would take it about 45 minutes; the scan reads the text once (about
    # a millisecond). CPU time of this process, so a loaded machine does not fail it.
    text = "<answer>" * 131_072 + "</answe"
    started = time.process_time()
    assert last_block(text, "<answer>", "</answer>") is None
    assert time.process_time() - started < 5.0


def test_last_block_refuses_empty_tags() -> None:
    with pytest.raises(ValueError, match=re.escape("tags must be non-empty, not '' and '</a>'")):
        last_block("text", "", "</a>")


def test_json_mapping_passes_a_mapping_through() -> None:
    value = MappingProxyType({"a": 1})
    assert json_mapping(value, "ground truth", "a mapping") is value


@pytest.mark.parametrize("text", ['{"a": [1, 2]}', b'{"a": [1, 2]}'])
def test_json_mapping_parses_json_text_and_bytes(text: str | bytes) -> None:
    assert json_mapping(text, "ground truth", "a mapping") == {"a": [1, 2]}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{a", "ground truth is not valid JSON: Expecting property name enclosed in double quotes: "
               "line 1 column 2 (char 1)"),
        (b"\xff", "ground truth is not valid JSON: 'utf-8' codec can't decode byte 0xff in position 0: "
                  "invalid start byte"),
        ("[" * 100_000, "ground truth is not valid JSON: maximum recursion depth exceeded while decoding "
                        "a JSON array from a unicode string"),
        ("[1, 2]", "ground truth must be a mapping with 'inputs' (or its JSON text), not list"),
        ("null", "ground truth must be a mapping with 'inputs' (or its JSON text), not NoneType"),
        (42, "ground truth must be a mapping with 'inputs' (or its JSON text), not int"),
        ([("inputs", 1)], "ground truth must be a mapping with 'inputs' (or its JSON text), not list"),
    ],
)
def test_json_mapping_refuses_what_is_no_mapping_naming_it(value: object, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        json_mapping(value, "ground truth", "a mapping with 'inputs'")
    assert (type(raised.value), str(raised.value)) == (ValueError, message)


class RowError(ValueError):
    """A caller's own error type."""


@pytest.mark.parametrize("value", ["{a", "[1]"])
def test_json_mapping_raises_the_callers_error_type(value: str) -> None:
    with pytest.raises(RowError):
        json_mapping(value, "row", "a mapping", RowError)


def test_json_value_parses_text_of_the_asked_kind_and_words_the_other_cases_one_way() -> None:
    assert json_value('["a", 1]', "VERL_REWARDS_STRIP", list) == ["a", 1]
    assert json_value('{"k": 1}', "VERL_REWARDS_KWARGS", dict) == {"k": 1}
    with pytest.raises(RowError, match=r"^VERL_REWARDS_KWARGS must be a JSON object, not '\[1\]'$"):
        json_value("[1]", "VERL_REWARDS_KWARGS", dict, RowError)
    with pytest.raises(ValueError, match=r"^X is not valid JSON \(Expecting .*\): '\{a'$"):
        json_value("{a", "X", dict)
    with pytest.raises(ValueError, match="not valid JSON"):
        json_value("[" * 100_000, "X", list)  # deeper than the stack: still one ValueError


def test_as_python_makes_numpy_pandas_and_torch_values_pythons_own_through_containers() -> None:
    import numpy as np
    import pandas as pd
    import torch

    row = {"ids": np.array(["a", "b"]), "n": np.int64(3), "x": np.float32(0.5), "board": (np.array([1, 2]),),
           "series": pd.Series([1, 2]), "tensor": torch.tensor([[1, 0]]), "nested": [MappingProxyType({"k": np.bool_(True)})],
           "text": "t", "none": None}
    python = as_python(row)
    assert python == {"ids": ["a", "b"], "n": 3, "x": 0.5, "board": ([1, 2],), "series": [1, 2], "tensor": [[1, 0]],
                      "nested": [{"k": True}], "text": "t", "none": None}
    assert type(python["n"]) is int and type(python["nested"][0]["k"]) is bool and type(python["board"]) is tuple
    kept = object()
    assert as_python(kept) is kept
