"""Which code a response's program is taken from."""

from __future__ import annotations

import time

import pytest
from verl_rewards_code.extract import CodeBlock, code_blocks, extract, extract_code, extract_program


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("Here:\n```python\nprint(1)\n```\n", "print(1)\n"),
        ("```python\nprint(1)\n```\nBetter:\n```python\nprint(2)\n```", "print(2)\n"),
        ("```py\nprint(3)\n```", "print(3)\n"),
        ("```Python3\nprint(4)\n```", "print(4)\n"),
        ("```\nprint(5)\n```", "print(5)\n"),
        ("```python\nprint(6)\n```\nSample output:\n```\n6\n```", "print(6)\n"),
        ("```bash\npip install x\n```\n```python\nprint(7)\n```\n```text\n7\n```", "print(7)\n"),
        ("```cpp\nint main(){}\n```", "int main(){}\n"),
        ("```python\nprint(8)\n```\nand a cut-off one:\n```python\nprint(9", "print(9"),
        ("print(10)", "print(10)"),
        ("Inline ```python\nprint(11)```", "print(11)"),
    ],
)
def test_extract_code_takes_the_last_python_block(response: str, expected: str) -> None:
    assert extract_code(response) == expected


def test_code_blocks_lists_blocks_in_order_with_lowercase_languages() -> None:
    assert code_blocks("```PY\na\n```\n```\nb\n```") == [CodeBlock("py", "a\n"), CodeBlock("", "b\n")]


def test_a_cut_off_block_after_closed_ones_is_the_last_block() -> None:
    assert code_blocks("```py\na\n```\ntext\n```python\nb") == [CodeBlock("py", "a\n"), CodeBlock("python", "b")]
    assert code_blocks("no fence") == []


@pytest.mark.parametrize("response", ["`" * 200_000, "```" + "`\n" * 100_000, "```py\n" + "``" * 100_000])
def test_extraction_is_linear_on_long_runs_of_backticks(response: str) -> None:
    # A regex retrying the header at every backtick took 2.6 s (18 s under
    # load) on 60k backticks; the scan takes microseconds. 2 s is generous.
    started = time.perf_counter()
    code_blocks(response)
    assert time.perf_counter() - started < 2.0


def test_a_fence_without_a_header_line_opens_no_block() -> None:
    assert code_blocks("text ``` no newline after") == []
    assert code_blocks("```\n```") == [CodeBlock("", "")]
    assert code_blocks("```python x ``` y\nbody``` tail") == [CodeBlock("python", "body")]


@pytest.mark.parametrize(
    ("response", "language", "expected"),
    [
        ("```cpp\nA\n```", None, ("A\n", "cpp")),
        ("```C++\nA\n```", None, ("A\n", "cpp")),
        ("```rs\nA\n```", None, ("A\n", "rust")),
        ("```js\nA\n```", None, ("A\n", "javascript")),
        ("```Java\nA\n```", None, ("A\n", "java")),
        ("```python\nP\n```\nIn C++:\n```cpp\nC\n```", None, ("C\n", "cpp")),
        ("```cpp\nC\n```\nOutput:\n```text\n3\n```\n```\n3\n```", None, ("C\n", "cpp")),
        ("```\nU\n```", None, ("U\n", "python")),
        ("```bash\nB\n```", None, ("B\n", "python")),
        ("```python\nP\n```\n```\nU\n```", "cpp", ("U\n", "cpp")),
        ("```cpp\nA\n```\n```python\nB\n```", "c++", ("A\n", "cpp")),
        ("```python\nP\n```", "rust", ("P\n", "rust")),
        ("no fences", "rust", ("no fences", "rust")),
        ("no fences", None, ("no fences", "python")),
    ],
)
def test_extract_program_takes_the_last_block_of_a_language_it_runs(
    response: str, language: str | None, expected: tuple[str, str]
) -> None:
    assert extract_program(response, language) == expected


def test_an_unknown_language_is_an_error_naming_the_ones_it_runs() -> None:
    with pytest.raises(ValueError, match="unknown language 'cobol'; code_exec runs python, cpp, java, javascript, rust"):
        extract_program("```\nx\n```", "cobol")


@pytest.mark.parametrize(
    ("response", "tag"),
    [
        ("```go\nG\n```", "go"),
        ("```bash\nB\n```", "bash"),
        ("```python\nP\n```\nThe same in Go:\n```go\nG\n```", None),  # a block it runs comes first
        ("```go\nG\n```\nOutput:\n```\n3\n```", None),  # an untagged block is run as Python
        ("```python3.11\nP\n```", None),
        ("```py3.10\nP\n```", None),
        ("no fences", None),
    ],
)
def test_a_program_tagged_with_a_language_the_sandbox_does_not_run_is_named(response: str, tag: str | None) -> None:
    # Issue 34, item 3: code_exec then runs nothing, where it ran the block as Python.
    assert extract(response).unrunnable_tag == tag
