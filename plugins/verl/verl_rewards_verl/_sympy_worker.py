# Copyright 2024 PRIME team and/or its affiliates
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# `difference_is_zero` is are_equal_under_sympy's SymPy step from verl 0.9.1,
# verl/utils/reward_score/prime_math/__init__.py (and mathruler 0.1.0's, the
# same); `matrix_entries` is the parse_expr of prime_math/grader.py's matrix
# branch. Changed by verl-rewards: they run here, in a child process the
# reward kills at its deadline (sympy_child.py); so does prm800k's pylatexenc
# reading of a long answer (`latex_to_text`).
"""verl_default's SymPy steps: the handler its child processes run (``sympy_child``).

Run by :class:`verl_rewards.child.JsonLineWorker`: ``SympyOps(None)`` is built
once per child (SymPy imported and warm), then called with each request
``{"op": "difference", "a", "b"}``, ``{"op": "matrix", "text"}`` or ``{"op":
"latex_to_text", "text"}``; it answers ``{"equal" | "entries" | "text" | "error"}``. The parent kills the child at the
request's deadline, caps its address space and keeps what SymPy prints off
the replies.
"""

from __future__ import annotations

from typing import Any

MEMORY_BYTES = 2 * 1024**3  # each child's address space (the parent sets it)


class SympyOps:
    """The two SymPy steps of verl's scorers and prm800k's LaTeX reading (imported once, when
    the child starts)."""

    def __init__(self, init: Any = None) -> None:
        import sympy
        from pylatexenc import latex2text
        from sympy.parsing import sympy_parser

        self.latex2text = latex2text
        self.sympy = sympy
        self.parser = sympy_parser
        self.transformations = (
            *sympy_parser.standard_transformations,
            sympy_parser.implicit_multiplication_application,
        )
        # First-use costs (SymPy's caches, the parser) are paid before "ready".
        self.difference_is_zero("(x+1)^2", "x^2+2x+1")
        self.matrix_entries("Matrix([[1, 2], [3, 4/6]])")
        self.latex_to_text("\\frac{1}{2}")

    def difference_is_zero(self, a: str, b: str) -> bool:
        """``simplify((a)-(b)) == 0`` with ``^`` as power and implicit multiplication, as verl's _sympy_parse."""
        expr = f"({a})-({b})".replace("^", "**")
        return bool(self.sympy.simplify(self.parser.parse_expr(expr, transformations=self.transformations)) == 0)

    def matrix_entries(self, text: str) -> list[str]:
        """The entries (row by row, as text) of ``parse_expr(text)``, which must be a matrix."""
        matrix = self.parser.parse_expr(text)
        if not isinstance(matrix, self.sympy.MatrixBase):
            raise TypeError(f"not a matrix: {type(matrix).__name__}")
        return [str(entry) for entry in matrix]

    def latex_to_text(self, text: str) -> str:
        """pylatexenc's plain-text reading of LaTeX, as prm800k's ``_parse_latex`` makes it."""
        return str(self.latex2text.LatexNodes2Text().latex_to_text(text))

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to one request (an ``error`` when the SymPy step raised)."""
        reply: dict[str, Any] = {}
        try:
            if request["op"] == "difference":
                reply["equal"] = self.difference_is_zero(request["a"], request["b"])
            elif request["op"] == "matrix":
                reply["entries"] = self.matrix_entries(request["text"])
            elif request["op"] == "latex_to_text":
                reply["text"] = self.latex_to_text(request["text"])
            else:
                reply["error"] = f"unknown op {request['op']!r}"
        except Exception as e:  # noqa: BLE001 - verl's rule: a step that raises decides nothing
            reply["error"] = f"{type(e).__name__}: {e}"[:300]
        return reply
