"""LLVM IR of the compiled CPU kernels, generated from the chain's recorded
programs (tcsmt.interp.chain): nothing in a kernel is written by hand per
model; every vector instruction is one instruction of a recorded program
(tcsmt.interp.kernel_ir gives each primitive's IR), in the program's order.

Each function works on vectors of LANES elements of D (or dot products),
all its loops explicit. Modules, each compiled once per model (and block
shape) and never per K, M or N:

* ends: ``start`` (C's words -> the fields of block 0's c, into the state
  array ST) and ``end`` (the last block's result and C -> D).
* a block shape's GEMM module: ``part_a`` runs the step's instructions on
  A's inputs alone for a stretch of blocks and a tile's rows (vectors along
  the rows), into HA; ``part_b`` those on B's alone for the tile's columns,
  into HB; ``steps`` runs the rest for each row of the tile and each
  vector of its columns, the block loop innermost with the c carried in
  registers from one block to the next: A's hoisted values are read once
  per row and broadcast to the lanes, B's are vectors.
* a block shape's rows module: ``steps_rows`` runs the whole step for
  vectors of dot products (recorded data: every row its own a and b).

Block j of a stretch reads product i's inputs at row j * size + i of A
and B (ORDER[j * size + i] where the datapath takes the products out of
order), and its scale slot s at row SROWS[j * slots + s] of the scales
(tcsmt.interp.chain.plan lays these out). The state array ST holds
per element the fields of the next block's c and the last result d, as
uint64 words: ST[f, row, column].
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from tcsmt.interp.kernel_ir import LANES, Body, Fn, Loop, elem_bits
from tcsmt.interp.program import A_DEP, B_DEP, Program

# ---------------------------------------------------------------------------
# The parts of a step
# ---------------------------------------------------------------------------

@dataclass
class Parts:
    """A step program cut for the GEMM kernel: the instructions on A's
    inputs alone, on B's alone, the rest; the A and B values the rest
    reads (each a row of HA or HB); the c fields in and out; the element
    bits of HA and HB."""
    pa: list
    pb: list
    rest: list
    ha: list
    hb: list
    fields_in: list
    fields_out: list
    bits_a: int
    bits_b: int


def parts(prog: Program) -> Parts:
    pa, pb, rest = prog.hoisted()
    used = {a for ins in rest for a in ins[1]} | set(prog.outs.values())
    shared = [s for s in sorted(used) if prog.template[s] is None and prog.dep[s] in (A_DEP, B_DEP)]
    ha = [s for s in shared if prog.dep[s] == A_DEP]
    hb = [s for s in shared if prog.dep[s] == B_DEP]
    fields_in = sorted(n for n in prog.inputs if n.startswith("c."))
    fields_out = [n for n in prog.outs if n != "d"]
    return Parts(pa, pb, rest, ha, hb, fields_in, fields_out, elem_bits(prog, ha), elem_bits(prog, hb))


STATE = ("d", "c.sign", "c.exp", "c.sig", "c.nan", "c.inf", "c.live")
"""The state of an element between blocks: the last result and the fields
of the next block's c."""

ROWS = 32
"""Most rows of a tile (the stride of HA's rows)."""

# Layouts (words): HA[block, value, ROWS] (a value of a tile's rows),
# HB[block, vector, value, LANES] (of a vector of its columns),
# ST[row, vector, field, LANES] (the state of a vector of elements).


def _inputs(fn: Fn, prog: Program, j, col, arrays: dict) -> dict:
    """slot -> a function loading input a{i}, b{i}, sa{s} or sb{s} of
    block j at column col: arrays[source] = (array, its row stride)."""
    out = {}
    for name, s in prog.inputs.items():
        head = name.rstrip("0123456789")
        if head not in arrays:
            continue
        i = int(name[len(head):])

        def load(head=head, i=i, w=prog.widths[s]):
            b = fn.b
            row = _row(fn, j, i) if head in ("a", "b") else \
                b.load(fn.ptr("SROWS", b.mul(j, fn.arg["nslots"]), i), align=8)
            arr, ld = arrays[head]
            return fn.vload(fn.ptr(arr, fn.at((row, fn.arg[ld]), col)), w, 64, b.sub(fn.arg[ld], col))
        out[s] = load
    return out


