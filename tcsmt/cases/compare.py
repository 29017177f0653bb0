"""compare-algorithms: can Ootomo-Yokota be less accurate than Markidis et al.?

The methods, the exact reference and the question are defined once in
``tcsmt.cases.algorithms``; this module builds the formulas, races them on the
solvers, replays every witness and writes the result document.

Formulations (raced; a witness of any of them is a witness of the question,
only the full one can prove that there is none):

  full           a_i, b_i, c free binary32 values of the domain.
  half           a_i and b_i binary16 values (c free). For such inputs the
                 split is known: x16 = x and the residual is +0 (a lemma
                 checked on every witness by the replay of the full
                 definition, and for every binary16 value by the tests), so
                 the residual tensor-core calls see constant zeros.
  /pow2-b        every b_i a power of two (or zero): no multiplier is left
                 for the solver to invert, and the inputs read like the
                 hand-made tests of the papers.
  /support-m     only m products non-zero (the others a = b = +0).

``--reproduce`` adds VLPG's Table 5 outcome as constraints: true value
1 + 2^-23, Markidis 1 + 2^-23, Ootomo-Yokota 1.

Result document, schema ``tcsmt-compare/2`` (an extension of
tcsmt-result/1: the hypotheses are methods, not datapath models, so
``tcsmt replay`` does not apply; ``replay_compare`` does):

    schema                                        "tcsmt-compare/2"
    run         as in tcsmt-result/2: tool, created, seconds, proved_by,
                solver {"name", "version", "seconds", "formula", "runs",
                "notes"}, smt2_sha256 (volatile: not compared on regeneration)
    query       {"kind": "compare-algorithms", "description", "question",
                 "methods", "arch", "k", "domain", "reference", "reproduce",
                 "command"}
    formats     {"a", "b", "c", "d"}: binary32
    model       {"name", "parameters"}: the tensor-core model used
    hypotheses  [{"id": method, "description"}] for the two methods
    verdict     "sat" (a vector where Ootomo-Yokota is less accurate),
                "unsat" (proved: nowhere in the domain), "unknown"
    proof       {"cross_checked"} for unsat, else null
    vectors     [{"a", "b", "c": hex and exact decimal,
                  "true": {"exact": decimal, "binary64": {"hex", "decimal"}},
                  "outputs": {method: {"hex", "decimal", "error",
                                       "error_vs_binary64"}},
                  "less_accurate": "ootomo-yokota"}]
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

from tcsmt.cases import algorithms as al
from tcsmt.cases import compare_pool
from tcsmt.enums import Verdict
from tcsmt.errors import UserError, WitnessError
from tcsmt.fileio import read_json
from tcsmt.model.catalogue import all_models
from tcsmt.model.choose import choose
from tcsmt.model.formats import format_value
from tcsmt.model.params import ModelParams
from tcsmt.report.documents import cross_checked, solver_record
from tcsmt.report.results import (
    earlier,
    number,
    params_from_record,
    run_record,
    solver_versions,
    write_result,
)
from tcsmt.search import separation as sep
from tcsmt.search.domain import Domain
from tcsmt.search.separation import few_bits
from tcsmt.search.vectors import Vector
from tcsmt.smt import service
from tcsmt.smt.smtlib import Formula, build_formula

SCHEMA = "tcsmt-compare/2"
PREVIOUS = "tcsmt-compare/1"           # its vectors read the same: a rerun keeps them
TABLE5 = {"true": 1 + Fraction(1, 2**23), "markidis": 1 + Fraction(1, 2**23),
          "ootomo-yokota": Fraction(1)}
C_NEAR = Domain(c_exp_range=(-64, 32), subnormal_inputs=False)
QUESTION = "|ootomo-yokota - true| > |markidis - true|"
RESTRICTION_BUDGET = 40.0
"""CPU seconds a solver may spend on one restriction: these formulas hold
five tensor-core datapaths and an exact reference, far more than a diff's
(tcsmt.search.separation.RESTRICTION_BUDGET)."""
HALF = "half"
"""The tag of the restriction to binary16 a and b alone."""
CANDIDATES = "candidates"
"""The tag (run.solver.formula) of a witness the candidate search found."""


def fp16_fp32_models() -> list[ModelParams]:
    """Every architecture's fp16-input, fp32-output model (one each)."""
    out: dict[str, ModelParams] = {}
    for m in all_models():
        if (m.fin.name, m.fc.name, m.fout.name) == ("float16", "float32", "float32"):
            out.setdefault(m.arch, m)
    return list(out.values())


def arch_model(arch: str) -> ModelParams:
    p = choose(arch, "fp16:fp32")
    if (p.fin.name, p.fc.name, p.fout.name) != ("float16", "float32", "float32"):
        raise UserError(f"{p.name}: the methods need fp16 inputs with fp32 c and output")
    return p


