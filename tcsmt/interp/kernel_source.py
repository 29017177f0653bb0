"""Source code of compiled GEMM kernels, generated from the recorded
datapath program (tcsmt.interp.program): nothing in a kernel is written
by hand per model; every line is one instruction of the recorded program
(kernel_ops gives each primitive's expression), in the program's order.

Two kernels per model and K:

* CPU (``cpu_source``): for a tile of D (TM rows x TN columns), the A-only
  instructions run once per row of the tile and the B-only ones once per
  column (the program's hoisting), into per-tile arrays HA [rows, TM] and
  HB [rows, TN]; then the rest of the program runs with the tile's
  elements as the innermost loop, so every instruction is one pass over a
  row of TN lanes that the compiler turns into SIMD code. Values that live
  from one part of the program to another (a block's result, the next
  block's c) are kept in small per-tile state arrays. Tiles run in
  parallel (numba prange), so every core is used.
* CUDA (``cuda_source``): one thread per element of D runs the whole
  program (unpacking included: recomputing is cheaper than memory
  traffic on a GPU), values in registers.

Where the program repeats one stretch per block (tcsmt.interp.rolling
checks it instruction by instruction), the kernel runs that stretch in a
loop instead of writing it out K / block_size times: a kernel's size then
does not grow with K. A program without such a loop is written out whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcsmt.errors import UserError
from tcsmt.interp.kernel_ops import NARROW, Consts, constant, expression, from_load, to_store
from tcsmt.interp.program import A_DEP, B_DEP, Program
from tcsmt.interp.rolling import Loop, by_last_input, last_inputs, roll

MAX_STRAIGHT = 6000
"""Most instructions written out without a loop: past this, compiling takes
minutes, and the NumPy interpretation is the better engine."""


class KernelTooLarge(UserError):
    """The program has no loop the kernels can run and is too long to write out."""


@dataclass
class Lanes:
    """How one part of a kernel reads and writes: the loop headers over its
    lanes (empty: one thread's scalars), the state array (None: state in
    scalar variables), and the array expression of each source or sink
    name at a row."""
    headers: list
    state: str | None
    index: str
    access: dict

    def at(self, name: str, row: str) -> str:
        return self.access[name].format(row=row)


@dataclass
class Segment:
    """Instructions of one part of the program and its lanes."""
    code: list
    sources: dict      # slot -> (name, row) read from an array
    sinks: dict        # slot -> (name, row) written to an array
    counts: tuple      # repetition counts to try first when rolling


class Emitter:
    """Writes one segment as Python source (see the module doc)."""

    def __init__(self, prog: Program, seg: Segment, lanes: Lanes, K: Consts, name: str):
        self.prog, self.seg, self.lanes, self.K, self.name = prog, seg, lanes, K, name
        self.loop: Loop | None = roll(seg.code, seg.sources, seg.sinks, seg.counts)
        if self.loop is None and len(seg.code) > MAX_STRAIGHT:
            code = by_last_input(seg.code, last_inputs(prog_code(prog), _k_of_inputs(prog)))
            loop = roll(code, seg.sources, seg.sinks, seg.counts)
            if loop is not None:
                seg.code, self.loop = code, loop
        self.state: dict = {}          # key -> state index (or variable name)
        if self.loop is None and len(seg.code) > MAX_STRAIGHT:
            raise KernelTooLarge(
                f"{prog.name}: the recorded program ({len(seg.code)} instructions) repeats no "
                f"stretch the compiled kernels can loop over; use backend='numpy'")

    # -- names -----------------------------------------------------------

    def width(self, slot: int) -> int:
        return self.prog.widths[slot]

    def ref(self, slot: int) -> str:
        """Expression of a slot defined outside the loop body."""
        tv = self.prog.template[slot]
        if tv is not None:
            v = tv.b if self.width(slot) == 0 else tv.v
            return constant(v, self.width(slot), self.K)
        if slot in self.seg.sources:
            name, row = self.seg.sources[slot]
            return from_load(self.lanes.at(name, str(row)), self.width(slot), self.K)
        return f"v{slot}"

    def state_ref(self, key) -> str:
        q = self.state.setdefault(key, len(self.state))
        if self.lanes.state is None:
            return f"s{q}"
        return f"{self.lanes.state}[{q}, {self.lanes.index}]"

    # -- writing ---------------------------------------------------------

    def lines(self) -> list[str]:
        code, loop = self.seg.code, self.loop
        if loop is None:
            return self._lane_block(self._straight(code, set()))
        pre, post = code[:loop.start], code[loop.end:]
        body_defined = {ins[3] for ins in code[loop.start:loop.end]}
        last_slots = {code[loop.end - loop.length + i][3]: i for i in range(loop.length)}
        if self.prog.out in last_slots:            # the result comes out of the last repetition
            loop = self.loop = _export(loop, last_slots[self.prog.out])
        outer = self._outer_slots(loop) | {s for ins in post for s in ins[1]
                                          if s not in body_defined}
        pre_lines = (self._straight(pre, set()) + self._keep(pre, outer) + self._carry_inits(loop)
                     + self._last_inits(loop))
        out = self._lane_block(pre_lines)
        out.append(f"for j in range({loop.count}):")
        out += ["    " + x for x in self._lane_block(self._body(loop))]
        post_lines = self._loads(post, loop) + self._straight(post, body_defined)
        if self.prog.out in last_slots and self.prog.out in body_defined:
            i = last_slots[self.prog.out]
            post_lines += self._sink(self.prog.out, from_load(self.state_ref(("last", i)), 1, self.K))
        return out + self._lane_block(post_lines)

    def _lane_block(self, body: list[str]) -> list[str]:
        if not body:
            return []
        out, pad = [], ""
        for h in self.lanes.headers:
            out.append(pad + h)
            pad += "    "
        return out + [pad + x for x in body]

    def _straight(self, code: list, skip: set) -> list[str]:
        out = []
        for op, args, static, res in code:
            a = [self.ref(s) for s in args]
            out.append(f"v{res} = {self._expr(op, args, a, static, res)}")
            out += self._sink(res, f"v{res}")
        return out

    def _expr(self, op, args, a, static, res) -> str:
        return expression(op, a, [self.width(s) for s in args], static, self.width(res), self.K)

    def _sink(self, res: int, var: str, row: str | None = None) -> list[str]:
        if res in self.seg.sinks:
            name, r = self.seg.sinks[res]
            return [f"{self.lanes.at(name, row or str(r))} = {to_store(var, self.width(res), self.K)}"]
        if res == self.prog.out:
            return [f"{self.lanes.at('d', '')} = {var}"]
        return []

    def _outer_slots(self, loop: Loop) -> set:
        return {k[1] for args in loop.args for k in args if k[0] == "outer"}

    def _keep(self, pre: list, outer: set) -> list[str]:
        """Prefix values the loop or the suffix reads, into state."""
        defined = {ins[3] for ins in pre}
        return [f"{self.state_ref(('slot', s))} = {to_store(f'v{s}', self.width(s), self.K)}"
                for s in sorted(outer & defined)]

    def _carry_inits(self, loop: Loop) -> list[str]:
        out = []
        for k in (k for args in loop.args for k in args):
            if k[0] == "carried" and ("carry", k[1], k[2]) not in self.state:
                store = to_store(self.ref(k[2]), self.width(k[2]), self.K)
                out.append(f"{self.state_ref(('carry', k[1], k[2]))} = {store}")
        return out

    def _last_inits(self, loop: Loop) -> list[str]:
        """The last repetition's values start defined (scalar state must be
        assigned before the loop to have a type)."""
        return [f"{self.state_ref(('last', i))} = {self.K(0)}" for i in sorted(loop.exported)]

    def _body(self, loop: Loop) -> list[str]:
        code = self.seg.code[loop.start:loop.start + loop.length]
        out = []
        for i, (op, args, static, res) in enumerate(code):
            a = [self._body_arg(k, s) for k, s in zip(loop.args[i], args)]
            out.append(f"t{i} = {self._expr(op, args, a, static, res)}")
            sink = loop.sinks[i]
            if sink is not None:
                row = self._row(sink[1:])
                out.append(f"{self.lanes.at(sink[0], row)} = {to_store(f't{i}', self.width(res), self.K)}")
        # carried values and what the suffix reads, for the next repetition
        for key in [k for k in self.state if k[0] == "carry"] + [("last", i) for i in sorted(loop.exported)]:
            w = self.width(code[key[1]][3])
            out.append(f"{self.state_ref(key)} = {to_store(f't{key[1]}', w, self.K)}")
        return out

    def _body_arg(self, kind: tuple, slot: int) -> str:
        w = self.width(slot)
        if kind[0] == "local":
            return f"t{kind[1]}"
        if kind[0] == "carried":
            return from_load(self.state_ref(("carry", kind[1], kind[2])), w, self.K)
        if kind[0] == "indexed":
            return from_load(self.lanes.at(kind[1], self._row(kind[2:])), w, self.K)
        s = kind[1]
        if ("slot", s) in self.state:
            return from_load(self.state_ref(("slot", s)), w, self.K)
        return self.ref(s)

    def _row(self, where: tuple) -> str:
        """Row of repetition j: row0 + stride * j, or a table's j-th entry."""
        if len(where) == 2:
            return f"{where[0]} + {where[1]} * j"
        return f"{self.K.table(where[0])}[j]"

    def _loads(self, post: list, loop: Loop) -> list[str]:
        """Suffix reads: the last repetition's values and kept prefix values."""
        base = loop.end - loop.length
        last = {self.seg.code[base + i][3]: i for i in loop.exported}
        out, seen = [], set()
        for ins in post:
            for s in ins[1]:
                if s in seen:
                    continue
                seen.add(s)
                key = ("last", last[s]) if s in last else ("slot", s)
                if key[0] == "last" or key in self.state:
                    out.append(f"v{s} = {from_load(self.state_ref(key), self.width(s), self.K)}")
        return out


