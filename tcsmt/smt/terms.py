"""The SMT-LIB 2 interpretation of the bit-vector vocabulary.

Every primitive of ``tcsmt.datapath.bv`` builds a node of a hash-consed term DAG: the
same operator on the same operands is the same node, so the datapath run
twice (two models, or one model twice) shares everything the two runs have in
common. When every operand of a primitive is a constant, the node is not
built: the Python-int interpretation computes its value (constant folding),
together with a few identities that need only one constant operand
(``ite(true, x, y) = x``, ``and(false, ...) = false``, ``x + 0 = x``...).
``SmtInterp(fold=False)`` turns all of that off, so tests can make a solver
evaluate every primitive itself.

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

from tcsmt.interp.ints import INT, DataBranchError, IntBool, IntWord

BOOL = 0          # the "width" of a Bool node

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_RESERVED = {"and", "or", "not", "ite", "true", "false", "let", "distinct", "concat",
             "assert", "exit", "par", "as", "forall", "exists", "match", "xor", "extract"}


class SmtTerm:
    """One node of the term DAG: a bit-vector word (width >= 1) or a Bool
    (width 0). Refuses ``bool()``: the datapath may not branch on data."""

    __slots__ = ("id", "op", "args", "idx", "width", "value")

    def __init__(self, id_, op, args, idx, width, value=None):
        self.id, self.op, self.args, self.idx = id_, op, args, idx
        self.width, self.value = width, value

    def __bool__(self):
        raise DataBranchError("the datapath branched on an SMT term with a Python "
                              "if/and/or/not; use the interpretation's ite/and_/or_/not_")

    def __repr__(self):
        return f"SmtTerm(#{self.id} {self.op} w={self.width})"

    @property
    def is_const(self) -> bool:
        return self.op == "const"


class SmtInterp:
    """SMT-LIB terms: the symbolic interpretation (see the module docstring).

    ``var(name, width)`` declares a free input word, ``bool_var(name)`` a
    free Bool; ``mul_hook``, when given, is called as ``hook(I, x, y)`` for
    every ``mul`` and may return a replacement term (a query's own
    abstraction of a multiplier)."""

    name = "smt"

    def __init__(self, fold: bool = True, mul_hook: Callable | None = None):
        self.fold = fold
        self.mul_hook = mul_hook
        self._table: dict[tuple, SmtTerm] = {}     # (op, indices, value, width, operand ids)
        self.inputs: dict[str, SmtTerm] = {}

    # -- building nodes --------------------------------------------------

    def _node(self, op: str, args: tuple, idx: tuple, width: int, value=None) -> SmtTerm:
        key = (op, idx, value, width, tuple(a.id for a in args))
        t = self._table.get(key)
        if t is None:             # ids in creation order: operands before their users
            t = SmtTerm(len(self._table), op, args, idx, width, value)
            self._table[key] = t
        return t

    def _folded(self, prim: str, args: tuple, idx: tuple = ()) -> SmtTerm | None:
        """The constant result of a primitive whose operands are all
        constants, computed by the Python-int interpretation."""
        if not self.fold or not all(a.is_const for a in args):
            return None
        ints = [IntBool(bool(a.value)) if a.width == BOOL else IntWord(a.value, a.width)
                for a in args]
        r = getattr(INT, prim)(*ints, *idx)
        if isinstance(r, IntBool):
            return self.bool_const(r.b)
        return self.const(r.v, r.w)

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
        t = self._node("var", (), (name,), width)
        self.inputs[name] = t
        return t

    # -- the vocabulary --------------------------------------------------

    def const(self, value: int, width: int) -> SmtTerm:
        if width < 1:
            raise ValueError(f"width {width} < 1")
        return self._node("const", (), (), width, value & ((1 << width) - 1))

    def bool_const(self, value: bool) -> SmtTerm:
        return self._node("const", (), (), BOOL, 1 if value else 0)

    def width(self, x: SmtTerm) -> int:
        return x.width

    def extract(self, x, hi, lo):
        if not 0 <= lo <= hi < x.width:
            raise ValueError(f"extract [{hi}:{lo}] of a {x.width}-bit word")
        if self.fold and lo == 0 and hi == x.width - 1:
            return x
        return _either(self._folded("extract", (x,), (hi, lo)),
                       lambda: self._node("extract", (x,), (hi, lo), hi - lo + 1))

    def concat(self, x, y):
        return _either(self._folded("concat", (x, y)),
                       lambda: self._node("concat", (x, y), (), x.width + y.width))

    def zext(self, x, n):
        return self._extend("zext", x, n)

    def sext(self, x, n):
        return self._extend("sext", x, n)

    def _extend(self, prim, x, n):
        if n < 0:
            raise ValueError(f"{prim} by {n}")
        if self.fold and n == 0:
            return x
        return _either(self._folded(prim, (x,), (n,)),
                       lambda: self._node(prim, (x,), (n,), x.width + n))

    def _binary(self, prim, x, y):
        _same(x, y)
        folded = _either(self._folded(prim, (x, y)), lambda: self._identity(prim, x, y))
        return _either(folded, lambda: self._node(prim, (x, y), (), x.width))

    def _identity(self, prim, x, y):
        """x op 0 and 0 op x identities (only when folding)."""
        if not self.fold:
            return None
        zx, zy = _is_zero_const(x), _is_zero_const(y)
        if zy and prim in ("add", "sub", "bvor", "bvxor", "shl", "lshr", "ashr"):
            return x
        if zx and prim in ("add", "bvor", "bvxor"):
            return y
        if (zx or zy) and prim in ("mul", "bvand"):
            return self.const(0, x.width)
        if zx and prim in ("shl", "lshr"):
            return x
        return None

    def add(self, x, y): return self._binary("add", x, y)
    def sub(self, x, y): return self._binary("sub", x, y)
    def bvand(self, x, y): return self._binary("bvand", x, y)
    def bvor(self, x, y): return self._binary("bvor", x, y)
    def bvxor(self, x, y): return self._binary("bvxor", x, y)
    def shl(self, x, s): return self._binary("shl", x, s)
    def lshr(self, x, s): return self._binary("lshr", x, s)
    def ashr(self, x, s): return self._binary("ashr", x, s)

    def mul(self, x, y):
        _same(x, y)
        if self.mul_hook is not None and not (x.is_const and y.is_const):
            r = self.mul_hook(self, x, y)
            if r is not None:
                return r
        return self._binary("mul", x, y)

    def neg(self, x):
        return _either(self._folded("neg", (x,)), lambda: self._node("neg", (x,), (), x.width))

    def bvnot(self, x):
        return _either(self._folded("bvnot", (x,)), lambda: self._node("bvnot", (x,), (), x.width))

    def _compare(self, prim, x, y):
        _same(x, y)
        if self.fold and x is y:
            return self.bool_const(prim in ("eq", "ule", "sle"))
        return _either(self._folded(prim, (x, y)), lambda: self._node(prim, (x, y), (), BOOL))

    def eq(self, x, y): return self._compare("eq", x, y)
    def ult(self, x, y): return self._compare("ult", x, y)
    def ule(self, x, y): return self._compare("ule", x, y)
    def slt(self, x, y): return self._compare("slt", x, y)
    def sle(self, x, y): return self._compare("sle", x, y)

    def ite(self, c, x, y):
        if c.width != BOOL:
            raise ValueError("ite condition is not a Bool")
        if x.width != y.width:
            raise ValueError(f"ite branches of widths {x.width} and {y.width}")
        if self.fold:
            if c.is_const:
                return x if c.value else y
            if x is y:
                return x
        return self._node("ite", (c, x, y), (), x.width)

    def and_(self, *bs):
        return self._connective("and", bs, absorbing=0)

    def or_(self, *bs):
        return self._connective("or", bs, absorbing=1)

    def _connective(self, op, bs, absorbing):
        for b in bs:
            if b.width != BOOL:
                raise ValueError(f"{op} of a word")
        if self.fold:
            if any(b.is_const and b.value == absorbing for b in bs):
                return self.bool_const(bool(absorbing))
            kept = list(dict.fromkeys(b for b in bs if not b.is_const))
            bs = tuple(kept)
        if not bs:
            return self.bool_const(not absorbing)
        if len(bs) == 1:
            return bs[0]
        return self._node(op, tuple(bs), (), BOOL)

    def not_(self, b):
        if b.width != BOOL:
            raise ValueError("not of a word")
        if self.fold and b.op == "not":
            return b.args[0]
        return _either(self._folded("not_", (b,)), lambda: self._node("not", (b,), (), BOOL))


def _either(term: SmtTerm | None, make: Callable[[], SmtTerm | None]) -> SmtTerm | None:
    """``term`` if there is one, else ``make()`` (terms refuse ``or``)."""
    return term if term is not None else make()


def _same(x: SmtTerm, y: SmtTerm) -> int:
    if x.width != y.width or x.width == BOOL:
        raise ValueError(f"width mismatch: {x.width} and {y.width}")
    return x.width


def _is_zero_const(x: SmtTerm) -> bool:
    return x.is_const and x.value == 0


def reachable(roots: list[SmtTerm]) -> tuple[list[SmtTerm], dict[int, int]]:
    """Nodes reachable from roots in id order (children before parents) and
    how many parents use each."""
    uses: dict[int, int] = {}
    seen: dict[int, SmtTerm] = {}
    stack = list(roots)
    while stack:
        t = stack.pop()
        if t.id in seen:
            continue
        seen[t.id] = t
        for a in t.args:
            uses[a.id] = uses.get(a.id, 0) + 1
            stack.append(a)
    return [seen[i] for i in sorted(seen)], uses


def evaluate(t: SmtTerm, values: dict[str, int]) -> int:
    """The value of a term under an assignment of its inputs (Bools as 0/1),
    computed by the Python-int interpretation, node by node."""
    order, _ = reachable([t])
    val: dict[int, object] = {}
    for n in order:
        if n.op == "const":
            val[n.id] = IntBool(bool(n.value)) if n.width == BOOL else IntWord(n.value, n.width)
        elif n.op == "var":
            v = values[n.idx[0]]
            val[n.id] = IntBool(bool(v)) if n.width == BOOL else IntWord(v, n.width)
        else:
            val[n.id] = _eval_node(n, [val[a.id] for a in n.args])
    r = val[t.id]
    return int(r.b) if isinstance(r, IntBool) else r.v


_PRIM_OF = {"and": "and_", "or": "or_", "not": "not_"}


def _eval_node(n: SmtTerm, args: list):
    return getattr(INT, _PRIM_OF.get(n.op, n.op))(*args, *n.idx)
