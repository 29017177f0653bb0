"""Z3 backend: parse SMT-LIB text, check it, read the inputs' values.

Imported only inside a worker process of ``tcsmt.smt.service``; the module
name differs from the solver's package (``z3``) on purpose.
"""

from __future__ import annotations

import z3


def version() -> str:
    return z3.get_version_string()


def check(text: str, inputs: dict[str, int], timeout_s: float | None) -> dict:
    """Status (sat, unsat, unknown), reason, the values of ``inputs`` (name
    -> width, 0 for a Bool) as ints when sat, and the solver's version."""
    ctx = z3.Context()
    solver = z3.Solver(ctx=ctx)
    if timeout_s:
        solver.set("timeout", max(1, int(timeout_s * 1000)))
    solver.from_string(text)             # assertions only; commands are ignored
    result = solver.check()
    out = {"status": "unknown", "reason": "", "values": {}, "version": version()}
    if result == z3.sat:
        out["status"] = "sat"
        model = solver.model()
        out["values"] = {n: _value(model, n, w, ctx) for n, w in inputs.items()}
    elif result == z3.unsat:
        out["status"] = "unsat"
    else:
        out["reason"] = f"z3 gave up: {solver.reason_unknown()}"
    return out


def _value(model, name: str, width: int, ctx) -> int:
    """An input's value (model completion: an input the formula does not
    constrain gets one too)."""
    const = z3.Bool(name, ctx) if width == 0 else z3.BitVec(name, width, ctx)
    v = model.eval(const, model_completion=True)
    return int(z3.is_true(v)) if width == 0 else v.as_long()
