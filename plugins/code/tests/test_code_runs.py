"""Assert tests against programs that try to pass without running them (issue 15, row 15).

Each program is a real attempt, run in the real sandbox under the real
harness; none may score, and each ends within a bounded time.
"""

from __future__ import annotations

import json
import textwrap
import time

import pytest
from verl_rewards_code.code_exec import compute_score
from verl_rewards_code.runs import harness_source, prepare
from verl_rewards_code.spec import ProgramTest

ADD_ASSERTS = ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"]
BOUND_S = 2 * (5.0 + 1.0) + 5.0


def score(program: str, asserts: list[str] = ADD_ASSERTS) -> tuple[float, str]:
    started = time.monotonic()
    result = compute_score("mbpp", textwrap.dedent(program), json.dumps({"asserts": asserts}))
    assert time.monotonic() - started < BOUND_S
    return result["score"], result["test_statuses"]


def test_a_correct_program_passes_and_a_wrong_one_fails() -> None:
    assert score("def add(a, b):\n    return a + b\n") == (1.0, "pass,pass")
    assert score("def add(a, b):\n    return abs(a) + b\n") == (0.5, "pass,fail")


def test_sys_exit_0_at_the_end_of_a_program_still_runs_the_asserts() -> None:
    assert score("import sys\ndef add(a, b):\n    return a + b\nsys.exit(0)\n") == (1.0, "pass,pass")
    assert score("import sys\ndef add(a, b):\n    return 0\nsys.exit()\n") == (0.5, "fail,pass")


@pytest.mark.parametrize(
    "program",
    [
        "import os\nos._exit(0)\n",
        "import posix\nposix._exit(0)\n",
        "import os\nos.execv('/usr/bin/true', ['true'])\n",
        "import os\ndef add(a, b):\n    os._exit(0)\n",
        "import atexit, os\natexit.register(os._exit, 0)\ndef add(a, b):\n    raise SystemExit(0)\n",
    ],
    ids=["os._exit", "posix._exit", "exec true", "exit inside the call", "SystemExit inside the call"],
)
def test_exiting_0_before_the_asserts_ran_is_a_failure(program: str) -> None:
    assert score(program)[0] == 0.0


def test_objects_that_claim_equality_cannot_pass(equality_forgery: str) -> None:
    assert score(equality_forgery) == (0.0, "fail,fail")


def test_a_replaced_module_function_the_assert_uses_is_a_failure() -> None:
    program = "import math\nmath.isclose = lambda *a, **k: True\ndef half():\n    return 0\n"
    assert score(program, ["import math\nassert math.isclose(half(), 0.5)"]) == (0.0, "fail")


def test_a_fake_math_bound_by_the_program_is_not_what_the_assert_uses() -> None:
    program = """
        class math:
            isclose = staticmethod(lambda *a, **k: True)
        def half():
            return 0
        """
    assert score(program, ["assert math.isclose(half(), 0.5)"]) == (0.0, "fail")
    assert score("def half():\n    return 0.5\n", ["assert math.isclose(half(), 0.5)"]) == (1.0, "pass")


