"""Source code of the CUDA kernels (numba.cuda), generated from the chain's
recorded programs (tcsmt.interp.chain): nothing in a kernel is written by
hand per model; every line is one instruction of a recorded program
(kernel_ops gives each primitive's expression), in the program's order.

One thread per element of D runs the chain for it, every value in
registers: ``start`` (C -> the fields of block 0's c, into the state array
ST [field, M, N]); for each run of blocks sharing a step program, one
launch of that block shape's ``steps`` kernel, which loops over the run's
blocks with the c carried in local variables (block j reads product i's a
at A[m, j * size + i] (or at the row ORDER lists there), its b at B[...,
n], its scale slot s
at SCA[SROWS[j, s], m] and SCB[SROWS[j, s], n]); ``end`` (ST's last result
and C -> D). Unpacking is not hoisted: recomputing is cheaper than memory
traffic on a GPU. Each kernel is compiled once per model (and block
shape); none depends on K, M or N. CI runs them with Numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``), which executes the same source as
Python on NumPy scalars.
"""

from __future__ import annotations

from tcsmt.interp.kernel_ops import Consts, constant, expression, from_load
from tcsmt.interp.program import Program

STATE = ("d", "c.sign", "c.exp", "c.sig", "c.nan", "c.inf", "c.live")
"""The state of an element between launches: ST[f, m, n] for STATE[f]."""


def _var(name: str) -> str:
    return "s_" + name.replace("c.", "c_")


class Writer:
    """Lines of one program: ``inputs`` maps input names to the expression
    that reads them (a uint64 word)."""

    def __init__(self, prog: Program, K: Consts, inputs: dict):
        self.prog, self.K, self.inputs = prog, K, inputs

    def ref(self, s: int, names: dict) -> str:
        tv = self.prog.template[s]
        w = self.prog.widths[s]
        if tv is not None:
            return constant(tv.b if w == 0 else tv.v, w, self.K)
        if s in names:
            return from_load(self.inputs[names[s]], w, self.K)
        return f"v{s}"

    def lines(self) -> list[str]:
        names = {s: n for n, s in self.prog.inputs.items()}
        out = []
        ws = self.prog.widths
        for op, args, static, res in (ins[:4] for ins in self.prog.code):
            a = [self.ref(x, names) for x in args]
            out.append(f"v{res} = {expression(op, a, [ws[x] for x in args], static, ws[res], self.K)}")
        return out

    def out(self, name: str) -> str:
        """A uint64 expression of output ``name``."""
        s = self.prog.outs[name]
        names = {x: n for n, x in self.prog.inputs.items()}
        return f"np.uint64({self.ref(s, names)})"


def _head(prog_name: str) -> list[str]:
    return [f'"""CUDA kernel of the recorded programs of {prog_name!r} (generated)."""',
            "import numpy as np", "from numba import cuda", ""]


def ends_source(start: Program, end: Program, name: str) -> str:
    """A module with ``start(C, ST)`` and ``end(C, D, ST)``."""
    K = Consts()
    w0 = Writer(start, K, {"c": "C[m, n]"})
    w1 = Writer(end, K, {"c": "C[m, n]", "d": "ST[0, m, n]"})
    body0 = w0.lines() + [f"ST[{STATE.index(f)}, m, n] = {w0.out(f)}" for f in start.outs]
    body1 = w1.lines() + [f"D[m, n] = {w1.out('out')}"]
    kernels = (_kernel("start(C, ST)", "C", body0) + [""] + _kernel("end(C, D, ST)", "C", body1))
    return "\n".join(_head(name) + K.lines() + [""] + kernels) + "\n"


def steps_source(prog: Program, name: str, ordered: bool) -> str:
    """A module with ``steps(A, B, SCA, SCB, ORDER, SROWS, ST, j0, j1, size,
    ident)``: blocks j0 .. j1 - 1 of one element per thread (A's bits [M,
    K], B's [K, N], the scales' SCA [S, M], SCB [S, N]; products at the
    rows ORDER lists where ``ordered``, else in order: ``ident`` is the
    plan's, not read). Straight-line code in the loop over the blocks,
    cut into basic blocks that run one after the other (``_chunked``: the
    loop's j is never negative)."""
    K = Consts()
    reads: dict[str, str | None] = {"c." + f[2:]: _var(f) for f in STATE if f.startswith("c.")}
    for n in prog.inputs:
        head = n.rstrip("0123456789")
        i = n[len(head):]
        row = f"ORDER[j * size + {i}]" if ordered else f"j * size + {i}"
        reads[n] = {"a": f"A[m, {row}]", "b": f"B[{row}, n]",
                    "sa": f"SCA[SROWS[j, {i}], m]", "sb": f"SCB[SROWS[j, {i}], n]"}.get(head, reads.get(n))
    w = Writer(prog, K, reads)
    fields = [f for f in STATE if f in prog.inputs or f in prog.outs]
    pre = [f"{_var(f)} = ST[{STATE.index(f)}, m, n]" for f in fields]
    loop = ["for j in range(j0, j1):"] + ["    " + x for x in _chunked(w.lines(), "j < 0")]
    loop += ["    " + f"{_var(f)} = {w.out(f)}" for f in prog.outs]
    post = [f"ST[{STATE.index(f)}, m, n] = {_var(f)}" for f in prog.outs]
    kernel = _kernel("steps(A, B, SCA, SCB, ORDER, SROWS, ST, j0, j1, size, ident)", "ST[0]",
                     pre + loop + post)
    return "\n".join(_head(name) + K.lines() + [""] + kernel) + "\n"


CHUNK = 100
"""Lines of a steps kernel's loop body per basic block (see ``_chunked``)."""


def _chunked(lines: list[str], never: str) -> list[str]:
    """The straight-line ``lines`` cut into basic blocks of CHUNK lines, each
    after ``if never:`` (a condition that never holds) with a store of ST's
    first word to itself. Numba's lowering looks, for each variable
    assigned in a basic block, through all of that block's assignments
    (numba-cuda 0.30.4: blackwell-nvfp4's kernels, the steps kernel some
    3 700 lines, took 108.8 s to compile for sm_90 uncut, 17.7 s cut;
    benchmarks/bench_ptx.py). Each block follows the merge of a branch,
    so it dominates every block after it and no variable needs SSA repair
    (a branch around the code would make each variable used past its
    block a violator, and Numba's SSA pass costs the violators times the
    lines). The store writes what is there; NVVM removes the branch (the
    PTX is the uncut kernel's)."""
    if not CHUNK or len(lines) <= CHUNK:      # CHUNK = 0: one block (benchmarks/bench_ptx.py)
        return lines
    out: list[str] = []
    for i in range(0, len(lines), CHUNK):
        out += ([f"if {never}:", "    ST[0, m, n] = ST[0, m, n]"] if i else []) + lines[i:i + CHUNK]
    return out


def _kernel(signature: str, shaped: str, body: list[str]) -> list[str]:
    """One thread per element (m, n), consecutive threads along n: their
    reads of B, C and the state are consecutive words, their reads of A
    one word for many threads."""
    return (["@cuda.jit", f"def {signature}:", "    n, m = cuda.grid(2)",
             f"    if m < {shaped}.shape[0] and n < {shaped}.shape[1]:"]
            + ["        " + x for x in body])
