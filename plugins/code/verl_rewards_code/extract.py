"""Find the program in a model's response: its last fenced code block."""

from __future__ import annotations

import re
from typing import NamedTuple

_CLOSED = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)```", re.DOTALL)
_OPEN = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*)\Z", re.DOTALL)
PYTHON_TAGS = frozenset({"python", "py", "python3", "py3"})


class CodeBlock(NamedTuple):
    """A fenced block: its language tag (lower case, maybe empty) and its text."""

    language: str
    code: str


def code_blocks(response: str) -> list[CodeBlock]:
    """Every fenced block in order; a final unclosed fence (a cut-off response) counts too."""
    closed = list(_CLOSED.finditer(response))
    blocks = [CodeBlock(m.group(1).lower(), m.group(2)) for m in closed]
    tail = _OPEN.search(response, closed[-1].end() if closed else 0)
    if tail is not None:
        blocks.append(CodeBlock(tail.group(1).lower(), tail.group(2)))
    return blocks


def extract_code(response: str) -> str:
    """The program to run: the last Python block, else the last untagged block,
    else the last block of any language, else the whole response.

    Untagged blocks come second because responses often show sample input or
    output in a bare fence after the code.
    """
    blocks = code_blocks(response)
    for accept in (lambda b: b.language in PYTHON_TAGS, lambda b: b.language == "", lambda b: True):
        chosen = [b for b in blocks if accept(b)]
        if chosen:
            return chosen[-1].code
    return response
