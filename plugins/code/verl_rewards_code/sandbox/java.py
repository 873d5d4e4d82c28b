"""Which class of a Java source ``javac`` names the file after, and which one ``java`` runs.

The launcher runs the class named on its command line, which must declare
``public static void main(String[] args)`` (``String... args``, ``String
args[]``, modifiers in any order; in an interface ``public`` is implied). So
the run's class is the first top-level type that declares such a method,
found by reading the source: one forward scan that skips comments, string,
text-block and character literals, then a walk over the tokens that tracks
brace depth, so a field or a call named ``main``, a nested class's method, or
``main`` in a comment or a string is not taken for it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import NamedTuple

_TYPE_WORDS = frozenset({"class", "interface", "enum", "record"})
# Modifiers a method may carry besides public/static (any order); annotations are skipped.
_METHOD_MODIFIERS = frozenset({"public", "static", "final", "synchronized", "strictfp"})
_WORD = re.compile(r"[^\W\d][\w$]*|\$[\w$]*")
_LITERAL = '"'  # a literal's token: never a name nor punctuation


class JavaClasses(NamedTuple):
    """``file``: the public top-level type (``Main`` without one), whose name the source
    file must have; ``main``: the class ``java`` runs, qualified by the package;
    ``types``: how many top-level types the source declares."""

    file: str
    main: str
    types: int = 0


@functools.lru_cache(maxsize=64)
def java_classes(source: str) -> JavaClasses:
    """The file class and the main class of ``source``: the first top-level type
    declaring ``public static void main(String[])``, else the public one, else
    ``Main``. Linear in the source's length."""
    package: list[str] = []
    public: str | None = None
    runnable: str | None = None
    types = 0
    for kind, name in _declarations(list(_tokens(source))):
        if kind == "package":
            package = name.split(".")
        elif kind == "type":
            types += 1
        elif kind == "public":
            public = public or name
        else:
            runnable = runnable or name
    main = runnable or public or "Main"
    return JavaClasses(public or "Main", ".".join([*package, main]), types)


def _declarations(tokens: list[str]) -> Iterator[tuple[str, str]]:
    """``("package", dotted name)``; ``("type", name)`` for each top-level type, then
    ``("public", name)`` when it is public; ``("main", name)`` for each top-level type
    that declares main."""
    depth = 0
    statement: list[str] = []  # the tokens since the last ; { or }
    public_seen = False  # ... among which `public`
    declared: tuple[str, str] | None = None  # (name, kind) of the top-level type whose header is read
    body: tuple[str, str] | None = None  # ... whose body is open
    for at, token in enumerate(tokens):
        if token in ("{", "}", ";"):
            if token == "{":
                if depth == 0:
                    body, declared = declared, None
                depth += 1
            elif token == "}":
                depth = max(depth - 1, 0)
                body = body if depth else None
            elif depth == 0 and statement[:1] == ["package"]:
                yield "package", "".join(statement[1:])
            statement, public_seen = [], False
            continue
        if depth == 0 and statement and statement[-1] in _TYPE_WORDS and _is_name(token):
            if statement[-2:-1] != ["."]:  # not `Foo.class` (an annotation's argument)
                declared = (token, statement[-1])
                yield "type", token
                if public_seen:
                    yield "public", token
        elif depth == 1 and body is not None and token == "main" and _is_main(statement, tokens, at, body[1]):
            yield "main", body[0]
        statement.append(token)
        public_seen |= token == "public"


# A method's modifiers and annotations are a few tokens; a longer header is no main.
_MAX_HEADER = 64


def _is_main(header: list[str], tokens: list[str], at: int, kind: str) -> bool:
    """``tokens[at]`` (``main``) names ``public static void main(String[] x)``; ``header``
    holds the member's tokens before it."""
    if header[-1:] != ["void"] or len(header) > _MAX_HEADER:
        return False
    modifiers = set(_without_annotations(header[:-1]))
    if not modifiers <= _METHOD_MODIFIERS or "static" not in modifiers:
        return False
    if "public" not in modifiers and kind != "interface":  # an interface's members are public
        return False
    close = _matching_paren(tokens, at + 1)
    return close is not None and _one_string_array(_without_annotations(tokens[at + 2 : close]))


def _without_annotations(tokens: list[str]) -> list[str]:
    """``tokens`` without ``@Name``, ``@a.b.Name`` and their ``(...)`` arguments, nor ``final``."""
    kept: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        if tokens[i] == "@" and i + 1 < n and tokens[i + 1] != "interface":
            i += 2
            while i + 1 < n and tokens[i] == "." and _is_name(tokens[i + 1]):
                i += 2
            if i < n and tokens[i] == "(":
                close = _matching_paren(tokens, i)
                i = n if close is None else close + 1
            continue
        if tokens[i] != "final":
            kept.append(tokens[i])
        i += 1
    return kept


def _one_string_array(parameters: list[str]) -> bool:
    """One parameter, a ``String`` array: ``String[] a``, ``String... a``, ``String a[]``
    (``java.lang.String`` too)."""
    p = parameters[4:] if parameters[:4] == ["java", ".", "lang", "."] else parameters
    return p[:1] == ["String"] and (
        (len(p) == 4 and p[1:3] == ["[", "]"] and _is_name(p[3]))
        or (len(p) == 3 and p[1] == "..." and _is_name(p[2]))
        or (len(p) == 4 and _is_name(p[1]) and p[2:] == ["[", "]"])
    )


def _matching_paren(tokens: list[str], at: int) -> int | None:
    """The index of the ``)`` closing the ``(`` at ``at`` (None: there is none, or no ``(``)."""
    if at >= len(tokens) or tokens[at] != "(":
        return None
    depth = 0
    for i in range(at, len(tokens)):
        if tokens[i] == "(":
            depth += 1
        elif tokens[i] == ")":
            depth -= 1
            if depth == 0:
                return i
        elif tokens[i] in ("{", "}", ";"):
            return None  # a parameter list holds none of these: stop early (linear overall)
    return None


def _is_name(token: str) -> bool:
    return _WORD.fullmatch(token) is not None


# One token per match, tried in order. Each alternative is a fixed shape or runs
# to a fixed end (a literal to its close or its line's end, a block comment to
# its close or the source's end), and the alternatives inside each repetition
# start with different characters: no backtracking, linear time.
_TOKEN = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<comment>//[^\n]*|/\*[\s\S]*?(?:\*/|\Z))"
    r'|(?P<literal>"""(?:[^"\\]|\\[\s\S]|"(?!""))*(?:"""|\Z)'
    r'|"(?:[^"\\\n]|\\[\s\S])*["\n]?'
    r"|'(?:[^'\\\n]|\\[\s\S])*['\n]?"
    r"|\d[\w.]*)"
    r"|(?P<name>[^\W\d][\w$]*|\$[\w$]*|\.\.\.)"
    r"|(?P<char>[\s\S])"
)


def _tokens(source: str) -> Iterator[str]:
    """Names, punctuation and ``...`` of ``source``; each literal (string, text block,
    character, number) is ``_LITERAL``; comments and white space are dropped. Linear,
    whatever the source holds (an unclosed comment or literal runs to its end)."""
    for match in _TOKEN.finditer(source):
        kind = match.lastgroup
        if kind == "literal":
            yield _LITERAL
        elif kind != "space" and kind != "comment":
            yield match.group()
