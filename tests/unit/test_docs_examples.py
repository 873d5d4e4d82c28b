"""The docs' runnable examples run, and print what the docs say they print."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
# A fenced python block followed by `# comment` outputs on print lines is checked.
RUNNABLE = {"composition.md": 0}  # doc -> index of its self-contained python block


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize(("doc", "index"), sorted(RUNNABLE.items()))
def test_documented_example_prints_what_its_comments_claim(doc, index):
    block = _python_blocks((DOCS / doc).read_text())[index]
    claims = [c.strip() for c in re.findall(r"^print\(.*?\)\s*#\s*(.*)$", block, flags=re.M)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, f"{doc}[{index}]", "exec"), {})
    printed = out.getvalue().splitlines()
    assert len(printed) == len(claims) > 0
    for line, claim in zip(printed, claims):
        expected = claim.rstrip(".").removesuffix("...").strip()
        assert line.startswith(expected), (line, claim)
