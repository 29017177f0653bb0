"""Which shipped models the per-model tests run.

Most models added for MMA-Sim's configurations start from another model
(``base = ...``) and differ from it only in formats, devices and the
instruction. The per-model tests of the datapath (data branches, traces,
SMT terms, solver evaluation, batch against scalar) run every model written
out in full, and of the models with a base those that bring a datapath
shape (the parameters besides the formats) or a format (as a, b, c, d or
scale) that no model before them had. Every shipped model is still loaded
and checked (tests/test_models.py) and run against MMA-Sim
(tests/test_mmasim.py); the slow tests run one model of each distinct
arithmetic (``distinct``).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from tcsmt.model.catalogue import all_models

FORMAT_KEYS = ("in_format", "b_format", "c_format", "out_format", "scale_format")


def _has_base(m) -> bool:
    return "base" in tomllib.loads(Path(m.source_file).read_text(encoding="utf-8"))


def covering_models() -> list:
    full = [m for m in all_models() if not _has_base(m)]
    shapes, formats = set(), set()
    for m in full:
        shapes.add(_shape(m))
        formats |= _formats(m)
    out = list(full)
    for m in all_models():
        if m in full:
            continue
        if _shape(m) not in shapes or not _formats(m) <= formats:
            out.append(m)
            shapes.add(_shape(m))
            formats |= _formats(m)
    return out


def _shape(m) -> str:
    return repr(sorted((k, v) for k, v in m.parameter_dict().items() if k not in FORMAT_KEYS))


def _formats(m) -> set:
    return {("a", m.fin.name), ("b", m.fb.name), ("c", m.fc.name), ("d", m.fout.name),
            ("s", m.scale_format)}


MODELS = covering_models()


def distinct(models) -> list:
    """One model of each distinct arithmetic among ``models``, the first in
    their order. ``ModelParams.parameter_dict`` holds every parameter that
    changes what is computed (a name, an architecture, devices, an
    instruction and a description do not), so two models whose dicts are
    equal run one datapath: a check of one is the same check of the other
    (tests/test_smt_concrete.py: their formulas are equal, word for word)."""
    seen: dict = {}
    for m in models:
        seen.setdefault(arithmetic(m), m)
    return list(seen.values())


def arithmetic(m) -> str:
    return repr(sorted(m.parameter_dict().items()))


def scales_for(p, k: int, rng) -> tuple[list[int] | None, list[int] | None]:
    """Random scale bit patterns for a dot product of length k (None, None
    for a model without scales): mostly near 1, sometimes anywhere, NaN."""
    n = p.scale_count(k)
    if not n:
        return None, None
    f = p.fscale

    def one():
        r = rng.random()
        if r < 0.05:
            return f.nan_bits()
        if r < 0.3:
            return rng.randrange(0, f.nan_bits())
        return (f.bias + rng.randint(-4, 4)) << f.frac_bits | rng.getrandbits(f.frac_bits)
    return [one() for _ in range(n)], [one() for _ in range(n)]


def mask_for(p, k: int, rng) -> list[int] | None:
    """A sparse model's mask for a dot product of length k (None for a
    dense model): every bit set now and then, else a legal pattern (two of
    every four; tf32: one of every two)."""
    if p.sparsity == "dense":
        return None
    if rng.random() < 0.15:
        return [1] * k
    want, group = {"2:4": (2, 4), "1:2": (1, 2)}[p.sparsity]
    out = []
    for g in range(0, k, group):
        n = min(group, k - g)
        picked = set(rng.sample(range(n), min(want, n)))
        out += [int(i in picked) for i in range(n)]
    return out


def mask_rows(p, n: int, k: int, seed: int):
    """[n, k] masks of a sparse model (mask_for, row by row), None for a dense one."""
    if p.sparsity == "dense":
        return None
    import random

    import numpy as np
    rng = random.Random(seed)
    return np.array([mask_for(p, k, rng) for _ in range(n)], dtype=np.uint64)
