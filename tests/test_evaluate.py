"""The batch simulator's recording (tcsmt.sim.evaluate) with leading-zero
counts as one node (tcsmt.interp.trace.CountingTrace) against the graph of
primitives only, on samples of several identification spaces, the fp8 one
among them, on the candidate vectors their plans draw: the same output bits,
the same twins, the same hypotheses left to the scalar interpreter."""

from __future__ import annotations

import functools

import pytest

from tcsmt.identify.hypspace import identification_space, scaled_space
from tcsmt.identify.plan import plan_candidates, plan_domain, plan_k
from tcsmt.interp.graph import postorder
from tcsmt.sim import evaluate as E
from tcsmt.sim.batch import dot_batch

SPACES = [("e4m3:fp32", None), ("e5m2:fp32", None), ("fp16:fp32", None), ("bf16:fp32", None),
          ("tf32:fp32", None), ("fp16:fp16", None), ("e2m1:fp32", "ue4m3/16")]


@functools.cache
def _sample(formats: str, scales: str | None):
    space = scaled_space(formats, scales) if scales else identification_space(formats)
    models = space.models()
    # a stretch of neighbours (twins, shared stages) and hypotheses spread over the space
    picked = models[:8] + models[8::max(1, len(models) // 16)][:16]
    _, k = plan_k(space)
    p = models[0]
    a, b, c, sa, sb = plan_candidates(p, k, plan_domain(p.fin, p.fout), 150, seed=11)
    return picked, a, b, c, sa, sb


@pytest.mark.parametrize("formats,scales", SPACES)
def test_counting_graph_gives_the_primitive_graphs_bits(formats, scales, monkeypatch):
    models, a, b, c, sa, sb = _sample(formats, scales)
    got = E.evaluate(models, a, b, c, workers=1, sa=sa, sb=sb)
    monkeypatch.setattr(E, "COUNTING", False)
    plain = E.evaluate(models, a, b, c, workers=1, sa=sa, sb=sb)
    assert got.unsupported == plain.unsupported
    assert (got.shape == plain.shape).all()
    assert (got.outputs == plain.outputs).all(), formats


def test_counting_graph_is_smaller_and_runs_the_native_count():
    models = _sample("e4m3:fp32", None)[0][8:20]
    counted = postorder(list({r.id: r for r in E.trace(models, 32, counting=True)}.values()))
    plain = postorder(list({r.id: r for r in E.trace(models, 32)}.values()))
    assert any(n.op == "count_leading_zeros" for n in counted)
    assert not any(n.op == "count_leading_zeros" for n in plain)
    assert len(counted) < 0.8 * len(plain)


def test_recording_equals_the_batch_simulator_on_fp8_candidates():
    """Independently of the shared graph: each hypothesis alone through
    dot_batch (its own program of primitives)."""
    models, a, b, c, _, _ = _sample("e4m3:fp32", None)
    ev = E.evaluate(models[::4], a, b, c, workers=1)
    for i, m in enumerate(models[::4]):
        assert (ev.outputs[i] == dot_batch(m, a, b, c)).all(), m.name


@pytest.mark.parametrize("formats,scales", [SPACES[0], SPACES[2], SPACES[6]])
@pytest.mark.parametrize("workers", [1, 2])
def test_outputs_on_a_few_rows_are_the_batch_simulators_bits(formats, scales, workers):
    """A few rows (a plan's witnesses) run through the scalar interpreter
    that shares stage results: the same bits as the batch simulator, in the
    same order, on one worker or two."""
    models, a, b, c, sa, sb = _sample(formats, scales)
    n = E.SCALAR_ROWS
    pick = slice(0, n)
    rows = (a[pick], b[pick], c[pick])
    scales_ = {"sa": None if sa is None else sa[pick], "sb": None if sb is None else sb[pick]}
    batch = E.evaluate(models, *rows, workers=1, **scales_)
    got = E.outputs(models, *rows, workers=workers, **scales_)
    ok = [i for i in range(len(models)) if i not in batch.unsupported]
    assert got.shape == batch.outputs.shape and got.dtype == batch.outputs.dtype
    assert (got[ok] == batch.outputs[ok]).all(), formats
    more = E.outputs(models, a[:n + 1], b[:n + 1], c[:n + 1], workers=1,
                     sa=None if sa is None else sa[:n + 1], sb=None if sb is None else sb[:n + 1])
    assert (more[ok, :n] == got[ok]).all()          # past SCALAR_ROWS: the batch simulator


def test_outputs_cut_into_chunks_keep_each_models_row():
    """More hypotheses than one chunk of 64, on two workers: each model's
    outputs land on its own row."""
    _, a, b, c, _, _ = _sample("e4m3:fp32", None)
    models = identification_space("e4m3:fp32").models()[::150][:160]
    n = E.SCALAR_ROWS
    batch = E.evaluate(models, a[:n], b[:n], c[:n], workers=1)
    got = E.outputs(models, a[:n], b[:n], c[:n], workers=2)
    assert not batch.unsupported
    assert (got == batch.outputs).all()
    assert len({tuple(r) for r in got.tolist()}) > 3      # the models tell the rows apart
