"""The error of D = C + A @ B under each model, against the exact result.

For every distribution of inputs (tcsmt.accuracy.inputs) and every K, one
A and B are drawn (the same for every model), rounded to nearest into each
model's input formats, C is zero, and D is computed by the batch
simulator (tcsmt.sim.batch.matmul with its default backend: the compiled
kernel where one is installed and the product is large). D is compared
element by element with the exact value of C + A @ B for the same rounded
inputs (tcsmt.accuracy.exact: integer arithmetic, no floating-point sum),
so what is measured is the unit's accumulation and rounding alone, not the
rounding of the data into the input format.
"""

from __future__ import annotations

import time

import numpy as np

from tcsmt.accuracy.exact import Errors, errors, exact_sum
from tcsmt.accuracy.inputs import DESCRIPTIONS, KINDS, draw
from tcsmt.errors import UserError
from tcsmt.model.params import ModelParams
from tcsmt.sim.dot import model as resolve_model

SCHEMA = "tcsmt-error/1"
REFERENCE = ("the exact value of C + A @ B for the same (rounded) inputs, from integer sums "
             "of the products' significands, one per power of two (no floating-point sum)")


def _models(specs, formats, overrides) -> list[ModelParams]:
    """The models; without ``formats``, a reference model (fma-chain...)
    takes the formats of the first model that is not one."""
    from tcsmt.model.overrides import apply_overrides
    from tcsmt.model.reference import is_reference, reference_like
    params = [resolve_model(s, formats, list(overrides or [])) for s in specs]
    hardware = next((p for s, p in zip(specs, params) if not is_reference(s)), None)
    if not formats and hardware is not None:
        params = [apply_overrides(reference_like(s, hardware), list(overrides or []))
                  if is_reference(s) else p for s, p in zip(specs, params)]
    return [_check_model(p) for p in params]


def _check_model(p: ModelParams) -> ModelParams:
    if p.scale_format is not None:
        raise UserError(f"{p.name} is block-scaled: tcsmt error measures unscaled models")
    for f in (p.fin, p.fb, p.fc, p.fout):
        if f.container_bits or f.ml_dtype is None:
            raise UserError(f"{p.name} reads {f.name}, which has no NumPy type of its own: "
                            "tcsmt error measures models whose formats have one")
        if f.precision > 53 or (f in (p.fin, p.fb) and f.precision > 24):
            raise UserError(f"{p.name}: exact sums of {f.name} inputs are not supported")
    return p


def _row(p: ModelParams, kind: str, k: int, e: Errors, elements: int) -> dict:
    mag, rel = np.abs(e.ulps), np.abs(e.relative[~np.isnan(e.relative)])
    return {"model": p.name, "distribution": kind, "k": k, "elements": elements,
            "max_ulps": float(mag.max()) if mag.size else None,
            "mean_ulps": float(mag.mean()) if mag.size else None,
            "mean_signed_ulps": float(e.ulps.mean()) if mag.size else None,
            "max_relative": float(rel.max()) if rel.size else None,
            "mean_relative": float(rel.mean()) if rel.size else None,
            "inexact": e.inexact / elements,
            "towards_zero": e.towards_zero / e.inexact if e.inexact else None,
            "nonfinite": e.nonfinite}


class _Exacts:
    """Exact values, computed once per input formats (models that read the
    same formats share them)."""

    def __init__(self, A, B, C=None):
        self.A, self.B, self.C, self.seen = A, B, C, {}

    def inputs(self, p: ModelParams):
        from tcsmt.sim.inputs import round_array
        from tcsmt.sim.npio import dtype_of
        A, B = round_array(self.A, p.fin, "rne", "A"), round_array(self.B, p.fb, "rne", "B")
        C = (np.zeros((A.shape[0], B.shape[1]), dtype=dtype_of(p.fc)) if self.C is None
             else round_array(self.C, p.fc, "rne", "C"))
        return A, B, C

    def exact(self, p: ModelParams, A, B, C):
        key = (p.fin.name, p.fb.name, p.fc.name, p.fout.name)
        if key not in self.seen:
            low = min(p.fin.emin - p.fin.frac_bits + p.fb.emin - p.fb.frac_bits,
                      p.fc.emin - p.fc.frac_bits, p.fout.emin - p.fout.frac_bits)
            self.seen[key] = exact_sum(A.astype(np.float64), B.astype(np.float64), C.astype(np.float64),
                                       p.fin, p.fb, p.fc, low)
        return self.seen[key]