def _export(loop: Loop, i: int) -> Loop:
    return Loop(loop.start, loop.length, loop.count, loop.args, loop.sinks, loop.exported | {i})


# ---------------------------------------------------------------------------
# The parts of a program, and whole modules
# ---------------------------------------------------------------------------

def prog_code(prog: Program) -> list:
    return [ins[:4] for ins in prog.code]


def _k_of_inputs(prog: Program) -> dict:
    """slot -> k of the inputs a{k} and b{k}, and the first k the scales
    sa{j}, sb{j} apply to (j * scale_block)."""
    out = {}
    for name, s in prog.inputs.items():
        source, row = _indexed_name(name)
        if source in ("a", "b"):
            out[s] = row
        elif source in ("sa", "sb"):
            assert prog.scale_block is not None     # a program has scale inputs only with a scale_block
            out[s] = row * prog.scale_block
    return out


def _indexed_name(name: str) -> tuple[str | None, int]:
    """("a", 3) for a3, ("sb", 1) for sb1; (None, 0) for c."""
    source = name.rstrip("0123456789")
    if source == name:
        return None, 0
    return source, int(name[len(source):])


def _counts(prog: Program, block_size: int) -> tuple:
    k = sum(1 for name in prog.inputs if name.startswith("a"))
    return (k // block_size, -(-k // block_size), k)


def _inputs(prog: Program, *sources: str) -> dict:
    """slot -> (source, row) of the inputs a{k}, b{k}, sa{j} or sb{j} named:
    every source is read at a row (k along K, or j the block of scales)."""
    out = {}
    for name, s in prog.inputs.items():
        source, row = _indexed_name(name)
        if source in sources:
            out[s] = (source, row)
    return out


def cpu_segments(prog: Program, block_size: int) -> tuple[Segment, Segment, Segment, int, int]:
    """(A part, B part, tile part, rows of HA, rows of HB). Hoisted values
    get rows in the order the tile part first reads them, so a block's
    reads are rows r0 + stride * j."""
    counts = _counts(prog, block_size)
    pre, rest, _ = prog._plan_hoisting()
    rest = [ins[:4] for ins in rest]
    dep, template = prog._dep, prog.template
    inputs = _inputs(prog, "a", "b", "sa", "sb")
    rows: dict = {}
    n_rows = {"ha": 0, "hb": 0}
    for ins in rest:
        for s in ins[1]:
            if dep[s] in (A_DEP, B_DEP) and template[s] is None and s not in inputs and s not in rows:
                name = "ha" if dep[s] == A_DEP else "hb"
                rows[s] = (name, n_rows[name])
                n_rows[name] += 1
    tile_sources = rows | inputs
    if "c" in prog.inputs:
        tile_sources[prog.inputs["c"]] = ("c", 0)
    part_a = Segment([ins[:4] for ins in pre if dep[ins[3]] == A_DEP], _inputs(prog, "a", "sa"),
                     {s: r for s, r in rows.items() if r[0] == "ha"}, counts)
    part_b = Segment([ins[:4] for ins in pre if dep[ins[3]] == B_DEP], _inputs(prog, "b", "sb"),
                     {s: r for s, r in rows.items() if r[0] == "hb"}, counts)
    return part_a, part_b, Segment(rest, tile_sources, {}, counts), n_rows["ha"], n_rows["hb"]


LANES_A = Lanes(["for mm in range(tm):"], "SA", "mm",
                {"a": "AT[{row}, m0 + mm]", "sa": "SCA[{row}, m0 + mm]", "ha": "HA[{row}, mm]"})
LANES_B = Lanes(["for n in range(tn):"], "SB", "n",
                {"b": "B[{row}, n0 + n]", "sb": "SCB[{row}, n0 + n]", "hb": "HB[{row}, n]"})
LANES_T = Lanes(["for mm in range(tm):", "for n in range(tn):"], "ST", "mm, n",
                {"ha": "HA[{row}, mm]", "hb": "HB[{row}, n]", "a": "AT[{row}, m0 + mm]",
                 "b": "B[{row}, n0 + n]", "sa": "SCA[{row}, m0 + mm]", "sb": "SCB[{row}, n0 + n]",
                 "c": "C[m0 + mm, n0 + n]", "d": "D[m0 + mm, n0 + n]"})
LANES_ROWS = Lanes(["for r in range(nr):"], "SR", "r",
                   {"a": "AT[{row}, r0 + r]", "b": "BT[{row}, r0 + r]", "sa": "SCA[{row}, r0 + r]",
                    "sb": "SCB[{row}, r0 + r]", "c": "C[r0 + r]", "d": "D[r0 + r]"})
LANES_CUDA = Lanes([], None, "", {"a": "A[m, {row}]", "b": "B[{row}, n]", "sa": "SCA[{row}, m]",
                                  "sb": "SCB[{row}, n]", "c": "C[m, n]", "d": "D[m, n]"})
"""Where each source is read. The scales are read like B: row j of SCA
[S, M] and SCB [S, N] is block j's scale of every row of A, every column
of B (zero rows for a model without scales)."""

_CPU_DRIVER = '''
@njit(parallel=True, cache=True)
def gemm(AT, B, C, D, SCA, SCB, TM, TN, G):
    """D = the datapath of (A, B, C) and the scales SCA, SCB, tile by tile;
    AT is A transposed. Each task takes one column of tiles and G tiles
    along it: B's part runs once for the task, A's once per tile."""
    M = AT.shape[1]
    N = B.shape[1]
    ntm = (M + TM - 1) // TM
    ntn = (N + TN - 1) // TN
    for t in prange(((ntm + G - 1) // G) * ntn):
        n0 = (t % ntn) * TN
        tn = min(TN, N - n0)
        HA = np.empty(({ra}, TM), np.{ta})
        HB = np.empty(({rb}, TN), np.{tb})
        SA = np.empty(({qa}, TM), np.uint64)
        SB = np.empty(({qb}, TN), np.uint64)
        ST = np.empty(({qt}, TM, TN), np.uint64)
        _part_b(B, SCB, HB, SB, n0, tn)
        first = (t // ntn) * G
        for i in range(first, min(ntm, first + G)):
            m0 = i * TM
            tm = min(TM, M - m0)
            _part_a(AT, SCA, HA, SA, m0, tm)
            _tile(AT, B, C, D, SCA, SCB, HA, HB, ST, m0, n0, tm, tn)
'''


def _dtype(prog: Program, slots) -> str:
    """The narrowest word of kernel_ops that holds every one of these
    slots' values: hoisted values are read once per product, so narrower
    words are less memory traffic and narrower vector lanes."""
    return "uint32" if all(prog.widths[s] <= NARROW for s in slots) else "uint64"


def _function(header: str, body: list[str]) -> list[str]:
    return [header] + ["    " + x for x in body or ["pass"]] + [""]


def cpu_source(prog: Program, block_size: int) -> str:
    """A Python module defining ``gemm(AT, B, C, D, SCA, SCB, TM, TN, G)``
    (Numba, every core), which writes D's bits for AT = A's bits transposed
    [K, M], B's [K, N], C's [M, N] and the scales' SCA [S, M], SCB [S, N]
    (uint64 arrays; S = 0 without scales) in tiles of TM x TN, G tiles of a
    column of tiles per task."""
    K = Consts()
    part_a, part_b, tile, ra, rb = cpu_segments(prog, block_size)
    ea = Emitter(prog, part_a, LANES_A, K, "a")
    eb = Emitter(prog, part_b, LANES_B, K, "b")
    et = Emitter(prog, tile, LANES_T, K, "tile")
    fa, fb, ft = ea.lines(), eb.lines(), et.lines()
    deco = "@njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)"
    body = (_function(f"{deco}\ndef _part_a(AT, SCA, HA, SA, m0, tm):", fa)
            + _function(f"{deco}\ndef _part_b(B, SCB, HB, SB, n0, tn):", fb)
            + _function(f"{deco}\ndef _tile(AT, B, C, D, SCA, SCB, HA, HB, ST, m0, n0, tm, tn):", ft))
    driver = _CPU_DRIVER.format(ra=max(ra, 1), rb=max(rb, 1), ta=_dtype(prog, part_a.sinks),
                                tb=_dtype(prog, part_b.sinks), qa=max(len(ea.state), 1),
                                qb=max(len(eb.state), 1), qt=max(len(et.state), 1))
    head = [f'"""GEMM kernel of the recorded program {prog.name!r} (generated)."""',
            "import numpy as np", "from numba import njit, prange", "",
            "from tcsmt.sim.noalias import NoAliasCompiler", ""]
    return "\n".join(head + K.lines() + [""] + body) + driver


_ROWS_DRIVER = '''
@njit(parallel=True, cache=True)
def dots(AT, BT, C, D, SCA, SCB, TR):
    """D[r] = the datapath of (A[r], B[r], C[r]) and the scales for every
    row r; AT and BT are the rows' a and b transposed [K, R], SCA and SCB
    their scales transposed [S, R]."""
    R = C.shape[0]
    for t in prange((R + TR - 1) // TR):
        r0 = t * TR
        nr = min(TR, R - r0)
        SR = np.empty(({q}, TR), np.uint64)
        _rows(AT, BT, C, D, SCA, SCB, SR, r0, nr)
'''


def _full_segment(prog: Program, block_size: int) -> Segment:
    """The whole program (no hoisting), reading a{k}, b{k} and c."""
    sources = _inputs(prog, "a", "b", "sa", "sb")
    if "c" in prog.inputs:
        sources[prog.inputs["c"]] = ("c", 0)
    return Segment([ins[:4] for ins in prog.code], sources, {}, _counts(prog, block_size))


def rows_source(prog: Program, block_size: int) -> str:
    """A Python module defining ``dots(AT, BT, C, D, SCA, SCB, TR)`` (Numba, every
    core): one dot product per row, as recorded data holds them."""
    K = Consts()
    em = Emitter(prog, _full_segment(prog, block_size), LANES_ROWS, K, "rows")
    body = em.lines()
    deco = "@njit(cache=True, nogil=True, pipeline_class=NoAliasCompiler)"
    head = [f'"""Dot-product kernel of the recorded program {prog.name!r} (generated)."""',
            "import numpy as np", "from numba import njit, prange", "",
            "from tcsmt.sim.noalias import NoAliasCompiler", ""]
    func = _function(f"{deco}\ndef _rows(AT, BT, C, D, SCA, SCB, SR, r0, nr):", body)
    return "\n".join(head + K.lines() + [""] + func) + _ROWS_DRIVER.format(q=max(len(em.state), 1))


def cuda_source(prog: Program, block_size: int) -> str:
    """A Python module defining ``gemm(A, B, C, D, SCA, SCB)`` (numba.cuda,
    one thread per element of D) for A's bits [M, K], B's [K, N], C's
    [M, N] and the scales' SCA [S, M], SCB [S, N] (uint64 arrays)."""
    K = Consts()
    body = Emitter(prog, _full_segment(prog, block_size), LANES_CUDA, K, "cuda").lines()
    head = [f'"""CUDA GEMM kernel of the recorded program {prog.name!r} (generated)."""',
            "import numpy as np", "from numba import cuda", ""]
    kernel = ["@cuda.jit", "def gemm(A, B, C, D, SCA, SCB):", "    m, n = cuda.grid(2)",
              "    if m < D.shape[0] and n < D.shape[1]:"] + ["        " + x for x in body]
    return "\n".join(head + K.lines() + [""] + kernel) + "\n"
