"""Bitwuzla backend: parse SMT-LIB text, check it, read the inputs' values.

Imported only inside a worker process of ``tcsmt.smt.service``; the module
name differs from the solver's package (``bitwuzla``) on purpose.
"""

from __future__ import annotations

import bitwuzla as bz


def version() -> str:
    return bz.version()


def check(text: str, inputs: dict[str, int], timeout_s: float | None) -> dict:
    """Status (sat, unsat, unknown), reason, the values of ``inputs`` (name
    -> width, 0 for a Bool) as ints when sat, and the solver's version."""
    tm = bz.TermManager()
    options = bz.Options()
    options.set(bz.Option.PRODUCE_MODELS, True)
    if timeout_s:
        options.set(bz.Option.TIME_LIMIT_PER, max(1, int(timeout_s * 1000)))
    parser = bz.Parser(tm, options)
    parser.parse(text, True, False)      # parse only: check-sat is ours to call
    solver = parser.bitwuzla()
    result = solver.check_sat()
    out = {"status": "unknown", "reason": "", "values": {}, "version": version()}
    if result == bz.Result.SAT:
        out["status"] = "sat"
        declared = {f.symbol(): f for f in parser.get_declared_funs()}
        out["values"] = {n: _value(solver.get_value(declared[n])) for n in inputs}
    elif result == bz.Result.UNSAT:
        out["status"] = "unsat"
    else:
        out["reason"] = "bitwuzla gave up (time limit or incomplete)"
    return out


def _value(term) -> int:
    return int(term.value(10))      # a decimal string, or a bool for a Bool