@pytest.mark.parametrize(
    "attack",
    [
        # Find the harness's emitter among all objects and call it.
        """
        import gc, types
        for o in gc.get_objects():
            if type(o) is types.FunctionType and o.__name__ == "emit":
                o()
        """,
        # Walk up the stack to the harness's frame.
        """
        import sys
        f = sys._getframe()
        while f is not None:
            if "emit" in f.f_locals:
                f.f_locals["emit"]()
            f = f.f_back
        """,
        # The same through a traceback and through a generator.
        """
        try:
            1 / 0
        except ZeroDivisionError as e:
            f = e.__traceback__.tb_frame
        while f is not None:
            if "emit" in f.f_locals:
                f.f_locals["emit"]()
            f = f.f_back
        """,
        """
        def g():
            yield gen.gi_frame.f_back
        gen = g()
        f = next(gen)
        while f is not None:
            if "emit" in f.f_locals:
                f.f_locals["emit"]()
            f = f.f_back
        """,
        # A trace function or a signal handler is handed the harness's frames.
        """
        import sys
        def walk(f, *_):
            while f is not None:
                if "emit" in f.f_locals:
                    f.f_locals["emit"]()
                f = f.f_back
            return walk
        sys.settrace(walk)
        """,
        """
        import signal, time
        def walk(signum, f):
            while f is not None:
                if "emit" in f.f_locals:
                    f.f_locals["emit"]()
                f = f.f_back
        signal.signal(signal.SIGALRM, walk)
        def add(a, b):
            signal.setitimer(signal.ITIMER_REAL, 0.01)
            time.sleep(0.2)
        """,
        "import sys, importlib\nsys.modules.pop('_signal')\nimportlib.import_module('_signal')\n",
        # Read the harness's memory.
        "print(open('/proc/self/mem', 'rb'))\n",
        "import ctypes\nctypes.CDLL(None)\n",
        # Print a sentinel of its own.
        "print('code_exec-assertion-held-' + '0' * 32)\nimport os\nos._exit(0)\n",
    ],
    ids=["gc", "sys._getframe", "tb_frame", "gi_frame", "settrace", "signal", "fresh _signal", "proc mem",
         "ctypes", "guessed sentinel"],
)
def test_reaching_into_the_harness_cannot_forge_a_pass(attack: str) -> None:
    program = "def add(a, b):\n    return None\n" + textwrap.dedent(attack)
    assert score(program)[0] == 0.0


def test_the_assert_line_and_the_nonce_reach_the_program_only_through_the_harness() -> None:
    run = prepare(ProgramTest("", None, "assert add(1, 2) == 3"), "def add(a, b):\n    return a + b\n")
    assert run.source == harness_source()
    assert "assert add" not in run.source and run.sentinel is not None and run.sentinel not in run.source
    first_size, rest = run.stdin.split("\n", 1)
    first, second = rest[: int(first_size)], rest[int(first_size):].split("\n", 1)[1]
    assert json.loads(first) == {"program": "def add(a, b):\n    return a + b\n"}
    assert json.loads(second) == {"assertion": "assert add(1, 2) == 3", "nonce": run.sentinel}
    assert prepare(ProgramTest("1\n", "2\n"), "print(2)") == ("print(2)", "1\n", None, 0)
    assert run.helper_processes == 1


@pytest.mark.parametrize("max_processes", [1, 2])
def test_the_harness_process_is_not_counted_against_the_program(max_processes: int) -> None:
    truth = json.dumps({"asserts": ["assert add(1, 2) == 3"]})
    result = compute_score("mbpp", "def add(a, b):\n    return a + b\n", truth,
                           max_processes=max_processes, memory_mb=256, disk_mb=16)
    assert result["test_statuses"] == "pass"
    fork = "import os\ndef add(a, b):\n    os.fork()\n    return a + b\n"
    # With one process allowed, the program's own fork fails (and raises).
    statuses = compute_score("mbpp", fork, truth, max_processes=max_processes, memory_mb=256, disk_mb=16)
    assert statuses["test_statuses"] == ("error" if max_processes == 1 else "pass")


def test_the_program_cannot_read_the_assertions_it_is_tested_with() -> None:
    program = """
        import os, sys
        seen = sys.stdin.read() + open(__file__ if "__file__" in dir() else os.devnull).read()
        def add(a, b):
            assert "add(1, 2)" not in seen
            return a + b
        """
    assert score(program) == (1.0, "pass,pass")


def test_standard_library_helpers_that_peek_at_frames_still_work() -> None:
    program = """
        import enum, typing
        from collections import namedtuple
        Pair = namedtuple("Pair", "a b")
        class Colour(enum.Enum):
            RED = 1
        class Point(typing.NamedTuple):
            x: int
        def add(a, b):
            return tuple(Pair(a, b))[0] + Point(b).x
        """
    assert score(program) == (1.0, "pass,pass")