def _row(fn: Fn, j, i: int):
    """The row of A and B of product i of block j: position j * size + i
    of the chain, or ORDER[that position] where ``ident`` is 0 (ORDER is
    then read at 0 only)."""
    b = fn.b
    pos = fn.at((j, fn.arg["size"]), fn.i(i))
    ident = b.icmp_signed("!=", fn.arg["ident"], fn.i(0))
    listed = b.load(fn.ptr("ORDER", b.select(ident, fn.i(0), pos)), align=8)
    return b.select(ident, pos, listed)


def _loader(prog: Program, loads: dict):
    def load(s):
        if s not in loads:
            raise ValueError(f"{prog.name}: no value for slot {s}")
        return loads[s]()
    return load


def _state(fn: Fn, row, vec):
    """Index of the state of the vector vec of row ``row`` in ST."""
    return fn.at((fn.at((row, fn.arg["ng"]), vec), fn.i(len(STATE) * LANES)))


def _state_t(fn: Fn, col, vec):
    """Index of the state of vector vec of rows of column col in ST[column,
    vector, field, LANES] (steps_t)."""
    return fn.at((fn.at((col, fn.arg["mg"]), vec), fn.i(len(STATE) * LANES)))


def _fields_in(fn: Fn, prog: Program, at) -> dict:
    """slot -> a function loading a c field from ST (at: _state's index)."""
    out = {}
    for n, s in prog.inputs.items():
        if n.startswith("c."):
            f, w = STATE.index(n), prog.widths[s]
            out[s] = lambda f=f, w=w: fn.vload(fn.ptr("ST", at, f * LANES), w, 64)
    return out


def _step(fn: Fn, prog: Program, code: list, loads: dict, at) -> None:
    """The instructions of a step, then its outputs into ST."""
    body = Body(fn.b, prog, _loader(prog, loads))
    body.write(code)
    _store_outs(fn, prog, body, at)


def _store_outs(fn: Fn, prog: Program, body: Body, at) -> None:
    """The program's outputs (d and the next c's fields) into ST."""
    for n, s in prog.outs.items():
        fn.vstore(body.fetch(s), fn.ptr("ST", at, STATE.index(n) * LANES), prog.widths[s], 64)


# ---------------------------------------------------------------------------
# Modules
# ---------------------------------------------------------------------------

TABLES = ["ORDER*", "SROWS*", "nslots", "size", "ident"]


def gemm_module(prog: Program, name: str) -> ir.Module:
    """part_a, part_b and steps of a step program (see the module doc)."""
    m = _module(name)
    pt = parts(prog)
    fns = {"part_a": _part(m, prog, "a", pt.pa, pt.ha, pt.bits_a),
           "part_b": _part(m, prog, "b", pt.pb, pt.hb, pt.bits_b), "steps": _steps(m, prog, pt),
           "steps_t": _steps_t(m, prog, pt)}
    _task(m, pt, fns)
    return m


def _steps(m, prog: Program, pt: Parts) -> Fn:
    """The rest of the step for rows 0 .. tm - 1 of a tile and its first nv
    vectors of columns (of ng in HB and ST), blocks 0 .. nb - 1 of the
    stretch in HA and HB: A's values broadcast, B's vectors."""
    fn = Fn(m, "steps", ["HA*", "HB*", "ST*", "tm", "ng", "nv", "nb"],
            {"HA*": ir.IntType(pt.bits_a), "HB*": ir.IntType(pt.bits_b)})
    b = fn.b
    rows = Loop(b, fn.arg["tm"])
    vecs = Loop(b, fn.arg["nv"])
    at = _state(fn, rows.i, vecs.i)
    blocks = Loop(b, fn.arg["nb"])
    jj = blocks.i
    loads = _fields_in(fn, prog, at)
    base_a = fn.at((jj, fn.i(len(pt.ha) * ROWS)), rows.i)
    base_b = fn.at((fn.at((jj, fn.arg["ng"]), vecs.i), fn.i(len(pt.hb) * LANES)))
    _hoisted_step(fn, prog, pt, loads, at, (base_a, base_b), False)
    for loop in (blocks, vecs, rows):
        loop.close()
    fn.done()
    return fn


