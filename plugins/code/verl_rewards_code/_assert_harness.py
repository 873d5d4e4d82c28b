"""In-sandbox harness of assert and call tests: the program runs in a process of its own; the judging, here.

This file is the sandboxed ``main.py`` of an assert or call test (standard
library only; it never imports the package). Stdin holds two length-prefixed
JSON parts: the program (and how to run it), then the assertion or the call,
and a per-run nonce. The harness reads the first part, makes itself
non-dumpable and forks the *program process*, which replaces its stdin by
``/dev/null`` and its stdout by its stderr, closes every other descriptor but
its two pipes, runs the program (as ``__main__``; a call test's as
``solution``, with the evaluators' prelude of imports among its builtins)
and then only answers
requests: "your global ``add``", "call that with ``(1, 2)``", "attribute
``pop`` of that", "``iter``/``next``/``len`` of that".

Only then does the harness read the second part, so the program process
never held the assertion or the nonce. It evaluates the assertion itself,
with the real builtins, ``math``, ``cmath`` and ``operator``: names the
assertion uses that are none of those come from the program process. A call
test asks for ``Solution().<fn_name>`` (or the global ``<fn_name>``), calls it
with the test's arguments and writes the value it got back, as JSON, before
the nonce: the scorer compares it. A plain
value (``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``,
``bytes``, ``list``/``tuple``/``dict``/``set``/``frozenset`` of them)
crosses the pipe as data and is rebuilt here, so every comparison and truth
test runs on values the harness built; so does the plain value of a
subclass of those types that keeps its base's comparisons (or ``Counter``'s,
``OrderedDict``'s, ``defaultdict``'s: a namedtuple, a ``Counter``), taken
with the base type's own methods, and of a NumPy scalar (its ``item()``),
rebuilt as a :class:`_PlainValue` whose other attributes are asked of the
program's object. Anything else stays in the
program process behind a :class:`_Remote` handle, which can be called,
indexed, iterated and converted (``float``, ``int``, ``len``: the program
answers with a plain value) but never compared or tested for truth (that
fails the assertion), nor combined with the assertion's values (arithmetic
would hand the program the expected values). The program's exceptions reach
the assertion as :class:`_ProgramException` subclasses, never as
``StopIteration`` and its kin, so they cannot end the assertion's own
iterations. Whatever the program does to
its own process (rebinding this module's functions, walking frames or
``gc``, signal handlers) changes only the values it answers with. The harness is non-dumpable, so the program
process (same uid, no capabilities) can neither ptrace it nor open its
``/proc/<pid>/mem`` or ``fd/``. Only after the assertion held (or the call
returned a plain value) does the harness kill the program process and write
the nonce as the last line of its own stdout, which the program process does
not have.
"""

from __future__ import annotations

import ast
import builtins
import cmath
import ctypes
import json
import math
import operator
import os
import signal
import sys
import types
from collections.abc import Iterator
from typing import IO, Any, TypeVar

_T = TypeVar("_T")
_PR_SET_DUMPABLE = 4
_MAX_REPLY_BYTES = 64 * 1024 * 1024
_MAX_DEPTH = 100
_OWN_MODULES = {"math": math, "cmath": cmath, "operator": operator}
# What the APPS, prime_code and LiveCodeBench evaluators run before a call-based
# program (LeetCode signatures use List, Optional, deque, ... unimported).
_STAR_IMPORTS = (
    "string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random", "statistics",
    "itertools", "functools", "operator", "io", "sys", "json", "builtins", "typing",
)
_PRELUDE = (
    "".join(f"from {name} import *\n" for name in _STAR_IMPORTS)
    + "import " + ", ".join(name for name in _STAR_IMPORTS if name not in ("builtins", "typing")) + "\n"
)
_RECURSION_LIMIT = 50000  # the prelude's last line: sys.setrecursionlimit(50000)
_PLAIN = (type(None), bool, int, float, str)
_CONTAINER_TAGS: dict[type, str] = {list: "l", tuple: "t", set: "s", frozenset: "f"}
# Conversions a number-like object of the program (a NumPy scalar) answers with a plain value.
_CONVERSIONS: dict[str, Any] = {"float": float, "int": int, "index": operator.index}


# ---------------------------------------------------------------- both sides


