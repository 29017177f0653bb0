"""The decision tree of a plan, built greedily, and its statistics.

A node is ``{"vector": n, "outputs": {"0x3f800000": child, ...}}``: run
vector n, read d, follow the child under d's hex bits. A leaf is
``{"class": j}``: class j of the plan is what remains.

At each node the vector chosen is the one whose outputs leave the smallest
largest group of remaining classes (the worst case), then the most even
split (entropy), then the fewest non-zero products (readable vectors).
"""

from __future__ import annotations

import numpy as np

from tcsmt.search.vectors import Vector


def split_scores(outs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For an [n, V] block of outputs (n remaining classes, V vectors): the
    size of the largest group of equal outputs in each column, and the
    entropy of each column's grouping, as [V] arrays."""
    n, v = outs.shape
    s = np.sort(outs, axis=0)
    new = np.ones((n, v), dtype=bool)
    new[1:] = s[1:] != s[:-1]
    run = np.cumsum(new, axis=0) - 1                       # group number within the column
    flat = run + (np.arange(v) * n)[None, :]
    counts = np.bincount(flat.ravel(), minlength=n * v).reshape(v, n)
    largest = counts.max(axis=1)
    p = counts / n
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(p > 0, p * np.log2(p), 0.0).sum(axis=1)
    return largest, ent


def pick(outs: np.ndarray, nonzero: np.ndarray) -> int | None:
    """The best column for these classes, or None if no column splits them."""
    largest, ent = split_scores(outs)
    if largest.min() == outs.shape[0]:
        return None
    order = np.lexsort((nonzero, -np.round(ent, 9), largest))
    return int(order[0])


def build_tree(rep_out: np.ndarray, vecs: list[Vector], fout) -> tuple[dict, set[int]]:
    """The tree over classes 0..n-1 (rows of rep_out: their out_format
    outputs on vecs); returns it and the vectors it uses. Two rows equal on
    every vector are a bug of the caller (they would be one class)."""
    nonzero = np.array([sum(1 for x in v.a if x) for v in vecs])
    used: set[int] = set()

    def grow(members: np.ndarray) -> dict:
        if len(members) == 1:
            return {"class": int(members[0])}
        col = pick(rep_out[members], nonzero)
        if col is None:
            raise ValueError(f"classes {members.tolist()} have equal outputs on every vector")
        used.add(col)
        vals = rep_out[members, col]
        branches = {}
        for val in sorted(set(vals.tolist())):
            branches[fout.hex(int(val))] = grow(members[vals == val])
        return {"vector": col, "outputs": branches}

    return grow(np.arange(rep_out.shape[0])), used


def leaves(node: dict, depth: int = 0):
    """(class, number of runs to reach it) for every leaf."""
    if "class" in node:
        yield node["class"], depth
        return
    for child in node["outputs"].values():
        yield from leaves(child, depth + 1)


def tree_stats(plan, seconds: float, candidates: int, search: dict, eval_seconds: float) -> dict:
    depth = dict(leaves(plan.tree))
    sizes = {j: len(cl.members) for j, cl in enumerate(plan.classes)}
    n_h = sum(sizes.values())
    status: dict[str, int] = {}
    for cl in plan.classes:
        status[cl.status] = status.get(cl.status, 0) + 1
    return {
        "hypotheses": plan.space.size,
        "classes": len(plan.classes),
        "class_status": status,
        "vectors": len(plan.vectors),
        "worst_case_runs": max(depth.values()) if depth else 0,
        "expected_runs": round(sum(depth.values()) / max(1, len(depth)), 3),
        "expected_runs_per_hypothesis": round(sum(depth[j] * sizes[j] for j in depth) / max(1, n_h), 3),
        "candidates": candidates,
        "planning_seconds": round(seconds, 1),
        "evaluation_seconds": round(eval_seconds, 1),
        "solver_search": search,
    }
