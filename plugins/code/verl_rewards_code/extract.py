"""Find the program in a model's response: its last fenced code block."""

from __future__ import annotations

import re
from typing import NamedTuple

FENCE = "```"
_LANGUAGE = re.compile(r"[ \t]*([\w+#.-]*)")
PYTHON_TAGS = frozenset({"python", "py", "python3", "py3"})


class CodeBlock(NamedTuple):
    """A fenced block: its language tag (lower case, maybe empty) and its text."""

    language: str
    code: str


def code_blocks(response: str) -> list[CodeBlock]:
    """Every fenced block in order; a final unclosed fence (a cut-off response) counts too.

    A block opens at a fence followed by a header line (its first word is the
    language) and closes at the next fence. One forward scan with ``str.find``:
    linear in the response, whatever runs of backticks it holds (a regex that
    retries the header at every backtick is quadratic there).
    """
    blocks = []
    position = 0
    while (opening := response.find(FENCE, position)) != -1:
        header_end = response.find("\n", opening + len(FENCE))
        if header_end == -1:
            break  # no header line after this fence, nor after any later one
        header = response[opening + len(FENCE) : header_end]
        language = _LANGUAGE.match(header)
        tag = language.group(1).lower() if language else ""
        closing = response.find(FENCE, header_end + 1)
        if closing == -1:
            blocks.append(CodeBlock(tag, response[header_end + 1 :]))
            break
        blocks.append(CodeBlock(tag, response[header_end + 1 : closing]))
        position = closing + len(FENCE)
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