# ---------------------------------------------------------------------------
# Formulas
# ---------------------------------------------------------------------------

def formula(tc: ModelParams, k: int, reproduce: bool = False, half: bool = False,
            pow2_b: bool = False, support: tuple[int, ...] | None = None,
            c_near: bool = False) -> Formula:
    s = al.setup(tc)

    def build(I):
        on = set(range(k)) if support is None else set(support)
        c = I.var("c", 32)
        fmt = al.F16 if half else al.F32
        ins = {n: [I.var(f"{n}{i}", fmt.bits) if i in on else I.const(0, fmt.bits)
                   for i in range(k)] for n in ("a", "b")}
        out = [few_bits(I, fmt, y, 1) for y in ins["b"]] if pow2_b else []
        if half:
            # binary32 inputs are the binary16 values; their split is (x, +0)
            a = [al.round_to(I, s, al.term(I, s, al.F16, h), al.F32) for h in ins["a"]]
            b = [al.round_to(I, s, al.term(I, s, al.F16, h), al.F32) for h in ins["b"]]
            zeros = [I.const(0, 16)] * k
            pm = po = al.Pieces(ins["a"], zeros, ins["b"], zeros)
            terms = al.exact_terms(I, s, [al.term(I, s, al.F16, h) for h in ins["a"]],
                                   [al.term(I, s, al.F16, h) for h in ins["b"]], c)
            out += [I.eq(I.var(f"x{n}{i}", 32), x) for n, xs in (("a", a), ("b", b))
                    for i, x in enumerate(xs)]
        else:
            a, b = ins["a"], ins["b"]
            pm, po = al.pieces(I, s, a, b, 0), al.pieces(I, s, a, b, al.SCALE_BITS)
            terms = al.exact_terms(I, s, *al.inputs32(I, s, a, b), c)
        out += al.DOMAIN.constraints(I, al.F32, al.F32, a, b, c)
        if c_near:
            out += C_NEAR.constraints(I, al.F32, al.F32, a, b, c)
        m, o = al.markidis_tc(I, s, pm, c), al.ootomo_yokota_tc(I, s, po, c)
        out += [I.eq(I.var("m", 32), m), I.eq(I.var("o", 32), o)]
        out.append(al.ootomo_worse(I, s, terms, m, o))
        if reproduce:
            bits = {n: al.F32.round_value(v, "rne") for n, v in TABLE5.items()}
            out += [I.eq(m, I.const(bits["markidis"], 32)),
                    I.eq(o, I.const(bits["ootomo-yokota"], 32)),
                    al.equals_exactly(I, s, terms, I.const(bits["true"], 32))]
        return out

    what = ", ".join(x for x in ("binary16 a and b" if half else "",
                                 "b powers of two" if pow2_b else "",
                                 f"products {list(support)} free" if support else "") if x)
    return build_formula(build, description=f"tcsmt compare-algorithms {tc.name} k={k}: "
                         f"{QUESTION}{' (Table 5 outcome)' if reproduce else ''} "
                         f"({what or 'full'})")


def formulations(tc: ModelParams, k: int, reproduce: bool) -> list[tuple[str, Formula]]:
    """Restricted formulas, quickest first, then the full one."""
    out = []
    for m in sorted({2, 3, k}):
        if m <= k:
            sup = None if m == k else sep.support_positions(k, m)
            tag = "half/pow2-b/c-near" + ("" if sup is None else f"/support-{m}")
            out.append((tag, formula(tc, k, reproduce, half=True, pow2_b=True, support=sup,
                                     c_near=True)))
    out.append((HALF, formula(tc, k, reproduce, half=True)))
    out.append((sep.FULL, formula(tc, k, reproduce)))
    return out


# ---------------------------------------------------------------------------
# Witnesses
# ---------------------------------------------------------------------------

def decode(values: dict[str, int], k: int, half: bool) -> tuple[list[int], list[int], int]:
    if half:
        return ([values.get(f"xa{i}", 0) for i in range(k)],
                [values.get(f"xb{i}", 0) for i in range(k)], values.get("c", 0))
    return ([values.get(f"a{i}", 0) for i in range(k)], [values.get(f"b{i}", 0) for i in range(k)],
            values.get("c", 0))


