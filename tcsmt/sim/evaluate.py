"""Every hypothesis of a space run on many input vectors at once.

``tcsmt plan`` and ``tcsmt identify`` need the output of thousands of models
(15360 in the default fp16:fp32 space) on thousands of vectors. Run one
model at a time (``tcsmt.sim.batch.dot_batch``), each model costs about 50 ms
whatever the number of vectors: recording its datapath (about 25 ms at
k = 16, most of it turning the graph into a program) and running some 4700
NumPy operations. Measured here: about 13 minutes for the default space on
one core.

This module records many models into ONE shared graph (the recording
interpretation, ``tcsmt.interp.trace``, gives an identical call the node it
gave before), so:

* models whose datapaths build the very same circuit get the very same
  root node. They compute the same function by construction: we run it
  once and say so (``Evaluation.shape``). In the default fp16:fp32 space
  at k = 16 about 6 models in 10 have a twin (block sizes at or above k,
  chaining with one block, product alignment where every term is aligned
  by its leading one, ...);
* work common to several models (unpacking the inputs, the products, the
  first stages of a block) is computed once per batch of models;
* the graph is run directly, without building a program per model.

A leading-zero count is one node (``count_leading_zeros``, which the
NumPy interpretation counts natively) instead of its binary search over
the primitives: some 30% fewer nodes to record and run. Neither the
collector (the graph has no cycles) nor a pass per distinct root (the
widest word of each, in one pass over the graph) runs while a batch is
recorded. Measured on the fp8 space (e4m3:fp32, k = 32, 4079 candidates):
about 14 ms of CPU a hypothesis, against 33 ms before (benchmarks/bench_cluster.py
--record); about half of it builds the graph (the datapath's Python code,
hash-consing), half runs it (900 to 1800 nodes a hypothesis, about 5
microseconds each, mostly the per-operation cost of Python and NumPy,
not the arithmetic on 4079 rows).

Models are traced in batches of about ``BATCH`` (a batch's graph holds some
800 nodes per model) grouped by the parameters that change the most
(formats, alignment bits, subnormal handling, alignment rounding), so
twins land in the same batch. Batches are independent jobs of
``tcsmt.runner``: local worker processes (``workers`` at a time; default
the CPU count, at most 2; TCSMT_WORKERS overrides), or a Dask cluster's
workers when a scheduler is chosen. The models and the vectors are sent to
each worker once; each batch's outputs come back to this process.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from tcsmt import datapath, runner
from tcsmt.budget import require
from tcsmt.errors import UserError
from tcsmt.interp.arrays import MAX_BITS, NumpyInterp
from tcsmt.interp.graph import postorder
from tcsmt.interp.memo import StageMemo
from tcsmt.interp.program import const_value
from tcsmt.interp.trace import CountingTrace, Node, TraceInterp
from tcsmt.model.params import ModelParams

BATCH = 192
COUNTING = True
"""Record leading-zero counts as one node (tcsmt.interp.trace.CountingTrace)
in the graphs the batches run (False: the primitives only; the same bits,
tests/test_evaluate.py compares both)."""
OUTER_KEYS = ("in_format", "c_format", "out_format", "acc_format", "final_frac_bits",
              "align_bits", "subnormals", "align_rounding", "c_placement", "term_order",
              "scale_window_bits")
SCALE_KEYS = ("in_format", "b_format", "c_format", "out_format", "scale_format", "scale_block")
"""What every model of one evaluation shares: the formats of its inputs,
output and scales, and how many products a scale covers."""


@dataclass
class Evaluation:
    """outputs[i, n]: model i's d bits (out_format; uint32 up to 32 bits,
    else uint64) on vector n. shape[i]:
    models with the same number build the very same circuit. unsupported:
    models the NumPy interpreter cannot run (a word wider than 64 bits);
    their rows are zero and must not be read."""
    outputs: np.ndarray
    shape: np.ndarray
    unsupported: list[int] = field(default_factory=list)


def batches(models: list[ModelParams], size: int | None = None) -> list[list[int]]:
    """Model indices in batches of at most ``size`` (default BATCH): models
    equal in OUTER_KEYS together, so that twins share a graph."""
    size = size or BATCH
    def key(i):
        p = models[i]
        return tuple(str(getattr(p, name)) for name in OUTER_KEYS)
    order = sorted(range(len(models)), key=key)
    out: list[list[int]] = []
    for i in order:
        if out and len(out[-1]) < size and key(out[-1][0]) == key(i):
            out[-1].append(i)
        else:
            out.append([i])
    # merge small neighbouring groups: fewer, fuller batches
    merged: list[list[int]] = []
    for grp in out:
        if merged and len(merged[-1]) + len(grp) <= size:
            merged[-1].extend(grp)
        else:
            merged.append(list(grp))
    return merged


# ---------------------------------------------------------------------------
# One batch: trace into a shared graph, run the distinct roots
# ---------------------------------------------------------------------------

@contextmanager
def no_collection():
    """The cyclic garbage collector off while a graph is built and run: a
    graph has no cycles, and its hundreds of thousands of nodes would make
    every collection pass long."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def trace(models: list[ModelParams], k: int, counting: bool = False) -> list[Node]:
    """The root node of every model's datapath, all in one graph (the
    scales of a block-scaled model are inputs sa{j}, sb{j} like a, b, c).
    The datapath's stages share their results (tcsmt.interp.memo): a stage
    called with the same nodes and the same values of the parameters it
    reads gives the node it gave, as hash-consing would, without tracing
    it again. ``counting``: leading zeros are one node
    (tcsmt.interp.trace.CountingTrace), for graphs that run_graph runs;
    without it the graph holds the primitives only."""
    p0 = models[0]
    T = CountingTrace() if counting else TraceInterp()
    T.memo = StageMemo()
    a = [T.input(f"a{i}", p0.fin.bits) for i in range(k)]
    b = [T.input(f"b{i}", p0.fb.bits) for i in range(k)]
    c = T.input("c", p0.fc.bits)
    ns = p0.scale_count(k)
    sw = p0.scaling()[0].bits if ns else 0
    sa = [T.input(f"sa{j}", sw) for j in range(ns)] or None
    sb = [T.input(f"sb{j}", sw) for j in range(ns)] or None
    return [datapath.dot(T, p, a, b, c, sa=sa, sb=sb) for p in models]


