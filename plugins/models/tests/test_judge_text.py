"""The judge's template and the score read from its reply."""

from __future__ import annotations

import re

import pytest
from verl_rewards_models.judge_text import (
    DEFAULT_TEMPLATE,
    JudgeReplyError,
    check_template,
    parse_score,
    prompt_text,
    render,
    score_label,
)


@pytest.mark.parametrize(("reply", "expected"), [
    ("Score: 7", (0.7, 7.0)),
    ("Step 1 of 3 is fine... final score 10", (1.0, 10.0)),
    ("0", (0.0, 0.0)),
    ("I'd say 2.5.", (0.25, 2.5)),
])
def test_the_last_number_in_range_is_mapped_onto_zero_one(reply: str, expected: tuple[float, float]) -> None:
    assert parse_score(reply, (0, 10)) == pytest.approx(expected)


@pytest.mark.parametrize(("reply", "expected"), [
    ("Score: 2/10", (0.2, 2.0)),
    ("3 (out of 10)", (0.3, 3.0)),
    ("It is right but long: 7 out of 10.", (0.7, 7.0)),
    ("Compared with the reference (42), fine.\n**Score**: 8", (0.8, 8.0)),
    ("Score: 9. The reference 42 matches.", (0.9, 9.0)),
    ("Score: 6\nTo repeat, Score: 6/10", (0.6, 6.0)),
])
def test_the_score_the_template_asks_for_is_read_not_the_last_number(
        reply: str, expected: tuple[float, float]) -> None:
    assert parse_score(reply, (0, 10)) == pytest.approx(expected)


@pytest.mark.parametrize(("reply", "error"), [
    ("Score: 7 or 8", "ambiguous score line"),
    ("Score: 3\nOn reflection, Score: 8", "ambiguous: score lines disagree (3, 8)"),
    ("I'd give it a 3, maybe a 4.", "ambiguous: several numbers and no 'Score: N' line"),
    ("2 out of 10, or 3 out of 10", "ambiguous: several numbers and no 'Score: N' line"),
    ("Score: 4/5", "the judge scored out of 5, but score_range is [0, 10]"),
])
def test_an_ambiguous_reply_fails_rather_than_scoring(reply: str, error: str) -> None:
    with pytest.raises(JudgeReplyError, match=re.escape(error)):
        parse_score(reply, (0, 10))


def test_the_label_is_the_one_the_template_asks_for() -> None:
    assert score_label(DEFAULT_TEMPLATE) == "Score"
    template = "Grade the response.\nEnd with a line Final rating: N (N from 1 to 5)."
    assert score_label(template) == "rating"
    assert score_label("{response}") == "Score"
    reply = "Step 2 of 3 is wrong; compared with 42 it is close.\nFinal rating: 4"
    assert parse_score(reply, (1, 5), label=score_label(template)) == (0.75, 4.0)
    with pytest.raises(JudgeReplyError, match="several numbers and no 'Score: N' line"):
        parse_score(reply, (1, 5))


def test_a_custom_range_maps_linearly() -> None:
    assert parse_score("Rating: 4", (1, 5)) == (0.75, 4.0)


def test_a_reply_without_a_number_is_an_error_quoting_the_reply() -> None:
    with pytest.raises(JudgeReplyError, match=r"no score in the judge's reply .*\[0, 10\].*'I cannot tell\.'"):
        parse_score("I cannot tell.", (0, 10))


def test_a_number_outside_the_range_is_an_error() -> None:
    with pytest.raises(JudgeReplyError, match=r"score 11 is outside \[0, 10\]"):
        parse_score("Score: 11", (0, 10))


def test_the_last_verdict_word_decides_and_incorrect_is_not_correct() -> None:
    verdicts = {"correct": 1.0, "incorrect": 0.0}
    assert parse_score("At first it looks correct, but it is INCORRECT.", (0, 10), verdicts) == (0.0, 0.0)
    assert parse_score("Verdict: correct", (0, 10), verdicts) == (1.0, 1.0)
    assert parse_score("no verdict, 5", (0, 10), verdicts) == (0.5, 5.0)


def test_templates_may_only_use_the_three_fields() -> None:
    assert check_template(DEFAULT_TEMPLATE) == DEFAULT_TEMPLATE
    with pytest.raises(ValueError, match=r"uses \['answer'\]"):
        check_template("{prompt} {answer}")
    with pytest.raises(ValueError, match=r"not a valid str\.format template"):
        check_template("{prompt")


def test_chat_messages_render_as_role_lines_and_one_message_as_its_text() -> None:
    chat = [{"role": "system", "content": "be kind"}, {"role": "user", "content": "hi"}]
    assert prompt_text(chat) == "system: be kind\nuser: hi"
    assert prompt_text([{"role": "user", "content": "hi"}]) == "hi"
    assert render("{prompt}|{response}|{ground_truth}", None, "r", None) == "|r|"
