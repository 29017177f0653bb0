"""Plans: which vectors to run on an unknown matrix unit, in which order.

``build_plan`` takes a hypothesis space (tcsmt.identify.hypspace) and returns a
decision procedure: the first vector to run and, for every output a
hypothesis gives, the next one, until one class of hypotheses remains.

1. Candidates: a few thousand vectors of the plan's input domain
   (tcsmt.search.candidates).
2. Every hypothesis runs on every candidate (tcsmt.sim.evaluate); hypotheses
   with the same outputs on all of them form a class.
3. Fresh pools of the simulator (tcsmt.identify.plansearch: for
   block-scaled spaces, rows aimed at the window) split what they can;
   then the solvers look for an input that splits each class with more than
   one circuit in it (tcsmt.search.diff.run_diff: support restrictions first,
   a few seconds per class; every witness is replayed). Witnesses are run
   on the hypotheses of the classes still open, the classes split, and this
   repeats while it finds witnesses. Classes apart in min_exponent are
   proved by the floor lemma where it holds (tcsmt.identify.lemmas: each
   floor moves no alignment point on the domain, UNSAT by two solvers, and
   the hypotheses without it build one circuit). Last, classes still open
   are proved by sweeping (tcsmt.search.sweeping, every lemma UNSAT by two
   solvers) while the budget lasts, the classes of the space's published
   readings first.
   A class whose members build the same circuit is equal by construction
   ("identical"); one the solvers prove is "proved" (its "proof" holds the
   sweep's summary: lemmas, solvers, CPU seconds, digest; or the floor
   lemmas: solvers and formula digests); one neither
   split nor proved within the budget is "open" (``tcsmt identify`` proves
   the class it ends in, with a cross-check, unless the plan proved it).
4. The tree (tcsmt.identify.plantree): at each node the vector whose outputs split
   the remaining classes best.

The plan is JSON (schema ``tcsmt-plan/1``, see ``plan_record``) with the
keys ``tcsmt harness`` reads: "formats", "instruction" and "vectors".
"""

from __future__ import annotations

import datetime
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tcsmt.budget import require
from tcsmt.errors import UserError
from tcsmt.fileio import data_folder, read_json
from tcsmt.identify.classes import PlanClass, classes_of, say
from tcsmt.identify.hypspace import HypSpace, readings
from tcsmt.identify.plansearch import Search
from tcsmt.instructions.table import choose_instruction
from tcsmt.model.formats import Format, get_format
from tcsmt.model.params import ModelParams
from tcsmt.search.candidates import candidate_scales, candidate_vectors, window_rows
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Vector
from tcsmt.sim.evaluate import evaluate, evaluation_bytes
from tcsmt.version import tool

SCHEMA = "tcsmt-plan/1"
SOLVER_BUDGET = 240.0      # seconds of solver search per plan



def plan_domain(fin: Format, fout: Format) -> Domain:
    """The inputs a plan chooses from: finite, and with a and b exponents
    kept where no alignment floor of a shipped model can act.

    The floors (min_exponent: about -132 for binary32 output, about -20 for
    binary16 output) only act when every term's alignment exponent is below
    them. Products of fp16 and fp8 inputs stay above -49, and c is aligned
    at its own exponent, so for binary32 output no input reaches the floor:
    the domain is every finite input. bf16 and tf32 products can reach
    2^-252: their exponents are kept in -64..63 (products from 2^-128).
    For binary16 output the exponents are kept in -9..15 (products from
    2^-18, above the floors -19 to -21; subnormal a and b are left out, a
    subnormal c is allowed)."""
    if fout.bits == 16:
        return Domain(exp_range=(-9, 15))
    if fin.exp_bits >= 8:
        return Domain(exp_range=(-64, 63))
    return Domain()


def plan_k(space: HypSpace, instruction: str | None = None):
    """The instruction the plan's vectors run on, and its k."""
    p = space.base
    ins = choose_instruction(p.fin.name, p.fc.name, p.fout.name, instruction, fb=p.fb.name,
                             scale=p.fscale.name if p.fscale else "",
                             scale_block=p.scale_block or 0)
    return ins, ins.k