def test_compound_assertions_are_checked_by_the_harness() -> None:
    program = "def f(x):\n    return [x, x * 2]\n"
    asserts = [
        "assert f(1) == [1, 2] and f(2)[1] == 4",
        "assert not f(1) == [1, 3]",
        "assert 1 < f(1)[1] <= 2",
        "assert f(3) is not None and 6 in f(3)",
        "assert f(1) == [1, 2], 'message'",
        "for i in range(3):\n    assert f(i) == [i, 2 * i]",
        "assert f(1) == [9, 9]",
    ]
    assert score(program, asserts) == (6 / 7, "pass,pass,pass,pass,pass,pass,fail")


ANYTHING = """
    class Anything:
        def __eq__(self, other):
            return True
        def __bool__(self):
            return True
    """


@pytest.mark.parametrize(
    "assertion",
    [
        "assert all(f(x) == x * x for x in range(3))",
        "assert any(f(x) == 99 for x in range(3))",
        "assert [x for x in range(3) if f(x)] == [0, 1, 2]",
        "assert f(2)",
        "assert bool(f(2)) is True",
        "assert (f(1) if f(2) else 0) == 1",
        "assert f(1) == 1 or f(2)",
    ],
)
def test_a_program_object_decides_no_comparison_or_truth_anywhere_in_an_assertion(assertion: str) -> None:
    program = textwrap.dedent(ANYTHING) + "def f(x):\n    return Anything()\n"
    assert score(program, [assertion]) == (0.0, "fail")


FORGE_THROUGH_GLOBALS = """
    import signal
    for installed in (signal.signal, getattr(signal, "setitimer", None), getattr(signal, "alarm", None)):
        harness = getattr(installed, "__globals__", {})
        if "truth" in harness or "_Channel" in harness:
            harness["truth"] = harness["_decode"] = lambda *a: True
            harness["compare"] = lambda ops, thunks: True
            harness["_tampered"] = lambda before: None
    def add(a, b):
        return 0
    """


def test_rebinding_the_harness_through_globals_cannot_pass_assert_false() -> None:
    # Issue 19: a replaced signal.signal exposed the harness's globals; with
    # truth/compare rebound, every assert passed, `assert False` included.
    assert score(FORGE_THROUGH_GLOBALS, ["assert False", "assert add(1, 2) == 3"]) == (0.0, "fail,fail")


def test_the_program_process_holds_no_harness_state_to_rebind() -> None:
    # The program's process answers requests only: rebinding its server's
    # helpers changes its own answers, never the harness's verdict.
    program = """
        import gc, types
        for obj in gc.get_objects():
            if type(obj) is types.FunctionType and obj.__name__ == "_encode":
                server = obj.__globals__
                server["_Server"].answer = lambda self, request: {"ok": 3}
                server["_encode"] = lambda *a: 3
        def add(a, b):
            return 0
        """
    assert score(program, ["assert False", "assert add(1, 2) == 3"])[0] == 0.0


@pytest.mark.parametrize(
    "attack",
    [
        # The /proc guard of an in-process harness let dir_fd through; the
        # harness is now another process, and non-dumpable.
        "fd = os.open('/', os.O_RDONLY)\nos.read(os.open('proc/self/maps', os.O_RDONLY, dir_fd=fd), 100)\n"
        "mem = os.open(f'proc/{os.getppid()}/mem', os.O_RDWR, dir_fd=fd)",
        "os.open(f'/proc/{os.getppid()}/mem', os.O_RDWR)",
        "os.write(os.open(f'/proc/{os.getppid()}/fd/1', os.O_WRONLY), b'code_exec-assertion-held-x')",
        "libc = ctypes.CDLL(None, use_errno=True)\nassert libc.ptrace(16, os.getppid(), 0, 0) == 0, ctypes.get_errno()",
    ],
    ids=["dir_fd proc", "parent mem", "parent stdout", "ptrace attach"],
)
def test_the_harness_process_is_out_of_the_programs_reach(attack: str) -> None:
    # Each attack must raise (PermissionError / AssertionError) in the program:
    # the run reports what happened through add's result.
    program = f"""
        import ctypes, os
        def add(a, b):
            try:
{textwrap.indent(attack, " " * 16)}
            except (OSError, AssertionError) as e:
                return repr(e)
            return 3
        """
    assert score(program, ["assert add(1, 2) == 3", "assert isinstance(add(1, 2), str)"]) == (0.5, "fail,pass")


