"""The ``reasoning_steps`` reward: open-r1's ``reasoning_steps_reward``, min(1, steps / 3)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward

# open-r1's pattern, as is: each alternative starts with a literal (or ^), so a failed
# attempt costs at most the digit run after "Step "; findall is linear (1 MB: ~0.1 s).
# Without re.MULTILINE its ^ matches only at the very start of the response.
STEP = r"(Step \d+:|^\d+\.|\n-|\n\*|First,|Second,|Next,|Finally,)"
_STEP = re.compile(STEP)
_STEP_MULTILINE = re.compile(STEP, re.MULTILINE)


def count_steps(text: str, multiline: bool = False) -> int:
    """How many step markers open-r1's pattern finds: "Step N:", a number and a dot at the start
    (of the text; of any line with ``multiline``), a line opening with - or *, First, Second, Next, Finally."""
    return len((_STEP_MULTILINE if multiline else _STEP).findall(text))


@reward(
    description=(
        "open-r1's reasoning steps: min(1, markers / 3), markers being 'Step N:', a leading 'N.', "
        "lines starting with '-' or '*', and 'First,', 'Second,', 'Next,', 'Finally,'."
    ),
    timeout_s=5.0,
    tags=("format", "open-r1"),
    kind="generic",
    examples=[
        # open-r1's own cases (tests/test_rewards.py)
        Example(solution_str="Step 1: First step\nStep 2: Second step\nStep 3: Third step", ground_truth="",
                expected=1.0),
        Example(solution_str="First, we do this.\nSecond, we do that.\nFinally, we conclude.", ground_truth="",
                expected=1.0),
        Example(solution_str="Step 1: Only step", ground_truth="", expected=1 / 3),
        Example(solution_str="First, we do this.\nFinally, we conclude.", ground_truth="", expected=2 / 3),
        Example(solution_str="Just plain text without any clear steps", ground_truth="", expected=0.0),
        Example(solution_str="1. add\n2. carry", ground_truth="", expected=1 / 3),
        Example(solution_str="1. add\n2. carry", ground_truth="", expected=2 / 3, kwargs={"multiline": True}),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    target_steps: int = 3,
    multiline: bool = False,
) -> dict[str, Any]:
    """``min(1, steps / target_steps)`` (open-r1: 3). ``multiline``: a numbered line counts anywhere,
    as open-r1's docstring says, not only at the start as its code does. Extra info: ``steps``."""
    if target_steps < 1:
        raise ValueError(f"target_steps must be at least 1, not {target_steps}")
    steps = count_steps(solution_str, multiline)
    return {"score": min(1.0, steps / target_steps), "steps": steps}
