"""A sample's optional prompt: read from a row's ``prompt`` key, text or chat messages."""

from __future__ import annotations

import pytest

from verl_rewards.errors import SampleError
from verl_rewards.samples import Sample, as_samples

ROW = {"data_source": "d", "solution_str": "s", "ground_truth": "g"}
CHAT = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "2+2?"}]


def test_a_row_without_prompt_gives_a_sample_whose_prompt_is_none() -> None:
    assert as_samples([ROW]) == [Sample("d", "s", "g", None, None)]


def test_a_text_prompt_is_kept_as_text() -> None:
    assert as_samples([{**ROW, "prompt": "What is 2+2?"}])[0].prompt == "What is 2+2?"


def test_chat_messages_are_kept_as_a_list_of_dicts() -> None:
    [sample] = as_samples([{**ROW, "prompt": tuple(CHAT)}])
    assert sample.prompt == CHAT
    assert isinstance(sample.prompt, list)


@pytest.mark.parametrize("bad", [42, [{"role": "user"}], ["just text"], b"bytes"])
def test_a_prompt_that_is_neither_text_nor_messages_names_the_row(bad: object) -> None:
    with pytest.raises(SampleError, match=r"sample 1.*prompt must be text, chat messages"):
        as_samples([ROW, {**ROW, "prompt": bad}])


def test_a_four_field_sample_still_builds_positionally() -> None:
    assert Sample("d", "s", "g", {"k": 1}).prompt is None