def test_program_objects_work_through_handles() -> None:
    program = """
        class Stack:
            def __init__(self):
                self.items = []
            def push(self, x):
                self.items.append(x)
                return self
            def pop(self):
                return self.items.pop()
        def gen(n):
            yield from range(n)
        def boom():
            raise ValueError("bad")
        """
    asserts = [
        "s = Stack()\ns.push(1).push(2)\nassert s.pop() == 2 and s.items == [1]",
        "assert list(gen(3)) == [0, 1, 2] and len(Stack().items) == 0",
        "try:\n    boom()\nexcept ValueError as e:\n    assert str(e) == 'bad'\nelse:\n    assert False",
        "assert Stack() is not None and Stack().pop",
        "assert sorted({3: 1, 1: 2}.items()) == [(1, 2), (3, 1)] and b'x' + bytes(1) == b'x\\x00' and 1j * 1j == -1",
        "assert math.isclose(Half(), 0.5) and int(Half()) == 0 and [1, 2][Half.One()] == 2",
        "assert Half() + 0 == 0.5",
    ]
    program += """
        class Half:
            def __float__(self):
                return 0.5
            def __int__(self):
                return 0
            class One:
                def __index__(self):
                    return 1
        """
    # Arithmetic with the program's objects is refused: it would show the program the assertion's values.
    assert score(program, asserts) == (5 / 7, "pass,pass,pass,fail,pass,pass,error")


IS_PRIME_STOPS = "def is_prime(n):\n    raise StopIteration\n"


