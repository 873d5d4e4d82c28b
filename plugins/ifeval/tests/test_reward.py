"""The ``ifeval`` reward: strict and loose, all-or-nothing and partial, ground truth in every shape."""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import pytest
from verl_rewards_ifeval.ground_truth import GroundTruthError
from verl_rewards_ifeval.reward import compute_score, response_variants

from verl_rewards import Scorer

# IFEval's row 1000, its word count lowered to fit a short response.
ROW = {
    "key": 1000,
    "prompt": "Write a summary... Do not use any commas and highlight at least 3 sections...",
    "instruction_id_list": [
        "punctuation:no_comma",
        "detectable_format:number_highlighted_sections",
        "length_constraints:number_words",
    ],
    "kwargs": [{}, {"num_highlights": 3}, {"relation": "at least", "num_words": 20}],
}
GOOD = ("*Youth* Raymond grew up in Tripoli. *Regency* He ruled for the boy king. "
        "*Hattin* He fled the lost battle and died in 1187.")


def score(response: str, truth: Any = ROW, **options: Any) -> dict[str, Any]:
    return compute_score("ifeval", response, truth, **options)


def test_a_response_following_every_instruction_scores_one() -> None:
    assert score(GOOD) == {"score": 1.0, "followed": "1,1,1", "instructions_followed": 3,
                           "instructions_total": 3}


def test_one_missed_instruction_scores_zero_or_its_fraction_with_partial() -> None:
    missed = GOOD.replace("in 1187.", "in 1187, sadly.")
    assert score(missed) == {"score": 0.0, "followed": "0,1,1", "instructions_followed": 2,
                             "instructions_total": 3}
    assert score(missed, partial=True)["score"] == pytest.approx(2 / 3)
    assert score("Short, plain.", partial=True) == {"score": 0.0, "followed": "0,0,0",
                                                    "instructions_followed": 0, "instructions_total": 3}


def test_loose_accepts_the_response_without_its_first_or_last_line() -> None:
    truth = {"instruction_id_list": ["startend:quotation"], "kwargs": [{}]}
    framed = 'Here is my answer:\n"All of it quoted."\nHope this helps!'
    assert score(framed, truth)["score"] == 0.0
    assert score(framed, truth, mode="loose")["score"] == 1.0
    assert score('Intro\n"quoted"', truth, mode="loose")["score"] == 1.0  # last line kept


def test_loose_accepts_the_response_without_markdown_stars() -> None:
    truth = {"instruction_id_list": ["startend:end_checker"], "kwargs": [{"end_phrase": "Any other questions?"}]}
    assert score("Done. **Any other questions?**", truth)["score"] == 0.0
    assert score("Done. **Any other questions?**", truth, mode="loose")["score"] == 1.0


def test_loose_never_makes_a_followed_instruction_fail() -> None:
    truth = {"instruction_id_list": ["detectable_format:number_highlighted_sections"],
             "kwargs": [{"num_highlights": 3}]}
    assert score(GOOD, truth, mode="loose")["score"] == 1.0  # the star-free variants fail, the response holds


def test_loose_variants_are_ifevals_eight_texts() -> None:
    text = "first *line*\nmiddle\nlast"
    assert response_variants(text, "loose") == (
        text, "middle\nlast", "first *line*\nmiddle", "middle",
        "first line\nmiddle\nlast", "first line\nmiddle",
    )  # duplicates ("middle\nlast", "middle" without stars) checked once
    assert response_variants("one line", "loose") == ("one line", "")
    assert response_variants("x", "strict") == ("x",)


def test_several_instructions_are_reported_in_order() -> None:
    truth = {
        "instruction_id_list": ["detectable_format:title", "punctuation:no_comma", "startend:quotation",
                                "keywords:existence"],
        "kwargs": [{}, {}, {}, {"keywords": ["joy"]}],
    }
    result = score('"<<Ode>> Joy, joy."', truth, partial=True)
    assert result == {"score": 0.75, "followed": "1,0,1,1", "instructions_followed": 3,
                      "instructions_total": 4}


def test_unicode_responses_and_keywords() -> None:
    truth = {
        "instruction_id_list": ["keywords:frequency", "detectable_format:title", "change_case:english_lowercase",
                                "keywords:letter_frequency"],
        "kwargs": [{"keyword": "CAFÉ", "frequency": 2, "relation": "at least"}, {},
                   {}, {"letter": "É", "let_frequency": 2, "let_relation": "at least"}],
    }
    response = "<<café 🍵>>\nthe café near the old café serves tea to everyone who walks past the station."
    assert score(response, truth)["followed"] == "1,1,1,1"
    assert score(response.replace("<<café 🍵>>", "<< \u3000 >>"), truth)["followed"] == "1,0,1,1"


def test_ground_truth_as_json_text_and_with_none_valued_kwargs() -> None:
    hub_row = dict(ROW, kwargs=[{"num_highlights": None, "relation": None, "num_words": None},
                                {"num_highlights": 3, "relation": None, "num_words": None},
                                {"num_highlights": None, "relation": "at least", "num_words": 20}])
    assert score(GOOD, json.dumps(hub_row))["score"] == 1.0
    assert score(GOOD, dict(ROW, kwargs=[None, *ROW["kwargs"][1:]]))["score"] == 1.0