def check_witness(tc: ModelParams, a: list[int], b: list[int], c: int,
                  values: dict[str, int] | None = None, reproduce: bool = False) -> al.Evaluation:
    """Replay on the concrete definition: in the domain, the question holds
    (by the vocabulary and by exact fractions), the solver's outputs are the
    concrete ones, and with ``reproduce`` the Table 5 outcome."""
    if not al.DOMAIN.contains(al.F32, al.F32, a, b, c):
        raise WitnessError(f"witness a={a} b={b} c={c:#x} is outside the domain")
    ev = al.evaluate(tc, a, b, c)
    if not ev.worse_by_vocabulary or not ev.error("ootomo-yokota") > ev.error("markidis"):
        raise WitnessError(f"witness a={a} b={b} c={c:#x}: Ootomo-Yokota is not less "
                                f"accurate on the concrete model {tc.name}")
    for name, key in (("markidis", "m"), ("ootomo-yokota", "o")):
        if values and key in values and values[key] != ev.results[name]:
            raise WitnessError(f"witness a={a} b={b} c={c:#x}: the solver says {name} gives "
                                    f"{values[key]:#x}, the concrete model {ev.results[name]:#x}")
    if reproduce:
        got = {"true": ev.true, **{n: al.F32.value(r) for n, r in ev.results.items()}}
        if got != TABLE5:
            raise WitnessError(f"witness a={a} b={b} c={c:#x} does not give Table 5's outcome")
    return ev


# ---------------------------------------------------------------------------
# The query
# ---------------------------------------------------------------------------

def run_compare(arch: str, k: int = 4, solver: str = "portfolio", timeout: float = 300.0,
                reproduce: bool = False, command: str | None = None,
                prior: str | Path | dict | None = None, seeds: Sequence[Vector] = (),
                pool: bool = True) -> dict:
    """The tcsmt-compare/2 document for one architecture's fp16:fp32 model.
    ``prior``: an earlier result (a document, or its path), whose witness is
    kept if it holds; then the candidate search (tcsmt.cases.compare_pool:
    ``seeds``, other architectures' witnesses, their mutations, a
    structured pool; with ``pool``), each replayed on the concrete model;
    then the solvers."""
    if not 1 <= k <= 16:
        raise UserError(f"--k {k}: one tensor-core call covers 1..16 terms")
    tc = arch_model(arch)
    forms = formulations(tc, k, reproduce)
    names, notes = service.choose_solvers(solver)
    old = _prior_witness(prior, tc, k, reproduce)
    found = None if old is not None or not pool else searched(tc, k, seeds, reproduce)
    if old is not None:
        out = sep.Outcome(Verdict.SAT, forms[-1][1], vectors=[old], tag="earlier result")
    elif found is not None:
        out = sep.Outcome(Verdict.SAT, forms[-1][1], vectors=[found[0]], tag=CANDIDATES,
                          seconds=found[1])
    else:
        jobs = [_job(tag, f, s) for tag, f in first_solver_order(forms) for s in names[:1]]
        jobs += [_job(tag, f, s) for tag, f in forms[-2:] for s in names[1:]]
        out = sep.race(jobs, forms, timeout, lambda run: [_replay(tc, k, run, reproduce)],
                       names=names, parallel=2)
    out.notes += notes
    vectors = []
    for v in out.vectors:
        a, b, c = list(v.a), list(v.b), v.c
        vectors.append(vector_record(check_witness(tc, a, b, c), a, b, c))
    return document(tc, k, reproduce, vectors, out, command)


def first_solver_order(forms: list[tuple[str, Formula]]) -> list[tuple[str, Formula]]:
    """The formulas in the order the first solver takes them, two at a
    time: the quickest restriction beside "half" (binary16 a and b, no
    other restriction), then the other restrictions, then the full
    formula. Where every narrower restriction is unsat (CDNA2 at k = 4:
    three restrictions, 40 CPU-s each, before "half" could start) "half"
    answers from the start."""
    half = [x for x in forms if x[0] == HALF]
    rest = [x for x in forms if x[0] != HALF]
    return rest[:1] + half + rest[1:]


def _job(tag: str, f: Formula, solver: str) -> service.Job:
    """One solver on one formula: the full formula and "half" until the
    race's timeout, a narrower restriction within RESTRICTION_BUDGET."""
    return service.Job(f, solver, tag, None if tag in (sep.FULL, HALF) else RESTRICTION_BUDGET)


def searched(tc: ModelParams, k: int, seeds: Sequence[Vector],
             reproduce: bool) -> tuple[Vector, float] | None:
    """The first candidate (tcsmt.cases.compare_pool) that answers the
    question on the concrete model, with the CPU seconds the search took."""
    t0 = time.process_time()
    for vec in compare_pool.candidates(k, seeds):
        try:
            check_witness(tc, list(vec.a), list(vec.b), vec.c, reproduce=reproduce)
            return vec, time.process_time() - t0
        except WitnessError:
            continue
    return None