def widest(order: list[Node]) -> dict[int, int]:
    """For every node of ``order`` (a postorder), the widest non-constant
    word of its cone, in one pass (a root wider than MAX_BITS is left to
    the scalar interpreter)."""
    wide: dict[int, int] = {}
    for node in order:
        m = node.width
        for x in node.args:
            if x.value is None:
                w = wide[x.id]
                if w > m:
                    m = w
        wide[node.id] = m
    return wide


def run_graph(roots: list[Node], inputs: dict, n: int, model_name: str = "batch",
              order: list[Node] | None = None) -> list[np.ndarray]:
    """The value of every root on the input words (NumpyInterp words of n
    samples), each as a [n] uint64 array. Values are dropped after their
    last use; roots are kept. ``order``: postorder(roots), when the caller
    has it."""
    I = NumpyInterp(model_name)
    if order is None:
        order = postorder(roots)
    keep = {r.id for r in roots}
    last: dict[int, int] = {}
    for pos, node in enumerate(order):
        for x in node.args:
            if x.value is None:
                last[x.id] = pos
    drops: dict[int, list[int]] = {}
    for idx, pos in last.items():
        if idx not in keep:
            drops.setdefault(pos, []).append(idx)
    env: dict[int, object] = {}
    fns: dict[str, Callable] = {}
    for pos, node in enumerate(order):
        op = node.op
        if op == "input":
            env[node.id] = inputs[node.static[0]]
        else:
            fn = fns.get(op) or fns.setdefault(op, getattr(I, op))
            args = [env[x.id] if x.value is None else const_value(x) for x in node.args]
            env[node.id] = fn(*args, *node.static)
        gone = drops.get(pos)
        if gone is not None:
            for idx in gone:
                del env[idx]
    out = []
    for r in roots:
        v = const_value(r) if r.is_const else env[r.id]
        out.append(np.array(I.value(v, (n,)), dtype=np.uint64))
    return out


