"""The identification loop: follow a plan on a device, one output at a time.

A device is anything with a ``name`` and a ``run(rows)`` that returns the
bits of d for each row (``tcsmt.observed.random_rows.Rows``: a and b [N, k],
c [N], the scales [N, S] of a block-scaled unit; d [N] uint64). One call of
``run`` is one launch: a model in this process (``ModelDevice``, for
``--device sim:ARCH``) or a compiled probe on a GPU
(``tcsmt.probes.device.ProbeDevice``, for ``--device cuda`` and ``--device
hip``). The loop does not care which.

What a launch holds (``batch``):

* ``one``: the vector the plan asks for now;
* ``frontier``: that vector and every vector the plan may ask for right
  after it (one per output the hypotheses give): two steps per launch;
* ``plan``: every vector of the plan, in one launch; the walk then reads
  the outputs it needs.

A "run" is one vector on the plan's path: the count of outputs that decided
the class, whatever the batching. Launches and the vectors they ran are
counted apart (``Walk.launches``, ``Walk.vectors_run``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from tcsmt.enums import Verdict
from tcsmt.errors import UserError
from tcsmt.identify.plan import Plan, plan_vector_json
from tcsmt.model.params import ModelParams
from tcsmt.observed.random_rows import Rows
from tcsmt.search.vectors import Vector

SCHEMA = "tcsmt-identify-loop/1"
BATCHES = ("one", "frontier", "plan")


class Device(Protocol):
    name: str

    def run(self, rows: Rows) -> np.ndarray:
        """The bits of d for every row, in order: one launch."""


class ModelDevice:
    """A model computes what the unit returns (``--device sim:ARCH``)."""

    def __init__(self, p: ModelParams, name: str):
        self.p = p
        self.name = name

    def run(self, rows: Rows) -> np.ndarray:
        from tcsmt.sim.batch import dot_batch, supported
        from tcsmt.sim.dot import dot_bits
        if supported(self.p):
            return dot_batch(self.p, rows.a, rows.b, rows.c, sa_bits=rows.sa, sb_bits=rows.sb)
        scales = [(None, None)] * len(rows.c) if rows.sa is None or rows.sb is None else \
            [(sa.tolist(), sb.tolist()) for sa, sb in zip(rows.sa, rows.sb)]
        return np.array([dot_bits(self.p, a.tolist(), b.tolist(), int(c), *sc)
                         for a, b, c, sc in zip(rows.a, rows.b, rows.c, scales)], dtype=np.uint64)


def vector_rows(vectors: list[Vector], k: int) -> Rows:
    """Vectors (a and b padded with +0 terms to k) as Rows."""
    def pad(xs):
        return list(xs) + [0] * (k - len(xs))
    a = np.array([pad(v.a) for v in vectors], dtype=np.uint64).reshape(len(vectors), k)
    b = np.array([pad(v.b) for v in vectors], dtype=np.uint64).reshape(len(vectors), k)
    c = np.array([v.c for v in vectors], dtype=np.uint64)
    if not vectors or not vectors[0].sa:
        return Rows(a, b, c, None, None)
    return Rows(a, b, c, np.array([v.sa for v in vectors], dtype=np.uint64),
                np.array([v.sb for v in vectors], dtype=np.uint64))


@dataclass
class Walk:
    """Where a walk of a plan's tree ended and what it ran on the way."""
    device: Device
    steps: list[dict] = field(default_factory=list)   # one per vector on the path
    node: dict = field(default_factory=dict)          # the node reached (a class, or a failure's)
    failure: dict | None = None                       # the output no branch holds
    launches: int = 0
    vectors_run: int = 0

    def run(self, vectors: list[Vector], k: int) -> list[int]:
        """One launch on the device, counted."""
        out = self.device.run(vector_rows(vectors, k))
        if len(out) != len(vectors):
            raise UserError(f"{self.device.name} returned {len(out)} outputs for {len(vectors)} vectors")
        self.launches += 1
        self.vectors_run += len(vectors)
        return [int(x) for x in out]

    def counts(self) -> dict:
        return {"runs": len(self.steps), "launches": self.launches, "vectors_run": self.vectors_run}


def check_batch(batch: str) -> str:
    if batch not in BATCHES:
        raise UserError(f"--batch {batch!r}: expected one of {', '.join(BATCHES)}")
    return batch


def launch_set(plan: Plan, node: dict, batch: str) -> list[int]:
    """The plan vectors (indices) one launch at ``node`` runs."""
    if batch == "plan":
        return list(range(len(plan.vectors)))
    out = [node["vector"]]
    if batch == "frontier":
        for child in node["outputs"].values():
            if "vector" in child and child["vector"] not in out:
                out.append(child["vector"])
    return out


