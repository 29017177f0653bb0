"""The vocabulary of tcsmt.datapath.bv as LLVM IR over vectors of LANES
lanes, for the compiled CPU kernels (tcsmt.interp.kernel_cpu), and the
writing of functions: loops (Loop), vector loads and stores (Fn), a
program's instructions (Body).

Every word is held in a lane of an unsigned integer vector whose bits above
the word's width are zero (each operation keeps that invariant: add, sub,
mul, neg, shl and sext mask their result): a word of up to 32 bits
(NARROW) in an i32 lane, a wider one in an i64 lane; a Bool is the word 0
or 1 in an i32 lane, so Bool logic is vector logic and a select reads its
condition's low bit. Narrow words in 32-bit lanes let LLVM use half-width
vector instructions for most of a datapath (exponents, significands of
fp16 and fp8, flags). Each operation is the primitive's meaning in
tcsmt.interp.ints; shift amounts of the word's width or more never reach a
shift instruction (whose result LLVM leaves undefined there): a select
picks the result the vocabulary defines for them. Signed comparisons,
maxima and minima flip the sign bit and compare unsigned. The fused forms
are those of tcsmt.interp.fused, each exactly its composition.
"""

from __future__ import annotations

from llvmlite import ir

from tcsmt.interp.program import Program

LANES = 8
"""Lanes of every vector: 8 x 32 bits is one 256-bit register."""

NARROW = 32
I1, I32, I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)


def lanes_of(w: int) -> int:
    """The container width of a word of w bits (0: a Bool)."""
    return 32 if w <= NARROW else 64


def vtype(w: int) -> ir.VectorType:
    return ir.VectorType(ir.IntType(lanes_of(w)), LANES)


def splat(w: int, v: int) -> ir.Constant:
    """The constant v in every lane of a w-bit word's vector."""
    c = lanes_of(w)
    t = ir.IntType(c)
    return ir.Constant(vtype(w), [ir.Constant(t, int(v) & ((1 << c) - 1))] * LANES)


def mask(w: int) -> int:
    return (1 << w) - 1


def _masked(b: ir.IRBuilder, x, w: int):
    return x if w in (0, lanes_of(w)) else b.and_(x, splat(w, mask(w)))


def resize(b: ir.IRBuilder, x, w_from: int, w_to: int):
    """A vector of w_from-bit words in the container of w_to bits (same values)."""
    c_from, c_to = lanes_of(w_from), lanes_of(w_to)
    if c_from == c_to:
        return x
    return b.zext(x, vtype(w_to)) if c_to > c_from else b.trunc(x, vtype(w_to))


def is_set(b: ir.IRBuilder, x):
    """A Bool vector (0 or 1 per lane) as an i1 vector."""
    return b.trunc(x, ir.VectorType(I1, LANES))


def as_bool(b: ir.IRBuilder, c):
    """An i1 vector (a comparison) as a Bool vector."""
    return b.zext(c, vtype(0))


def emit(b: ir.IRBuilder, op: str, a: list, ws: list[int], static: tuple, w: int):
    """The instruction op on argument vectors ``a`` of widths ``ws`` (0: a
    Bool), giving a vector of w-bit words (w = 0: a Bool)."""
    fn = _TABLE.get(op)
    if fn is None:
        raise ValueError(f"no kernel instruction for {op!r}")
    return fn(b, a, ws, static, w)


def _extract(b, a, ws, st, w):
    hi, lo = st
    x = b.lshr(a[0], splat(ws[0], lo)) if lo else a[0]
    x = resize(b, x, ws[0], w)
    return x if hi == ws[0] - 1 else b.and_(x, splat(w, mask(w)))


def _concat(b, a, ws, st, w):
    x, y = resize(b, a[0], ws[0], w), resize(b, a[1], ws[1], w)
    return b.or_(b.shl(x, splat(w, ws[1])), y)


def _sext(b, a, ws, st, w):
    x, sign = resize(b, a[0], ws[0], w), splat(w, 1 << (ws[0] - 1))
    return _masked(b, b.sub(b.xor(x, sign), sign), w)