def input_words(p: ModelParams, a: np.ndarray, b: np.ndarray, c: np.ndarray,
                sa: np.ndarray | None = None, sb: np.ndarray | None = None) -> dict:
    I = NumpyInterp(p.name)
    k = a.shape[1]
    words = {f"a{j}": I.array(np.ascontiguousarray(a[:, j]), p.fin.bits) for j in range(k)}
    words.update({f"b{j}": I.array(np.ascontiguousarray(b[:, j]), p.fb.bits) for j in range(k)})
    words["c"] = I.array(np.ascontiguousarray(c), p.fc.bits)
    ns = p.scale_count(k)
    if ns:
        if sa is None or sb is None:
            raise ValueError(f"{p.name} needs the scales of a and b")
        sw = p.scaling()[0].bits
        for name, s in (("sa", sa), ("sb", sb)):
            for j in range(ns):
                words[f"{name}{j}"] = I.array(np.ascontiguousarray(s[:, j]), sw)
    return words


def evaluate_batch(models: list[ModelParams], a, b, c, sa=None, sb=None
                   ) -> tuple[list[int], list[np.ndarray | None]]:
    """(twin number of each model inside the batch, outputs of each model or
    None when unsupported)."""
    k = a.shape[1]
    with no_collection():   # the graph is some 250 000 nodes without cycles
        roots = trace(models, k, counting=COUNTING)
        first: dict[int, int] = {}
        twin = [first.setdefault(r.id, len(first)) for r in roots]
        distinct = [r for r in {t: r for r, t in zip(roots, twin)}.values()]
        order = postorder(distinct)
        wide = widest(order)
        ok = [r for r in distinct if (r.width if r.value is not None else wide[r.id]) <= MAX_BITS]
        words = input_words(models[0], a, b, c, sa, sb)
        values = dict(zip((r.id for r in ok), run_graph(
            ok, words, a.shape[0], order=order if len(ok) == len(distinct) else None))) if ok else {}
    return twin, [values.get(r.id) for r in roots]


# ---------------------------------------------------------------------------
# The whole space, as independent jobs
# ---------------------------------------------------------------------------

def _work(batch: list[int], shared: tuple):
    """One batch (in a worker): the models and vectors are the run's shared data."""
    models, a, b, c, sa, sb = shared
    return evaluate_batch([models[i] for i in batch], a, b, c, sa, sb)


def scale_arrays(p: ModelParams, k: int, n: int, sa, sb):
    """The scales as [n, S] uint64 arrays (None, None without a scale format)."""
    ns = p.scale_count(k)
    if (sa is None) != (ns == 0) or (sb is None) != (ns == 0):
        raise UserError(f"{p.name}: " + (f"give the scales of a and b as [N, {ns}]" if ns
                                         else "this model has no block scales"))
    if not ns:
        return None, None
    out = [np.asarray(s, dtype=np.uint64) for s in (sa, sb)]
    if any(s.shape != (n, ns) for s in out):
        raise UserError(f"scales must be [N, {ns}] = [{n}, {ns}]; got {out[0].shape} and {out[1].shape}")
    return out[0], out[1]


ROW_BYTES = 16 << 10
"""Working bytes per vector of one batch's graph while it runs (measured
about 5 KiB for a batch of 64 models of Volta's fp16 space)."""


def evaluation_bytes(hypotheses: int, rows: int, k: int, workers: int | None = None) -> int:
    """The peak of ``evaluate``: the outputs (a word per hypothesis and
    vector), the vectors as words, and each worker's batch: its graph
    (about 800 nodes per model) and working arrays (ROW_BYTES per vector)."""
    workers = workers or runner.default_workers()
    return (hypotheses * rows * 8 + rows * (k + 1) * 8 * 4
            + workers * (rows * ROW_BYTES + BATCH * 800 * 300) + (64 << 20))