@pytest.mark.parametrize(
    ("program", "assertion"),
    [
        # Issue 26, item 4: a StopIteration from the program ended map() early, so all() held.
        (IS_PRIME_STOPS, "assert all(map(is_prime, [4, 6, 8]))"),
        (IS_PRIME_STOPS, "assert not list(filter(lambda x: not is_prime(x), [4, 6, 8]))"),
        (IS_PRIME_STOPS, "assert all(is_prime(x) for x in [4, 6, 8])"),
        (IS_PRIME_STOPS, "assert sum(1 for _ in iter(lambda: is_prime(4), None)) == 0"),
        (IS_PRIME_STOPS, "import itertools\nassert all(itertools.starmap(is_prime, [(4,), (6,)]))"),
        (IS_PRIME_STOPS, "assert all(ok for ok, _ in zip(map(is_prime, [4, 6]), [1, 2]))"),
        # A class-based iterator of the assertion's own, whose __next__ calls the program.
        (
            IS_PRIME_STOPS,
            "class Checks:\n    def __init__(self):\n        self.xs = [4, 6, 8]\n    def __iter__(self):\n"
            "        return self\n    def __next__(self):\n        if not self.xs:\n            raise StopIteration\n"
            "        return is_prime(self.xs.pop())\nassert all(Checks())",
        ),
        # The same for async iteration: StopAsyncIteration from the program.
        (
            "def is_prime(n):\n    raise StopAsyncIteration\n",
            "import asyncio\nclass Checks:\n    def __init__(self):\n        self.xs = [4, 6]\n"
            "    def __aiter__(self):\n        return self\n    async def __anext__(self):\n"
            "        if not self.xs:\n            raise StopAsyncIteration\n        return is_prime(self.xs.pop())\n"
            "async def judged():\n    return all([ok async for ok in Checks()])\nassert asyncio.run(judged())",
        ),
        # StopIteration from a handle of the program's own __next__, called as a function.
        (
            "class Primes:\n    def __iter__(self):\n        return self\n    def __next__(self):\n"
            "        raise StopIteration\ndef is_prime(n):\n    return Primes().__next__()\n",
            "assert all(map(is_prime, [4, 6, 8]))",
        ),
        (
            "class Primes:\n    def __next__(self):\n        raise StopIteration\nstep = Primes().__next__\n",
            "assert all(map(lambda _: step(), range(3)))",
        ),
        # GeneratorExit, KeyboardInterrupt and SystemExit raised by the program.
        ("def is_prime(n):\n    raise GeneratorExit\n", "assert all(is_prime(x) for x in [4, 6, 8])"),
        ("def is_prime(n):\n    raise KeyboardInterrupt\n", "assert all(map(is_prime, [4, 6, 8]))"),
        ("def is_prime(n):\n    raise SystemExit(0)\n", "assert all(map(is_prime, [4, 6, 8]))"),
        # An iterator whose length hint lies, and a generator that returns early.
        (
            "class Few:\n    def __iter__(self):\n        return iter(())\n    def __len__(self):\n        return 3\n"
            "    def __length_hint__(self):\n        return 3\ndef primes():\n    return Few()\n",
            "assert list(primes()) == [2, 3, 5]",
        ),
        ("def primes():\n    yield 2\n    return\n", "assert list(primes()) == [2, 3, 5]"),
        ("def primes():\n    yield 2\n    raise StopIteration\n", "assert list(primes()) == [2, 3, 5]"),
        (
            "def primes():\n    return iter([2, 3, 5][:1])\n",
            "assert [p for p in primes()] == [2, 3, 5] and len(list(primes())) == 3",
        ),
    ],
    ids=["map", "filter", "generator expression", "iter(f, sentinel)", "starmap", "zip",
         "assertion's own __next__", "async __anext__", "a call raising from __next__", "a __next__ handle",
         "GeneratorExit", "KeyboardInterrupt", "SystemExit", "lying length hint", "generator returns early",
         "generator raises StopIteration", "early end of a list iterator"],
)
def test_the_programs_exceptions_cannot_end_the_assertions_own_iteration(program: str, assertion: str) -> None:
    assert score(program, [assertion])[0] == 0.0


def test_the_assertion_still_catches_the_programs_exceptions_by_their_builtin_type() -> None:
    program = "def parse(s):\n    return int(s)\ndef stop():\n    raise StopIteration('done')\n"
    asserts = [
        "try:\n    parse('x')\nexcept ValueError as e:\n    assert 'invalid literal' in str(e)\nelse:\n    assert False",
        "try:\n    parse('x')\nexcept Exception as e:\n    assert type(e).__name__ == 'ValueError'\nelse:\n    assert False",
        "try:\n    stop()\nexcept StopIteration:\n    assert False\nexcept Exception:\n    pass\nelse:\n    assert False",
        "assert list(iter([1, 2])) == [1, 2] and list(map(parse, ['1', '2'])) == [1, 2]",
    ]
    assert score(program, asserts) == (1.0, "pass,pass,pass,pass")


# ----------------------------------------- library values (issue 33, item 2)

LIBRARY_VALUES = """
    from collections import Counter, OrderedDict, defaultdict, namedtuple
    from typing import NamedTuple
    import numpy as np
    Pair = namedtuple("Pair", "a b")
    class Point(NamedTuple):
        x: int
        y: int
    class Tally(Counter):
        pass
    def count(s):
        return Counter(s)
    def ordered():
        return OrderedDict([("b", 1), ("a", 2)])
    def grouped(words):
        groups = defaultdict(list)
        for w in words:
            groups[len(w)].append(w)
        return groups
    def pair(a, b):
        return Pair(a, b)
    def point():
        return Point(1, 2)
    def tally(s):
        return Tally(s)
    def np_int(x):
        return np.int64(x)
    def np_float(x):
        return np.float64(x) / 2
    def np_bool():
        return np.bool_(True)
    def nested():
        return [Counter("aa"), Pair(1, [np.int64(2)])]
    """


