"""One hash-consing graph builder for the vocabulary of tcsmt.datapath.bv.

Running the datapath with a ``GraphBuilder`` leaves its data flow as a
directed acyclic graph of ``Node``s. Two interpretations are built on it:
the recording one (tcsmt.interp.trace, whose graph becomes the straight-line
program the NumPy interpretation and the compiled kernels run) and the SMT
one (tcsmt.smt.terms, whose graph is written as SMT-LIB text).

While building (``fold=True``, the default):

* hash-consing: the same operation on the same argument nodes with the
  same static parameters is the same node, so common subexpressions are
  built once, and two datapaths run into one builder share what they have
  in common;
* constant folding: an operation whose arguments are all constants is not
  built; the Python-int interpretation (the reference) computes its value;
* identities that need no data: ``ite`` with a constant condition or equal
  branches, ``and_``/``or_`` with constant or repeated operands, ``not_``
  of ``not_``, ``x + 0``, ``x - 0``, ``x | 0``, ``x ^ 0``, shifts by 0 and
  of 0, ``x * 0`` and ``x & 0``, comparisons of a node with itself,
  ``extract`` of every bit and extension by 0 bits.

``fold=False`` turns all of that off except hash-consing (the SMT tests use
it to make a solver evaluate every primitive itself). Nodes are numbered in
creation order, so every node's arguments have smaller ids than it.
Node ops are the vocabulary's method names (``add``, ``and_``, ``ite``...),
plus ``const`` and ``input``, so a node can be run as
``getattr(interpretation, node.op)(*args, *node.static)``.
"""

from __future__ import annotations

from tcsmt.interp.ints import INT, DataBranchError, IntBool, IntWord

BOOL = 0
"""The width of a Bool node."""

_ZERO_RIGHT = frozenset({"add", "sub", "bvor", "bvxor", "shl", "lshr", "ashr"})   # x op 0 = x
_ZERO_LEFT = frozenset({"add", "bvor", "bvxor"})                                 # 0 op y = y
_ZERO_ABSORBS = frozenset({"mul", "bvand"})                                      # x op 0 = 0
_ZERO_SHIFTED = frozenset({"shl", "lshr"})                                       # 0 op s = 0


class Node:
    """One node: a word (width >= 1) or a Bool (width 0). ``value`` is the
    constant's value (a Bool's as 0 or 1) for a ``const`` node, else None;
    ``static`` holds the static parameters (extract's bit range, zext's
    count, an input's name). Refuses ``bool()``: the datapath may not
    branch on data."""

    __slots__ = ("id", "op", "args", "static", "width", "value")

    def __init__(self, id_: int, op: str, args: tuple, static: tuple, width: int, value=None):
        self.id, self.op, self.args, self.static = id_, op, args, static
        self.width, self.value = width, value

    def __bool__(self):
        raise DataBranchError("the datapath branched on a graph node with a Python "
                              "if/and/or/not; use the interpretation's ite/and_/or_/not_")

    def __repr__(self):
        return f"Node(#{self.id} {self.op} w={self.width})"

    @property
    def is_const(self) -> bool:
        return self.value is not None