def _encode(value: Any, handle_of: Any, depth: int = 0, program: bool = False) -> Any:
    """JSON for a value: plain data as itself (tagged containers); a subclass of a
    plain type or a NumPy scalar (a ``Counter``, a namedtuple, ``numpy.int64``) as
    its plain value, which the ``program`` process sends with a handle of the
    object (``{"v": [handle, value]}``: attributes such as a namedtuple's fields
    stay reachable); anything else as ``handle_of(value)``."""
    kind = _BASE_OF.get(type(value), type(value))
    if kind in _PLAIN:
        return value
    if depth < _MAX_DEPTH:
        if kind is complex:
            return {"c": [value.real, value.imag]}
        if kind is bytes:
            return {"b": value.hex()}
        tag = _CONTAINER_TAGS.get(kind)
        if tag is not None:
            return {tag: [_encode(item, handle_of, depth + 1, program) for item in value]}
        if kind is dict:
            return {"d": [[_encode(k, handle_of, depth + 1, program), _encode(v, handle_of, depth + 1, program)]
                          for k, v in value.items()]}
        found, plain = _plain_value(value)
        if found:
            encoded = _encode(plain, handle_of, depth + 1, program)
            return {"v": [handle_of(value), encoded]} if program else encoded
    return handle_of(value)


# The plain types whose subclasses cross as their plain value, and how to take it
# with the base type's own methods (a subclass's overrides are not asked).
_PLAIN_OF: tuple[tuple[type, Any], ...] = (
    (int, int.__int__),
    (float, float.__float__),
    (complex, lambda value: complex(complex.real.__get__(value), complex.imag.__get__(value))),
    (str, str.__str__),
    (bytes, lambda value: bytes.__getitem__(value, slice(None))),
    (dict, lambda value: dict(dict.items(value))),
    (list, list.copy),
    (tuple, lambda value: tuple.__getitem__(value, slice(None))),
    (set, set.copy),
    (frozenset, frozenset.copy),
)


_COMPARISONS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__")


def _library_types() -> tuple[type, ...]:
    """Subclasses of plain types that define their own comparison for a reason the
    evaluators accept (they compare equal to their plain value there)."""
    collections = sys.modules.get("collections")
    if collections is None:
        return ()
    return (collections.Counter, collections.OrderedDict, collections.defaultdict)


def _plain_value(value: Any) -> tuple[bool, Any]:
    """``(True, plain)`` for a NumPy scalar (its ``item()``) or an object of a
    subclass of a plain type (its value as the base type) that compares as its
    base does (or as ``Counter``, ``OrderedDict``, ``defaultdict`` do); else
    ``(False, None)``: a subclass with comparisons of its own stays an object."""
    try:
        numpy = sys.modules.get("numpy")
        if numpy is not None and isinstance(value, numpy.generic):
            return True, value.item()
        for base, plain_of in _PLAIN_OF:
            if isinstance(value, base):
                if not _compares_as(type(value), base):
                    return False, None
                plain = plain_of(value)
                return type(plain) is base, plain
    except Exception:  # noqa: BLE001 (an object whose value cannot be taken stays an object)
        pass
    return False, None


def _compares_as(kind: type, base: type) -> bool:
    """Whether ``kind`` keeps the comparisons and hash of ``base`` or of the library
    type it derives from (a subclass of ``Counter`` that overrides none)."""
    library = _library_types()
    anchor = next((c for c in kind.__mro__ if c is base or c in library), base)
    return all(getattr(kind, name, None) is getattr(anchor, name, None) for name in _COMPARISONS)


def _send(stream: IO[bytes], record: Any) -> None:
    stream.write(json.dumps(record).encode() + b"\n")
    stream.flush()


# ------------------------------------------------------ the program process


def _program_process(start: dict[str, Any], requests: int, replies: int) -> None:
    """Run the program, then answer the harness's requests until it closes the pipe (never returns)."""
    # verl_rewards.child's reply channel (fd 1 to stderr, replies on a private fd), written
    # again here on purpose: this file is the sandboxed program itself (sent as its source,
    # run in the sandbox's minimal root), so it imports the standard library only.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    keep = sorted({0, 1, 2, requests, replies})
    for low, high in zip(keep, [*keep[1:], 1 << 16]):
        os.closerange(low + 1, high)
    inbox, outbox = os.fdopen(requests, "rb"), os.fdopen(replies, "wb")
    name = start.get("module", "__main__")
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        if start.get("prelude"):
            module.__dict__["__builtins__"] = _prelude_builtins()
        exec(compile(start["program"], "solution.py", "exec"), module.__dict__)
    except SystemExit as e:
        # sys.exit(0) at the end of a program is not a reason to skip the asserts.
        if e.code not in (None, 0):
            _send(outbox, {"raise": ["SystemExit", str(e.code)]})
            os._exit(1)
    except BaseException as e:  # noqa: BLE001 (the program's own failure: reported as Python would)
        _send(outbox, {"raise": [type(e).__name__, str(e)]})
        os._exit(1)
    _send(outbox, {"ready": True})
    server = _Server(module.__dict__)
    for line in inbox:
        _send(outbox, server.answer(json.loads(line)))
    os._exit(0)


