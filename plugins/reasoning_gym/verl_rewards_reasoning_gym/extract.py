"""The answer a response gives: reasoning-gym's ``extract_answer``, in linear time."""

from __future__ import annotations

from verl_rewards.parsing import last_block

OPEN, CLOSE = "<answer>", "</answer>"


def extract_answer(response: str) -> str | None:
    """The stripped text of the last ``<answer>...</answer>`` block, or None without one.

    What ``reasoning_gym.utils.extract_answer(response)`` returns (its regex is
    ``<answer>\\s?(.*?)\\s?</answer>`` with DOTALL, the last match, stripped):
    blocks are found left to right, each ending at the first close tag after its
    open tag; the optional whitespace the regex drops is stripped anyway. The
    regex takes quadratic time on unclosed open tags (8,000 of them, 64 kB:
    10 s); :func:`verl_rewards.parsing.last_block` is linear.
    """
    block = last_block(response, OPEN, CLOSE)
    return None if block is None else block.strip()
