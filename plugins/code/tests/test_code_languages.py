"""code_exec in every language: the fence tag or ``language`` chooses it, a compiled one compiles once.

The programs are ``data/programs`` (shared with ``test_sandbox_languages.py``:
a worker compiles each once); without a mode word on stdin they print the
sum of the integers they read.
"""

from __future__ import annotations

import json
import textwrap
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from verl_rewards_code.code_exec import compute_score
from verl_rewards_code.sandbox import ToolchainMissing, languages
from verl_rewards_code.sandbox.compiled import CACHE

from verl_rewards.cli.main import main

PROGRAMS = Path(__file__).with_name("data") / "programs"
SUM = {"c": "modes.c", "cpp": "modes.cpp", "java": "Modes.java", "javascript": "modes.js", "rust": "modes.rs"}
TWO_TESTS = json.dumps({"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "8\n"]})


@pytest.mark.parametrize(
    ("tag", "language"), [("c", "c"), ("cpp", "cpp"), ("java", "java"), ("js", "javascript"), ("rs", "rust")]
)
def test_stdin_stdout_tests_run_in_the_fence_tags_language(tag: str, language: str) -> None:
    source = (PROGRAMS / SUM[language]).read_text()
    result = compute_score("apps", f"Here:\n```{tag}\n{source}```\n", TWO_TESTS)
    assert result == {"score": 0.5, "tests_passed": 1, "tests_total": 2, "test_statuses": "pass,fail",
                      "isolation": "namespaces", "language": language,
                      "explanation": "test 2 of 2: fail: token 1 differs: got '7' (line 1: '7'), expected '8' "
                                     "(line 1: '8')"}


@pytest.mark.parametrize(
    ("language", "source", "message"),
    [
        ("c", "int main(void) { return undeclared; }\n", "main.c:1:25: error: ‘undeclared’ undeclared"),
        ("cpp", "int main() { return undeclared; }\n", "main.cpp:1:21: error: ‘undeclared’ was not declared in this scope"),
        ("java", "public class Main { void f( }\n", "Main.java:1: error:"),
        ("rust", 'fn main() { let x: i32 = "text"; }\n', "error[E0308]: mismatched types"),
    ],
)
def test_a_program_that_does_not_compile_is_a_compile_error_with_the_compilers_first_lines(
    language: str, source: str, message: str
) -> None:
    result = compute_score("apps", f"```{language}\n{source}```", TWO_TESTS)
    assert (result["score"], result["test_statuses"], result["language"]) == (0.0, "compile_error,compile_error", language)
    assert message in result["compile_error"]
    assert "verl-rewards-code-" not in result["compile_error"]  # no run's tree in the message
    assert len(result["compile_error"].splitlines()) <= 20


def test_a_compile_past_its_time_limit_is_a_compile_error() -> None:
    heavy = "#include <bits/stdc++.h>\nint main() { std::map<int, std::vector<std::string>> m; }\n"
    result = compute_score("apps", f"```cpp\n{heavy}```", TWO_TESTS, compile_timeout_s=0.2)
    assert result["test_statuses"] == "compile_error,compile_error"
    assert result["compile_error"] == "compilation did not finish within 0.2 s"


def test_a_source_that_prints_the_cpu_limit_message_is_its_own_compile_error() -> None:
    forged = "#error internal compiler error: CPU time limit exceeded\nint main() {}\n"
    result = compute_score("apps", f"```cpp\n{forged}```", TWO_TESTS)
    assert result["test_statuses"] == "compile_error,compile_error"
    assert "#error internal compiler error: CPU time limit exceeded" in result["compile_error"]
    assert "did not finish" not in result["compile_error"]


def test_the_language_kwarg_chooses_the_block_and_the_language() -> None:
    source = (PROGRAMS / SUM["cpp"]).read_text()
    response = f"```python\nprint(3)\n```\nThe answer:\n```\n{source}```\n"
    assert compute_score("apps", response, TWO_TESTS, language="c++")["test_statuses"] == "pass,fail"
    assert compute_score("apps", response, TWO_TESTS)["language"] == "python"


def test_a_source_compiles_once_per_worker_even_when_asked_from_many_threads() -> None:
    source = (PROGRAMS / SUM["cpp"]).read_text() + f"// {uuid.uuid4().hex}\n"
    before = CACHE.compiles
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: compute_score("apps", f"```cpp\n{source}```", TWO_TESTS), range(4)))
    assert [r["test_statuses"] for r in results] == ["pass,fail"] * 4
    assert CACHE.compiles - before == 1


