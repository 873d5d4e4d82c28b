"""The ``reasoning_gym`` reward: a reasoning-gym task's own ``score_answer`` on the response's answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward

from .entry import PREFIX, entry_of, restored, task_of
from .extract import extract_answer
from .isolation import ANSWER_TIMEOUT_S, score
from .tasks import TASKS, VERSION

# leg_counting's and palindrome_generation's first entries for seed 42 (their questions abridged).
_LEGS = {
    "question": "[...] how many legs are there in total if you have 3 sea slugs, 12 deers, 2 giraffes, "
                "11 elephants?\n",
    "answer": "100",
    "metadata": {"source_dataset": "leg_counting", "source_index": 0,
                 "animals": {"sea slug": 3, "deer": 12, "giraffe": 2, "elephant": 11}, "num_animals": 4,
                 "total_legs": 100, "difficulty": {"num_animals": [3, 10], "num_instances": [1, 15]}},
}
_PALINDROME = {
    "question": "[...] form a valid palindrome using the following letters: h, a, h, a\n",
    "answer": "ahha",
    "metadata": {"source_dataset": "palindrome_generation", "source_index": 0, "letters": ["h", "a", "h", "a"],
                 "generated_palindrome": "ahha", "length": 4, "difficulty": {"length": [3, 10]}},
}


@reward(
    description=(
        f"Any reasoning-gym task (reasoning-gym {VERSION}), scored by the task's own score_answer on the "
        "last <answer>...</answer> of the response (or the whole response); the task from data_source "
        "'reasoning_gym/<task>' or the entry's metadata.source_dataset, the entry in extra_info['entry']."
    ),
    data_sources=tuple(PREFIX + task for task in TASKS),
    timeout_s=30.0,
    tags=("reasoning-gym",),
    kind="generic",
    examples=[
        Example(data_source="reasoning_gym/leg_counting", solution_str="<think>36+48+8+44</think><answer>100</answer>",
                ground_truth="100", extra_info={"entry": _LEGS}, expected=1.0),
        Example(data_source="reasoning_gym/leg_counting", solution_str="<answer>96</answer>",
                ground_truth="100", extra_info={"entry": _LEGS}, expected=0.0),
        Example(data_source="reasoning_gym/leg_counting", solution_str="<answer>100 legs</answer>",
                ground_truth="100", extra_info={"entry": _LEGS}, expected=3 / 8),
        Example(data_source="reasoning_gym/leg_counting", solution_str="<answer>100 legs</answer>",
                ground_truth="100", extra_info={"entry": _LEGS}, expected=0.0, kwargs={"binary": True}),
        Example(data_source="reasoning_gym/composite", solution_str="<answer>haah</answer>",
                ground_truth="ahha", extra_info={"entry": _PALINDROME}, expected=1.0),
        Example(data_source="reasoning_gym/palindrome_generation", solution_str="<answer>hah</answer>",
                ground_truth="ahha", extra_info={"entry": _PALINDROME}, expected=0.05),
        Example(data_source="reasoning_gym/basic_arithmetic", solution_str="-5 * -6 = 30", ground_truth="30",
                expected=0.0),
        Example(data_source="reasoning_gym/basic_arithmetic", solution_str="30\n", ground_truth="30",
                expected=1.0, kwargs={"whole_response": True}),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    whole_response: bool = False,
    configs: Mapping[str, Mapping[str, Any]] | None = None,
    binary: bool = False,
    answer_timeout_s: float = ANSWER_TIMEOUT_S,
) -> dict[str, Any]:
    """The task's ``score_answer(answer, entry)``.

    The answer is the last ``<answer>`` block, stripped (None without one, as
    reasoning-gym's ``extract_answer`` gives its tasks), or with
    ``whole_response`` the whole response, stripped. ``configs`` maps a task to
    the config its data was generated with (``{"decimal_arithmetic":
    {"max_num_decimal_places": 5}}``), for tasks whose scoring reads it. An
    answer the task's scorer raises on scores 0 (``scorer_error`` says why);
    an entry it cannot score even with its own answer fails the sample.
    ``binary``: 1 for the task's full score, else 0 (no partial or format credit).
    The scorer runs in a child process (``isolation``; but for the tasks that
    keep reasoning-gym's default, string-comparing scorer): an answer it has not
    scored within ``answer_timeout_s``, or before the reward call's time runs
    out, scores 0 (``scorer_error`` says why), however hostile (``9**9**9**9``
    on countdown). Extra info: ``task``, ``answer_found``, ``scorer_error``.
    """
    entry = entry_of(ground_truth, extra_info)
    task = task_of(data_source, entry)
    entry = restored(task, entry)
    answer = solution_str.strip() if whole_response else extract_answer(solution_str)
    value, error = score(task, _config(configs, task), answer, entry, answer_timeout_s)
    if binary:
        value = 1.0 if value >= 1.0 else 0.0
    return {"score": value, "task": task, "answer_found": answer is not None, "scorer_error": error}


def _config(configs: Mapping[str, Mapping[str, Any]] | None, task: str) -> Mapping[str, Any] | None:
    if not configs:
        return None
    unknown = sorted(set(configs) - set(TASKS))
    if unknown:
        raise ValueError(f"configs names no reasoning-gym task: {', '.join(map(repr, unknown))}")
    return configs.get(task)