@dataclass
class Plan:
    space: HypSpace
    instruction: str
    k: int
    domain: Domain
    vectors: list[Vector]
    classes: list[PlanClass]
    tree: dict
    stats: dict = field(default_factory=dict)
    source: str = ""

    @property
    def fin(self) -> Format:
        return self.space.base.fin

    @property
    def fb(self) -> Format:
        return self.space.base.fb

    @property
    def fscale(self) -> Format | None:
        return self.space.base.fscale

    @property
    def scale_block(self) -> int:
        """Products per scale (0 without block scales)."""
        return self.space.base.scale_block or 0

    @property
    def fc(self) -> Format:
        return self.space.base.fc

    @property
    def fout(self) -> Format:
        return self.space.base.fout

    def models(self) -> list[ModelParams]:
        return self.space.models()


# ---------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------

def build_plan(space: HypSpace, instruction: str | None = None, pool_size: int = 4000,
               seed: int = 0, solver_budget: float = SOLVER_BUDGET, log=None,
               progress=None) -> Plan:
    """``progress(what, done, total)``, when given, follows the evaluation
    of every hypothesis on the candidates (else ``log`` every tenth)."""
    from tcsmt.identify.plantree import build_tree, tree_stats
    t0 = time.monotonic()
    ins, k = plan_k(space, instruction)
    check_memory(space, k, pool_size)
    models = space.models()
    p0 = models[0]
    domain = plan_domain(p0.fin, p0.fout)
    a, b, c, sa, sb = plan_candidates(p0, k, domain, pool_size, seed)
    say(log, f"{len(models)} hypotheses, k = {k} ({ins.name}), {a.shape[0]} candidate vectors"
              + (f" with {p0.fscale.name} scales per {p0.scale_block}" if p0.fscale else ""))
    what = f"{len(models)} hypotheses on {a.shape[0]} candidates (batches)"
    tick = (lambda done, total: progress(what, done, total)) if progress else None
    ev = evaluate(models, a, b, c, progress=tick or _progress(log, "evaluated"), sa=sa, sb=sb)
    bad = set(ev.unsupported)
    if bad:
        say(log, f"{len(bad)} hypotheses need words wider than 64 bits and are left out")
    live = [i for i in range(len(models)) if i not in bad]
    groups = classes_of(ev.outputs, live)
    t_eval = time.monotonic() - t0
    say(log, f"{len(groups)} classes after the candidates ({t_eval:.0f} s)")
    vecs = [Vector(tuple(int(x) for x in a[n]), tuple(int(x) for x in b[n]), int(c[n]),
                   *_row_scales(sa, sb, n)) for n in range(a.shape[0])]
    table = ev.outputs
    search = Search(models, ev.shape, k, domain, solver_budget, log, first=readings(space))
    classes, extra, extra_out = search.run(groups)
    reps = [cl.members[0] for cl in classes]
    rep_out = table[reps]
    if extra:
        vecs += extra
        rep_out = np.concatenate([rep_out, extra_out[reps]], axis=1)
    del table
    tree, used = build_tree(rep_out, vecs, p0.fout)
    order = sorted(used)
    remap = {old: new for new, old in enumerate(order)}
    tree = _renumber(tree, remap)
    plan = Plan(space, ins.name, k, domain, [vecs[i] for i in order], classes, tree)
    plan.stats = tree_stats(plan, time.monotonic() - t0, a.shape[0], search.summary(),
                            t_eval)
    return plan


def check_memory(space: HypSpace, k: int, pool_size: int) -> None:
    """BudgetExceeded before a plan that would not fit: the evaluation of
    every hypothesis on every candidate, and each candidate as a Vector."""
    rows = pool_size + (int(pool_size * WINDOW_SHARE) if space.base.fscale is not None else 0)
    n = space.size
    require(evaluation_bytes(n, rows, k) + rows * (k * 120 + 1024) + n * (8 << 10),
            f"a plan of {n} hypotheses on {rows} candidate vectors of {k} products")


