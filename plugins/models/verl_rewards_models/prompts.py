"""A sample's prompt (text, chat messages or None) as text or as chat messages."""

from __future__ import annotations

from typing import Any

from verl_rewards.samples import Prompt


def prompt_text(prompt: Prompt | None) -> str:
    """The prompt as text: chat messages become ``role: content`` lines (one message: its text)."""
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return prompt
    if len(prompt) == 1:
        return str(prompt[0]["content"])
    return "\n".join(f"{m['role']}: {m['content']}" for m in prompt)


def prompt_messages(prompt: Prompt | None) -> list[dict[str, Any]]:
    """The prompt as chat messages: text becomes one user message."""
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(m) for m in prompt]
