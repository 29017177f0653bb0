"""How much memory the simulators need: the estimates tcsmt.budget checks
before a GEMM, a batch of dot products or an error study allocates.

One function per kind of work, each a generous sum of what it holds at
its peak; where an engine changes (tcsmt.sim.replay, tcsmt.sim.cpu,
tcsmt.sim.kernels), its term here changes with it:

* the chain's recorded programs (tcsmt.interp.chain): one block's step
  per block shape, recorded once per model, about PROGRAM_BYTES per
  instruction while they are built; nothing grows with K;
* the operands as bits (uint64: A and B transposed, C, D), D in its
  format, and the plan's tables (the order of the products where they
  are out of order, each block's scale rows): a word per product at most;
* the NumPy engine: one tile's working arrays (at most ``max_memory``)
  and the hoisted values of A and B for a stretch of blocks
  (tcsmt.sim.replay.HOIST_BYTES);
* the compiled CPU kernels: LLVM compiling the modules (KERNEL_COMPILE),
  and per thread its tiles' state and a stretch of hoisted words
  (tcsmt.sim.cpu.HOIST_BYTES).

The counts come from recording the steps of a few blocks (milliseconds),
never the whole K.
"""

from __future__ import annotations

import functools
import os

from tcsmt.model.params import ModelParams

PROGRAM_BYTES = 1024
"""Bytes per recorded instruction while a program is built (measured
about 0.8 KiB held on Volta, Hopper, CDNA3 and NVFP4 models)."""

KERNEL_COMPILE = 1 << 30
"""Compiling the kernels of a model (LLVM for the CPU, Numba and NVVM for
CUDA): their code does not grow with K, M or N."""

THREAD_BYTES = 8 << 20
"""A CPU kernel thread's tiles' state (7 words per element of a tile of
up to 32 x 64, a few tiles per task) and its stretch of hoisted words of
A and B (tcsmt.sim.cpu.HOIST_BYTES each): generously."""


@functools.lru_cache(maxsize=256)
def program_instructions(p: ModelParams) -> int:
    """Instructions of the chain's programs for a dot product of three
    blocks and a partial one (the start, every block shape's step, the
    end): those of any K are these or fewer."""
    from tcsmt.interp.chain import end_program, plan, start_program, step_program
    step = max(p.block_size, p.scale_block or 1)
    keys = dict.fromkeys(run.key for run in plan(p, 3 * step + 1).runs)
    progs = [start_program(p), end_program(p)] + [step_program(p, key) for key in keys]
    return sum(len(prog.code) for prog in progs)


def program_bytes(p: ModelParams) -> int:
    """The chain's recorded programs while they are built."""
    return 2 * program_instructions(p) * PROGRAM_BYTES + (16 << 20)


def gemm_bytes(p: ModelParams, m: int, n: int, k: int, backend: str | None = None,
               max_memory: int = 256 << 20, threads: int | None = None) -> int:
    """The peak of D = C + A @ B (M x K times K x N) under p with
    ``backend`` (None: the largest of the backends the choice may take),
    beside the operands the caller already holds."""
    from tcsmt.sim.replay import HOIST_BYTES
    bits = 8 * (2 * (m * k + k * n) + 4 * m * n)          # to_bits and the transposed copies, C, D
    tables = 8 * 2 * k                                    # the order and the scale rows, at most
    threads = threads or os.cpu_count() or 1
    numpy = max_memory + HOIST_BYTES
    kernel = KERNEL_COMPILE + threads * THREAD_BYTES
    work = {"numpy": numpy, "cpu": kernel, "cuda": KERNEL_COMPILE}.get(backend or "", max(numpy, kernel))
    return program_bytes(p) + bits + tables + work


def rows_bytes(p: ModelParams, rows: int, k: int, max_memory: int = 256 << 20) -> int:
    """The peak of ``dot_batch``: rows dot products of length k (the bits
    of a and b copied twice, c and d) and one tile's working arrays."""
    return program_bytes(p) + 8 * (4 * rows * k + 2 * rows) + max_memory
