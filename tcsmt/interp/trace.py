"""A recording interpretation: running the datapath with it leaves the
datapath's data flow as a graph (tcsmt.interp.graph: hash-consed, with
constants folded by the Python-int interpretation and the identities that
need no data), which tcsmt.interp.program turns into a straight-line
program for the NumPy interpretation and the compiled kernels.

Beyond the shared builder, a few compositions are recorded as one fused
operation (FUSED below), defined in tcsmt.interp.fused as exactly those
compositions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcsmt.interp.graph import GraphBuilder, Node

if TYPE_CHECKING:
    from tcsmt.interp.memo import StageMemo

# ite(cmp(a, b), b, a) is the larger of a and b, ite(cmp(a, b), a, b) the
# smaller: recorded as one fused operation, which NumpyInterp computes with
# np.maximum / np.minimum (keys: comparison, branches are (b, a), are (a, b)).
# ite(a, not_(b), b) of Bools is recorded as xor_(a, b), ite(c, neg(x), x) as
# neg_if(c, x) (tcsmt.interp.fused). FUSE = False records the plain
# primitives only (tests compare both).
FUSED = {("slt", True, False): "smax", ("slt", False, True): "smin",
         ("ult", True, False): "umax", ("ult", False, True): "umin"}
FUSE = True


class TraceInterp(GraphBuilder):
    """Records primitive calls as a graph of Nodes (see the module doc)."""

    name = "trace"
    memo: StageMemo | None = None
    """Given one, the datapath's stages share their results (tcsmt.interp.memo)."""

    def fuse_ite(self, c, x, y) -> Node | None:
        if not FUSE:
            return None
        fused = FUSED.get((c.op, c.args == (y, x), c.args == (x, y)))
        if fused is not None:
            return self.node(fused, c.args, (), x.width)
        if x.width == 0 and x.op == "not_" and x.args[0] is y:
            return self.node("xor_", (c, y), (), 0)
        if x.op == "neg" and x.args[0] is y:
            return self.node("neg_if", (c, y), (), y.width)
        return None


class CountingTrace(TraceInterp):
    """TraceInterp that records bv.clz as one operation,
    ``count_leading_zeros`` (the Python-int and NumPy interpretations count
    natively; tests hold both to clz over the primitives), instead of the
    some 35 primitives of its binary search. For graphs that those
    interpretations run (the batch simulator, tcsmt.sim.evaluate); other
    consumers of a graph (programs, kernels, SMT) know only the
    primitives."""

    def count_leading_zeros(self, x: Node) -> Node:
        return self._apply("count_leading_zeros", (x,), (), max(1, x.width.bit_length()))


__all__ = ["TraceInterp", "CountingTrace", "Node", "FUSED"]
