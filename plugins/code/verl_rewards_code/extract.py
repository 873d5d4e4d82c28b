"""Find the program in a model's response, and its language: its last fenced code block."""

from __future__ import annotations

import re
from typing import NamedTuple

from .sandbox import LANGUAGES, language_of

FENCE = "```"
_LANGUAGE = re.compile(r"[ \t]*([\w+#.-]*)")


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
    """The program to run (see :func:`extract_program`)."""
    return extract_program(response)[0]


class Extracted(NamedTuple):
    """A response's program, the language it runs in, and the fence tag of its block
    (empty: untagged, or no block)."""

    code: str
    language: str
    tag: str

    @property
    def unrunnable_tag(self) -> str | None:
        """The block's tag when it names no language the sandbox runs (```go```): such a
        program was not written for any language here (it is not run as Python)."""
        return self.tag if self.tag and _language_of(self.tag) is None else None


def extract_program(response: str, language: str | None = None) -> tuple[str, str]:
    """``(program, language)``: see :func:`extract`."""
    extracted = extract(response, language)
    return extracted.code, extracted.language


def extract(response: str, language: str | None = None) -> Extracted:
    """The program, its language and its block's tag: the last block tagged with a
    language the sandbox runs (``python``/``py``, ``c``, ``cpp``/``c++``, ``java``, ``javascript``/``js``,
    ``rust``/``rs``), else the last untagged block, else the last block of any
    tag, else the whole response; its language is its tag's (Python for the rest;
    a last block tagged with another language, ```go```, says so in
    :attr:`Extracted.unrunnable_tag`).

    A ``language`` (a name or a tag) chooses instead: the last block tagged with
    it, else the last untagged block, else the last block, else the whole
    response, all run as ``language``. Untagged blocks come after tagged ones
    because responses often show sample input or output in a bare fence after
    the code.
    """
    wanted = None
    if language is not None:
        wanted = language_of(language)
        if wanted is None:
            raise ValueError(f"unknown language {language!r}; code_exec runs {', '.join(LANGUAGES)}")
    blocks = code_blocks(response)
    tagged = (lambda b: _language_of(b.language) == wanted) if wanted else (
        lambda b: _language_of(b.language) is not None)
    for accept in (tagged, lambda b: b.language == "", lambda b: True):
        chosen = [b for b in blocks if accept(b)]
        if chosen:
            block = chosen[-1]
            return Extracted(block.code, wanted or _language_of(block.language) or "python", block.language)
    return Extracted(response, wanted or "python", "")


def _language_of(tag: str) -> str | None:
    """The language a fence tag names, a versioned Python tag (``python3.11``) included."""
    found = language_of(tag)
    if found is None and tag.startswith(("python", "py")) and tag.rstrip("0123456789.") in ("python", "py"):
        return "python"
    return found