def _hoisted_step(fn: Fn, prog: Program, pt: Parts, loads: dict, at, bases: tuple,
                  along_rows: bool) -> None:
    """The rest of the step, reading A's and B's hoisted words at bases
    (HA's, HB's): along D's columns (steps) A's broadcast to the lanes and
    B's vectors; along its rows (steps_t) A's vectors and B's broadcast."""
    load_a, load_b = (fn.vload, fn.broadcast) if along_rows else (fn.broadcast, fn.vload)
    for h, s in enumerate(pt.ha):
        loads[s] = lambda h=h, w=prog.widths[s]: load_a(fn.ptr("HA", bases[0], h * ROWS), w, pt.bits_a)
    for h, s in enumerate(pt.hb):
        loads[s] = lambda h=h, w=prog.widths[s]: load_b(fn.ptr("HB", bases[1], h * LANES), w, pt.bits_b)
    _step(fn, prog, pt.rest, loads, at)


def _steps_t(m, prog: Program, pt: Parts) -> Fn:
    """The rest of the step for r columns of a tile, lanes 0 .. r - 1 of
    vector ``vec`` of HB, each in mg vectors of rows: A's values vectors,
    B's broadcast (the state in ST[column, vector, field, LANES]). For the
    columns after D's last whole vector of columns, where vectors along
    them would be mostly empty lanes (10 columns: 6 of 16 lanes)."""
    fn = Fn(m, "steps_t", ["HA*", "HB*", "ST*", "mg", "vec", "r", "ng", "nb"],
            {"HA*": ir.IntType(pt.bits_a), "HB*": ir.IntType(pt.bits_b)})
    b = fn.b
    cols = Loop(b, fn.arg["r"])
    vecs = Loop(b, fn.arg["mg"])
    at = _state_t(fn, cols.i, vecs.i)
    blocks = Loop(b, fn.arg["nb"])
    jj = blocks.i
    loads = _fields_in(fn, prog, at)
    base_a = fn.at((jj, fn.i(len(pt.ha) * ROWS)), (vecs.i, fn.i(LANES)))
    base_b = fn.at((fn.at((jj, fn.arg["ng"]), fn.arg["vec"]), fn.i(len(pt.hb) * LANES)), cols.i)
    _hoisted_step(fn, prog, pt, loads, at, (base_a, base_b), True)
    for loop in (blocks, vecs, cols):
        loop.close()
    fn.done()
    return fn


TASK_ARGS = ["AT*", "SA*", "B*", "SB*", "lda", "ldsa", "ldb", "ldsb", *TABLES, "n0", "ng", "nv", "r",
             "TILES*", "ntiles", "j0", "j1", "stretch", "HA*", "HB*", "ST*", "ststride", "STT*", "sttstride"]


def _task(m, pt: Parts, fns: dict) -> None:
    """task: blocks j0 .. j1 - 1 of a column of tiles (TILES: m0 and rows
    of each), a stretch of blocks at a time: part_b once (ng vectors of
    columns), part_a and steps (nv vectors) for every tile (its state at
    ST + t * ststride), and steps_t for its r columns after them (at STT +
    t * sttstride)."""
    fn = Fn(m, "task", TASK_ARGS, {"HA*": ir.IntType(pt.bits_a), "HB*": ir.IntType(pt.bits_b)})
    b, a = fn.b, fn.arg
    stretch = a["stretch"]
    count = b.sdiv(b.add(b.sub(a["j1"], a["j0"]), b.sub(stretch, fn.i(1))), stretch)
    parts_ = Loop(b, count)
    s0 = fn.at((parts_.i, stretch), a["j0"])
    rest = b.sub(a["j1"], s0)
    nb = b.select(b.icmp_signed("<", rest, stretch), rest, stretch)
    tabs = [a["ORDER"], a["SROWS"], a["nslots"], a["size"], a["ident"]]
    b.call(fns["part_b"].f, [a["B"], a["SB"], a["ldsb"], a["ldb"], *tabs, a["n0"], a["ng"], s0, nb, a["HB"]])
    tiles = Loop(b, a["ntiles"])
    m0 = b.load(fn.ptr("TILES", b.mul(tiles.i, fn.i(2))), align=8)
    tm = b.load(fn.ptr("TILES", b.mul(tiles.i, fn.i(2)), 1), align=8)
    mg = b.sdiv(b.add(tm, fn.i(LANES - 1)), fn.i(LANES))
    b.call(fns["part_a"].f, [a["AT"], a["SA"], a["ldsa"], a["lda"], *tabs, m0, mg, s0, nb, a["HA"]])
    st = fn.ptr("ST", b.mul(tiles.i, a["ststride"]))
    b.call(fns["steps"].f, [a["HA"], a["HB"], st, tm, a["ng"], a["nv"], nb])
    with b.if_then(b.icmp_signed(">", a["r"], fn.i(0))):
        stt = fn.ptr("STT", b.mul(tiles.i, a["sttstride"]))
        b.call(fns["steps_t"].f, [a["HA"], a["HB"], stt, mg, a["nv"], a["r"], a["ng"], nb])
    tiles.close()
    parts_.close()
    fn.done()


