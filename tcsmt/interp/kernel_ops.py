"""The vocabulary of tcsmt.datapath.bv as scalar expressions over uint64
and uint32, for the compiled kernels (tcsmt.interp.kernel_source).

Every word is held in an unsigned integer whose bits above its width are
zero (each expression keeps that invariant: add, sub, mul, neg and shl
mask their result): a word of up to 32 bits (NARROW) in a uint32, a wider
one in a uint64; a Bool is the word 0 or 1. Numba computes every integer
operation in 64 bits; each expression of a narrow result is truncated to
uint32, and LLVM then computes the whole expression in 32-bit lanes (on
this machine's cores, half-width vector instructions, twice as many per
cycle), and keeps Bool logic in vector registers (comparisons are the
only expressions that make a machine flag of it). A narrow shift takes
its amount modulo 32 and a max or min narrows both words, so that they
too stay 32-bit. Each expression is the primitive's meaning in
tcsmt.interp.ints, written with operations that Numba compiles to
branch-free machine code and that NumPy scalars evaluate the same way
(the CUDA simulator runs the kernel as Python: a sum of two uint32 wraps
at 2^32 there, so a word widened past 32 bits is made a uint64 first).
Shift amounts of the word's width or more never reach a shift
instruction: the conditional picks the result the vocabulary defines for
them. The fused forms are those of tcsmt.interp.fused, each exactly its
composition.

Constants are named module-level uint64 scalars (``Consts``), so no
expression mixes a signed Python int with a uint64 (Numba would make a
float of it).
"""

from __future__ import annotations


class Consts:
    """Names of the uint64 constants a generated module defines, and of its
    tables of rows (int64 arrays, constant to the compiler)."""

    def __init__(self):
        self.names: dict[int, str] = {}
        self.tables: dict[tuple, str] = {}

    def __call__(self, v: int) -> str:
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = f"_u{len(self.names)}"
        return name

    def table(self, rows: tuple) -> str:
        name = self.tables.get(rows)
        if name is None:
            name = self.tables[rows] = f"_r{len(self.tables)}"
        return name

    def lines(self) -> list[str]:
        return ([f"{n} = np.uint64({v:#x})" for v, n in self.names.items()]
                + [f"{n} = np.array({list(rows)}, dtype=np.int64)" for rows, n in self.tables.items()])


def mask(w: int) -> int:
    return (1 << w) - 1


def expression(op: str, a: list[str], ws: list[int], static: tuple, w: int, K: Consts) -> str:
    """Source of op applied to argument expressions ``a`` of widths ``ws``
    (0 for a Bool), giving a w-bit word (w = 0: a Bool)."""
    fn = _TABLE.get(op)
    if fn is None:
        raise ValueError(f"no kernel expression for {op!r}")
    return narrow(fn(a, ws, static, w, K), w)


NARROW = 32
"""Words of up to this many bits (and Bools) are held in uint32."""


def narrow(e: str, w: int) -> str:
    """e as a uint32 where its width allows: Numba computes every integer
    operation in 64 bits, and the truncation lets LLVM compute the whole
    expression in 32-bit lanes (half the vector width per lane)."""
    return f"np.uint32({e})" if w <= NARROW else e


def _masked(e: str, w: int, K: Consts) -> str:
    return e if w == 64 else f"(({e}) & {K(mask(w))})"


def _sb(ws, K):
    return K(1 << (ws[0] - 1))


def _extract(a, ws, st, w, K):
    hi, lo = st
    shifted = f"({a[0]} >> {K(lo)})" if lo else a[0]
    return shifted if hi == ws[0] - 1 else f"({shifted} & {K(mask(w))})"


def _sext(a, ws, st, w, K):
    sb = _sb(ws, K)
    return _masked(f"(({a[0]} ^ {sb}) - {sb})", w, K)


def _all_ones_if(cond: str, K: Consts) -> str:
    """Every bit set where cond (a Bool word or a comparison) holds, else 0
    (a branch-free select mask)."""
    return f"({K(0)} - np.uint64({cond}))"


def select(c: str, x: str, y: str, K: Consts) -> str:
    """ite on words, branch-free: y ^ ((x ^ y) & mask(c))."""
    return f"({y} ^ (({x} ^ {y}) & {_all_ones_if(c, K)}))"


def _amount(s: str, w: int, K: Consts) -> str:
    """A shift amount the machine defines (the mask of the caller zeroes the
    result where s >= w): s mod 32 for a narrow word, so that the shift
    stays a 32-bit one, else s mod 64."""
    return f"({s} & {K(31 if w <= NARROW else 63)})"


def _shl(a, ws, st, w, K):
    return f"({_masked(f'({a[0]} << {_amount(a[1], w, K)})', w, K)} & {_all_ones_if(f'{a[1]} < {K(w)}', K)})"


def _lshr(a, ws, st, w, K):
    return f"(({a[0]} >> {_amount(a[1], w, K)}) & {_all_ones_if(f'{a[1]} < {K(w)}', K)})"


def _ashr(a, ws, st, w, K):
    """lshr, then the sign copied into the bits it cleared (all of them when
    the amount is w or more)."""
    m = K(mask(w))
    cleared = select(f"{a[1]} < {K(w)}", f"({m} ^ ({m} >> {_amount(a[1], w, K)}))", m, K)
    sign = _all_ones_if(f"({a[0]} >> {K(w - 1)})", K)
    return f"({_lshr(a, ws, st, w, K)} | ({cleared} & {sign}))"


