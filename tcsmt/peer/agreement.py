"""Agreement with MMA-Sim, measured: for every row of the model -> MMA-Sim
table (tcsmt.peer.mmasim.PAIRS), random dot products over the whole
range of the formats (tcsmt.observed.random_rows) run through tcsmt's batch
simulator and MMA-Sim's ``dpa``, compared bit for bit.

Each difference is replayed: the row alone through tcsmt's scalar
simulator and through MMA-Sim again, and kept with its inputs (hex), both
outputs and the reason (KNOWN_DIFFERENCES), or "unexplained". NaN outputs
are compared bit for bit, except where MMA-Sim returns the host's NaN
(NAN_AS_CLASS: its fp64 path is the C library's fma, whose NaN payload is
the host's), where any NaN matches any NaN and the table says so.

The document (schema tcsmt-mmasim-agreement/2) is written as JSON and as a
Markdown table beside it. A run over some configurations updates a table
already written (``merge``): its rows for the configurations run are
replaced, the others kept, and the totals counted again, so the table can
be built in parts (architecture by architecture, or one job per
configuration through ``compare``) and rows added for new models.
"""

from __future__ import annotations

import time
from functools import partial
from importlib import metadata
from pathlib import Path

import numpy as np

from tcsmt import runner
from tcsmt.budget import require
from tcsmt.errors import UserError
from tcsmt.fileio import json_object_or_none, write_atomic, write_json_atomic
from tcsmt.model.choose import choose
from tcsmt.model.params import ModelParams
from tcsmt.observed.random_rows import KINDS, Rows, random_rows
from tcsmt.peer import mmasim
from tcsmt.sim.batch import dot_batch, supported
from tcsmt.sim.dot import dot_bits
from tcsmt.version import tool

SCHEMA = "tcsmt-mmasim-agreement/2"
NAN_AS_CLASS = {"MMA_FMA": "NaN compared as a class: MMA-Sim's fp64 path is the host's C fma, "
                           "whose NaN keeps the host's payload; tcsmt gives the canonical NaN",
                "MMA_E_FDPA": "NaN compared as a class: MMA-Sim's CDNA1 sums are the host's binary64 "
                              "arithmetic, whose NaN keeps an operand's payload; tcsmt gives the "
                              "canonical NaN",
                "MMA_FTZ_MUL_ADD": "NaN compared as a class: MMA-Sim's CDNA2 steps are the host's "
                                   "binary32 arithmetic, whose NaN keeps an operand's payload; tcsmt "
                                   "gives the canonical NaN"}
ZERO_SIGN = ("the sum rounds to zero: the model keeps its sign (zero_sign = positive), MMA-Sim "
             "returns +0 (it adds +0.0 to d); no recorded GPU row rounds a non-zero sum to zero, "
             "so neither is confirmed")
LATE_C_SPECIAL = ("c is NaN or infinite (given, or the result of the instruction's previous block of "
                  "products) and the products' exponent lies more than late_c_window above 0: "
                  "MMA-Sim's gtr_fdpa drops c by the exponent frexp gives a NaN or an infinity (0) "
                  "and returns a finite sum; the model keeps c's NaN or infinity")
READINGS = [
    ("late_sum_exponent", "products",
     "the products cancel to an exact zero: the model aligns c without them (late_sum_exponent = "
     "value), MMA-Sim at their largest exponent, cutting c's low bits; the row run with "
     "late_sum_exponent = products gives MMA-Sim's output; no recorded GPU row decides it"),
    ("zero_sign", "positive",
     "an exact zero sum of -0 terms only: the model gives IEEE's -0 (zero_sign = ieee), MMA-Sim +0 "
     "(its sums start from +0.0); the row run with zero_sign = positive gives MMA-Sim's output; "
     "no recorded GPU row decides it"),
]
"""Other readings of one parameter: a difference that vanishes when the row
is run again with the model so changed is explained by that reading."""
KNOWN_DIFFERENCES: dict[str, str] = {}
"""Model name -> why tcsmt and MMA-Sim differ on it, for differences no
rule below explains (none known)."""
EXAMPLES = 10