def circuit_key(p: ModelParams) -> str:
    """Equal for models whose every arithmetic parameter is equal: the same
    circuit, so the same D (computed once)."""
    return repr(sorted(p.parameter_dict().items()))


def _measure(params, exacts: _Exacts, kind: str, k: int, backend, tell) -> list[dict]:
    from tcsmt.sim.batch import matmul
    rows, done = [], {}
    for p in params:
        key = circuit_key(p)
        if key not in done:
            A, B, C = exacts.inputs(p)
            D = matmul(A, B, C, p, backend=backend)
            done[key] = errors(D, exacts.exact(p, A, B, C), p.fout), D.size
        rows.append(_row(p, kind, k, *done[key]))
        tell(len(rows))
    return rows


def _model_records(params) -> list[dict]:
    """Each model, and the first model before it with the same circuit (its
    rows are the same numbers), or None."""
    out: list[dict] = []
    first: dict[str, str] = {}
    for p in params:
        key = circuit_key(p)
        out.append({"name": p.name, "formats": p.formats_label, "same_circuit_as": first.get(key)})
        first.setdefault(key, p.name)
    return out


def _check_sizes(m: int, n: int, ks) -> list[int]:
    ks = sorted({int(k) for k in ks})
    if m < 1 or n < 1 or not ks or ks[0] < 1:
        raise UserError("M, N and every K must be at least 1")
    return ks


def measure(models, m: int = 64, n: int = 64, ks=(16, 64, 256, 1024), distributions=KINDS,
            seed: int = 0, *, formats: str | None = None, overrides=(), inputs=None,
            backend: str | None = None, progress=None) -> dict:
    """The error document: a row per model, distribution and K. ``inputs``
    (A, B[, C]) replaces the random matrices (one K: A's columns)."""
    t0 = time.monotonic()
    params = _models(models, formats, overrides)
    if not params:
        raise UserError("name at least one model")
    tell = progress or (lambda name, done, total: None)
    if inputs is not None:
        A, B, *C = (np.asarray(x) for x in inputs)
        if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
            raise UserError(f"A ({A.shape}) and B ({B.shape}) must be M x K and K x N")
        plan: list[tuple[str, int, _Exacts | None]] = [
            ("given", A.shape[1], _Exacts(A, B, C[0] if C else None))]
        m, n = A.shape[0], B.shape[1]
    else:
        unknown = [d for d in distributions if d not in KINDS]
        if unknown or not distributions:
            raise UserError(f"unknown distribution {(unknown or [''])[0]!r} (known: {', '.join(KINDS)})")
        ks = _check_sizes(m, n, ks)
        plan = [(d, k, None) for d in distributions for k in ks]
    total, rows = len(plan) * len(params), list[dict]()
    for kind, k, exacts in plan:
        if exacts is None:
            rng = np.random.default_rng([seed, KINDS.index(kind), k])
            exacts = _Exacts(*draw(kind, m, n, k, rng))
        before = len(rows)
        rows += _measure(params, exacts, kind, k, backend,
                         lambda j, before=before, where=f"{kind} k={k}": tell(where, before + j, total))
    kinds = [d for d in (*KINDS, "given") if any(r["distribution"] == d for r in rows)]
    return {"schema": SCHEMA, "m": m, "n": n, "k": sorted({r["k"] for r in rows}), "seed": seed,
            "models": _model_records(params),
            "distributions": {d: DESCRIPTIONS.get(d, "the given A, B and C") for d in kinds},
            "reference": REFERENCE, "c": "given" if inputs is not None and len(inputs) > 2 else "zero",
            "rows": rows, "seconds": round(time.monotonic() - t0, 2)}