def _shift(b, a, ws, st, w, op: str):
    big = b.icmp_unsigned(">=", a[1], splat(w, w))
    amount = b.and_(a[1], splat(w, lanes_of(w) - 1))
    if op == "shl":
        return b.select(big, splat(w, 0), _masked(b, b.shl(a[0], amount), w))
    if op == "lshr":
        return b.select(big, splat(w, 0), b.lshr(a[0], amount))
    top = lanes_of(w) - w          # ashr: the word moved to the top of its lane, shifted back down
    x = b.shl(a[0], splat(w, top)) if top else a[0]
    amount = b.select(big, splat(w, w - 1), amount)
    r = b.ashr(x, b.add(amount, splat(w, top)) if top else amount)
    return _masked(b, r, w)


def _less(b, a, ws, signed: bool, op: str):
    x, y = a
    if signed:
        sign = splat(ws[0], 1 << (ws[0] - 1))
        x, y = b.xor(x, sign), b.xor(y, sign)
    return as_bool(b, b.icmp_unsigned(op, x, y))


def _pick(b, a, ws, w, signed: bool, larger: bool):
    x, y = a
    sign = splat(w, 1 << (w - 1)) if signed else None
    if signed:
        x, y = b.xor(x, sign), b.xor(y, sign)
    lt = b.icmp_unsigned("<", x, y)
    r = b.select(lt, y, x) if larger else b.select(lt, x, y)
    return b.xor(r, sign) if signed else r


def _all(b, a, combine):
    x = a[0]
    for y in a[1:]:
        x = combine(x, y)
    return x


def _neg(b, x, w):
    return _masked(b, b.sub(splat(w, 0), x), w)


_TABLE = {
    "extract": _extract,
    "concat": _concat,
    "zext": lambda b, a, ws, st, w: resize(b, a[0], ws[0], w),
    "sext": _sext,
    "add": lambda b, a, ws, st, w: _masked(b, b.add(a[0], a[1]), w),
    "sub": lambda b, a, ws, st, w: _masked(b, b.sub(a[0], a[1]), w),
    "mul": lambda b, a, ws, st, w: _masked(b, b.mul(a[0], a[1]), w),
    "neg": lambda b, a, ws, st, w: _neg(b, a[0], w),
    "bvand": lambda b, a, ws, st, w: b.and_(a[0], a[1]),
    "bvor": lambda b, a, ws, st, w: b.or_(a[0], a[1]),
    "bvxor": lambda b, a, ws, st, w: b.xor(a[0], a[1]),
    "bvnot": lambda b, a, ws, st, w: b.xor(a[0], splat(w, mask(w))),
    "shl": lambda b, a, ws, st, w: _shift(b, a, ws, st, w, "shl"),
    "lshr": lambda b, a, ws, st, w: _shift(b, a, ws, st, w, "lshr"),
    "ashr": lambda b, a, ws, st, w: _shift(b, a, ws, st, w, "ashr"),
    "eq": lambda b, a, ws, st, w: as_bool(b, b.icmp_unsigned("==", a[0], a[1])),
    "ult": lambda b, a, ws, st, w: _less(b, a, ws, False, "<"),
    "ule": lambda b, a, ws, st, w: _less(b, a, ws, False, "<="),
    "slt": lambda b, a, ws, st, w: _less(b, a, ws, True, "<"),
    "sle": lambda b, a, ws, st, w: _less(b, a, ws, True, "<="),
    "ite": lambda b, a, ws, st, w: b.select(is_set(b, a[0]), a[1], a[2]),
    "and_": lambda b, a, ws, st, w: _all(b, a, b.and_),
    "or_": lambda b, a, ws, st, w: _all(b, a, b.or_),
    "not_": lambda b, a, ws, st, w: b.xor(a[0], splat(0, 1)),
    # fused forms (tcsmt.interp.fused)
    "xor_": lambda b, a, ws, st, w: b.xor(a[0], a[1]),
    "smax": lambda b, a, ws, st, w: _pick(b, a, ws, w, True, True),
    "smin": lambda b, a, ws, st, w: _pick(b, a, ws, w, True, False),
    "umax": lambda b, a, ws, st, w: _pick(b, a, ws, w, False, True),
    "umin": lambda b, a, ws, st, w: _pick(b, a, ws, w, False, False),
    "neg_if": lambda b, a, ws, st, w: b.select(is_set(b, a[0]), _neg(b, a[1], w), a[1]),
}

OPS = frozenset(_TABLE)


def constant(value, w: int) -> ir.Constant:
    """A constant word (or Bool, w = 0: the word 0 or 1) in every lane."""
    return splat(w, int(value))


# ---------------------------------------------------------------------------
# Loops
# ---------------------------------------------------------------------------