@pytest.mark.parametrize(
    "assertion",
    [
        "assert count('aab') == {'a': 2, 'b': 1}",
        "assert count('aab') == Counter({'b': 1, 'a': 2})",
        "assert count('aab')['z'] == 0",  # a Counter's missing key, asked of the program's object
        "assert count('aab').most_common(1) == [('a', 2)]",
        "assert ordered() == {'a': 2, 'b': 1} and list(ordered()) == ['b', 'a']",
        "assert grouped(['a', 'bc', 'd']) == {1: ['a', 'd'], 2: ['bc']}",
        "assert pair(1, 2) == (1, 2) and pair(1, 2)[1] == 2 and len(pair(1, 2)) == 2",
        "assert pair(1, 2).a == 1 and pair(1, 2)._asdict() == {'a': 1, 'b': 2}",
        "assert point() == (1, 2) and point().y == 2 and {point(): 1}[(1, 2)] == 1",
        "assert tally('aa') == {'a': 2}",
        "assert np_int(3) == 3 and type(np_int(3)) is int",
        "assert np_float(1) == 0.5 and abs(np_float(1) - 0.5) < 1e-12",
        "assert np_bool() is True",
        "assert nested() == [{'a': 2}, (1, [2])]",
        "assert count('ab') != {'a': 2} and not count('ab') == {}",
    ],
)
def test_library_values_pass_as_their_plain_value(assertion: str) -> None:
    # Issue 33, item 2: MBPP reference solutions return Counter, namedtuple, NumPy scalars.
    assert score(LIBRARY_VALUES, [assertion]) == (1.0, "pass")


# Subclasses of plain types that forge their comparison, or lie about their value:
# the harness takes the value with the base type's own methods, or not at all.
PLAIN_SUBCLASS_FORGERIES = {
    "Counter subclass, always equal": """
        from collections import Counter
        class C(Counter):
            def __eq__(self, other):
                return True
            __hash__ = None
        def count(s):
            return C()
        """,
    "namedtuple subclass, always equal": """
        from collections import namedtuple
        class P(namedtuple("P", "a b")):
            def __eq__(self, other):
                return True
            def __hash__(self):
                return 0
        def count(s):
            return P(0, 0)
        """,
    "dict subclass whose items() lie": """
        class D(dict):
            def items(self):
                return [("a", 2), ("b", 1)]
            def keys(self):
                return ["a", "b"]
            def __iter__(self):
                return iter(["a", "b"])
            def __len__(self):
                return 2
        def count(s):
            return D()
        """,
    "always-equal object inside an OrderedDict": """
        from collections import OrderedDict
        class Anything:
            def __eq__(self, other):
                return True
            __hash__ = object.__hash__
        def count(s):
            return OrderedDict([("a", Anything()), ("b", Anything())])
        """,
    "NumPy scalar subclass, always equal": """
        import numpy as np
        class N(np.int64):
            def __eq__(self, other):
                return True
        def count(s):
            return {"a": N(0), "b": N(0)}
        """,
}


@pytest.mark.parametrize("program", list(PLAIN_SUBCLASS_FORGERIES.values()), ids=list(PLAIN_SUBCLASS_FORGERIES))
def test_subclasses_that_forge_their_comparison_still_fail(program: str) -> None:
    assertions = ["assert count('aab') == {'a': 2, 'b': 1}", "assert {'a': 2, 'b': 1} == count('aab')"]
    assert score(program, assertions) == (0.0, "fail,fail")
