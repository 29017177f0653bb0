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

import math
import time

import numpy as np

from tcsmt.accuracy.exact import CHUNK_ELEMENTS, Errors, errors, exact_sum
from tcsmt.accuracy.inputs import DESCRIPTIONS, KINDS, draw
from tcsmt.budget import require
from tcsmt.errors import UserError
from tcsmt.model.params import ModelParams
from tcsmt.sim.dot import model as resolve_model

SCHEMA = "tcsmt-error/1"
REFERENCE = ("the exact value of C + A @ B for the same (rounded) inputs, from integer sums "
             "of the products' significands, one per power of two (no floating-point sum)")


def resolve_models(specs, formats, overrides) -> list[ModelParams]:
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


def cancelled_share(A, B, C, exact, fout) -> float:
    """The share of elements whose exact value lies below one unit in the
    last place (of the output format) of the terms' magnitude |C| + |A| @
    |B|: every significant bit cancelled, so an error of a few ulps of the
    terms is a huge number of ulps of the result."""
    mag = np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)) + np.abs(C.astype(np.float64))
    values = np.array([math.ldexp(float(x), exact.scale) if abs(x).bit_length() < 1000 else math.inf
                       for x in exact.ints])
    small = np.abs(values) < mag.ravel() * 2.0 ** -(fout.precision - 1)
    return float(small.mean()) if small.size else 0.0


def _row(p: ModelParams, kind: str, k: int, e: Errors, elements: int, cancelled: float) -> dict:
    mag, rel = np.abs(e.ulps), np.abs(e.relative[~np.isnan(e.relative)])
    return {"model": p.name, "distribution": kind, "k": k, "elements": elements,
            "max_ulps": float(mag.max()) if mag.size else None,
            "mean_ulps": float(mag.mean()) if mag.size else None,
            "mean_signed_ulps": float(e.ulps.mean()) if mag.size else None,
            "max_relative": float(rel.max()) if rel.size else None,
            "mean_relative": float(rel.mean()) if rel.size else None,
            "inexact": e.inexact / elements,
            "towards_zero": e.towards_zero / e.inexact if e.inexact else None,
            "nonfinite": e.nonfinite, "cancelled": cancelled}


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
            exact = exacts.exact(p, A, B, C)
            done[key] = errors(D, exact, p.fout), D.size, cancelled_share(A, B, C, exact, p.fout)
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


def study_bytes(params: list[ModelParams], m: int, n: int, k: int, backend=None) -> int:
    """The peak of one (distribution, K) step of the study: the inputs in
    float64 and their rounded copies, their integer parts and exponents, the
    exact sum's bins (one int64 per power of two per element, and a copy)
    and chunk of products, one Python integer per element, the errors, and
    the largest of the models' GEMMs (tcsmt.sim.memory.gemm_bytes)."""
    from tcsmt.sim.memory import gemm_bytes
    inputs = (m * k + k * n) * (8 + 8 + 8 + 32)
    bins = max((2 * max(p.fin.emax, p.fb.emax) + 4, p.fc.emax + 2) for p in params)
    low = min(min(p.fin.emin - p.fin.frac_bits + p.fb.emin - p.fb.frac_bits, p.fc.emin - p.fc.frac_bits,
                  p.fout.emin - p.fout.frac_bits) for p in params)
    exact = m * n * (2 * 8 * (max(bins) - low) + 120 + 8 * 6) + CHUNK_ELEMENTS * 8 * 6
    return inputs + exact + max(gemm_bytes(p, m, n, k, backend) for p in params)


def check_memory(params: list[ModelParams], m: int, n: int, k: int, backend=None) -> None:
    """BudgetExceeded before a study whose largest step would not fit."""
    require(study_bytes(params, m, n, k, backend),
            f"measuring the error of {m}x{k} times {k}x{n} under {len(params)} model(s)")


def measure(models, m: int = 64, n: int = 64, ks=(16, 64, 256, 1024), distributions=KINDS,
            seed: int = 0, *, formats: str | None = None, overrides=(), inputs=None,
            backend: str | None = None, progress=None) -> dict:
    """The error document: a row per model, distribution and K. ``inputs``
    (A, B[, C]) replaces the random matrices (one K: A's columns)."""
    t0 = time.monotonic()
    params = resolve_models(models, formats, overrides)
    if not params:
        raise UserError("name at least one model")
    tell = progress or (lambda name, done, total: None)
    if inputs is not None:
        A, B, *C = (np.asarray(x) for x in inputs)
        if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
            raise UserError(f"A ({A.shape}) and B ({B.shape}) must be M x K and K x N")
        m, n = A.shape[0], B.shape[1]
        check_memory(params, m, n, A.shape[1], backend)
        plan: list[tuple[str, int, _Exacts | None]] = [
            ("given", A.shape[1], _Exacts(A, B, C[0] if C else None))]
    else:
        unknown = [d for d in distributions if d not in KINDS]
        if unknown or not distributions:
            raise UserError(f"unknown distribution {(unknown or [''])[0]!r} (known: {', '.join(KINDS)})")
        ks = _check_sizes(m, n, ks)
        check_memory(params, m, n, ks[-1], backend)
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
