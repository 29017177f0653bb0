"""Cutting what two terms share: an over-approximation for equality proofs.

Two models run into one hash-consing builder share every node they compute
alike (the products, a block's partial sums). To prove ``x = y`` for two
such terms it is often enough to know that they agree whatever the shared
nodes hold: the nodes where the shared part meets the parts that differ
(the *frontier*), or a narrower set of shared nodes that every multiplier
reaches them through (``narrowest``), become free inputs ``cut{id}``, and everything below them
drops out of the formula (multipliers, alignment shifters). An UNSAT answer
over the cut formula is a proof for the real terms (every real value of the
shared nodes is one of the free values); a SAT answer may use values the
shared nodes never hold, so ``lower`` moves the cut one level down (each
cut node replaced by its own shared arguments) and the caller asks again:
abstraction and refinement, ending at the inputs at worst.
"""

from __future__ import annotations

from tcsmt.interp.graph import BOOL, Node, reachable


def cone(nodes: list[Node]) -> set[int]:
    """The ids of every node the given nodes are computed from."""
    order, _ = reachable(nodes)
    return {n.id for n in order}


def frontier(x: Node, y: Node, keep: list[Node] | None = None) -> set[int]:
    """The shared nodes (in the cones of both x and y, neither an input nor
    a constant) that some node outside the shared part uses: where the
    two computations part. ``keep``: nodes (the domain's constraints on
    the inputs) whose cones are never cut."""
    shared = cone([x]) & cone([y])
    kept = cone(list(keep or []))
    order, _ = reachable([x, y])
    out = set()
    for n in order:
        for a in n.args:
            if a.id in shared and n.id not in shared and a.op not in ("input", "const") \
                    and a.id not in kept:
                out.add(a.id)
    return out


def rebuild(I, nodes: list[Node], cut: set[int], made: dict | None = None) -> list:
    """The nodes rebuilt with interpretation I, every node of ``cut`` a
    free input (``cut{id}``, a word or a Bool) of I and nothing below it
    built. ``made``: nodes already rebuilt (by id; what they stand for is
    taken as is), updated with the new ones."""
    made = {} if made is None else made
    stack = list(nodes)
    while stack:
        n = stack[-1]
        if n.id in made:
            stack.pop()
            continue
        if n.id in cut:
            made[n.id] = I.bool_var(f"cut{n.id}") if n.width == BOOL else I.var(f"cut{n.id}", n.width)
        elif n.op == "const":
            made[n.id] = I.bool_const(bool(n.value)) if n.width == BOOL else I.const(n.value, n.width)
        elif n.op == "input":
            name = n.static[0]
            made[n.id] = I.bool_var(name) if n.width == BOOL else I.var(name, n.width)
        else:
            todo = [a for a in n.args if a.id not in made]
            if todo:
                stack.extend(todo)
                continue
            made[n.id] = getattr(I, n.op)(*[made[a.id] for a in n.args], *n.static)
        stack.pop()
    return [made[n.id] for n in nodes]


def heavy(nodes: list[Node]) -> set[int]:
    """The ids of the nodes whose cones hold a multiplier."""
    order, _ = reachable(nodes)
    out: set[int] = set()
    for n in order:
        if n.op == "mul" or any(a.id in out for a in n.args):
            out.add(n.id)
    return out


def narrowest(x: Node, y: Node, above: set[int] | frozenset[int] = frozenset()) -> set[int]:
    """The shared nodes of fewest bits in all (a Bool one bit) that cut
    every multiplier from the parts where x and y differ: a minimum vertex
    cut (max flow) among the shared nodes that hold a multiplier. Nodes of
    ``above`` are never cut (the next cut below an earlier one). Empty when
    there is no such cut (no multiplier shared, or only through ``above``)."""
    shared = cone([x]) & cone([y])
    order, _ = reachable([x, y])
    hv = heavy([x, y]) & shared
    # each node: ("i", id) -> ("o", id) of its width; ("o", arg) -> ("i", user) unbounded
    edges: list[tuple] = []
    for n in order:
        if n.id not in hv:
            continue
        edges.append((("i", n.id), ("o", n.id), BIG if n.id in above else max(n.width, 1)))
        if n.op == "mul":
            edges.append(("s", ("i", n.id), BIG))
        edges += [(("o", a.id), ("i", n.id), BIG) for a in n.args if a.id in hv]
    edges += [(("o", i), "t", BIG) for i in frontier(x, y) if i in hv]
    flow, reach = _max_flow(edges)
    if flow >= BIG or not reach:
        return set()
    return {u[1] for u, v, _ in edges if u[0] == "i" and v == ("o", u[1]) and u in reach and v not in reach}


BIG = 1 << 40


def _max_flow(edges: list[tuple]) -> tuple[int, set]:
    """Edmonds-Karp from "s" to "t": the flow and the nodes "s" reaches in
    the residual graph (the source side of a minimum cut)."""
    cap: dict = {}
    adj: dict = {}
    for u, v, c in edges:
        cap[(u, v)] = cap.get((u, v), 0) + c
        cap.setdefault((v, u), 0)
        adj.setdefault(u, set()).add(v)
        adj.setdefault(v, set()).add(u)
    if "s" not in adj or "t" not in adj:
        return 0, set()
    total = 0
    while True:
        prev: dict = {"s": None}
        queue = ["s"]
        for u in queue:
            for v in adj[u]:
                if v not in prev and cap[(u, v)] > 0:
                    prev[v] = u
                    queue.append(v)
        if "t" not in prev or total >= BIG:
            return total, set(prev)
        path, v = [], "t"
        while prev[v] is not None:
            path.append((prev[v], v))
            v = prev[v]
        f = min(cap[e] for e in path)
        total += f
        for u, v in path:
            cap[(u, v)] -= f
            cap[(v, u)] += f


def upward(cut: set[int], nodes: list[Node]) -> set[int]:
    """The cut nodes and every node computed from one of them."""
    order, _ = reachable(nodes)
    out = set(cut)
    for n in order:
        if any(a.id in out for a in n.args):
            out.add(n.id)
    return out