def evaluate(models: list[ModelParams], a, b, c, workers: int | None = None,
             progress=None, sa=None, sb=None, batch: int | None = None) -> Evaluation:
    """Every model on every vector: a, b [N, k] in_format and b_format
    bits, c [N] c_format bits, and for block-scaled models the scales sa,
    sb [N, S] (all models share their formats and scales: SCALE_KEYS).
    ``progress(done, total)`` is called after each batch; ``workers=1``
    runs the batches here; ``batch``: at most this many models a batch
    (default BATCH)."""
    a = np.asarray(a, dtype=np.uint64)
    b = np.asarray(b, dtype=np.uint64)
    c = np.asarray(c, dtype=np.uint64)
    if a.ndim != 2 or a.shape != b.shape or c.shape != a.shape[:1] or a.shape[0] == 0:
        raise UserError(f"vectors must be a, b [N, k] and c [N] with N >= 1; "
                        f"got a {a.shape}, b {b.shape}, c {c.shape}")
    fmts = {tuple(getattr(p, key) for key in SCALE_KEYS) for p in models}
    if len(fmts) != 1:
        raise UserError(f"the models of one evaluation must share their formats and scales; "
                        f"got {sorted(fmts, key=str)}")
    sa, sb = scale_arrays(models[0], a.shape[1], a.shape[0], sa, sb)
    require(evaluation_bytes(len(models), a.shape[0], a.shape[1], workers),
            f"{len(models)} hypotheses on {a.shape[0]} vectors of {a.shape[1]} products")
    dtype = np.uint32 if models[0].fout.bits <= 32 else np.uint64     # half the memory for fp32 out
    outputs = np.zeros((len(models), a.shape[0]), dtype=dtype)
    groups = batches(models, batch)
    twins: list[list[int]] = [[] for _ in groups]
    unsupported: list[int] = []

    def take(done: runner.Done) -> None:
        n = int(done.name.split()[-1])
        twin, outs = done.result()
        twins[n] = twin
        for i, o in zip(groups[n], outs):
            if o is None:
                unsupported.append(i)
            else:
                outputs[i] = o

    tasks = [runner.Task(f"batch {n}", partial(_work, g)) for n, g in enumerate(groups)]
    runner.run(tasks, on_done=take, progress=(lambda _, done, total: progress(done, total)
                                              if done else None) if progress else None,
               shared=(models, a, b, c, sa, sb),
               workers=0 if workers == 1 or len(groups) == 1 else workers)
    return Evaluation(outputs, _shapes(len(models), groups, twins), sorted(unsupported))


def _shapes(count: int, groups, twins) -> np.ndarray:
    """Circuit numbers, batch after batch: twins inside a batch share one."""
    shape = np.zeros(count, dtype=np.int64)
    base = 0
    for batch, twin in zip(groups, twins):
        for i, t in zip(batch, twin):
            shape[i] = base + t
        base += max(twin) + 1
    return shape


# ---------------------------------------------------------------------------
# Screening: the scalar interpreter on a few rows first
# ---------------------------------------------------------------------------

SCREEN_ROWS = 3
"""Rows the scalar interpreter runs every hypothesis on before the batch
stages. Recording a hypothesis's datapath for the batch simulator costs
about seven times one scalar dot product (measured: 17 ms against 2.4 ms at
k = 16), and one random row rules out most hypotheses, so a few scalar rows
first leave the batch stages a small part of the space."""


def screening_order(a: np.ndarray, b: np.ndarray) -> list[int]:
    """Rows with the most non-zero products first (random rows tell more
    hypotheses apart than hand-made ones with one or two terms)."""
    nonzero = ((a != 0) & (b != 0)).sum(axis=1)
    return sorted(range(a.shape[0]), key=lambda n: (-int(nonzero[n]), n))


