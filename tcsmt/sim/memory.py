"""How much memory the simulators need: the estimates tcsmt.budget checks
before a GEMM, a batch of dot products or an error study allocates.

One function per kind of work, each a generous sum of what it holds at
its peak; where a backend changes (tcsmt.sim.kernels), its term here
changes with it:

* the recorded program of the datapath for dot products of length K
  (tcsmt.interp.program.record): its instructions grow with K, about
  PROGRAM_BYTES per instruction while it is built (the trace graph and
  the program); the compiled kernels are generated from it too;
* the operands as bits (uint64: A and B transposed, C, D) and D in its
  format;
* the NumPy interpretation's values of A alone and B alone, computed once
  for the whole GEMM (``Program.run_hoisted``: kept for every k), and one
  tile's working arrays (at most ``max_memory``);
* the compiled CPU kernel's hoisted values per thread ((TM + TN) x K
  words, tcsmt.sim.kernels) beside its state arrays.

The counts per product come from recording the program for a few blocks
(milliseconds), never for the whole K.
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass

from tcsmt.model.params import ModelParams

PROGRAM_BYTES = 1024
"""Bytes per recorded instruction while the program is built (measured
about 0.8 KiB held at K = 2048 on Volta, Hopper, CDNA3 and NVFP4 models)."""

KERNEL_COMPILE = 1 << 30
"""Numba and LLVM compiling one kernel (its source does not grow with K:
the kernels loop over blocks)."""


@dataclass(frozen=True)
class ProgramShape:
    """Per product of the dot product, rounded up: recorded instructions,
    and those that depend on A alone and on B alone (hoisted in a GEMM).
    Whole numbers, so that estimates for absurd sizes stay exact integers."""
    instructions: int
    a_only: int
    b_only: int


@functools.lru_cache(maxsize=256)
def program_shape(p: ModelParams) -> ProgramShape:
    """Counts per product from the program of two chained blocks (the
    block's fixed costs shared among its products: an overestimate)."""
    from tcsmt.interp.program import A_DEP, B_DEP, record
    step = max(p.block_size, p.scale_block or 1, getattr(p, "group_size", 1) or 1)
    k = 2 * step
    prog = record.__wrapped__(p, k)
    deps = [prog._dep[ins[3]] for ins in prog.code]
    return ProgramShape(*(math.ceil(x / k) for x in (len(prog.code), deps.count(A_DEP),
                                                     deps.count(B_DEP))))


def program_bytes(p: ModelParams, k: int) -> int:
    """The recorded program for dot products of length k, while it is built."""
    return program_shape(p).instructions * k * PROGRAM_BYTES + (16 << 20)


def gemm_bytes(p: ModelParams, m: int, n: int, k: int, backend: str | None = None,
               max_memory: int = 256 << 20, threads: int | None = None) -> int:
    """The peak of D = C + A @ B (M x K times K x N) under p with
    ``backend`` (None: the largest of the backends the choice may take),
    beside the operands the caller already holds."""
    from tcsmt.sim.kernels import TILE
    s = program_shape(p)
    bits = 8 * (2 * (m * k + k * n) + 4 * m * n)          # to_bits and the transposed copies, C, D
    hoisted = 8 * k * (s.a_only * m + s.b_only * n) + max_memory
    threads = threads or os.cpu_count() or 1
    kernel = KERNEL_COMPILE + threads * 8 * k * (TILE[0] * max(1, s.a_only) + TILE[1] * max(1, s.b_only))
    work = {"numpy": hoisted, "cpu": kernel, "cuda": KERNEL_COMPILE}.get(backend or "", max(hoisted, kernel))
    return program_bytes(p, k) + bits + work


def rows_bytes(p: ModelParams, rows: int, k: int, max_memory: int = 256 << 20) -> int:
    """The peak of ``dot_batch``: rows dot products of length k (the bits
    of a and b copied twice, c and d) and one tile's working arrays."""
    return program_bytes(p, k) + 8 * (4 * rows * k + 2 * rows) + max_memory
