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

Result document, schema ``tcsmt-compare/1`` (an extension of
tcsmt-result/1: the hypotheses are methods, not datapath models, so
``tcsmt replay`` does not apply; ``replay_compare`` does):

    schema, tool, created, seconds, smt2_sha256   as in tcsmt-result/1
    query       {"kind": "compare-algorithms", "description", "question",
                 "methods", "arch", "k", "domain", "reference", "reproduce",
                 "command"}
    formats     {"a", "b", "c", "d"}: binary32
    model       {"name", "parameters"}: the tensor-core model used
    hypotheses  [{"id": method, "description"}] for the two methods
    verdict     "sat" (a vector where Ootomo-Yokota is less accurate),
                "unsat" (proved: nowhere in the domain), "unknown"
    proof       {"proved_by", "cross_checked"} for unsat, else null
    solver      {"name", "version", "seconds", "formula", "runs", "notes"}
    vectors     [{"a", "b", "c": hex and exact decimal,
                  "true": {"exact": decimal, "binary64": {"hex", "decimal"}},
                  "outputs": {method: {"hex", "decimal", "error",
                                       "error_vs_binary64"}},
                  "less_accurate": "ootomo-yokota"}]
"""

from __future__ import annotations

import datetime
import json
import time
from fractions import Fraction
from pathlib import Path

from tcsmt import __version__
from tcsmt.cases import algorithms as al
from tcsmt.errors import UserError
from tcsmt.fileio import write_json_atomic
from tcsmt.model.catalogue import all_models, find_model
from tcsmt.model.formats import format_value
from tcsmt.model.params import ModelParams
from tcsmt.report.results import number, params_from_record
from tcsmt.search import diff
from tcsmt.search.domain import Domain
from tcsmt.search.find import few_bits
from tcsmt.smt import service
from tcsmt.smt.smtlib import Formula, build_formula

SCHEMA = "tcsmt-compare/1"
TABLE5 = {"true": 1 + Fraction(1, 2**23), "markidis": 1 + Fraction(1, 2**23),
          "ootomo-yokota": Fraction(1)}
C_NEAR = Domain(c_exp_range=(-64, 32), subnormal_inputs=False)
QUESTION = "|ootomo-yokota - true| > |markidis - true|"
RESTRICTION_BUDGET = 40.0      # CPU seconds a solver may spend on one restriction


def fp16_fp32_models() -> list[ModelParams]:
    """Every architecture's fp16-input, fp32-output model (one each)."""
    out = {}
    for m in all_models():
        if (m.fin.name, m.fc.name, m.fout.name) == ("float16", "float32", "float32"):
            out.setdefault(m.arch, m)
    return list(out.values())


def arch_model(arch: str) -> ModelParams:
    p = find_model(arch, "fp16:fp32")
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
            sup = None if m == k else diff.support_positions(k, m)
            tag = "half/pow2-b/c-near" + ("" if sup is None else f"/support-{m}")
            out.append((tag, formula(tc, k, reproduce, half=True, pow2_b=True, support=sup,
                                     c_near=True)))
    out.append(("half", formula(tc, k, reproduce, half=True)))
    out.append((diff.FULL, formula(tc, k, reproduce)))
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
        raise diff.WitnessError(f"witness a={a} b={b} c={c:#x} is outside the domain")
    ev = al.evaluate(tc, a, b, c)
    if not ev.worse_by_vocabulary or not ev.error("ootomo-yokota") > ev.error("markidis"):
        raise diff.WitnessError(f"witness a={a} b={b} c={c:#x}: Ootomo-Yokota is not less "
                                f"accurate on the concrete model {tc.name}")
    for name, key in (("markidis", "m"), ("ootomo-yokota", "o")):
        if values and key in values and values[key] != ev.results[name]:
            raise diff.WitnessError(f"witness a={a} b={b} c={c:#x}: the solver says {name} gives "
                                    f"{values[key]:#x}, the concrete model {ev.results[name]:#x}")
    if reproduce:
        got = {"true": ev.true, **{n: al.F32.value(r) for n, r in ev.results.items()}}
        if got != TABLE5:
            raise diff.WitnessError(f"witness a={a} b={b} c={c:#x} does not give Table 5's outcome")
    return ev


