"""Every reasoning-gym task scores as the task's own ``score_answer`` does on reasoning-gym's extraction.

The reference is what reasoning-gym's training code computes: ``extract_answer``
on the response, then the generating dataset's ``score_answer``. Answers per
task: the entry's own, wrong ones, empty, and none (no answer tag).
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from reasoning_gym.utils import extract_answer as rg_extract_answer
from verl_rewards_reasoning_gym.reward import compute_score
from verl_rewards_reasoning_gym.tasks import TASKS

pytestmark = pytest.mark.slow  # one entry per task: ~10 s of generation, ~5 s of scorer builds

# Tasks whose scorer raises on some answers (reasoning-gym's training would crash there); here they score 0.
RAISES_ON = {"boxnet": {"1", "0"}, "prime_factorization": {"zzz", "{right} x"}}


def _answers(right: Any) -> dict[str, str | None]:
    text = right if isinstance(right, str) else ""
    return {"{right}": text if isinstance(right, str) else None, "zzz": "zzz", "0": "0", "1": "1", "": "",
            "{right} x": f"{text} x", "none": None}


def _response(answer: str | None) -> str:
    return "I cannot solve this." if answer is None else f"<think>Let me work it out.</think>\n<answer>{answer}</answer>"


def _reference(dataset: Any, response: str, entry: dict[str, Any], whole: bool = False) -> float | None:
    answer = response.strip() if whole else rg_extract_answer(response)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(dataset.score_answer(answer, entry))
        except Exception:  # noqa: BLE001
            return None


def test_the_registry_is_reasoning_gyms_106_tasks(generated) -> None:
    assert len(TASKS) == 106 and "composite" in TASKS and "leg_counting" in TASKS
    assert len(generated) == 105


def test_every_task_scores_every_answer_as_reasoning_gym(generated) -> None:
    differ, raised, right = [], set(), 0
    for g in generated:
        for label, answer in _answers(g.entry["answer"]).items():
            response = _response(answer)
            expected = _reference(g.dataset, response, g.entry)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = compute_score(f"reasoning_gym/{g.task}", response, g.entry["answer"], {"entry": g.entry})
            if expected is None:
                raised.add((g.task, label))
                if got["score"] != 0.0 or not got["scorer_error"]:
                    differ.append((g.task, label, "raised", got))
            elif got["score"] != expected or got["scorer_error"]:
                differ.append((g.task, label, expected, got))
            right += label == "{right}" and got["score"] == 1.0
    assert differ == []
    assert raised == {(task, label) for task, labels in RAISES_ON.items() for label in labels}
    assert right >= 95  # the others store no single answer (None: boxnet, rubiks_cube, ...)


def test_every_task_scores_the_whole_response_as_reasoning_gym(generated) -> None:
    differ = []
    for g in generated:
        right = g.entry["answer"] if isinstance(g.entry["answer"], str) else ""
        for response in (f"{right}\n", "zzz"):
            expected = _reference(g.dataset, response, g.entry, whole=True)
            if expected is None:
                continue
            got = compute_score(f"reasoning_gym/{g.task}", response, right, {"entry": g.entry},
                                whole_response=True)["score"]
            if got != expected:
                differ.append((g.task, response, expected, got))
    assert differ == []


def test_an_entry_given_as_json_text_scores_as_the_entry_itself(generated) -> None:
    differ = []
    for g in generated:
        for answer in (g.entry["answer"] if isinstance(g.entry["answer"], str) else None, "zzz"):
            response = _response(answer)
            expected = compute_score(f"reasoning_gym/{g.task}", response, "", {"entry": g.entry})["score"]
            got = compute_score("", response, "", {"entry": json.dumps(g.entry)})["score"]
            if got != expected:
                differ.append((g.task, answer, expected, got))
    assert differ == []  # arc_agi and rearc need their board turned back into tuples for this
