"""Boolector backend: parse SMT-LIB text, check it, read the inputs' values.

Imported only inside a worker process of ``tcsmt.smt.service``; the module
name differs from the solver's package (``pyboolector``) on purpose.

Boolector reads a file, not a string: the text goes to a temporary file
whole but for the ``(get-value ...)`` command (the inputs' values are read
back through the API instead). On the proofs whose sums of many aligned
products Bitwuzla settles in seconds and Z3 and cvc5 not in minutes (the
carry-bit lemmas of the block-scaled models), Boolector is the second
solver that proves them.
"""

from __future__ import annotations

import os
import tempfile
import time

import pyboolector

MODEL_GEN = 0          # index of the option "model-gen" in Boolector's option list


def version() -> str:
    return pyboolector.Boolector().Version()


def check(text: str, inputs: dict[str, int], timeout_s: float | None) -> dict:
    """Status (sat, unsat, unknown), reason, the values of ``inputs`` (name
    -> width, 0 for a Bool) as ints when sat, and the solver's version."""
    btor = pyboolector.Boolector()
    btor.Set_opt(MODEL_GEN, 1)
    if timeout_s:
        start = time.monotonic()
        btor.Set_term(lambda _: time.monotonic() - start > timeout_s, None)
    body = "\n".join(line for line in text.splitlines() if not line.startswith("(get-value"))
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "query.smt2"), os.path.join(tmp, "out.txt")
        with open(src, "w", encoding="utf-8") as f:
            f.write(body + "\n")
        open(out, "w").close()
        result, _, error = btor.Parse(src, out)
    answer = {"status": "unknown", "reason": "", "values": {}, "version": btor.Version()}
    if error:
        answer.update(status="error", reason=f"boolector cannot read the query: {error}")
    elif result == btor.SAT:
        answer["status"] = "sat"
        answer["values"] = {n: int(btor.Match_by_symbol(n).assignment, 2) for n in inputs}
    elif result == btor.UNSAT:
        answer["status"] = "unsat"
    else:
        answer["reason"] = "boolector gave up (time limit)" if timeout_s else "boolector gave up"
    return answer