class Loop:
    """``for i in range(start, stop)`` in IR, with values carried from one
    iteration to the next (``carry``): use as

        loop = Loop(b, stop, carried={"x": x0})
        ... loop.i, loop.values["x"] ...
        loop.close({"x": x1})       # the builder continues after the loop
        loop.results["x"]
    """

    def __init__(self, b: ir.IRBuilder, stop, start=None, carried: dict | None = None):
        self.b = b
        pre = b.block
        self.head = b.append_basic_block("head")
        self.body = b.append_basic_block("body")
        self.exit = b.append_basic_block("exit")
        b.branch(self.head)
        b.position_at_end(self.head)
        self.i = b.phi(I64)
        self.i.add_incoming(start if start is not None else ir.Constant(I64, 0), pre)
        self.phis = {}
        for name, v in (carried or {}).items():
            self.phis[name] = b.phi(v.type)
            self.phis[name].add_incoming(v, pre)
        b.cbranch(b.icmp_signed("<", self.i, stop), self.body, self.exit)
        b.position_at_end(self.body)
        self.values = dict(self.phis)
        self.results: dict = {}

    def close(self, carried: dict | None = None) -> None:
        b = self.b
        for name, v in (carried or {}).items():
            self.phis[name].add_incoming(v, b.block)
        self.i.add_incoming(b.add(self.i, ir.Constant(I64, 1)), b.block)
        b.branch(self.head)
        b.position_at_end(self.exit)
        self.results = dict(self.phis)


# ---------------------------------------------------------------------------
# Writing instructions
# ---------------------------------------------------------------------------


class Body:
    """Vector values of a program's slots while its instructions are written:
    ``fetch`` gives a slot's value (a constant, a value written before, or
    one ``load`` brings in: an input, a hoisted value, a field of c)."""

    def __init__(self, b: ir.IRBuilder, prog: Program, load):
        self.b, self.prog, self.load = b, prog, load
        self.values: dict = {}

    def fetch(self, s: int):
        v = self.values.get(s)
        if v is None:
            tv = self.prog.template[s]
            w = self.prog.widths[s]
            v = constant(tv.b if w == 0 else tv.v, w) if tv is not None else self.load(s)
            self.values[s] = v
        return v

    def write(self, code: list, done=None) -> None:
        """Write the instructions; done(slot, value) after each (a part
        stores a hoisted value as soon as it is made)."""
        ws = self.prog.widths
        for op, args, static, res in (ins[:4] for ins in code):
            v = self.values[res] = emit(self.b, op, [self.fetch(s) for s in args],
                                        [ws[s] for s in args], static, ws[res])
            if done is not None:
                done(res, v)