def _prelude_builtins() -> dict[str, Any]:
    """The builtins with the prelude's names on top: the program sees ``List``
    and ``deque`` as the evaluators let it, yet its globals (what the harness
    may call) hold only what it defines itself, not ``math.gcd`` for ``gcd``."""
    merged, from_sys = _prelude()
    # What `from sys import *` gave, as sys holds it now (this run's streams and argv).
    merged.update((name, getattr(sys, name)) for name in from_sys if hasattr(sys, name))
    sys.setrecursionlimit(_RECURSION_LIMIT)
    return merged


_PRELUDE_BUILTINS: list[tuple[dict[str, Any], frozenset[str]]] = []


def _prelude() -> tuple[dict[str, Any], frozenset[str]]:
    """The builtins with the prelude's names on top, made once (the imports are the same
    for every program; a warm server makes it before it forks, and each program process
    changes only its own copy), and which of its names are ``sys``'s own attributes."""
    if not _PRELUDE_BUILTINS:
        names: dict[str, Any] = {}
        exec(compile(_PRELUDE, "prelude.py", "exec"), names)
        names.pop("__builtins__", None)
        attributes = vars(sys)
        from_sys = frozenset(
            name for name, value in names.items()
            if name != "sys" and not name.startswith("_") and name in attributes and attributes[name] is value
        )
        merged = dict(builtins.__dict__)
        merged.update(names)
        _PRELUDE_BUILTINS.append((merged, from_sys))
    return _PRELUDE_BUILTINS[0]


def preload() -> None:
    """What a warm server that loads this module does once, before it forks any run."""
    _prelude()


class _Server:
    """The program process's side: the program's objects behind numbered handles."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self.objects: list[Any] = []
        self.numbers: dict[int, int] = {}

    def handle_of(self, value: Any) -> dict[str, Any]:
        number = self.numbers.get(id(value))
        if number is None:
            number = self.numbers[id(value)] = len(self.objects)
            self.objects.append(value)  # kept alive, so id() stays unique
        return {"h": [number, type(value).__name__]}

    def value(self, encoded: Any) -> Any:
        return _decode(encoded, lambda ref: self.objects[ref[0]])

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            if request["op"] == "name":
                if request["name"] not in self.namespace:
                    return {"missing": True}
                result = self.namespace[request["name"]]
            else:
                result = self.operate(request)
        except BaseException as e:  # noqa: BLE001 (the program's exception, sent as data)
            return {"raise": [type(e).__name__, str(e)]}
        return {"ok": _encode(result, self.handle_of, program=True)}

    def operate(self, request: dict[str, Any]) -> Any:
        target = self.objects[request["h"]]
        op = request["op"]
        if op == "call":
            args = [self.value(a) for a in request["args"]]
            kwargs = {k: self.value(v) for k, v in request["kwargs"].items()}
            return target(*args, **kwargs)
        if op == "getattr":
            return getattr(target, request["name"])
        if op == "getitem":
            return target[self.value(request["key"])]
        if op == "iter":
            return iter(target)
        if op == "next":
            return next(target)
        if op == "len":
            return len(target)
        if op in _CONVERSIONS:
            return _CONVERSIONS[op](target)
        raise ValueError(f"unknown request {op!r}")


# ------------------------------------------------------------ the harness


def _decode(encoded: Any, remote: Any) -> Any:
    """A value rebuilt from JSON: plain data by this process's own types, handles by
    ``remote``; the plain value of a program's ``Counter`` or namedtuple (tag ``v``)
    as a :class:`_PlainValue` of its container type."""
    if type(encoded) in _PLAIN:
        return encoded
    if type(encoded) is not dict or len(encoded) != 1:
        raise ValueError("malformed value from the program process")
    tag, body = next(iter(encoded.items()))
    if tag == "h":
        return remote(body)
    if tag == "v":
        program_object = _decode(body[0], remote)
        if type(program_object) is not _Remote:
            raise ValueError("malformed value from the program process")
        value = _decode(body[1], remote)
        holder = _PLAIN_HOLDERS.get(type(value))
        if holder is None:
            return value
        plain = holder(value)
        plain.__dict__["_program_object"] = program_object
        return plain
    if tag == "c":
        return complex(body[0], body[1])
    if tag == "b":
        return bytes.fromhex(body)
    if tag == "d":
        return {_decode(k, remote): _decode(v, remote) for k, v in body}
    items = [_decode(item, remote) for item in body]
    return {"l": list, "t": tuple, "s": set, "f": frozenset}[tag](items)


class _ProgramException(Exception):
    """An exception the program raised, as the harness carries it.

    Never a ``StopIteration``, ``StopAsyncIteration``, ``GeneratorExit``,
    ``KeyboardInterrupt`` or ``SystemExit``: those would steer the assertion's
    own ``for`` loops, ``map``/``filter``, ``iter(f, sentinel)`` and generators
    (``assert all(map(is_prime, xs))`` passing with nothing computed), so a
    program's exception of such a type stays opaque (:class:`_ProgramError`).
    Other builtin types are subclassed (see :func:`_rebuild_exception`), so
    the assertion's ``except ValueError`` still catches the program's.
    """

    type_name = "Exception"


class _ProgramError(_ProgramException):
    """A program's exception of a type the assertion cannot catch by name."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name