def _signed_less(a, ws, K, op="<"):
    sb = _sb(ws, K)
    return f"(({a[0]} ^ {sb}) {op} ({a[1]} ^ {sb}))"


def _signed_extreme(fn: str, a, ws, K) -> str:
    """smax or smin of two w-bit words: flipping the sign bit maps signed
    order onto unsigned order, so it is the unsigned max (min) of the
    flipped words, flipped back (one machine max; a chain of them, as in
    a block's exponent maximum, folds the flips between its links)."""
    sb = _sb(ws, K)
    return f"({_extreme(fn, [f'{x} ^ {sb}' for x in a], ws[0], K)} ^ {sb})"


def _extreme(fn: str, a, w: int, K: Consts) -> str:
    """max or min of two words of width w, both narrowed where w allows
    (a max of a uint32 and a uint64 would be a 64-bit one), as a
    branch-free select: Numba's CUDA max is an overload it compiles for
    the current device, so a kernel that calls it cannot be compiled to
    PTX without a GPU, and a conditional expression is a branch, which
    makes Numba's passes (SSA, liveness) cost the kernel's blocks times
    its variables (LLVM makes either one machine max)."""
    x, y = narrow(a[0], w), narrow(a[1], w)
    return select(f"{x} {'>=' if fn == 'max' else '<='} {y}", x, y, K)


def _not(x: str, K: Consts) -> str:
    return f"({x} ^ {K(1)})"


def _ite(a, w, K):
    if w == 0:
        return f"({a[2]} ^ (({a[1]} ^ {a[2]}) & {a[0]}))"
    return select(a[0], a[1], a[2], K)


def _bool(cond: str) -> str:
    """A comparison as a Bool word (0 or 1; expression() makes it a uint32)."""
    return f"({cond})"


def _neg(x, w, K):
    return _masked(f"({K(0)} - {x})", w, K)


_TABLE = {
    "extract": _extract,
    "concat": lambda a, ws, st, w, K: f"(({a[0]} << {K(ws[1])}) | {a[1]})",
    "zext": lambda a, ws, st, w, K: a[0] if w <= NARROW else f"np.uint64({a[0]})",
    "sext": _sext,
    "add": lambda a, ws, st, w, K: _masked(f"({a[0]} + {a[1]})", w, K),
    "sub": lambda a, ws, st, w, K: _masked(f"({a[0]} - {a[1]})", w, K),
    "mul": lambda a, ws, st, w, K: _masked(f"({a[0]} * {a[1]})", w, K),
    "neg": lambda a, ws, st, w, K: _neg(a[0], w, K),
    "bvand": lambda a, ws, st, w, K: f"({a[0]} & {a[1]})",
    "bvor": lambda a, ws, st, w, K: f"({a[0]} | {a[1]})",
    "bvxor": lambda a, ws, st, w, K: f"({a[0]} ^ {a[1]})",
    "bvnot": lambda a, ws, st, w, K: f"({a[0]} ^ {K(mask(w))})",
    "shl": _shl,
    "lshr": _lshr,
    "ashr": _ashr,
    "eq": lambda a, ws, st, w, K: _bool(f"{a[0]} == {a[1]}"),
    "ult": lambda a, ws, st, w, K: _bool(f"{a[0]} < {a[1]}"),
    "ule": lambda a, ws, st, w, K: _bool(f"{a[0]} <= {a[1]}"),
    "slt": lambda a, ws, st, w, K: _bool(_signed_less(a, ws, K)),
    "sle": lambda a, ws, st, w, K: _bool(_signed_less(a, ws, K, "<=")),
    "ite": lambda a, ws, st, w, K: _ite(a, w, K),
    "and_": lambda a, ws, st, w, K: "(" + " & ".join(a) + ")",
    "or_": lambda a, ws, st, w, K: "(" + " | ".join(a) + ")",
    "not_": lambda a, ws, st, w, K: _not(a[0], K),
    # fused forms (tcsmt.interp.fused)
    "xor_": lambda a, ws, st, w, K: f"({a[0]} ^ {a[1]})",
    "smax": lambda a, ws, st, w, K: _signed_extreme("max", a, ws, K),
    "smin": lambda a, ws, st, w, K: _signed_extreme("min", a, ws, K),
    "umax": lambda a, ws, st, w, K: _extreme("max", a, w, K),
    "umin": lambda a, ws, st, w, K: _extreme("min", a, w, K),
    "neg_if": lambda a, ws, st, w, K: select(a[0], _neg(a[1], w, K), a[1], K),
}


def constant(value, w: int, K: Consts) -> str:
    """Source of a constant word (or Bool, w = 0: the word 0 or 1)."""
    return K(int(value))


def to_store(x: str, w: int, K: Consts) -> str:
    """A value as a uint64 to store in an array (a Bool is already 0 or 1)."""
    return x


def from_load(x: str, w: int, K: Consts) -> str:
    """A uint64 read from an array as the value it stores."""
    return narrow(x, w)


OPS = frozenset(_TABLE)