class Fn:
    """One function: ``args`` names its parameters (pointers end in '*'),
    ``b`` writes its entry block."""

    def __init__(self, module: ir.Module, name: str, args: list[str], types: dict):
        params = [types.get(a, I64) if not a.endswith("*") else types.get(a, I64).as_pointer()
                  for a in args]
        self.f = ir.Function(module, ir.FunctionType(ir.VoidType(), params), name=name)
        self.arg = {}
        for a, v in zip(args, self.f.args):
            if a.endswith("*"):
                v.add_attribute("noalias")
            self.arg[a.rstrip("*")] = v
        self.b = ir.IRBuilder(self.f.append_basic_block("entry"))

    def done(self) -> None:
        self.b.ret_void()

    def i(self, v: int):
        return ir.Constant(I64, v)

    def at(self, *terms):
        """sum of products: at((x, y), z) = x * y + z (i64 values)."""
        b, total = self.b, None
        for t in terms:
            v = t if not isinstance(t, tuple) else b.mul(*t)
            total = v if total is None else b.add(total, v)
        return total

    def ptr(self, name: str, index, offset: int = 0):
        """&name[index + offset], the constant offset apart (so that it
        becomes part of the machine's address)."""
        b = self.b
        q = b.gep(self.arg[name], [index])
        return b.gep(q, [self.i(offset)]) if offset else q

    def vload(self, ptr, w: int, elem_bits: int, count=None):
        """The vector of LANES elements at ptr (uint elem_bits) as words of
        w bits; with ``count``, only the first count lanes are read (the
        others are 0: nothing past the end of an array is touched)."""
        b = self.b
        vt = ir.VectorType(ir.IntType(elem_bits), LANES)
        vp = b.bitcast(ptr, vt.as_pointer())
        if count is None:
            v = b.load(vp, align=elem_bits // 8)
        else:
            f = self._intrinsic(f"llvm.masked.load.v{LANES}i{elem_bits}.p0",
                                ir.FunctionType(vt, [vt.as_pointer(), I32, _MASK, vt]))
            v = b.call(f, [vp, ir.Constant(I32, elem_bits // 8), self._first(count), ir.Constant(vt, None)])
        return _convert(b, v, elem_bits, lanes_of(w), w)

    def vstore(self, value, ptr, w: int, elem_bits: int, count=None) -> None:
        """The vector into ptr (only its first count lanes, with ``count``)."""
        b = self.b
        vt = ir.VectorType(ir.IntType(elem_bits), LANES)
        v = _convert(b, value, lanes_of(w), elem_bits, w)
        vp = b.bitcast(ptr, vt.as_pointer())
        if count is None:
            b.store(v, vp, align=elem_bits // 8)
            return
        f = self._intrinsic(f"llvm.masked.store.v{LANES}i{elem_bits}.p0",
                            ir.FunctionType(ir.VoidType(), [vt, vt.as_pointer(), I32, _MASK]))
        b.call(f, [v, vp, ir.Constant(I32, elem_bits // 8), self._first(count)])

    def gather(self, base, index, stride, count, w: int):
        """The words at base[index + l * stride] for lanes l < count (the
        others repeat lane count - 1's), as w-bit words: a column of a
        row-major array."""
        b = self.b
        vt = ir.VectorType(I64, LANES)
        lanes = Loop(b, self.i(LANES), carried={"v": ir.Constant(vt, None)})
        last = b.sub(count, self.i(1))
        lane = b.select(b.icmp_signed("<", lanes.i, count), lanes.i, last)
        x = b.load(b.gep(base, [b.add(index, b.mul(lane, stride))]), align=8)
        lanes.close({"v": b.insert_element(lanes.values["v"], x, lanes.i)})
        return _convert(b, lanes.results["v"], 64, lanes_of(w), w)

    def scatter(self, value, base, index, stride, count, w: int) -> None:
        """Lanes l < min(count, LANES) of value into base[index + l * stride]."""
        b = self.b
        v = _convert(b, value, lanes_of(w), 64, w)
        n = b.select(b.icmp_signed("<", count, self.i(LANES)), count, self.i(LANES))
        lanes = Loop(b, n)
        b.store(b.extract_element(v, lanes.i), b.gep(base, [b.add(index, b.mul(lanes.i, stride))]), align=8)
        lanes.close()

    def _first(self, count):
        """The lanes below count, as an i1 vector."""
        b = self.b
        vt = ir.VectorType(I64, LANES)
        v = b.insert_element(ir.Constant(vt, ir.Undefined), count, ir.Constant(I32, 0))
        zeros = ir.Constant(ir.VectorType(I32, LANES), [0] * LANES)
        v = b.shuffle_vector(v, ir.Constant(vt, ir.Undefined), zeros)
        return b.icmp_signed("<", ir.Constant(vt, list(range(LANES))), v)

    def _intrinsic(self, name: str, fnty):
        m = self.f.module
        return m.globals[name] if name in m.globals else ir.Function(m, fnty, name=name)

    def broadcast(self, ptr, w: int, elem_bits: int):
        """*ptr in every lane, as a w-bit word."""
        b = self.b
        x = b.load(ptr, align=elem_bits // 8)
        c = lanes_of(w)
        if c != elem_bits:
            x = b.trunc(x, ir.IntType(c)) if c < elem_bits else b.zext(x, ir.IntType(c))
        vt = vtype(w)
        v = b.insert_element(ir.Constant(vt, ir.Undefined), x, ir.Constant(I32, 0))
        return b.shuffle_vector(v, ir.Constant(vt, ir.Undefined),
                                ir.Constant(ir.VectorType(I32, LANES), [0] * LANES))


_MASK = ir.VectorType(ir.IntType(1), LANES)


def _convert(b, v, c_from: int, c_to: int, w: int):
    if c_from == c_to:
        return v
    t = ir.VectorType(ir.IntType(c_to), LANES)
    return b.zext(v, t) if c_to > c_from else b.trunc(v, t)


def elem_bits(prog: Program, slots) -> int:
    """The narrowest uint (32 or 64 bits) that holds these slots' values."""
    return 32 if all(prog.widths[s] <= NARROW for s in slots) else 64