WINDOW_SHARE = 0.25
"""The share of a block-scaled plan's candidates aimed at the window below
the largest term (tcsmt.search.candidates.window_rows)."""


def plan_candidates(p: ModelParams, k: int, domain: Domain, size: int, seed: int):
    """a, b, c and the scales (None without) of a plan's candidate vectors;
    with block scales, WINDOW_SHARE more rows aimed at the window."""
    a, b, c = candidate_vectors(p.fin, p.fc, k, domain, size, seed, p.fb)
    sa = candidate_scales(p.fscale, a.shape[0], p.scale_count(k), seed)
    sb = candidate_scales(p.fscale, a.shape[0], p.scale_count(k), seed + 1)
    if p.fscale is None:
        return a, b, c, None, None
    more = window_rows(p.fin, p.fb, p.fc, *p.scaling(), k, int(size * WINDOW_SHARE), seed)
    return tuple(np.concatenate([x, y]) for x, y in zip((a, b, c, sa, sb), more))


def _row_scales(sa, sb, n: int) -> tuple:
    """Row n's scales as Vector takes them (nothing without scales)."""
    if sa is None:
        return ()
    return tuple(int(x) for x in sa[n]), tuple(int(x) for x in sb[n])


def _progress(log, what: str):
    if not log:
        return None
    step = {"n": 0}

    def report(done, total):
        if done == total or done * 10 // total > step["n"]:
            step["n"] = done * 10 // total
            log(f"  {what} {done}/{total} batches")
    return report


def _renumber(node: dict, remap: dict[int, int]) -> dict:
    if "class" in node:
        return node
    return {"vector": remap[node["vector"]],
            "outputs": {h: _renumber(ch, remap) for h, ch in node["outputs"].items()}}


# ---------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------

def vector_json(fin: Format, fc: Format, v: Vector, fb: Format | None = None,
                fscale: Format | None = None) -> dict:
    """A vector as a vectors file holds it (with scale_a and scale_b when
    it has scales)."""
    out = {"a": [fin.hex(x) for x in v.a], "b": [(fb or fin).hex(x) for x in v.b], "c": fc.hex(v.c)}
    if v.sa:
        assert fscale is not None, "a vector with scales needs the scale format"
        out["scale_a"] = [fscale.hex(x) for x in v.sa]
        out["scale_b"] = [fscale.hex(x) for x in v.sb]
    return out


def plan_vector_json(plan: Plan, v: Vector) -> dict:
    return vector_json(plan.fin, plan.fc, v, plan.fb, plan.fscale)


def formats_record(p: ModelParams) -> dict:
    """The formats of a plan's vectors as a vectors file names them."""
    out = {"in": p.fin.name} if p.fb.name == p.fin.name else {"a": p.fin.name, "b": p.fb.name}
    out.update({"c": p.fc.name, "out": p.fout.name})
    if p.fscale is not None:
        out["scale"] = p.fscale.name
    return out


def plan_record(plan: Plan) -> dict:
    """The plan as JSON: the harness keys (formats, instruction, vectors)
    first, then what identify needs."""
    return {
        "schema": SCHEMA,
        "tool": tool(),
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "formats": formats_record(plan.space.base),
        **({"scale_block": plan.scale_block} if plan.scale_block else {}),
        "instruction": plan.instruction,
        "k": plan.k,
        "domain": plan.domain.describe(),
        "stats": plan.stats,
        "vectors": [plan_vector_json(plan, v) for v in plan.vectors],
        "tree": plan.tree,
        "classes": [cl.record() for cl in plan.classes],
        "space": plan.space.record(),
    }


def write_plan(path: str | Path, plan: Plan) -> None:
    from tcsmt.fileio import write_json_atomic
    write_json_atomic(path, plan_record(plan), dumps=_plan_text)


def _plan_text(rec) -> str:
    """One vector, one class per line: readable diffs, a few hundred kB (a
    plan beyond 50 MB on one line)."""
    import json
    text = json.dumps(rec, separators=(",", ":"))
    return _pretty(rec) if len(text) < 50_000_000 else text