def selected_rows(names: list[str] | None = None) -> list[tuple[str, str, str, str]]:
    """Rows of PAIRS whose model, or its architecture, is named (all without names)."""
    if not names:
        return list(mmasim.PAIRS)
    out = [r for r in mmasim.PAIRS if r[0] in names or choose(r[0]).arch in names]
    known = {r[0] for r in mmasim.PAIRS} | {choose(r[0]).arch for r in mmasim.PAIRS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UserError(f"no MMA-Sim configuration for {unknown[0]!r} (a model or architecture "
                        f"of tcsmt.peer.mmasim.PAIRS)")
    return out


def tcsmt_outputs(p: ModelParams, rows: Rows) -> tuple[np.ndarray, str]:
    """d bits from the batch simulator, or the scalar one for models whose
    words exceed the batch interpreter's 64 bits (fp64)."""
    sa, sb = rows.scale_bits(p)
    if supported(p):
        return dot_batch(p, rows.a, rows.b, rows.c, sa_bits=sa, sb_bits=sb), "batch"
    out = [dot_bits(p, [int(x) for x in rows.a[i]], [int(x) for x in rows.b[i]], int(rows.c[i]),
                    None if sa is None else [int(x) for x in sa[i]],
                    None if sb is None else [int(x) for x in sb[i]]) for i in range(len(rows.c))]
    return np.array(out, dtype=np.uint64), "scalar"


def _is_nan(p: ModelParams, bits: np.ndarray) -> np.ndarray:
    f = p.fout
    exp = (bits >> np.uint64(f.frac_bits)) & np.uint64((1 << f.exp_bits) - 1)
    frac = bits & np.uint64((1 << f.frac_bits) - 1)
    return (exp == np.uint64((1 << f.exp_bits) - 1)) & (frac != 0)


def differing(p: ModelParams, ours: np.ndarray, theirs: np.ndarray, nan_class: bool) -> np.ndarray:
    diff = ours != theirs
    if nan_class:
        diff &= ~(_is_nan(p, ours) & _is_nan(p, theirs))
    return np.nonzero(diff)[0]


def reason(p: ModelParams, ours: int, theirs: int, rerun=None) -> str:
    """Why one output differs: a rule that recognises the difference from
    the two outputs and the model's parameters, else a reading (READINGS)
    under which ``rerun`` (the row through the scalar simulator under a
    changed model) gives MMA-Sim's output, else KNOWN_DIFFERENCES, else
    "unexplained"."""
    sign = 1 << (p.fout.bits - 1)
    if p.zero_sign == "positive" and {ours, theirs} == {0, sign}:
        return ZERO_SIGN
    if p.late_c_window is not None and p.fout.classify(ours) in ("nan", "inf") \
            and p.fout.classify(theirs) not in ("nan", "inf"):
        return LATE_C_SPECIAL
    for key, value, why in READINGS:
        if rerun is not None and getattr(p, key) != value and rerun(p.replace(**{key: value})) == theirs:
            return why
    return KNOWN_DIFFERENCES.get(p.name, "unexplained")


def _hexes(fmt, words) -> list[str]:
    return [fmt.hex(fmt.from_storage(int(w)) if not fmt.signed else int(w)) for w in words]


def row_dot(p: ModelParams, rows: Rows, i: int) -> int:
    """Row i of rows through the scalar simulator under p."""
    one = rows.take([i])
    sa, sb = one.scale_bits(p)
    return dot_bits(p, [int(x) for x in one.a[0]], [int(x) for x in one.b[0]], int(one.c[0]),
                    None if sa is None else [int(x) for x in sa[0]],
                    None if sb is None else [int(x) for x in sb[0]])


def example(p: ModelParams, op, rows: Rows, i: int, kind: str) -> dict:
    """One differing row, replayed on both simulators."""
    one = rows.take([i])
    ours = row_dot(p, rows, i)
    theirs = int(mmasim.run(op, p, one.a, one.b, one.c, one.sa, one.sb)[0])
    ex = {"row": int(i), "kind": kind, "a": _hexes(p.fin, one.a[0]), "b": _hexes(p.fb, one.b[0]),
          "c": p.fc.hex(int(one.c[0]))}
    if one.sa is not None and one.sb is not None:
        ex["scale_a"] = [f"0x{int(w):02x}" for w in one.sa[0]]
        ex["scale_b"] = [f"0x{int(w):02x}" for w in one.sb[0]]
    ex.update(tcsmt=p.fout.hex(ours), mmasim=p.fout.hex(theirs), replayed=ours != theirs,
              reason=reason(p, ours, theirs, lambda q: row_dot(q, rows, i)))
    return ex


def compare(row: tuple[str, str, str, str], n: int, seed: int) -> dict:
    """One configuration: n random rows through both simulators."""
    name, cls, arch, shape = row
    p = choose(name)
    op = mmasim.operation(cls, arch, shape)
    rows = random_rows(p, op.k, n, seed)
    t0 = time.perf_counter()
    ours, engine = tcsmt_outputs(p, rows)
    t1 = time.perf_counter()
    theirs = mmasim.run(op, p, rows.a, rows.b, rows.c, rows.sa, rows.sb)
    t2 = time.perf_counter()
    rule = NAN_AS_CLASS.get(type(op.arithmetic_op).__name__)
    bad = differing(p, ours, theirs, rule is not None)
    reasons: dict[str, int] = {}
    for i in bad:
        r = reason(p, int(ours[i]), int(theirs[i]), lambda q, i=i: row_dot(q, rows, int(i)))
        reasons[r] = reasons.get(r, 0) + 1
    return {"model": name, "mmasim": {"class": cls, "arch": arch, "shape": shape},
            "k": int(op.k), "vectors": int(n), "seed": int(seed), "differences": int(bad.size),
            "reasons": reasons,
            "simulator": engine, "nan": rule or "bit for bit",
            "seconds": {"tcsmt": round(t1 - t0, 3), "mmasim": round(t2 - t1, 3)},
            "examples": [example(p, op, rows, int(i), KINDS[int(i) % len(KINDS)])
                         for i in bad[:EXAMPLES]]}


def agreement(names: list[str] | None = None, n: int = 100_000, seed: int = 0,
              progress=None, previous: dict | None = None) -> dict:
    """The agreement document for the selected rows (see the module doc);
    ``previous``: a document written before, whose rows for configurations
    not run here are kept (``merge``). Each configuration is one job of
    tcsmt.runner (local worker processes, or a Dask cluster's workers when
    a scheduler is chosen); its row comes back here, and ``progress(row)``
    is called as each finishes."""
    if n < 1:
        raise UserError("--vectors must be at least 1")
    mod = mmasim.load_mmasim()
    versions = {"version": _version("mmasim", mod), "torch": _version("torch")}
    check_previous(previous, versions)
    rows = selected_rows(names)
    check_memory(rows, n)
    results: list[dict] = [{} for _ in rows]

    def take(done: runner.Done) -> None:
        i = int(done.name.split(":")[0])
        results[i] = done.result()
        if progress is not None:
            progress(results[i])

    runner.run([runner.Task(f"{i}:{row[0]}", partial(compare, row, n, seed)) for i, row in enumerate(rows)],
               on_done=take)
    return document(merge(previous["rows"] if previous else [], results), versions)


BYTES_PER_PRODUCT = 256
"""Bytes one product of one random row holds at the peak of a configuration:
the rows' bits, MMA-Sim's tensors and tcsmt's batch (measured about 110 for
Volta's fp16 at k = 4 and 420 000 rows)."""


def check_memory(rows, n: int) -> None:
    """BudgetExceeded before configurations whose rows would not fit: n rows
    of the longest k, in each worker at once."""
    if not rows:
        return
    k = max(int(mmasim.operation(cls, arch, shape).k) for _, cls, arch, shape in rows)
    workers = min(len(rows), runner.default_workers())
    require(workers * n * (k * BYTES_PER_PRODUCT + 64),
            f"{n} random rows of {k} products in each of {workers} configuration(s) at once")


def row_key(r: dict) -> tuple[str, str, str, str]:
    m = r["mmasim"]
    return r["model"], m["class"], m["arch"], m["shape"]


def merge(old: list[dict], new: list[dict]) -> list[dict]:
    """The rows of ``old`` with those of ``new`` in place of the rows of
    the same configurations, in the order of PAIRS; rows of configurations
    no longer in PAIRS are left out."""
    by_key = {row_key(r): r for r in old}
    by_key.update((row_key(r), r) for r in new)
    return [by_key[k] for k in dict.fromkeys(mmasim.PAIRS) if k in by_key]


def document(rows: list[dict], versions: dict) -> dict:
    """The tcsmt-mmasim-agreement/2 document of these rows, totals counted."""
    return {"schema": SCHEMA, "tool": tool(),
            "mmasim": versions, "seeds": sorted({r["seed"] for r in rows}),
            "vectors_per_configuration": min((r["vectors"] for r in rows), default=0),
            "row_kinds": list(KINDS), "configurations": len(rows),
            "vectors": sum(r["vectors"] for r in rows),
            "differences": sum(r["differences"] for r in rows), "rows": rows}


def read_previous(path: str | Path) -> dict | None:
    """The table written at ``path`` before, or None when there is none."""
    doc = json_object_or_none(path)
    if doc is None:
        return None
    if doc.get("schema") != SCHEMA or not isinstance(doc.get("rows"), list):
        raise UserError(f"{path}: not a {SCHEMA} table; give --fresh to write a new one")
    return doc


def check_previous(previous: dict | None, versions: dict) -> None:
    """Rows are kept only from a table of the same MMA-Sim and torch."""
    if previous is not None and previous.get("mmasim") != versions:
        raise UserError(f"the table was written with MMA-Sim {previous.get('mmasim')}, this run has "
                        f"{versions}: give --fresh to run every configuration again")


def _version(dist: str, mod=None) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return getattr(mod, "__version__", "unknown")


def markdown(doc: dict) -> str:
    rows = doc["rows"]
    unexplained = sum(r["reasons"].get("unexplained", 0) for r in rows)
    lines = ["# tcsmt against MMA-Sim", "",
             f"MMA-Sim {doc['mmasim']['version']} (torch {doc['mmasim']['torch']}), tcsmt "
             f"{doc['tool']['version']}: {doc['vectors_per_configuration']} random dot products per "
             f"configuration at least (seeds {', '.join(map(str, doc['seeds']))}; row kinds: "
             f"{', '.join(doc['row_kinds'])}), run "
             "through tcsmt's batch simulator (the scalar one where words exceed 64 bits) and "
             "MMA-Sim's `dpa`, compared bit for bit. Written by `tcsmt agreement`; the JSON beside "
             "this file has every row's examples.", "",
             f"**{doc['configurations']} configurations, {doc['vectors']} vectors, "
             f"{doc['differences']} differences, {unexplained} unexplained.**", "",
             "| model | MMA-Sim | architecture | instruction | k | vectors | differences | explained |"
             " simulator |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        m = r["mmasim"]
        explained = r["differences"] - r["reasons"].get("unexplained", 0)
        lines.append(f"| {r['model']} | {m['class']} | {m['arch']} | `{m['shape']}` | {r['k']} | "
                     f"{r['vectors']} | {r['differences']} | {explained} | {r['simulator']} |")
    reasons: dict[str, list[int]] = {}
    for r in rows:
        for why, count in r["reasons"].items():
            reasons.setdefault(why, [0, 0])
            reasons[why][0] += 1
            reasons[why][1] += count
    if reasons:
        lines += ["", "## Why they differ", ""]
        lines += [f"- {why}: {n} differences in {c} configurations" for why, (c, n) in reasons.items()]
    notes = sorted({r["nan"] for r in rows if r["nan"] != "bit for bit"})
    lines += [f"- {t} (the rows whose simulator is scalar)." for t in notes]
    shown = [(r, ex) for r in rows for ex in r["examples"][:2]]
    if shown:
        lines += ["", "## Examples (replayed on both simulators)", ""]
        for r, ex in shown:
            scales = f", scales of a {ex['scale_a']}, of b {ex['scale_b']}" if "scale_a" in ex else ""
            lines.append(f"- {r['model']} `{r['mmasim']['shape']}` row {ex['row']} ({ex['kind']}): "
                         f"tcsmt {ex['tcsmt']}, MMA-Sim {ex['mmasim']}; a {', '.join(ex['a'])}; "
                         f"b {', '.join(ex['b'])}; c {ex['c']}{scales}")
    return "\n".join(lines) + "\n"


def check_output(path: str | Path) -> str:
    """The path of the JSON table, checked before any work is done."""
    if not str(path).endswith(".json"):
        raise UserError(f"-o {path}: the agreement table is a .json file")
    return str(path)[:-5] + ".md"


def write(doc: dict, path: str | Path) -> tuple[str, str]:
    """The document as JSON at path and as Markdown beside it (.md)."""
    md = check_output(path)
    write_json_atomic(path, doc)
    write_atomic(md, lambda f: f.write(markdown(doc)))
    return str(path), md
