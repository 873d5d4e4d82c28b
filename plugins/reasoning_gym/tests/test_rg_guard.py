"""The model's answer never runs as code, though nine reasoning-gym scorers would run it."""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from reasoning_gym.factory import DATASETS, create_dataset
from verl_rewards_reasoning_gym.guard import EVAL_TASKS, SYMPY_TASKS, literal_eval, refuse_code
from verl_rewards_reasoning_gym.reward import compute_score

GUARDED = sorted(EVAL_TASKS | set(SYMPY_TASKS))
RISKY = {"eval", "exec", "compile", "parse_expr", "sympify", "__import__"}


def _payload(task: str, target: Path) -> str:
    code = f"open({str(target)!r}, 'w').write('ran')"
    if task in EVAL_TASKS:
        return code
    return "exec(" + "+".join(f"chr({ord(c)})" for c in code) + ")"  # no quotes: what gets past sympy


@pytest.mark.parametrize("task", GUARDED)
def test_an_answer_that_reasoning_gym_would_execute_never_runs(task: str, tmp_path: Path) -> None:
    dataset = create_dataset(task, seed=1, size=1)
    entry = dataset[0]
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    unguarded = dataset.score_answer(_payload(task, theirs), entry)
    assert theirs.read_text() == "ran"  # reasoning-gym's own scorer ran the model's code
    result = compute_score(f"reasoning_gym/{task}", f"<answer>{_payload(task, ours)}</answer>", "",
                           {"entry": entry})
    assert not ours.exists()
    assert result["score"] == unguarded and result["scorer_error"] == ""  # its "unreadable answer" score


def _names_reached(cls: type) -> set[str]:
    """The global and attribute names ``score_answer`` and the methods it calls use."""
    seen: set[str] = set()
    names: set[str] = set()
    todo = ["score_answer"]
    while todo:
        method = todo.pop()
        fn = getattr(cls, method, None)
        if method in seen or not isinstance(fn, types.FunctionType):
            continue
        seen.add(method)
        codes = [fn.__code__]
        while codes:
            code = codes.pop()
            names |= set(code.co_names)
            todo += list(code.co_names)
            codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return names


def test_the_guarded_tasks_are_exactly_those_whose_scorer_evaluates_text() -> None:
    risky = {task for task, (cls, _) in DATASETS.items() if _names_reached(cls) & RISKY}
    assert risky == set(GUARDED) | {"number_sorting"}  # number_sorting evals the entry's answer only


@pytest.mark.parametrize("text", ["x**2/2 + C", "3*x**3 - 2*x + 1", "(1 + 2) * 3 - 4/5", "sin(x)*exp(2*x)/3 + C",
                                  "5!", "sqrt(2)*log(x) + Abs(y_1)", "E**(I*pi) + 1", "25 - 1 == 24"])
def test_arithmetic_on_symbols_and_math_functions_passes(text: str) -> None:
    refuse_code(text)


@pytest.mark.parametrize(
    ("text", "refused"),
    [("exec(chr(49))", "'exec'"), ("x.func", "'.'"), ("lambda: 1", "'lambda'"), ('"a"', "'\"a\"'"),
     ("__import__", "'__import__'"), ("getattr(x, y)", "'getattr'"), ("S(x)", "'S'"), ("(1", "not an expression")],
)
def test_anything_that_could_run_code_is_refused(text: str, refused: str) -> None:
    with pytest.raises(ValueError, match="refused: " + refused.replace("(", r"\(").replace(".", r"\.")):
        refuse_code(text)


@pytest.mark.parametrize("text", ["[1, 2, 3]", " [[1, 0], [0, 1]]", "('a', 'b')", "[True, None, -1.5e3]", "{1, 2}"])
def test_literal_eval_reads_literals_as_eval_does(text: str) -> None:
    assert literal_eval(text) == eval(text.lstrip())


@pytest.mark.parametrize("text", ["[1] * 3", "open('x')", "__import__('os')", "[x for x in ()]"])
def test_literal_eval_refuses_everything_else(text: str) -> None:
    with pytest.raises((ValueError, SyntaxError)):
        literal_eval(text)