@pytest.mark.parametrize(("key", "form"), [("asserts", "assert tests"), ("fn_name", "call-based tests")])
def test_python_only_test_forms_with_another_language_fail_the_sample(key: str, form: str) -> None:
    truth = json.dumps({key: ["assert f(1) == 1"] if key == "asserts" else "f", "inputs": [], "outputs": []})
    with pytest.raises(ValueError, match=f"the program is javascript but the ground truth has {form}"):
        compute_score("apps", "```js\nconsole.log(1)\n```", truth)


def test_a_missing_compiler_fails_the_sample_naming_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    languages.toolchain.cache_clear()
    try:
        assert languages.available()["cpp"] == "missing: g++"
        with pytest.raises(ToolchainMissing, match="cpp programs need `g\\+\\+`, which is not installed on this machine"):
            compute_score("apps", "```cpp\nint main() {}\n```", TWO_TESTS)
    finally:
        languages.toolchain.cache_clear()


def test_show_lists_the_languages_this_machine_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "code_exec"]) == 0
    description = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("  description:"))
    listed = description.split("Languages on this machine: ", 1)[1]
    assert listed == "; ".join(f"{name} ({how})" for name, how in languages.available().items())
    for language in ("python", "cpp", "java", "javascript", "rust"):
        assert f"{language} (" in listed


# Each reads its whole input by the name /dev/stdin, writes the sum of its integers
# to /dev/stdout and a word to /dev/stderr (issue 33 item 4: no /dev/stdin in the
# sandbox's root, so correct programs ended with `error`).
BY_NAME = {
    "python": "nums = open('/dev/stdin').read().split()\nopen('/dev/stderr', 'w').write('sum\\n')\n"
              "with open('/dev/stdout', 'w') as out:\n    out.write(f'{sum(map(int, nums))}\\n')\n",
    "javascript": "const fs = require('fs');\n"
                  "const nums = fs.readFileSync('/dev/stdin', 'utf8').split(/\\s+/).filter(Boolean).map(Number);\n"
                  "fs.writeFileSync('/dev/stderr', 'sum\\n');\n"
                  "fs.writeFileSync('/dev/stdout', nums.reduce((a, b) => a + b, 0) + '\\n');\n",
    "c": "#include <stdio.h>\nint main(void) {\n    FILE *in = fopen(\"/dev/stdin\", \"r\"), *out = fopen(\"/dev/stdout\", \"w\");\n"
         "    long long sum = 0, x;\n    if (!in || !out) return 1;\n    while (fscanf(in, \"%lld\", &x) == 1) sum += x;\n"
         "    fprintf(fopen(\"/dev/stderr\", \"w\"), \"sum\\n\");\n    fprintf(out, \"%lld\\n\", sum);\n    return 0;\n}\n",
    "cpp": "#include <fstream>\nint main() {\n    std::ifstream in(\"/dev/stdin\");\n    std::ofstream out(\"/dev/stdout\"), err(\"/dev/stderr\");\n"
           "    long long sum = 0, x;\n    while (in >> x) sum += x;\n    err << \"sum\\n\";\n    out << sum << \"\\n\";\n"
           "    return in.eof() && out && err ? 0 : 1;\n}\n",
    "java": "import java.io.*;\nimport java.nio.file.*;\npublic class Main {\n"
            "    public static void main(String[] args) throws IOException {\n"
            "        String text = new String(Files.readAllBytes(Paths.get(\"/dev/stdin\")));\n"
            "        long sum = 0;\n        for (String word : text.trim().split(\"\\\\s+\")) sum += Long.parseLong(word);\n"
            "        try (PrintStream err = new PrintStream(new FileOutputStream(\"/dev/stderr\"))) { err.println(\"sum\"); }\n"
            "        try (PrintStream out = new PrintStream(new FileOutputStream(\"/dev/stdout\"))) { out.println(sum); }\n"
            "    }\n}\n",
    "rust": "fn main() {\n    let text = std::fs::read_to_string(\"/dev/stdin\").unwrap();\n"
            "    let sum: i64 = text.split_whitespace().map(|w| w.parse::<i64>().unwrap()).sum();\n"
            "    std::fs::write(\"/dev/stderr\", \"sum\\n\").unwrap();\n"
            "    std::fs::write(\"/dev/stdout\", format!(\"{}\\n\", sum)).unwrap();\n}\n",
}