PART_ARGS = ["ld", *TABLES, "m0", "ng", "j0", "nb", "H*"]


def _part(m, prog: Program, side: str, code: list, held: list, bits: int) -> Fn:
    """part_a (side "a") or part_b: the instructions on A's (B's) inputs
    alone for blocks j0 .. j0 + nb - 1 and ng vectors of rows (columns)
    from m0, into H: HA[block, value, ROWS] or HB[block, vector, value,
    LANES]."""
    arr, scales = ("AT", "SA") if side == "a" else ("B", "SB")
    fn = Fn(m, f"part_{side}", [f"{arr}*", f"{scales}*", "lds", *PART_ARGS], {"H*": ir.IntType(bits)})
    b = fn.b
    blocks = Loop(b, fn.arg["nb"])
    vecs = Loop(b, fn.arg["ng"])
    off = b.mul(vecs.i, fn.i(LANES))
    if side == "a":
        base, stride = fn.at((blocks.i, fn.i(len(held) * ROWS)), off), ROWS
    else:
        base, stride = fn.at((fn.at((blocks.i, fn.arg["ng"]), vecs.i), fn.i(len(held) * LANES))), LANES
    _hoisted(fn, prog, code, blocks.i, off, (side, arr), ("s" + side, scales),
             {s: (base, h * stride) for h, s in enumerate(held)}, bits)
    vecs.close()
    blocks.close()
    fn.done()
    return fn


def _hoisted(fn: Fn, prog: Program, code: list, jj, off, words: tuple, scales: tuple,
             held: dict, bits: int) -> None:
    """The hoisted instructions of block j0 + jj on the vector at m0 + off,
    each value the rest reads stored into H as soon as it is made
    (held: slot -> (base index, constant offset))."""
    b = fn.b
    j = b.add(fn.arg["j0"], jj)
    col = b.add(fn.arg["m0"], off)
    loads = _inputs(fn, prog, j, col, {words[0]: (words[1], "ld"), scales[0]: (scales[1], "lds")})
    body = Body(b, prog, _loader(prog, loads))

    def store(s, v):
        if s in held:
            fn.vstore(v, fn.ptr("H", *held[s]), prog.widths[s], bits)
    body.write(code, store)
    for s in held:                 # inputs (and constants) the rest reads as they are
        if not any(ins[3] == s for ins in code):
            store(s, body.fetch(s))


def rows_module(prog: Program, name: str) -> ir.Module:
    """steps_rows: the whole step for vectors of dot products r0 + ..."""
    m = _module(name)
    fn = Fn(m, "steps_rows", ["AT*", "BT*", "SA*", "SB*", "ld", "lds", *TABLES,
                              "r0", "ng", "j0", "nb", "ST*"], {})
    b = fn.b
    vecs = Loop(b, fn.arg["ng"])
    off = b.mul(vecs.i, fn.i(LANES))
    at = _state(fn, fn.i(0), vecs.i)
    blocks = Loop(b, fn.arg["nb"])
    j = b.add(fn.arg["j0"], blocks.i)
    col = b.add(fn.arg["r0"], off)
    loads = _inputs(fn, prog, j, col, {"a": ("AT", "ld"), "b": ("BT", "ld"), "sa": ("SA", "lds"),
                                       "sb": ("SB", "lds")})
    loads.update(_fields_in(fn, prog, at))
    _step(fn, prog, prog.code, loads, at)
    blocks.close()
    vecs.close()
    fn.done()
    return m