def row_cost(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """What a row costs the scalar interpreter that shares stage results
    (tcsmt.interp.memo), relative: a part for the stage calls, which every
    row makes, and about as much again for a row whose every product is
    non-zero (the stages it computes afresh). Measured on the H100 e4m3
    rows (7704 hypotheses): 3.0 s for a row of no or 4 non-zero products,
    6.6 s for one of 32."""
    nonzero = ((a != 0) & (b != 0)).sum(axis=1)
    return 1.0 + 1.25 * nonzero / max(1, a.shape[1])


CHEAP = 16
"""Rows with the fewest non-zero products that the pilots run on besides
those spread over the observations (hand-made rows are few and cheap)."""


def cheap_rows(a: np.ndarray, b: np.ndarray) -> list[int]:
    nonzero = ((a != 0) & (b != 0)).sum(axis=1)
    return sorted(range(a.shape[0]), key=lambda n: (int(nonzero[n]), n))[:CHEAP]


PILOT = 32
"""Hypotheses, spread evenly over the space, that choose the screening rows."""
PILOT_ROWS = 256
"""Rows (spread evenly over the observations) the pilot hypotheses run on."""


def screening_rows(models: list[ModelParams], a, b, c, d, rows: int = SCREEN_ROWS,
                   workers: int | None = None, sa=None, sb=None) -> list[int]:
    """The rows to screen on: those that rule out the most of PILOT
    hypotheses spread over the space (run on up to PILOT_ROWS rows through
    the batch simulator), chosen greedily (each next row the one that rules
    out most of the pilots still left for what it costs: ``row_cost``),
    then screening_order's. Rows with many products need not tell
    hypotheses apart (on the H100 e4m3 rows the first ones with 32 products
    rule out half the space; a chosen row rules out nearly all of it), and
    the screening stops at a hypothesis's first mismatch, so a row that
    rules out more costs less, and a cheap row that rules out most is best
    run first (there a row of no products, 0.4 ms a hypothesis, rules out
    three in four; then one of 32 products, 0.9 ms, nearly all the rest).
    The pilots are cut into a batch per worker: recording their datapaths
    is most of this step (32 fp8 pilots: 0.56 s on two workers, 0.93 s
    in one batch)."""
    order = screening_order(a, b)
    n = a.shape[0]
    cost = row_cost(a, b)
    cand = sorted({int(x) for x in np.linspace(0, n - 1, min(n, PILOT_ROWS))} | set(cheap_rows(a, b)))
    pilots = [models[int(i)] for i in
              sorted({int(x) for x in np.linspace(0, len(models) - 1, min(len(models), PILOT))})]
    n_workers = runner.default_workers() if workers is None else max(1, workers)
    ev = evaluate(pilots, a[cand], b[cand], c[cand], workers=workers,
                  sa=None if sa is None else sa[cand], sb=None if sb is None else sb[cand],
                  batch=-(-len(pilots) // n_workers))
    miss = ev.outputs != np.asarray(d, dtype=np.uint64)[cand][None, :]
    miss[ev.unsupported, :] = False
    alive = np.ones(len(pilots), dtype=bool)
    chosen: list[int] = []
    while len(chosen) < rows:
        gain = (miss & alive[:, None]).sum(axis=0)
        j = int(np.argmax(gain / cost[cand]))
        if gain[j] == 0:
            break
        chosen.append(cand[j])
        alive &= ~miss[:, j]
    return chosen + [r for r in order if r not in chosen][:rows - len(chosen)]


def _screen_chunk(job: list[int], shared: tuple) -> list[int]:
    """One chunk of hypotheses (in a worker): the models and the picked rows
    are the run's shared data."""
    from tcsmt.sim.dot import dot_bits
    models, rows = shared
    I = _screening_interp()
    return [i for i in job if all(dot_bits(models[i], a, b, c, sa, sb, I=I) == d
                                  for a, b, c, d, sa, sb in rows)]


SCREEN_MEMO = True
"""Screen with the interpretation that shares stage results across
hypotheses (False: the plain Python-int one, benchmarks/bench_identify's
baseline)."""
_MEMO: list = []


def _screening_interp():
    """This process's Python-int interpretation that shares stage results
    across hypotheses (tcsmt.interp.memo; its results are keyed by value,
    so one serves every screening the process runs)."""
    if not SCREEN_MEMO:
        from tcsmt.interp.ints import INT
        return INT
    if not _MEMO:
        from tcsmt.interp.memo import MemoInterp
        _MEMO.append(MemoInterp())
    return _MEMO[0]


SCREEN_CHUNKS = 8
"""Jobs one screening is cut into: runs of neighbouring hypotheses (at
least 64 each), which share the most stage results; each worker process
keeps its own. Identifying the H100 e4m3 rows (2 workers, load 11.7):
26.1 CPU-s with 8 runs, 31.0 with chunks of 64 hypotheses."""


def neighbour_runs(count: int) -> list[list[int]]:
    """Indices 0..count-1 in SCREEN_CHUNKS runs of neighbours (at least 64
    each): the jobs of the scalar interpreter's runs of hypotheses, and of
    a plan's ranking of its open classes (tcsmt.identify.plansearch)."""
    size = max(64, -(-count // SCREEN_CHUNKS))
    return [list(range(i, min(i + size, count))) for i in range(0, count, size)]


def _row_scales(s, n: int) -> list[int] | None:
    return None if s is None else [int(x) for x in s[n]]


def screen(models: list[ModelParams], a, b, c, d, rows: int = SCREEN_ROWS,
           workers: int | None = None, progress=None, order: list[int] | None = None,
           sa=None, sb=None) -> list[int]:
    """The hypotheses (indices into models) that reproduce the rows
    ``order`` (default: the first ``rows`` of screening_order) through the
    scalar interpreter (the same datapath: a hypothesis it rules out gives
    other bits on that row in every interpretation). Runs of neighbouring
    hypotheses (SCREEN_CHUNKS of them, at least 64 hypotheses each) are
    independent jobs of tcsmt.runner (``workers=1`` runs them here).
    ``progress(done, total)`` per run."""
    if order is None:
        order = screening_order(np.asarray(a), np.asarray(b))[:rows]
    picked = [([int(x) for x in a[n]], [int(x) for x in b[n]], int(c[n]), int(d[n]),
               _row_scales(sa, n), _row_scales(sb, n)) for n in order]
    chunks = neighbour_runs(len(models))
    tasks = [runner.Task(f"chunk {n}", partial(_screen_chunk, ch)) for n, ch in enumerate(chunks)]
    done = runner.run(tasks, progress=(lambda _, n, total: progress(n, total) if n else None)
                      if progress else None,
                      shared=(models, picked), workers=0 if workers == 1 or len(chunks) == 1 else workers)
    return [i for d in done for i in d.result()]


SCALAR_ROWS = 8
"""Up to this many vectors, ``outputs`` runs the scalar interpreter that
shares stage results rather than the batch simulator: recording a
hypothesis's datapath for the batch simulator costs about 10 ms whatever
the rows, a scalar dot product about 0.8 ms (2000 fp8 hypotheses on 1, 2
and 4 candidates: 20.4, 21.2 and 21.5 CPU-s against 1.6, 1.3 and 3.1, the
same bits). A plan runs some 16 000 hypotheses on each round's solver
witnesses, often one."""


def _outputs_chunk(job: list[int], shared: tuple) -> list[list[int]]:
    """One chunk of hypotheses (in a worker): each one's d bits on every row."""
    from tcsmt.sim.dot import dot_bits
    models, rows = shared
    I = _screening_interp()
    return [[dot_bits(models[i], a, b, c, sa, sb, I=I) for a, b, c, sa, sb in rows] for i in job]


def outputs(models: list[ModelParams], a, b, c, workers: int | None = None,
            sa=None, sb=None) -> np.ndarray:
    """[models, N] d bits of every model on every vector, as ``evaluate``
    gives them, through the batch simulator, or, for at most SCALAR_ROWS
    vectors, the scalar interpreter that shares stage results (runs of
    neighbouring hypotheses as independent jobs, ``neighbour_runs``).
    The rows of the batch simulator's unsupported models (a word wider than
    64 bits) are zero, as in ``evaluate``; the scalar interpreter runs them."""
    a, b, c = (np.asarray(x, dtype=np.uint64) for x in (a, b, c))
    if a.shape[0] > SCALAR_ROWS:
        return evaluate(models, a, b, c, workers=workers, sa=sa, sb=sb).outputs
    dtype = np.uint32 if models and models[0].fout.bits <= 32 else np.uint64
    rows = [([int(x) for x in a[n]], [int(x) for x in b[n]], int(c[n]),
             _row_scales(sa, n), _row_scales(sb, n)) for n in range(a.shape[0])]
    chunks = neighbour_runs(len(models))
    tasks = [runner.Task(f"chunk {n}", partial(_outputs_chunk, ch)) for n, ch in enumerate(chunks)]
    done = runner.run(tasks, shared=(models, rows),
                      workers=0 if workers == 1 or len(chunks) <= 1 else workers)
    out = np.zeros((len(models), a.shape[0]), dtype=dtype)
    for ch, d in zip(chunks, done):
        out[ch] = np.array(d.result(), dtype=dtype).reshape(len(ch), a.shape[0])
    return out