# Builtin types whose meaning to the interpreter goes beyond "an error happened".
_OPAQUE: tuple[type[BaseException], ...] = (StopIteration, StopAsyncIteration)
_CARRIERS: dict[str, type[_ProgramException]] = {}


class _ProgramEnded(AssertionError):
    """The program process ended before the assertion finished (an early exit fails the test)."""


class _Channel:
    """The harness's side of the pipes to the program process."""

    def __init__(self, pid: int, requests: IO[bytes], replies: IO[bytes]) -> None:
        self.pid, self.requests, self.replies = pid, requests, replies
        self.remotes: dict[int, _Remote] = {}

    def receive(self) -> dict[str, Any]:
        line = self.replies.readline(_MAX_REPLY_BYTES)
        if not line:
            raise _ProgramEnded("the program's process ended before the assertion finished")
        if not line.endswith(b"\n"):
            raise _ProgramError("ValueError", f"a value from the program is over {_MAX_REPLY_BYTES} bytes")
        reply: dict[str, Any] = json.loads(line)
        if "raise" in reply:
            raise _rebuild_exception(*reply["raise"])
        return reply

    def request(self, **request: Any) -> Any:
        try:
            _send(self.requests, request)
        except BrokenPipeError:
            raise _ProgramEnded("the program's process ended before the assertion finished") from None
        return _decode(self.receive()["ok"], self.remote)

    def remote(self, ref: list[Any]) -> _Remote:
        number, type_name = int(ref[0]), str(ref[1])
        if number not in self.remotes:
            self.remotes[number] = _Remote(self, number, type_name)
        return self.remotes[number]

    def argument(self, value: Any) -> Any:
        def handle_of(obj: Any) -> Any:
            if type(obj) is _Remote and obj._channel is self:
                return {"h": [obj._number, obj._type_name]}
            raise TypeError(
                f"an assertion can pass the program plain values and the program's own objects, not a {type(obj).__name__}"
            )

        return _encode(value, handle_of)

    def lookup(self, name: str) -> tuple[bool, Any]:
        _send(self.requests, {"op": "name", "name": name})
        reply = self.receive()
        return ("ok" in reply), _decode(reply.get("ok"), self.remote)


def _rebuild_exception(type_name: str, message: str) -> _ProgramException:
    """The program's exception as the assertion sees it: a subclass of both
    :class:`_ProgramException` and the builtin type it names (``except
    KeyError`` catches it; ``map()`` does not take it for exhaustion)."""
    kind = getattr(builtins, type_name, None)
    if isinstance(kind, type) and issubclass(kind, Exception) and not issubclass(kind, _OPAQUE):
        carrier = _CARRIERS.get(type_name)
        if carrier is None:
            carrier = type(type_name, (_ProgramException, kind), {"__module__": "builtins", "type_name": type_name})
            _CARRIERS[type_name] = carrier
        try:
            return carrier(message)
        except TypeError:
            pass  # a type whose constructor takes more than a message (UnicodeDecodeError)
    return _ProgramError(type_name, message)