def ends_module(start: Program, end: Program, name: str) -> ir.Module:
    """start: C -> ST's c fields; end: ST's d and C -> D, for rows m0 ..
    m0 + tm - 1 and nv vectors of columns from n0 (of ng in ST); start_t
    and end_t the same for r columns from n0 in vectors along the rows
    (the state of steps_t)."""
    m = _module(name)
    for prog, fname in ((start, "start"), (end, "end")):
        _end_fn(m, prog, fname)
        _end_fn_t(m, prog, fname + "_t")
    return m


END_ARGS = ["C*", "ldc", "D*", "ldd", "ST*", "m0", "tm", "n0"]


def _end_fn(m: ir.Module, prog: Program, name: str) -> None:
    fn = Fn(m, name, [*END_ARGS, "ng", "nv"], {})
    b = fn.b
    rows = Loop(b, fn.arg["tm"])
    vecs = Loop(b, fn.arg["nv"])
    col = fn.at((vecs.i, fn.i(LANES)), fn.arg["n0"])
    row = b.add(fn.arg["m0"], rows.i)
    at = _state(fn, rows.i, vecs.i)
    valid_c, valid_d = b.sub(fn.arg["ldc"], col), b.sub(fn.arg["ldd"], col)

    def load_c(w):
        return fn.vload(fn.ptr("C", fn.at((row, fn.arg["ldc"]), col)), w, 64, valid_c)

    def store_d(v, w):
        fn.vstore(v, fn.ptr("D", fn.at((row, fn.arg["ldd"]), col)), w, 64, valid_d)
    _end_body(fn, prog, name, at, load_c, store_d)
    vecs.close()
    rows.close()
    fn.done()


def _end_fn_t(m: ir.Module, prog: Program, name: str) -> None:
    fn = Fn(m, name, [*END_ARGS, "r"], {})
    b = fn.b
    mg = b.sdiv(b.add(fn.arg["tm"], fn.i(LANES - 1)), fn.i(LANES))
    fn.arg["mg"] = mg
    cols = Loop(b, fn.arg["r"])
    vecs = Loop(b, mg)
    col = b.add(fn.arg["n0"], cols.i)
    first = b.add(fn.arg["m0"], b.mul(vecs.i, fn.i(LANES)))
    rows = b.sub(fn.arg["tm"], b.mul(vecs.i, fn.i(LANES)))          # lanes of this vector in the tile
    at = _state_t(fn, cols.i, vecs.i)

    def load_c(w):
        return fn.gather(fn.arg["C"], fn.at((first, fn.arg["ldc"]), col), fn.arg["ldc"], rows, w)

    def store_d(v, w):
        fn.scatter(v, fn.arg["D"], fn.at((first, fn.arg["ldd"]), col), fn.arg["ldd"], rows, w)
    _end_body(fn, prog, name.removesuffix("_t"), at, load_c, store_d)
    vecs.close()
    cols.close()
    fn.done()


def _end_body(fn: Fn, prog: Program, name: str, at, load_c, store_d) -> None:
    """start's or end's instructions: c (and, for end, the last result d)
    in, the next c's fields into ST (start) or D's words out (end)."""
    loads = _fields_in(fn, prog, at)
    if "c" in prog.inputs:
        c = prog.inputs["c"]
        loads[c] = lambda: load_c(prog.widths[c])
    if "d" in prog.inputs:
        d = prog.inputs["d"]
        loads[d] = lambda: fn.vload(fn.ptr("ST", at), prog.widths[d], 64)
    body = Body(fn.b, prog, _loader(prog, loads))
    body.write(prog.code)
    if name == "start":
        _store_outs(fn, prog, body, at)
    else:
        out = prog.outs["out"]
        store_d(body.fetch(out), prog.widths[out])


def _module(name: str) -> ir.Module:
    m = ir.Module(name=name)
    return m


__all__ = ["STATE", "ends_module", "gemm_module", "rows_module", "parts", "LANES"]
