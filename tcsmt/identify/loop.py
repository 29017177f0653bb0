"""The identification loop: follow a plan on a device, one output at a time.

A device is anything with a ``label`` and a ``run(vectors)`` that returns
the bits of d for each vector (``tcsmt.search.vectors.Vector``, padded to
the plan's k or shorter). One call of ``run`` is one launch: a model in
this process (``ModelDevice``, for ``--device sim:ARCH``) or a compiled
probe on a GPU (``tcsmt.probes.device.ProbeDevice``, for ``--device cuda``
and ``--device hip``). The loop does not care which.

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

from tcsmt.errors import UserError
from tcsmt.identify.plan import Plan, plan_vector_json
from tcsmt.model.params import ModelParams
from tcsmt.search.vectors import Vector
from tcsmt.sim.dot import dot_bits

BATCHES = ("one", "frontier", "plan")


class Device(Protocol):
    label: str

    def run(self, vectors: list[Vector]) -> list[int]:
        """The bits of d for every vector, in order: one launch."""


class ModelDevice:
    """A model computes what the unit returns (``--device sim:ARCH``)."""

    def __init__(self, p: ModelParams, label: str):
        self.p = p
        self.label = label

    def run(self, vectors: list[Vector]) -> list[int]:
        return [dot_bits(self.p, list(v.a), list(v.b), v.c, *v.scales()) for v in vectors]


@dataclass
class Walk:
    """Where a walk of a plan's tree ended and what it ran on the way."""
    device: Device
    steps: list[dict] = field(default_factory=list)   # one per vector on the path
    node: dict = field(default_factory=dict)          # the node reached (a class, or a failure's)
    failure: dict | None = None                       # the output no branch holds
    launches: int = 0
    vectors_run: int = 0

    def run(self, vectors: list[Vector]) -> list[int]:
        """One launch on the device, counted."""
        out = self.device.run(vectors)
        if len(out) != len(vectors):
            raise UserError(f"{self.device.label} returned {len(out)} outputs for {len(vectors)} vectors")
        self.launches += 1
        self.vectors_run += len(vectors)
        return out

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
            for i, d in zip(todo, w.run([plan.vectors[i] for i in todo])):
                known[i] = d
            if log and len(todo) > 1:
                log(f"launch {w.launches}: {len(todo)} vectors of the plan")
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
