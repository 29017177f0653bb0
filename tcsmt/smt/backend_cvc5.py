"""cvc5 backend: parse SMT-LIB text, check it, read the inputs' values.

Imported only inside a worker process of ``tcsmt.smt.service``; the module
name differs from the solver's package (``cvc5``) on purpose.

cvc5 runs with ``bv-solver=bitblast-internal``: on the block-FMA queries the
default bit-vector solver took over 30 s where this one took under a second
(measured on this machine, see benchmarks/bench_diff.py).
"""

from __future__ import annotations

import cvc5

OPTIONS = {"produce-models": "true", "bv-solver": "bitblast-internal"}
SKIP = {"check-sat", "get-value", "get-model", "exit"}


def version() -> str:
    return _text(cvc5.Solver(cvc5.TermManager()).getVersion())


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def check(text: str, inputs: dict[str, int], timeout_s: float | None) -> dict:
    """Status (sat, unsat, unknown), reason, the values of ``inputs`` (name
    -> width, 0 for a Bool) as ints when sat, and the solver's version."""
    tm = cvc5.TermManager()
    solver = cvc5.Solver(tm)
    for key, value in OPTIONS.items():
        solver.setOption(key, value)
    if timeout_s:
        solver.setOption("tlimit-per", str(max(1, int(timeout_s * 1000))))
    symbols = cvc5.SymbolManager(tm)
    parser = cvc5.InputParser(solver, symbols)
    parser.setStringInput(cvc5.InputLanguage.SMT_LIB_2_6, text, "tcsmt-query")
    while True:
        cmd = parser.nextCommand()
        if cmd.isNull():
            break
        if cmd.getCommandName() not in SKIP:
            cmd.invoke(solver, symbols)
    result = solver.checkSat()
    out = {"status": "unknown", "reason": "", "values": {}, "version": _text(solver.getVersion())}
    if result.isSat():
        out["status"] = "sat"
        declared = {str(t): t for t in symbols.getDeclaredTerms()}
        out["values"] = {n: _value(solver.getValue(declared[n])) for n in inputs}
    elif result.isUnsat():
        out["status"] = "unsat"
    else:
        out["reason"] = f"cvc5 gave up: {result.getUnknownExplanation()}"
    return out


def _value(term) -> int:
    if term.getSort().isBoolean():
        return int(term.getBooleanValue())
    return int(term.getBitVectorValue(10))
