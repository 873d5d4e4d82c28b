"""The ``math_boxed`` reward: the last ``\\boxed{}`` answer against the reference."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward

from .equivalence import Options, equivalent
from .extract import EXTRACT_MODES, Extract, answer_side, reference_answer, response_answer

PRED_CHARS = 200
# A longer box is not an answer (a derivation or a runaway generation), and
# would only make normalisation and comparison slow.
MAX_BOX_CHARS = 1000


@reward(
    description=(
        "MATH-style: the boxed answer of the response (several boxes across connectors are one "
        "answer), normalised, equals the reference (string, numeric, collections, then math-verify "
        "and SymPy under a deadline)."
    ),
    data_sources=(
        "lighteval/MATH",
        "DigitalLearningGmbH/MATH-lighteval",
        "HuggingFaceH4/MATH-500",
        "math_dapo",
    ),
    timeout_s=30.0,
    tags=("math",),
    kind="math",
    examples=[
        Example(solution_str="So $x = \\boxed{\\frac{1}{2}}$.", ground_truth="0.5", expected=1.0),
        Example(solution_str="The answer is $\\boxed{\\dfrac34}$", ground_truth="\\frac{3}{4}", expected=1.0),
        Example(solution_str="The angle is \\boxed{30^\\circ}.", ground_truth="30", expected=1.0),
        # Needs the SymPy child; a cold start is ~0.5 s, so give the self-test room.
        Example(solution_str="\\boxed{(x-1)(x+1)}", ground_truth="x^2-1", expected=1.0,
                kwargs={"timeout_s": 10.0}),
        Example(solution_str="\\boxed{6}", ground_truth="5", expected=0.1, kwargs={"format_score": 0.1}),
        Example(solution_str="The answer is 5.", ground_truth="5", expected=0.0),
    ],
    # For `verl-rewards audit`: a rounded answer is not an exact reference.
    adversarial=[
        Example(solution_str="\\boxed{3.14}", ground_truth="\\pi", expected=0.0),
        Example(solution_str="\\boxed{1.732}", ground_truth="\\sqrt{3}", expected=0.0),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: str | int | float,
    extra_info: Mapping[str, Any] | None = None,
    *,
    format_score: float = 0.0,
    score: float = 1.0,
    symbolic: bool = True,
    math_verify: bool = True,
    timeout_s: float = 2.0,
    ordered_lists: bool = False,
    extract: Extract = "boxed",
) -> dict[str, Any]:
    """``score`` when the boxed answer equals the reference, ``format_score``
    when a box holds a wrong answer, 0 when there is no answer: no complete
    box, a box that is empty once normalised (``\\boxed{\\$}``), or one
    longer than ``MAX_BOX_CHARS``.

    ``symbolic``/``math_verify`` enable the SymPy and math-verify checks, which
    together may take ``timeout_s`` seconds of CPU time, within 5 times that of
    wall-clock time (the symbolic child's start not included). ``ordered_lists``: a bare list must be in the reference's
    order. ``extract``: ``boxed`` reads only the box; ``last_math`` reads the box
    when there is one, else the answer after a final-answer phrase, the whole
    response when it is an answer, or its last math or number (``extract.py``).
    Extra info: ``acc``, ``pred`` (the answer read) and ``match`` (which check
    decided: exact, numeric, sequence, math_verify, symbolic or none; undecided
    when math-verify or SymPy was cut short at its deadline and nothing else matched).
    """
    if extract not in EXTRACT_MODES:
        raise ValueError(f"extract must be one of {', '.join(EXTRACT_MODES)}, not {extract!r}")
    no_answer = {"score": 0.0, "acc": False, "pred": "", "match": "none"}
    found = response_answer(solution_str, extract)
    if found is None or len(found.text) > MAX_BOX_CHARS:
        return no_answer
    reference = reference_answer(str(ground_truth), extract)
    pred = answer_side(found, reference)
    options = Options(symbolic, math_verify, timeout_s, ordered_lists)
    verdict = equivalent(pred, reference, options)
    if not verdict.answered:
        return no_answer
    value = score if verdict.equal else format_score
    return {"score": float(value), "acc": verdict.equal, "pred": pred[:PRED_CHARS], "match": verdict.method}
