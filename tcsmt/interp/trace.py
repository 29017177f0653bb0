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


__all__ = ["TraceInterp", "Node", "FUSED"]