def _pretty(rec: dict) -> str:
    import json
    lines = ["{"]
    keys = list(rec)
    for n, key in enumerate(keys):
        end = "," if n + 1 < len(keys) else ""
        v = rec[key]
        if key in ("vectors", "classes") and isinstance(v, list):
            inner = ",\n".join("    " + json.dumps(x, separators=(", ", ": ")) for x in v)
            lines.append(f'  "{key}": [\n{inner}\n  ]{end}')
        elif key == "tree":
            lines.append(f'  "tree": {json.dumps(v, separators=(",", ":"))}{end}')
        else:
            lines.append(f'  "{key}": {json.dumps(v)}{end}')
    return "\n".join(lines + ["}"]) + "\n"


def read_plan(path: str | Path) -> Plan:

    from tcsmt.identify.hypspace import from_record
    from tcsmt.probes.harness import parse_vectors
    data = read_json(path)
    where = str(path)
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        schema = data.get("schema") if isinstance(data, dict) else None
        raise UserError(f"{where}: not a plan (schema {schema!r}, expected {SCHEMA!r})")
    for key in ("formats", "instruction", "k", "domain", "vectors", "tree", "classes", "space"):
        if key not in data:
            raise UserError(f"{where}: missing key {key!r}")
    vs = parse_vectors({k: data[k] for k in ("formats", "scale_block", "vectors") if k in data}, where)
    space = from_record(data["space"], where)
    d = data["domain"]
    domain = Domain(finite=d["finite"], subnormal_inputs=d["subnormal_inputs"], signs=d["signs"],
                    exp_range=tuple(d["exp_range"]) if d["exp_range"] else None,
                    c_exp_range=tuple(d["c_exp_range"]) if d["c_exp_range"] else None,
                    c=d["c"], nonzero_min=d["nonzero_min"], nonzero_max=d["nonzero_max"])
    scales = vs.scales or [([], [])] * len(vs.vectors)
    vecs = [Vector(tuple(a), tuple(b), c, tuple(sa), tuple(sb))
            for (a, b, c), (sa, sb) in zip(vs.vectors, scales)]
    classes = [PlanClass(list(c["members"]), c["status"], list(c.get("proved_by", [])), c.get("note", ""),
                         list(c.get("proof", [])))
               for c in data["classes"]]
    plan = Plan(space, data["instruction"], int(data["k"]), domain, vecs, classes, data["tree"],
                data.get("stats", {}), where)
    if formats_record(plan.space.base) != vs.formats() or plan.scale_block != vs.scale_block:
        raise UserError(f"{where}: the formats do not match the space's")
    return plan


def plans_dir() -> Path:
    """Where ``tcsmt plan`` writes: results/plans under the working folder,
    like every other result."""
    return Path("results") / "plans"


def shipped_plans_dir() -> Path | None:
    """The plans installed with the package (tcsmt.plans, built from the
    source tree's results/plans), or the source tree's own folder."""
    return data_folder("tcsmt.plans", "results/plans", "*.json")


def plan_name(fin: Format, fout: Format, fscale: Format | None = None, scale_block: int = 0) -> str:
    """IN-OUT.json, with -SCALExBLOCK for block scales (e2m1-fp32-ue4m3x16.json)."""
    from tcsmt.model.names import short_format
    scaled = f"-{short_format(fscale.name)}x{scale_block}" if fscale is not None else ""
    return f"{short_format(fin.name)}-{short_format(fout.name)}{scaled}.json"


def space_plan_name(p: ModelParams) -> str:
    """The name of the plan of a model's formats and scales."""
    return plan_name(p.fin, p.fout, p.fscale, p.scale_block or 0)


def committed_plan(formats: str, scales: str | None = None) -> Path | None:
    from tcsmt.identify.hypspace import scaled_base
    p = scaled_base(formats, scales)
    name = space_plan_name(p)
    for folder in (plans_dir(), shipped_plans_dir()):
        if folder is not None and (folder / name).exists():
            return folder / name
    return None


def fmt(name: str) -> Format:
    return get_format(name)
