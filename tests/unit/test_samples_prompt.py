"""A sample's optional prompt: read from a row's ``prompt`` key, text or chat messages."""

from __future__ import annotations

import numpy as np
import pytest

from verl_rewards.errors import SampleError
from verl_rewards.samples import Sample, as_samples, message_text, normalise_prompt

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


# -- normalise_prompt: the one rule every adapter and endpoint reads a prompt with -----

MESSAGES = [{"role": "user", "content": "2+2?"}]


@pytest.mark.parametrize(("given", "prompt"), [
    (None, None),
    ("", None),  # no prompt, as slime's default Sample.prompt and a missing OpenRLHF prompt
    ("What is 2+2?", "What is 2+2?"),
    ("  spaced  ", "  spaced  "),  # text as given
    ([], None),
    ((), None),
    (MESSAGES, MESSAGES),
    (tuple(MESSAGES), MESSAGES),
    ([{"role": "user", "content": [{"type": "input_text", "text": "2+"}, {"type": "input_text",
                                                                           "text": "2?"}]}],
     MESSAGES),  # Responses-API content parts: their text joined
    ([{"role": "user", "content": [{"type": "image_url", "image_url": "x"}, "2+2?"]}], MESSAGES),
    ([{"role": "assistant", "content": None, "tool_calls": [1]}],
     [{"role": "assistant", "content": "", "tool_calls": [1]}]),  # other keys kept
    ([{"role": "user", "content": {"type": "text", "text": "2+2?"}}], MESSAGES),  # one part
    ([{"role": "user", "content": 4}], [{"role": "user", "content": "4"}]),
])
def test_normalise_prompt_reads_text_and_chat_messages(given: object, prompt: object) -> None:
    assert normalise_prompt(given) == prompt
    assert normalise_prompt(given, strict=True) == prompt


def test_normalise_prompt_reads_an_array_of_messages_as_verl_stores_raw_prompt() -> None:
    array = np.array(MESSAGES, dtype=object)
    assert normalise_prompt(array) == MESSAGES
    assert type(normalise_prompt(array)) is list


def test_normalise_prompt_copies_the_messages() -> None:
    given = [{"role": "user", "content": "2+2?"}]
    prompt = normalise_prompt(given)
    assert prompt == given and prompt[0] is not given[0]


@pytest.mark.parametrize("odd", [42, 4.5, b"bytes", {"role": "user", "content": "x"},
                                 ["just text"], [{"role": "user"}], [42], object()])
def test_normalise_prompt_leaves_out_what_is_not_a_prompt_and_strict_says_what_it_got(odd: object) -> None:
    assert normalise_prompt(odd) is None
    with pytest.raises(ValueError, match=rf"^prompt must be text, chat messages .* or null, not "
                                         rf"{type(odd).__name__} "):
        normalise_prompt(odd, strict=True)


def test_normalise_prompt_keeps_the_messages_of_a_mixed_list_unless_strict() -> None:
    mixed = [{"type": "function_call", "name": "f"}, *MESSAGES]  # a Responses-API input
    assert normalise_prompt(mixed) == MESSAGES
    with pytest.raises(ValueError, match="not list"):
        normalise_prompt(mixed, strict=True)


@pytest.mark.parametrize(("content", "text"), [
    (None, ""), ("x", "x"), (["a", {"text": "b"}, {"type": "image"}, {"text": None}, 3], "ab"),
    ({"text": "x"}, "x"), (7, "7"),
])
def test_message_text(content: object, text: str) -> None:
    assert message_text(content) == text


def test_an_empty_text_prompt_in_a_row_is_no_prompt() -> None:
    assert as_samples([{**ROW, "prompt": ""}])[0].prompt is None
