"""Which class of a Java source names the file, and which one ``java`` runs: read by parsing, in linear time."""

from __future__ import annotations

import math
import textwrap
import time
from collections.abc import Callable

import pytest
from verl_rewards_code.sandbox.java import JavaClasses, java_classes

find = java_classes.__wrapped__  # uncached: each call parses


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # issue 33 item 6: a field named main in an earlier class made the run `java Config`
        (
            """
            class Config { static boolean main = true; }
            public class Solution { public static void main(String[] args) { } }
            """,
            JavaClasses("Solution", "Solution", 2),
        ),
        ("public class Main { public static void main(String[] args) {} }", JavaClasses("Main", "Main", 1)),
        ("class A { static public final void main(final String... xs) {} }", JavaClasses("Main", "A", 1)),
        ("class A { public static void main(String xs[]) {} }", JavaClasses("Main", "A", 1)),
        ("class A { public static void main(java.lang.String[] xs) {} }", JavaClasses("Main", "A", 1)),
        (
            "class A { @SuppressWarnings(\"unused\") public static void main(@Deprecated String[] a) {} }",
            JavaClasses("Main", "A", 1),
        ),
        ("package a.b;\nclass A {}\nclass B { public static void main(String[] a) {} }", JavaClasses("Main", "a.b.B", 2)),
        ("interface Runner { static void main(String[] args) {} }", JavaClasses("Main", "Runner", 1)),
        ("enum E { X, Y; public static void main(String[] a) {} }", JavaClasses("Main", "E", 1)),
        ("record R(int x) { public static void main(String[] a) {} }", JavaClasses("Main", "R", 1)),
        # what is not the launcher's main: the public class runs (and java reports it)
        ("public class P { static void main(String[] a) {} }\nclass Q {}", JavaClasses("P", "P", 2)),
        ("public class P { public void main(String[] a) {} }", JavaClasses("P", "P", 1)),
        ("public class P { public static int main(String[] a) { return 0; } }", JavaClasses("P", "P", 1)),
        ("public class P { public static void main(int[] a) {} }", JavaClasses("P", "P", 1)),
        ("public class P { public static void main(String[] a, int b) {} }", JavaClasses("P", "P", 1)),
        ("public class P { static class Inner { public static void main(String[] a) {} } }", JavaClasses("P", "P", 1)),
        ("public class P { void f() { main(null); } }\nclass main {}", JavaClasses("P", "P", 2)),
        ("class A {}\nclass B {}", JavaClasses("Main", "Main", 2)),
    ],
)
def test_the_main_class_is_the_first_top_level_type_declaring_the_launchers_main(
    source: str, expected: JavaClasses
) -> None:
    assert find(textwrap.dedent(source)) == expected


@pytest.mark.parametrize(
    "decoy",
    [
        "// class Decoy { public static void main(String[] a) {} }\n",
        "/* class Decoy { public static void main(String[] a) {} } */\n",
        '/** {@code public class Decoy { public static void main(String[] a) {} }} */\n',
    ],
)
def test_comments_do_not_declare_classes(decoy: str) -> None:
    source = decoy + "class Real { public static void main(String[] a) {} }"
    assert find(source) == JavaClasses("Main", "Real", 1)


@pytest.mark.parametrize(
    "literal",
    [
        '"} class Decoy { public static void main(String[] a) {"',
        '"\\"} class Decoy { public static void main(String[] a) {"',
        "'{'",
        "'\\''",
        '"""\n    } } class Decoy { public static void main(String[] a) { \\""" {\n    """',
    ],
)
def test_string_text_block_and_character_literals_hide_what_they_hold(literal: str) -> None:
    source = f"class First {{ static Object x = {literal}; }}\nclass Real {{ public static void main(String[] a) {{}} }}"
    assert find(source) == JavaClasses("Main", "Real", 2)


ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "void main repeated": lambda n: "class A { " + "public static void main " * (n // 24),
    "unclosed comments": lambda n: "/*" * (n // 2),
    "unclosed strings": lambda n: '"' * n,
    "text block quotes": lambda n: '"""' * (n // 3),
    "type words": lambda n: "class A " * (n // 8),
    "open braces": lambda n: "{" * n,
    "unclosed parameter lists": lambda n: "class A { " + "public static void main(String[] a" * (n // 34),
    "annotations": lambda n: "class A { " + "@X(" * (n // 3),
    "backslashes in a character": lambda n: "'" + "\\" * n,
}


def _seconds(source: str, repeats: int = 3) -> float:
    """The least CPU time of ``repeats`` parses (CPU, not wall clock: other load does not count)."""
    best = math.inf
    for _ in range(repeats):
        started = time.process_time()
        find(source)
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_finding_the_main_class_is_linear_on_adversarial_sources(name: str) -> None:
    small_s = _seconds(ADVERSARIAL[name](200_000))
    large_s = _seconds(ADVERSARIAL[name](800_000))
    assert large_s < 8 * small_s + 0.25, f"{name}: {small_s:.4f} s at 200 KB, {large_s:.4f} s at 800 KB"