# ---------------------------------------------------------------------------
# The query
# ---------------------------------------------------------------------------

def run_compare(arch: str, k: int = 4, solver: str = "portfolio", timeout: float = 300.0,
                reproduce: bool = False, command: str | None = None) -> dict:
    """The tcsmt-compare/1 document for one architecture's fp16:fp32 model."""
    if not 1 <= k <= 16:
        raise UserError(f"--k {k}: one tensor-core call covers 1..16 terms")
    t0 = time.monotonic()
    tc = arch_model(arch)
    forms = formulations(tc, k, reproduce)
    names, notes = service.choose_solvers(solver)
    jobs = [service.Job(f, s, tag, None if tag == diff.FULL else RESTRICTION_BUDGET)
            for tag, f in forms for s in names[:1]]
    jobs += [service.Job(f, s, tag, None if tag == diff.FULL else RESTRICTION_BUDGET)
             for tag, f in forms[-2:] for s in names[1:]]
    runs = service.race(jobs, timeout, stop=lambda r: r.status == "sat" or r.tag == diff.FULL,
                        parallel=2)
    diff._refuse_disagreement(runs)
    sat = [r for r in runs if r.status == "sat"]
    vectors, verdict = [], "unknown"
    if sat:
        a, b, c = decode(sat[0].values, k, sat[0].tag.startswith("half"))
        vectors.append(vector_record(check_witness(tc, a, b, c, sat[0].values, reproduce), a, b, c))
        verdict = "sat"
    elif any(r.status == "unsat" and r.tag == diff.FULL for r in runs):
        verdict = "unsat"
    win = sat[0] if sat else next((r for r in runs if r.status == "unsat" and r.tag == diff.FULL),
                                  None)
    proved = [r.solver for r in runs if r.status == "unsat" and r.tag == diff.FULL]
    return document(tc, k, reproduce, vectors, verdict, win, runs, notes, proved,
                    dict(forms)[win.tag if win else diff.FULL].sha256, time.monotonic() - t0,
                    command)


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


def document(tc, k, reproduce, vectors, verdict, win, runs, notes, proved, sha, seconds,
             command) -> dict:
    return {
        "schema": SCHEMA,
        "tool": {"name": "tcsmt", "version": __version__},
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
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
        "verdict": verdict,
        "proof": ({"proved_by": proved, "cross_checked": len(set(proved)) >= 2}
                  if verdict == "unsat" else None),
        "solver": {"name": win.solver if win else "", "version": win.version if win else "",
                   "seconds": round(win.seconds, 3) if win else 0.0,
                   "formula": win.tag if win else "", "runs": [r.summary() for r in runs],
                   "notes": notes},
        "smt2_sha256": sha,
        "seconds": round(seconds, 3),
        "vectors": vectors,
    }


def result_path(arch: str, k: int, reproduce: bool, root: str | Path = "results") -> Path:
    return Path(root) / "compare-algorithms" / f"{arch}-k{k}{'-reproduce' if reproduce else ''}.json"


def write(path: str | Path, doc: dict) -> Path:
    write_json_atomic(path, doc)
    return Path(path)


def replay_compare(path: str | Path) -> list[str]:
    """Every vector of a tcsmt-compare/1 file through the concrete definition
    again; the problems found (none: the file holds)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise UserError(f"{path}: cannot read a result: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise UserError(f"{path}: schema is not {SCHEMA!r}")
    tc = params_from_record({"id": "model", "label": doc["model"]["name"],
                             "parameters": doc["model"]["parameters"]}, str(path))
    problems = []
    for i, v in enumerate(doc["vectors"]):
        a = [int(x["hex"], 16) for x in v["a"]]
        b = [int(y["hex"], 16) for y in v["b"]]
        c = int(v["c"]["hex"], 16)
        want = vector_record(al.evaluate(tc, a, b, c), a, b, c)
        for key in ("true", "outputs", "less_accurate"):
            if v.get(key) != want[key]:
                problems.append(f"vector {i}: {key} is {v.get(key)}, the model gives {want[key]}")
    return problems