def walk_plan(plan: Plan, device: Device, batch: str = "one", log=None) -> Walk:
    """Follow the plan's tree with the outputs the device returns, until a
    class is reached or an output no branch holds (``Walk.failure``)."""
    check_batch(batch)
    w = Walk(device, node=plan.tree)
    known: dict[int, int] = {}
    node = plan.tree
    while "vector" in node:
        if node["vector"] not in known:
            todo = [i for i in launch_set(plan, node, batch) if i not in known]
            for i, d in zip(todo, w.run([plan.vectors[i] for i in todo], plan.k)):
                known[i] = d
        d = known[node["vector"]]
        v = plan.vectors[node["vector"]]
        dh = plan.fout.hex(d)
        w.steps.append({"run": len(w.steps) + 1, "vector": node["vector"], **plan_vector_json(plan, v),
                        "d": dh, "branches": len(node["outputs"])})
        if log:
            log(f"run {len(w.steps)}: vector {node['vector']} -> d = {dh} "
                f"({len(node['outputs'])} outputs possible here)")
        child = node["outputs"].get(dh)
        if child is None:
            w.failure = {"run": len(w.steps), "d": dh, "closest": closest_branches(plan, node, d)}
            break
        node = child
    w.node = node
    return w


MAX_REFINE = 8


def run_loop(device: Device, plan: Plan, prove: bool = True, timeout: float = 600.0, log=None,
             batch: str = "one") -> dict:
    """The loop on any device: walk the plan; then, with ``prove``, settle
    the class it ends in (``settle_class``). The record: the runs and
    launches, the steps, the class (its members, those left after the
    witnesses) or the failure, and a verdict from the outputs alone:
    "outside the space", "identified" (the class left proved one
    behaviour on the plan's domain), "identified, not proved" or
    "identified (not proved: --no-prove)"."""
    walk = walk_plan(plan, device, batch, log)
    rec: dict = {"schema": SCHEMA, "device": device.name, "plan": plan.source}
    if walk.failure:
        rec.update(walk.counts(), steps=walk.steps, verdict="outside the space", failure=walk.failure)
        return rec
    cl = plan.classes[walk.node["class"]]
    members = [plan.models()[i] for i in cl.members]
    rec.update(cls=walk.node["class"], class_size=len(members), class_status=cl.status,
               members=[m.name for m in members])
    rec["verdict"] = "identified (not proved: --no-prove)"
    if prove:
        members, rec["proof"] = settle_class(members, plan, walk, timeout, log)
        rec["class_left"] = [m.name for m in members]
        rec["verdict"] = ("outside the space" if not members else "identified"
                          if rec["proof"]["verdict"] == Verdict.UNSAT else "identified, not proved")
    rec.update(walk.counts(), steps=walk.steps)
    return rec


def settle_class(members: list[ModelParams], plan: Plan, walk: Walk, timeout: float, log=None):
    """(members left, proof): the class proved one behaviour on the plan's
    domain (one circuit: nothing to prove; else fresh pools through the
    simulator, then the solvers: tcsmt.identify.report.prove_class). A
    witness that splits it runs on the device (one more run and launch) and the
    members that give its d stay, until the solvers find no more."""
    from tcsmt.identify.report import prove_class
    from tcsmt.sim.dot import dot_bits
    for _ in range(MAX_REFINE):
        if log:
            log(f"proving the class ({len(members)} hypothes{'is' if len(members) == 1 else 'es'}) "
                "one behaviour on the plan's domain")
        proof = prove_class(members, plan.k, plan.domain, None, timeout, plan=plan)
        if proof["verdict"] != Verdict.SAT:
            break
        w = proof["witness"]
        a, b = [int(x, 16) for x in w["a"]], [int(x, 16) for x in w["b"]]
        c = int(w["c"], 16)
        sc = tuple([int(x, 16) for x in w[key]] if key in w else None for key in ("scale_a", "scale_b"))
        d, = walk.run([Vector(tuple(a), tuple(b), c, *(tuple(x or ()) for x in sc))], plan.k)
        what = "simulation witness" if proof.get("found_by") == "simulation" else "solver witness"
        walk.steps.append({"run": len(walk.steps) + 1, "vector": what, **w,
                           "d": plan.fout.hex(d), "branches": None})
        if log:
            log(f"run {len(walk.steps)}: a {what} splits the class -> d = {plan.fout.hex(d)}")
        members = [m for m in members if dot_bits(m, a, b, c, *sc) == d]
        if not members:
            break
    return members, proof


def closest_branches(plan: Plan, node: dict, d: int) -> list[dict]:
    """The node's outputs nearest to d (in ulps), with the classes under them."""
    from tcsmt.identify.narrow import classes_under
    from tcsmt.model.formats import parse_bits
    f = plan.fout

    def pos(bits):
        sign, mag = bits >> (f.bits - 1), bits & ((1 << (f.bits - 1)) - 1)
        return -mag if sign else mag

    rows = []
    for h, ch in node["outputs"].items():
        bits = parse_bits(h, f)
        js = classes_under(ch)
        rows.append({"d": h, "ulps": abs(pos(bits) - pos(d)), "bits_differing": bin(bits ^ d).count("1"),
                     "classes": len(js), "example": plan.models()[plan.classes[js[0]].members[0]].name})
    return sorted(rows, key=lambda r: (r["ulps"], r["bits_differing"]))[:5]


def runs_line(rec: dict) -> str:
    """'runs needed: 4 (on the plan's path; 2 launches ran 37 vectors)'."""
    n = rec["launches"]
    return (f"runs needed: {rec['runs']} (on the plan's path; {n} launch{'es' if n != 1 else ''} "
            f"ran {rec['vectors_run']} vector{'s' if rec['vectors_run'] != 1 else ''})")