def test_ground_truth_read_from_parquet_through_pandas() -> None:
    # numpy arrays for lists, floats for integers in a column with gaps, NaN for None.
    truth = {
        "instruction_id_list": np.array(["keywords:existence", "length_constraints:number_words"]),
        "kwargs": np.array([{"keywords": np.array(["raymond"]), "num_words": float("nan")},
                            {"keywords": None, "num_words": 20.0, "relation": "at least"}]),
    }
    assert score(GOOD, truth)["score"] == 1.0


@pytest.mark.parametrize(("truth", "message"), [
    ({"instruction_id_list": ["keywords:existance"], "kwargs": [{}]},
     "instruction 0 ('keywords:existance'): unknown instruction id; known ids: keywords:existence, "),
    ({"instruction_id_list": ["length_constraints:number_words"], "kwargs": [{"num_words": 10}]},
     "instruction 0 ('length_constraints:number_words'): missing kwarg 'relation' (IFEval would draw it at "
     "random); it takes ['num_words', 'relation']"),
    ({"instruction_id_list": ["length_constraints:number_words"],
      "kwargs": [{"num_words": 10, "relation": "at most"}]},
     "instruction 0 ('length_constraints:number_words'): kwarg 'relation' must be one of "
     "['less than', 'at least'], not 'at most'"),
    ({"instruction_id_list": ["detectable_format:number_bullet_lists"], "kwargs": [{"num_bullets": -1}]},
     "kwarg 'num_bullets' must be a whole number >= 0, not -1"),
    ({"instruction_id_list": ["detectable_format:number_bullet_lists"], "kwargs": [{"num_bullets": "3"}]},
     "kwarg 'num_bullets' must be a whole number >= 0, not '3'"),
    ({"instruction_id_list": ["detectable_format:title"], "kwargs": [{"num_bullets": 3}]},
     "instruction 0 ('detectable_format:title'): unexpected kwarg(s) ['num_bullets']; it takes none"),
    ({"instruction_id_list": ["length_constraints:nth_paragraph_first_word"],
      "kwargs": [{"num_paragraphs": 2, "nth_paragraph": 3, "first_word": "so"}]},
     "kwarg 'nth_paragraph' must be at most num_paragraphs (2), not 3"),
    ({"instruction_id_list": ["language:response_language"], "kwargs": [{"language": "xx"}]},
     "kwarg 'language' must be a language code langdetect knows (af, ar, bg, "),
    ({"instruction_id_list": ["keywords:letter_frequency"],
      "kwargs": [{"letter": "ab", "let_frequency": 1, "let_relation": "less than"}]},
     "kwarg 'letter' must be one character, not 'ab'"),
    ({"instruction_id_list": ["keywords:existence"], "kwargs": [{"keywords": "mom"}]},
     "kwarg 'keywords' must be a non-empty list of strings, not 'mom'"),
    ({"instruction_id_list": ["combination:repeat_prompt"], "kwargs": [{"prompt_to_repeat": "  "}]},
     "kwarg 'prompt_to_repeat' must be non-empty text, not '  '"),
    ({"instruction_id_list": ["punctuation:no_comma"], "kwargs": []},
     "'kwargs' must be a list of 1 mapping(s), one per instruction id, not []"),
    ({"instruction_id_list": [], "kwargs": []},
     "'instruction_id_list' must be a non-empty list of instruction ids, not []"),
    ({"func_name": "validate_lowercase"},
     "'instruction_id_list' must be a non-empty list of instruction ids, not None"),
    ("not json", "ground truth is not valid JSON: Expecting value: line 1 column 1 (char 0)"),
    (42, "ground truth must be a mapping with 'instruction_id_list' and 'kwargs' (or its JSON text), not int"),
])
def test_malformed_ground_truth_fails_the_sample_naming_the_problem(truth: Any, message: str) -> None:
    with pytest.raises(GroundTruthError) as raised:
        score(GOOD, truth)
    assert message in str(raised.value)


def test_unknown_mode_or_partial_is_refused() -> None:
    with pytest.raises(ValueError, match="mode must be 'strict' or 'loose', not 'lenient'"):
        score(GOOD, mode="lenient")
    with pytest.raises(ValueError, match="partial must be true or false, not 'yes'"):
        score(GOOD, partial="yes")


def test_megabytes_of_sentence_boundaries_are_a_zero_within_a_short_time_limit() -> None:
    """Punkt takes 10-25 us per boundary: 4 MB of '. ' (2M boundaries) outlasts a 4 s limit on
    any machine (before: a timeout, which on_error=skip drops; 1 MB can finish in 3 s on a fast
    quiet one). Its checks stop first: an ok 0, saying why."""
    truth = {"instruction_id_list": ["length_constraints:number_sentences", "punctuation:no_comma"],
             "kwargs": [{"num_sentences": 3, "relation": "at least"}, {}]}
    with Scorer.from_config({"plugin": "ifeval", "timeout_s": 4.0, "executor": "local"}) as scorer:
        began = time.monotonic()
        result = scorer.score([{"data_source": "ifeval", "solution_str": ". " * (1 << 21), "ground_truth": truth}])
        seconds = time.monotonic() - began
    assert (result.statuses, result.scores) == (["ok"], [0.0]), result.errors
    assert result.extra_info["check_error"][0].startswith("late: the checks were stopped 1 s before")
    assert result.extra_info["check_error"][0].endswith("(0 of 2 instructions checked)")
    assert result.extra_info["followed"] == ["0,0"]
    assert seconds < 4.0