class GraphBuilder:
    """The vocabulary as graph building (see the module doc)."""

    name = "graph"

    def __init__(self, fold: bool = True):
        self.fold = fold
        self._table: dict[tuple, Node] = {}
        self._consts: dict[tuple[int, int], Node] = {}    # (value as given, width) -> const node

    # -- making nodes ------------------------------------------------------

    def node(self, op: str, args: tuple, static: tuple, width: int, value=None) -> Node:
        """The node of op(args, static), made once (hash-consing): keyed by
        op, static, value, width and the arguments' ids, flat."""
        n = len(args)
        key: tuple
        if n == 2:
            key = (op, static, value, width, args[0].id, args[1].id)
        elif n == 1:
            key = (op, static, value, width, args[0].id)
        else:
            key = (op, static, value, width, *[a.id for a in args])
        t = self._table.get(key)
        if t is None:
            t = Node(len(self._table), op, args, static, width, value)
            self._table[key] = t
        return t

    def _folded(self, op: str, args: tuple, static: tuple = ()) -> Node | None:
        """The constant result of op when every argument is a constant,
        computed by the Python-int interpretation."""
        if not self.fold:
            return None
        for a in args:
            if a.value is None:
                return None
        ints = [IntBool(bool(a.value)) if a.width == BOOL else IntWord(a.value, a.width)
                for a in args]
        r = getattr(INT, op)(*ints, *static)
        if isinstance(r, IntBool):
            return self.bool_const(r.b)
        return self.const(r.v, r.w)

    def _apply(self, op: str, args: tuple, static: tuple, width: int) -> Node:
        folded = self._folded(op, args, static)
        return folded if folded is not None else self.node(op, args, static, width)

    def input(self, name: str, width: int) -> Node:
        """A free input word (a Bool when width is 0) named ``name``."""
        return self.node("input", (), (name,), width)

    # -- the vocabulary ----------------------------------------------------

    def const(self, value: int, width: int) -> Node:
        t = self._consts.get((value, width))
        if t is not None:
            return t
        if width < 1:
            raise ValueError(f"width {width} < 1")
        t = self.node("const", (), (), width, int(value) & ((1 << width) - 1))
        if type(value) is int:
            self._consts[(value, width)] = t
        return t

    def bool_const(self, value: bool) -> Node:
        return self.node("const", (), (), BOOL, 1 if value else 0)

    def width(self, x: Node) -> int:
        return x.width

    def extract(self, x, hi, lo):
        if not 0 <= lo <= hi < x.width:
            raise ValueError(f"extract [{hi}:{lo}] of a {x.width}-bit word")
        if self.fold and lo == 0 and hi == x.width - 1:
            return x
        return self._apply("extract", (x,), (hi, lo), hi - lo + 1)

    def concat(self, x, y):
        return self._apply("concat", (x, y), (), x.width + y.width)

    def zext(self, x, n):
        return self._extend("zext", x, n)

    def sext(self, x, n):
        return self._extend("sext", x, n)

    def _extend(self, op, x, n):
        if n < 0:
            raise ValueError(f"{op} by {n}")
        if self.fold and n == 0:
            return x
        return self._apply(op, (x,), (n,), x.width + n)

    def _binary(self, op, x, y):
        same_node(x, y)
        r = self._folded(op, (x, y))
        if r is None:
            r = self._identity(op, x, y)
        return r if r is not None else self.node(op, (x, y), (), x.width)

    def _identity(self, op, x, y):
        """The identities with a zero operand (only when folding)."""
        if not self.fold:
            return None
        zx, zy = _is_zero(x), _is_zero(y)
        if zy and op in _ZERO_RIGHT:
            return x
        if zx and op in _ZERO_LEFT:
            return y
        if (zx or zy) and op in _ZERO_ABSORBS:
            return self.const(0, x.width)
        if zx and op in _ZERO_SHIFTED:
            return x
        return None

    def add(self, x, y): return self._binary("add", x, y)
    def sub(self, x, y): return self._binary("sub", x, y)
    def mul(self, x, y): return self._binary("mul", x, y)
    def bvand(self, x, y): return self._binary("bvand", x, y)
    def bvor(self, x, y): return self._binary("bvor", x, y)
    def bvxor(self, x, y): return self._binary("bvxor", x, y)
    def shl(self, x, s): return self._binary("shl", x, s)
    def lshr(self, x, s): return self._binary("lshr", x, s)
    def ashr(self, x, s): return self._binary("ashr", x, s)

    def neg(self, x):
        return self._apply("neg", (x,), (), x.width)

    def bvnot(self, x):
        return self._apply("bvnot", (x,), (), x.width)

    def _compare(self, op, x, y):
        same_node(x, y)
        if self.fold and x is y:
            return self.bool_const(op in ("eq", "ule", "sle"))
        return self._apply(op, (x, y), (), BOOL)

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
            if c.value is not None:
                return x if c.value else y
            if x is y:
                return x
            fused = self.fuse_ite(c, x, y)
            if fused is not None:
                return fused
        return self.node("ite", (c, x, y), (), x.width)

    def fuse_ite(self, c, x, y) -> Node | None:
        """A node that computes ite(c, x, y) as one fused operation, or None
        (none here; the recording interpretation has a few)."""
        return None

    def and_(self, *bs):
        return self._connective("and_", bs, absorbing=0)

    def or_(self, *bs):
        return self._connective("or_", bs, absorbing=1)

    def _connective(self, op, bs, absorbing):
        for b in bs:
            if b.width != BOOL:
                raise ValueError(f"{op} of a word")
        if self.fold:
            for b in bs:
                if b.value == absorbing:        # a constant (value None otherwise)
                    return self.bool_const(bool(absorbing))
            bs = tuple(dict.fromkeys([b for b in bs if b.value is None]))
        if not bs:
            return self.bool_const(not absorbing)
        if len(bs) == 1:
            return bs[0]
        return self.node(op, tuple(bs), (), BOOL)

    def not_(self, b):
        if b.width != BOOL:
            raise ValueError("not of a word")
        if self.fold and b.op == "not_":
            return b.args[0]
        return self._apply("not_", (b,), (), BOOL)


def same_node(x: Node, y: Node) -> int:
    if x.width != y.width or x.width == BOOL:
        raise ValueError(f"width mismatch: {x.width} and {y.width}")
    return x.width


def _is_zero(x: Node) -> bool:
    return x.value == 0 and x.width != BOOL


def reachable(roots: list[Node]) -> tuple[list[Node], dict[int, int]]:
    """Nodes reachable from roots in id order (arguments before their
    users) and how many users each has."""
    uses: dict[int, int] = {}
    seen: dict[int, Node] = {}
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


def postorder(roots: list[Node]) -> list[Node]:
    """Every non-constant node reachable from the roots (constants appear
    only as arguments), each after its arguments, depth first in argument
    order; iterative, as the graphs are thousands of nodes deep."""
    order: list[Node] = []
    seen: set[int] = set()
    for root in roots:
        if root.value is not None or root.id in seen:
            continue
        seen.add(root.id)
        stack = [(root, iter(root.args))]
        while stack:
            node, it = stack[-1]
            for x in it:
                if x.value is None and x.id not in seen:
                    seen.add(x.id)
                    stack.append((x, iter(x.args)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


__all__ = ["BOOL", "GraphBuilder", "Node", "postorder", "reachable"]
