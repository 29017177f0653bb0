"""identify's screening: the scalar interpreter on a few rows keeps exactly
the hypotheses whose batch outputs reproduce those rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tcsmt.identify.hypspace import identification_space
from tcsmt.search.candidates import candidate_vectors
from tcsmt.sim.batch import dot_batch
from tcsmt.sim.dot import model
from tcsmt.sim.evaluate import evaluate, screen, screening_order


def test_screen_keeps_the_hypotheses_the_batch_simulator_keeps():
    space = identification_space("fp16:fp32")
    models = space.models()[::193]                     # 81 hypotheses across the space
    p = models[0]
    from tcsmt.identify.plan import plan_domain
    a, b, c = candidate_vectors(p.fin, p.fc, 8, plan_domain(p.fin, p.fout), 40, seed=5)
    d = dot_batch(model("ampere-fp16-fp32"), a, b, c)
    kept = screen(models, a, b, c, d, rows=2, workers=1)
    rows = screening_order(a, b)[:2]
    ev = evaluate(models, a[rows], b[rows], c[rows], workers=1)
    want = [i for i in range(len(models))
            if i not in ev.unsupported and (ev.outputs[i] == d[rows]).all()]
    assert kept == want and 0 < len(kept) < len(models)


def test_screening_order_puts_rows_with_more_products_first():
    a = np.array([[1, 0, 0], [1, 1, 1], [0, 0, 0], [1, 1, 0]], dtype=np.uint64)
    assert screening_order(a, a) == [1, 3, 0, 2]


def test_screening_rows_rule_out_more_than_the_rows_with_most_products():
    """On the H100 e4m3 rows, the rows with the most products leave about
    half of the hypotheses; the rows chosen by the pilot hypotheses leave
    fewer, and the screening on them keeps exactly what those rows keep."""
    from tcsmt.identify.narrow import row_arrays
    from tcsmt.observed.observations import read_observations
    from tcsmt.sim.evaluate import screening_rows
    root = Path(__file__).resolve().parent.parent
    obs = read_observations(root / "results/hardware/H100/mma-e4m3-f32.json")
    a, b, c, d = row_arrays(obs)
    models = identification_space("e4m3:fp32").models()[::1000]        # 31 hypotheses
    rows = screening_rows(models, a, b, c, d, rows=3, workers=1)
    assert len(set(rows)) == 3 and all(0 <= r < len(obs.rows) for r in rows)
    chosen = screen(models, a, b, c, d, workers=1, order=rows)
    most = screen(models, a, b, c, d, rows=3, workers=1)
    assert len(chosen) < len(most)
    ev = evaluate(models, a[rows], b[rows], c[rows], workers=1)
    assert chosen == [i for i in range(len(models))
                      if i not in ev.unsupported and (ev.outputs[i] == d[rows]).all()]


def test_pilots_cut_into_a_batch_per_worker_give_the_rows_one_batch_gives():
    """screening_rows records its pilots in a batch per worker; batches of
    any size give every model the same outputs, so the rows chosen on two
    workers are those chosen in one process."""
    from tcsmt.identify.narrow import row_arrays
    from tcsmt.observed.observations import read_observations
    from tcsmt.sim import evaluate as ev_mod
    root = Path(__file__).resolve().parent.parent
    obs = read_observations(root / "results/hardware/H100/mma-e4m3-f32.json")
    a, b, c, d = row_arrays(obs)
    models = identification_space("e4m3:fp32").models()[::1000]        # 31 hypotheses
    whole = evaluate(models, a[:40], b[:40], c[:40], workers=1)
    cut = evaluate(models, a[:40], b[:40], c[:40], workers=2, batch=4)
    assert len(ev_mod.batches(models, 4)) > 2
    assert (whole.outputs == cut.outputs).all() and whole.unsupported == cut.unsupported
    assert ev_mod.screening_rows(models, a, b, c, d, workers=2) == \
        ev_mod.screening_rows(models, a, b, c, d, workers=1)