def _refuse(what: str) -> Any:
    def method(self: _Remote, *_: Any) -> Any:
        raise AssertionError(
            f"the assertion {what} the program's {self._type_name}, not a plain value (bool, int, str, list, ...)"
        )

    return method


class _Remote:
    """An object of the program, left in its process: it may be called, indexed and iterated, never judged."""

    __slots__ = ("_channel", "_number", "_type_name")

    def __init__(self, channel: _Channel, number: int, type_name: str) -> None:
        object.__setattr__(self, "_channel", channel)
        object.__setattr__(self, "_number", number)
        object.__setattr__(self, "_type_name", type_name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        channel = self._channel
        return channel.request(
            op="call",
            h=self._number,
            args=[channel.argument(a) for a in args],
            kwargs={str(k): channel.argument(v) for k, v in kwargs.items()},
        )

    def __getattr__(self, name: str) -> Any:
        return self._channel.request(op="getattr", h=self._number, name=name)

    def __getitem__(self, key: Any) -> Any:
        return self._channel.request(op="getitem", h=self._number, key=self._channel.argument(key))

    def __iter__(self) -> Iterator[Any]:
        iterator = self._channel.request(op="iter", h=self._number)
        while True:
            try:
                item = self._channel.request(op="next", h=iterator._number)
            except _ProgramException as e:
                # The program's iterator says it is exhausted: the only place that may end an iteration.
                if e.type_name == "StopIteration":
                    return
                raise
            yield item

    def __len__(self) -> int:
        return self._convert("len", int)

    def __float__(self) -> float:
        return self._convert("float", float)

    def __int__(self) -> int:
        return self._convert("int", int)

    def __index__(self) -> int:
        return self._convert("index", int)

    def _convert(self, op: str, kind: type[_T]) -> _T:
        """A conversion the program answers with a plain value (it takes no
        argument, so nothing of the assertion reaches the program)."""
        value = self._channel.request(op=op, h=self._number)
        if not isinstance(value, kind) or type(value) is not kind:
            raise TypeError(f"the program's {op}() of a {self._type_name} returned a {type(value).__name__}")
        return value

    def __repr__(self) -> str:
        return f"<the program's {self._type_name}>"

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse("compares")
    __bool__ = _refuse("tests the truth of")
    __contains__ = _refuse("asks membership of")
    __hash__ = _refuse("hashes")


class _PlainValue:
    """The plain value of a program's object of a container type (a ``Counter``,
    ``OrderedDict``, ``defaultdict``, namedtuple), rebuilt by the harness: it is
    compared, hashed, tested and indexed as that plain value, by the harness's own
    code; the object's other attributes (a namedtuple's fields, ``most_common``,
    a ``Counter``'s missing keys) are asked of the program's object."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        program_object = self.__dict__.get("_program_object")
        if name.startswith("__") or program_object is None:  # a copy the assertion made has none
            raise AttributeError(name)
        return getattr(program_object, name)


class _PlainDict(_PlainValue, dict):  # type: ignore[type-arg]
    def __missing__(self, key: Any) -> Any:
        program_object = self.__dict__.get("_program_object")
        if program_object is None:
            raise KeyError(key)
        return program_object[key]


class _PlainList(_PlainValue, list):  # type: ignore[type-arg]
    pass


class _PlainTuple(_PlainValue, tuple):  # type: ignore[type-arg]
    pass


class _PlainSet(_PlainValue, set):  # type: ignore[type-arg]
    pass


class _PlainFrozenset(_PlainValue, frozenset):  # type: ignore[type-arg]
    pass


_PLAIN_HOLDERS: dict[type, type] = {
    dict: _PlainDict, list: _PlainList, tuple: _PlainTuple, set: _PlainSet, frozenset: _PlainFrozenset,
}
# Encoding sends a plain value the harness rebuilt as its base type.
_BASE_OF: dict[type, type] = {holder: base for base, holder in _PLAIN_HOLDERS.items()}


def _read_exactly(count: int) -> bytes:
    chunks, left = [], count
    while left:
        chunk = os.read(0, left)  # never more than asked: the rest stays unread
        if not chunk:
            raise EOFError("the harness's input ended early")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_part() -> dict[str, Any]:
    """One part of the input: its length in decimal, a newline, then that many bytes of JSON."""
    digits = b""
    while not digits.endswith(b"\n"):
        if len(digits) > 20:
            raise ValueError("the harness's input has no length line")
        digits += _read_exactly(1)
    part: dict[str, Any] = json.loads(_read_exactly(int(digits)))
    return part


# Opened once (a warm server loads this module before it forks the runs).
_LIBC = ctypes.CDLL(None) if sys.platform.startswith("linux") else None


def _non_dumpable() -> None:
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def _start_program(start: dict[str, Any]) -> _Channel:
    to_program, from_harness = os.pipe()
    to_harness, from_program = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(from_harness)
        os.close(to_harness)
        try:
            _program_process(start, to_program, from_program)
        finally:
            os._exit(1)
    os.close(to_program)
    os.close(from_program)
    return _Channel(pid, os.fdopen(from_harness, "wb"), os.fdopen(to_harness, "rb"))


def _scope(assertion: ast.Module, channel: _Channel) -> dict[str, Any]:
    """The assertion's globals: the real builtins and modules, then the program's names it uses."""
    scope: dict[str, Any] = {"__builtins__": builtins, "__name__": "assertion", **_OWN_MODULES}
    used = sorted({n.id for n in ast.walk(assertion) if isinstance(n, ast.Name)})
    for name in used:
        if name in scope or hasattr(builtins, name):
            continue
        found, value = channel.lookup(name)
        if found:
            scope[name] = value
    return scope


def main() -> None:
    """Run the program in its own process, then the assertion or the call here;
    print the nonce (after the call's value) only when it held."""
    try:
        _judge()
    except AssertionError as e:
        # Whatever subclass: the scorer reads a failed assertion from this line.
        os.write(2, f"\nAssertionError: {e}\n".encode())
        os._exit(1)
    except _ProgramException as e:
        # The program's exception reached the top: reported by the type it raised.
        os.write(2, f"\n{e.type_name}: {e}\n".encode())
        os._exit(1)


def _judge() -> None:
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    _non_dumpable()
    channel = _start_program(_read_part())
    rest = _read_part()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    ready = channel.receive()
    if not ready.get("ready"):
        raise _ProgramError("RuntimeError", "the program process did not start")
    if "call" in rest:
        answer = encode_plain(_make_call(channel, rest["call"]), "the function returned")
        verdict = f"\n{answer}\n{rest['nonce']}\n"
    else:
        assertion = ast.parse(rest["assertion"], "assertion.py")
        exec(compile(assertion, "assertion.py", "exec"), _scope(assertion, channel))
        verdict = f"\n{rest['nonce']}\n"
    os.kill(channel.pid, signal.SIGKILL)
    os.waitpid(channel.pid, 0)
    os.write(1, verdict.encode())
    os._exit(0)


def _make_call(channel: _Channel, call: dict[str, Any]) -> Any:
    """``Solution().<fn_name>(*args)`` when the program defines ``Solution``
    (LeetCode), else its global ``<fn_name>(*args)``: the value as the harness rebuilt it."""
    fn_name = call["fn_name"]
    args = decode_plain(json.loads(call["args"]))
    found, solution = channel.lookup("Solution")
    if found:
        instance = solution()
        if type(instance) is _Remote:
            target = channel.request(op="getattr", h=instance._number, name=fn_name)
        else:
            target = getattr(instance, fn_name)
    else:
        found, target = channel.lookup(fn_name)
        if not found:
            raise _ProgramError("NameError", f"the program defines neither {fn_name!r} nor class 'Solution'")
    return target(*args)


def encode_plain(value: Any, what: str = "the value is") -> str:
    """JSON for a plain value (tuples, sets, bytes and dict keys kept by tags);
    an object of the program's inside is an ``AssertionError``."""

    def refuse(obj: Any) -> Any:
        kind = obj._type_name if type(obj) is _Remote else type(obj).__name__
        raise AssertionError(f"{what} the program's {kind}, not a plain value (bool, int, str, list, ...)")

    return json.dumps(_encode(value, refuse))


def decode_plain(encoded: Any) -> Any:
    """A plain value from what :func:`encode_plain` made (after ``json.loads``)."""

    def refuse(ref: Any) -> Any:
        raise ValueError("a plain value holds a handle")

    return _decode(encoded, refuse)


if __name__ == "__main__":
    main()
