"""A recording interpretation: its words are nodes of a graph, so running
the datapath with it leaves the datapath's data flow as a graph, which
tcsmt.interp.program turns into a straight-line program for the NumPy
interpretation.

Each primitive call adds a node (op, arguments, static parameters such as
extract's bit range). While recording:

* constants are folded with the Python-int interpretation (the reference),
  so only operations on data remain;
* an identical call (same op, same argument nodes, same parameters) gives
  the node it gave before (common subexpressions are computed once);
* a few identities that need no data are applied: ite with a constant
  condition or equal branches, and_/or_ with constant operands, not of not,
  add/sub/or/xor of a constant 0, extract of every bit;
* a few compositions are written as one fused operation (FUSED below),
  defined in tcsmt.interp.fused as exactly those compositions.
"""

from __future__ import annotations

from tcsmt.interp.ints import _MSG, INT, DataBranchError, IntBool, IntWord

# ite(cmp(a, b), b, a) is the larger of a and b, ite(cmp(a, b), a, b) the
# smaller: recorded as one fused operation, which NumpyInterp computes with
# np.maximum / np.minimum (keys: comparison, branches are (b, a), are (a, b)).
# ite(a, not_(b), b) of Bools is recorded as xor_(a, b), ite(c, neg(x), x) as
# neg_if(c, x) (tcsmt.interp.fused). FUSE = False records the plain
# primitives only (tests compare both).
FUSED = {("slt", True, False): "smax", ("slt", False, True): "smin",
         ("ult", True, False): "umax", ("ult", False, True): "umin"}
FUSE = True


class Node:
    """A recorded word (w > 0) or Bool (w == 0); ``const`` is its value
    when it is a constant, else None."""

    __slots__ = ("idx", "w", "op", "args", "static", "const")

    def __init__(self, idx, w, op, args, static, const):
        self.idx, self.w, self.op, self.args = idx, w, op, args
        self.static, self.const = static, const

    def __bool__(self):
        raise DataBranchError(_MSG)

    def __repr__(self):
        return f"Node({self.idx}, {self.op}, w={self.w})"


class TraceInterp:
    """Records primitive calls as a graph of Nodes (see the module doc)."""

    name = "trace"

    def __init__(self):
        self.nodes: list[Node] = []
        self._memo: dict = {}

    # -- making nodes --------------------------------------------------------

    def _new(self, key, w, op, args, static, const) -> Node:
        node = self._memo.get(key)
        if node is None:
            node = Node(len(self.nodes), w, op, args, static, const)
            self.nodes.append(node)
            self._memo[key] = node
        return node

    def input(self, name: str, w: int) -> Node:
        return self._new(("input", name), w, "input", (), (name,), None)

    def const(self, value: int, width: int) -> Node:
        if width < 1:
            raise ValueError(f"width {width} < 1")
        v = int(value) & ((1 << width) - 1)
        return self._new(("const", v, width), width, "const", (), (), v)

    def bool_const(self, value: bool) -> Node:
        b = bool(value)
        return self._new(("bconst", b), 0, "const", (), (), b)

    def _op(self, op: str, args: tuple, static: tuple = (), w: int | None = None) -> Node:
        """The node of op(args, static), folded when every argument is a
        constant; w is the result's width (0 for a Bool; None: the first
        argument's)."""
        for a in args:
            if a.const is None:
                break
        else:
            return self._fold(op, args, static)
        key = (op, args, static)
        node = self._memo.get(key)
        if node is None:
            node = Node(len(self.nodes), args[0].w if w is None else w, op, args, static, None)
            self.nodes.append(node)
            self._memo[key] = node
        return node

    def _fold(self, op, args, static) -> Node:
        vals = [INT.bool_const(a.const) if a.w == 0 else IntWord(a.const, a.w) for a in args]
        r = getattr(INT, op)(*vals, *static)
        if isinstance(r, IntBool):
            return self.bool_const(r.b)
        return self.const(r.v, r.w)

    # -- the vocabulary ------------------------------------------------------------

    def width(self, x: Node) -> int:
        return x.w

    def extract(self, x, hi, lo):
        if not 0 <= lo <= hi < x.w:
            raise ValueError(f"extract [{hi}:{lo}] of a {x.w}-bit word")
        if lo == 0 and hi == x.w - 1:
            return x
        return self._op("extract", (x,), (hi, lo), hi - lo + 1)

    def concat(self, x, y):
        return self._op("concat", (x, y), (), x.w + y.w)

    def zext(self, x, n):
        return self._op("zext", (x,), (n,), x.w + n)

    def sext(self, x, n):
        return self._op("sext", (x,), (n,), x.w + n)

    def _binary(self, op, x, y, zero_right=False, zero_left=False, w=None):
        if x.w != y.w:
            raise ValueError(f"width mismatch: {x.w} and {y.w}")
        if zero_right and y.const == 0:
            return x
        if zero_left and x.const == 0:
            return y
        return self._op(op, (x, y), (), w)

    def add(self, x, y):
        return self._binary("add", x, y, True, True)

    def sub(self, x, y):
        return self._binary("sub", x, y, True)

    def mul(self, x, y):
        return self._binary("mul", x, y)

    def neg(self, x):
        return self._op("neg", (x,))

    def bvand(self, x, y):
        return self._binary("bvand", x, y)

    def bvor(self, x, y):
        return self._binary("bvor", x, y, True, True)

    def bvxor(self, x, y):
        return self._binary("bvxor", x, y, True, True)

    def bvnot(self, x):
        return self._op("bvnot", (x,))

    def shl(self, x, s):
        return self._binary("shl", x, s, True)

    def lshr(self, x, s):
        return self._binary("lshr", x, s, True)

    def ashr(self, x, s):
        return self._binary("ashr", x, s, True)

    def eq(self, x, y):
        return self._binary("eq", x, y, w=0)

    def ult(self, x, y):
        return self._binary("ult", x, y, w=0)

    def ule(self, x, y):
        return self._binary("ule", x, y, w=0)

    def slt(self, x, y):
        return self._binary("slt", x, y, w=0)

    def sle(self, x, y):
        return self._binary("sle", x, y, w=0)

    def ite(self, c, x, y):
        if x.w != y.w:
            raise ValueError(f"ite branches of widths {x.w} and {y.w}")
        if c.const is not None:
            return x if c.const else y
        if x is y:
            return x
        if FUSE:
            fused = FUSED.get((c.op, c.args == (y, x), c.args == (x, y)))
            if fused is not None:
                return self._op(fused, c.args)
            if x.w == 0 and x.op == "not_" and x.args[0] is y:
                return self._op("xor_", (c, y), (), 0)
            if x.op == "neg" and x.args[0] is y:
                return self._op("neg_if", (c, y), (), y.w)
        return self._op("ite", (c, x, y), (), x.w)

    def _connective(self, op, bs, unit: bool):
        """and_ (unit True) or or_ (unit False) with constants folded."""
        rest = []
        for b in bs:
            if b.const is None:
                if b not in rest:
                    rest.append(b)
            elif b.const != unit:
                return self.bool_const(not unit)
        if not rest:
            return self.bool_const(unit)
        if len(rest) == 1:
            return rest[0]
        return self._op(op, tuple(rest), (), 0)

    def and_(self, *bs):
        return self._connective("and_", bs, True)

    def or_(self, *bs):
        return self._connective("or_", bs, False)

    def not_(self, b):
        if b.op == "not_":
            return b.args[0]
        return self._op("not_", (b,), (), 0)


__all__ = ["TraceInterp", "Node", "FUSED"]
