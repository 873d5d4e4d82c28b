"""The ``ifeval`` reward: IFEval's verifiable instructions, strict or loose, all or a fraction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from verl_rewards.metadata import Example, reward
from verl_rewards_ifeval import budget, language
from verl_rewards_ifeval.ground_truth import Instruction, parse_ground_truth

# Loaded when the reward is resolved (once per process), not inside the first sample's timeout.
language.preload()

Mode = Literal["strict", "loose"]
MODES: tuple[Mode, ...] = ("strict", "loose")


def response_variants(response: str, mode: Mode) -> tuple[str, ...]:
    """The texts an instruction may be followed in: the response, or IFEval's eight loose variants.

    Loose: the response with its first line, its last line or both removed,
    each also with every ``*`` removed (markdown emphasis).
    """
    if mode == "strict":
        return (response,)
    first, last = response.find("\n"), response.rfind("\n")
    no_first = response[first + 1 :].strip() if first >= 0 else ""
    no_last = response[:last].strip() if last >= 0 else ""
    no_both = response[first + 1 : last].strip() if first >= 0 else ""
    trimmed = (response, no_first, no_last, no_both)
    variants = trimmed + tuple(text.replace("*", "") for text in trimmed)
    return tuple(dict.fromkeys(variants))  # same verdicts, each distinct text checked once


def followed(instruction: Instruction, variants: Sequence[str]) -> bool:
    """Whether any non-blank variant follows the instruction (a blank response follows none).

    Inside a :func:`budget.checks_bounded` block, ``budget.OutOfTime`` when its time is up."""
    for text in variants:
        budget.check()
        if text.strip() and instruction.kind.check(text, instruction.kwargs):
            return True
    return False


_ROW = {
    "instruction_id_list": ["punctuation:no_comma", "detectable_format:title", "length_constraints:number_words"],
    "kwargs": [{}, {}, {"relation": "at least", "num_words": 30}],
}
_GOOD = (
    "<<Raymond>>\nRaymond III was born in Tripoli around 1140 and grew up at the court of his father. "
    "He governed the Kingdom of Jerusalem as regent for the young king Baldwin and fought at Hattin in 1187."
)
_COMMA = _GOOD.replace("1140 and", "1140, and")
# As in the IFEval data on the Hugging Face hub: every kwarg key present, unused ones None.
_LOOSE_ROW = {
    "instruction_id_list": ["detectable_format:title", "change_case:english_lowercase"],
    "kwargs": [{"num_words": None, "relation": None}, {"num_words": None, "relation": None}],
}
_PREAMBLE = "Sure! Here it is.\n<<greeting>>\nhello there, this reply is written in plain lowercase english words."


@reward(
    description=(
        "IFEval instruction following: ground_truth {'instruction_id_list': [...], 'kwargs': [...]} "
        "(all 25 instruction types); 1 when every instruction is followed (partial=true: the "
        "fraction); mode=loose also accepts IFEval's loose variants of the response."
    ),
    data_sources=("google/IFEval", "ifeval"),
    timeout_s=10.0,
    tags=("instruction-following", "format"),
    kind="format",
    examples=[
        Example(solution_str=_GOOD, ground_truth=_ROW, expected=1.0),
        Example(solution_str=_COMMA, ground_truth=_ROW, expected=0.0),
        Example(solution_str=_COMMA, ground_truth=_ROW, expected=2 / 3, kwargs={"partial": True}),
        Example(solution_str=_PREAMBLE, ground_truth=_LOOSE_ROW, expected=0.0),
        Example(solution_str=_PREAMBLE, ground_truth=_LOOSE_ROW, expected=1.0, kwargs={"mode": "loose"}),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    mode: Mode = "strict",
    partial: bool = False,
) -> dict[str, Any]:
    """1.0 when the response follows every instruction of ``ground_truth`` (else 0.0).

    ``partial``: the fraction of instructions followed instead. ``mode``:
    ``strict`` checks the response as it is, ``loose`` as IFEval's loose
    evaluation does. Extra info: ``followed`` (``"1,0,1"``, in instruction
    order), ``instructions_followed`` and ``instructions_total``. A malformed
    ground truth (unknown instruction id, missing kwarg) raises, naming it.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be 'strict' or 'loose', not {mode!r}")
    if not isinstance(partial, bool):
        raise ValueError(f"partial must be true or false, not {partial!r}")
    instructions = parse_ground_truth(ground_truth)
    variants = response_variants(solution_str, mode)
    verdicts: list[bool] = []
    with budget.checks_bounded():
        try:
            for instruction in instructions:
                verdicts.append(followed(instruction, variants))
        except budget.OutOfTime as e:
            return _unfinished(verdicts, len(instructions), str(e))
    hits = sum(verdicts)
    score = hits / len(verdicts) if partial else float(hits == len(verdicts))
    return {
        "score": score,
        "followed": ",".join("1" if verdict else "0" for verdict in verdicts),
        "instructions_followed": hits,
        "instructions_total": len(verdicts),
    }


def _unfinished(verdicts: list[bool], total: int, why: str) -> dict[str, Any]:
    """The answer's 0 when its checks ran out of time: those not reached count as not followed."""
    shown = verdicts + [False] * (total - len(verdicts))
    return {
        "score": 0.0,
        "followed": ",".join("1" if verdict else "0" for verdict in shown),
        "instructions_followed": sum(verdicts),
        "instructions_total": total,
        "check_error": f"{why} ({len(verdicts)} of {total} instructions checked)",
    }