def _replay(tc: ModelParams, k: int, run, reproduce: bool) -> Vector:
    a, b, c = decode(run.values, k, run.tag.startswith("half"))
    check_witness(tc, a, b, c, run.values, reproduce)
    return Vector(tuple(a), tuple(b), c)


def _prior_witness(path, tc: ModelParams, k: int, reproduce: bool) -> Vector | None:
    """An earlier result's witness, if it still answers the question."""
    doc = earlier(path) if path else None
    if not doc or doc.get("schema") not in (SCHEMA, PREVIOUS) or not doc.get("vectors"):
        return None
    try:
        vec = compare_pool.vector_of(doc["vectors"][0])
        if len(vec.a) != k:
            return None
        check_witness(tc, list(vec.a), list(vec.b), vec.c, reproduce=reproduce)
        return vec
    except (KeyError, TypeError, ValueError, WitnessError):
        return None


def vector_record(ev: al.Evaluation, a: list[int], b: list[int], c: int) -> dict:
    outs = {}
    for name, bits in ev.results.items():
        outs[name] = {**number(al.F32, bits), "error": format_value(ev.error(name)),
                      "error_vs_binary64": format_value(ev.error64(name))}
    worse = "ootomo-yokota" if ev.error("ootomo-yokota") > ev.error("markidis") else "markidis"
    return {"a": [number(al.F32, x) for x in a], "b": [number(al.F32, y) for y in b],
            "c": number(al.F32, c),
            "true": {"exact": format_value(ev.true), "binary64": number(al.F64, ev.binary64)},
            "outputs": outs, "less_accurate": worse}


def document(tc, k, reproduce, vectors, out: sep.Outcome, command) -> dict:
    return {
        "schema": SCHEMA,
        "query": {"kind": "compare-algorithms",
                  "description": "Markidis et al. (2018) against Ootomo and Yokota (2022): "
                                 "error-corrected binary32 dot products on fp16 tensor cores",
                  "question": QUESTION, "methods": list(al.METHODS), "arch": tc.arch, "k": k,
                  "domain": al.DOMAIN.describe(),
                  "reference": "true = exact c + sum a_i b_i; binary64 = the ampere-fp64 "
                               "model's FMA chain, reported beside it",
                  "reproduce": ({n: format_value(v) for n, v in TABLE5.items()}
                                if reproduce else None),
                  "command": command or ""},
        "formats": {"a": "float32", "b": "float32", "c": "float32", "d": "float32"},
        "model": {"name": tc.name, "parameters": tc.parameter_dict()},
        "hypotheses": [{"id": "markidis", "description": "Markidis et al. 2018, eq. 6: four "
                        "chained tensor-core calls, c accumulated inside"},
                       {"id": "ootomo-yokota", "description": "Ootomo and Yokota 2022, eq. 24: "
                        "residuals scaled by 2^11, dA dB dropped, accumulation outside in "
                        "binary32 round to nearest"}],
        "verdict": str(out.verdict),
        "proof": ({"cross_checked": cross_checked(out.proved_by)}
                  if out.verdict == Verdict.UNSAT else None),
        "solvers": solver_versions(),
        "vectors": vectors,
        "run": run_record(out.seconds, out.proved_by, solver_record(out),
                          (out.answered or out.full).sha256),
    }


def result_path(arch: str, k: int, reproduce: bool, root: str | Path = "results") -> Path:
    return Path(root) / "compare-algorithms" / f"{arch}-k{k}{'-reproduce' if reproduce else ''}.json"


def write(path: str | Path, doc: dict, replace_answers: bool = False):
    """Write atomically unless the file holds the same stable content."""
    return write_result(path, doc, check=check_document, replace_answers=replace_answers)


def check_document(doc: dict) -> None:
    if doc.get("schema") != SCHEMA:
        raise UserError(f"schema is not {SCHEMA!r}")


def replay_compare(path: str | Path) -> list[str]:
    """Every vector of a tcsmt-compare/2 file through the concrete definition
    again; the problems found (none: the file holds)."""
    doc = read_json(path)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise UserError(f"{path}: schema is not {SCHEMA!r}")
    tc = params_from_record({"id": "model", "label": doc["model"]["name"],
                             "parameters": doc["model"]["parameters"]}, str(path))
    problems = []
    for i, v in enumerate(doc["vectors"]):
        vec = compare_pool.vector_of(v)
        a, b, c = list(vec.a), list(vec.b), vec.c
        want = vector_record(al.evaluate(tc, a, b, c), a, b, c)
        for key in ("true", "outputs", "less_accurate"):
            if v.get(key) != want[key]:
                problems.append(f"vector {i}: {key} is {v.get(key)}, the model gives {want[key]}")
    return problems