@pytest.mark.parametrize("language", list(BY_NAME))
def test_a_program_that_reads_dev_stdin_and_writes_dev_stdout_passes_in_every_language(language: str) -> None:
    result = compute_score("apps", f"```{language}\n{BY_NAME[language]}```", TWO_TESTS.replace("8", "7"))
    assert (result["test_statuses"], result["language"]) == ("pass,pass", language), result


def test_the_java_class_that_declares_main_is_run_and_named_in_extra_info() -> None:
    # Issue 33 item 6: a field named `main` in an earlier class made the run `java Config`.
    source = """
        import java.util.*;

        class Config {
            static boolean main = true;  // not a method
            static String help = "public static void main(String[] args) { }";
        }

        /* class Decoy { public static void main(String[] args) { } } */
        public class Solution {
            static int main(int[] values) { return values.length; }  // not the launcher's main
            public static void main(String[] args) {
                Scanner in = new Scanner(System.in);
                long sum = 0;
                while (in.hasNextLong()) sum += in.nextLong();
                System.out.println(sum);
            }
        }
        """
    result = compute_score("apps", f"```java\n{textwrap.dedent(source)}```", TWO_TESTS)
    assert (result["test_statuses"], result["main_class"]) == ("pass,fail", "Solution"), result


def test_a_compile_stopped_at_its_limits_is_not_cached_for_the_next_sample() -> None:
    # Issue 32 item 5: the first sample's compile timeout was cached, and every later
    # sample with the same source got the same compile_error whatever its compile_timeout_s.
    heavy = "#include <bits/stdc++.h>\n" + (PROGRAMS / SUM["cpp"]).read_text() + f"// {uuid.uuid4().hex}\n"
    response = f"```cpp\n{heavy}```"
    first = compute_score("apps", response, TWO_TESTS, compile_timeout_s=0.2)
    assert first["compile_error"] == "compilation did not finish within 0.2 s"
    later = compute_score("apps", response, TWO_TESTS)
    assert (later["test_statuses"], "compile_error" in later) == ("pass,fail", False), later
    before = CACHE.compiles
    assert compute_score("apps", response, TWO_TESTS)["test_statuses"] == "pass,fail"
    assert CACHE.compiles == before  # a compiler's own verdict is cached


def test_the_language_kwarg_allows_each_fence_tag_and_is_checked_when_the_config_is_read() -> None:
    import typing

    from verl_rewards_code.code_exec import Language

    from verl_rewards import Scorer
    from verl_rewards.errors import RewardKwargsError

    assert set(typing.get_args(Language)) == set(languages.TAGS)
    with pytest.raises(RewardKwargsError, match="'language' must be one of 'python', .*, not 'Pyhton' "
                                                r"\(did you mean 'python'\?\)"):
        Scorer.from_config({"plugin": "code_exec", "kwargs": {"language": "Pyhton"}})
