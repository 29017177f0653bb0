"""The SMT-LIB 2 interpretation of the bit-vector vocabulary.

Every primitive of ``tcsmt.datapath.bv`` builds a node of the hash-consed
graph of ``tcsmt.interp.graph`` (the builder the recording interpretation
uses too): the same operator on the same operands is the same node, so the
datapath run twice (two models, or one model twice) shares everything the
two runs have in common. When every operand of a primitive is a constant,
the node is not built: the Python-int interpretation computes its value
(constant folding), together with a few identities that need only one
constant operand (``ite(true, x, y) = x``, ``and(false, ...) = false``,
``x + 0 = x``...). ``SmtInterp(fold=False)`` turns all of that off, so
tests can make a solver evaluate every primitive itself.

``tcsmt.smt.smtlib`` writes the DAG as SMT-LIB 2 text: inputs as
``declare-const``, every node used more than once (or nested too deep) as a
``define-fun`` (or, in a function body, a ``let``) named ``_nID``, and the
assertions; its ``build_formula`` runs a callback that receives the
interpretation and returns the assertions, and gives a ``Formula``.

Why text, rather than building terms through the three solvers' native
Python APIs:

* one symbolic interpretation instead of three, so no solver can drift from
  the others (one definition, several meanings);
* ``--emit-smt2`` writes exactly what every backend parses: no second printer
  that could differ from what was solved;
* text can be hashed (the result files hold its sha256) and read by a person
  auditing a result, and any other SMT solver can be given the same file;
* a string crosses into a worker process for free, where native terms belong
  to one solver context in one process and cannot be pickled.

The cost is parsing: the 47 KB formula of an ampere-hopper diff (K = 16,
two datapaths) parses in 3 ms (Bitwuzla), 11 ms (cvc5) and 19 ms (Z3) on
the development machine, against tenths of seconds to seconds of solving.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tcsmt.interp.graph import BOOL, GraphBuilder, Node, reachable, same_node
from tcsmt.interp.ints import INT, IntBool, IntWord

SmtTerm = Node
"""A term is a node of the shared graph (tcsmt.interp.graph)."""

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_RESERVED = {"and", "or", "not", "ite", "true", "false", "let", "distinct", "concat",
             "assert", "exit", "par", "as", "forall", "exists", "match", "xor", "extract"}


class SmtInterp(GraphBuilder):
    """SMT-LIB terms: the symbolic interpretation (see the module docstring).

    ``var(name, width)`` declares a free input word, ``bool_var(name)`` a
    free Bool; ``mul_hook``, when given, is called as ``hook(I, x, y)`` for
    every ``mul`` and may return a replacement term (a query's own
    abstraction of a multiplier)."""

    name = "smt"

    def __init__(self, fold: bool = True, mul_hook: Callable | None = None):
        super().__init__(fold)
        self.mul_hook = mul_hook
        self.inputs: dict[str, SmtTerm] = {}

    def var(self, name: str, width: int) -> SmtTerm:
        """A free input word, declared in the text as ``name``."""
        return self._declare(name, width)

    def bool_var(self, name: str) -> SmtTerm:
        return self._declare(name, BOOL)

    def _declare(self, name: str, width: int) -> SmtTerm:
        if not _NAME.match(name) or name.lower() in _RESERVED or name.startswith("bv"):
            raise ValueError(f"{name!r} is not a usable input name (letters, digits, _; "
                             "starting with a letter)")
        if name in self.inputs:
            if self.inputs[name].width != width:
                raise ValueError(f"input {name!r} declared with two widths")
            return self.inputs[name]
        t = self.input(name, width)
        self.inputs[name] = t
        return t

    def mul(self, x, y):
        same_node(x, y)
        if self.mul_hook is not None and not (x.is_const and y.is_const):
            r = self.mul_hook(self, x, y)
            if r is not None:
                return r
        return super().mul(x, y)


def evaluate(t: SmtTerm, values: dict[str, int]) -> int:
    """The value of a term under an assignment of its inputs (Bools as 0/1),
    computed by the Python-int interpretation, node by node."""
    order, _ = reachable([t])
    return evaluate_all(order, values)[t.id]


def evaluate_all(order: list, values: dict[str, int]) -> dict[int, int]:
    """Every node's value (Bools as 0/1) under an assignment of the inputs;
    ``order``: nodes with arguments before their users (graph.reachable)."""
    val: dict[int, object] = {}
    for n in order:
        if n.op == "const":
            val[n.id] = IntBool(bool(n.value)) if n.width == BOOL else IntWord(n.value, n.width)
        elif n.op == "input":
            v = values[n.static[0]]
            val[n.id] = IntBool(bool(v)) if n.width == BOOL else IntWord(v, n.width)
        else:
            val[n.id] = _eval_node(n, [val[a.id] for a in n.args])
    return {i: int(r.b) if isinstance(r, IntBool) else r.v for i, r in val.items()}   # type: ignore[attr-defined]


def _eval_node(n: SmtTerm, args: list):
    return getattr(INT, n.op)(*args, *n.static)
