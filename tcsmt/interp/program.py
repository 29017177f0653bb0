"""The datapath as a straight-line program, run on the NumPy interpretation.

``record(p, k)`` runs ``datapath.dot`` once with the recording
interpretation (tcsmt.interp.trace) for dot products of length k and turns
the graph it leaves into a ``Program``: a list of instructions, each one
primitive of the vocabulary with the slots of its arguments, its static
parameters (extract's bit range, zext's count), the slot of its result and
the slots to drop after it.

Order and memory: instructions run depth first from the result, in the
datapath's argument order. The first thing a block needs is its c, which is
the previous block's result, so blocks run one after another and each
block's products are made just before that block uses them; every value is
dropped right after its last use. The live data is about one block's worth,
whatever K is.

Hoisting, for matrix products: an instruction that depends only on A (the
unpacking of a column of A: fields, flags) gives the same values for every
tile in the same rows, and one that depends only on B the same for every
tile in the same columns. ``run_hoisted`` runs those once on the whole of A
([M, 1] words) and of B ([1, N] words), then runs only the rest per tile
with slices of those values.

Running a program calls the very primitives of the interpretation it is
given, in an order the datapath's data flow allows, so the result is the
result of ``datapath.dot`` with that interpretation (tests compare both
ways bit for bit).
"""

from __future__ import annotations

import functools

from tcsmt import datapath
from tcsmt.interp.arrays import NpBool, NpWord
from tcsmt.interp.graph import postorder
from tcsmt.interp.trace import Node, TraceInterp
from tcsmt.model.params import ModelParams

A_DEP, B_DEP, C_DEP = 1, 2, 4


class Program:
    """Instructions (op, argument slots, static parameters, result slot,
    slots to drop) in run order, with constants preloaded in ``template``.
    ``scale_block``: products per scale input (sa{j} and sb{j} apply to
    products j * scale_block onwards), None without scales."""

    def __init__(self, root: Node, name: str = "", scale_block: int | None = None):
        self.name = name
        self.scale_block = scale_block
        template: list = []
        dep: list[int] = []
        widths: list[int] = []
        code: list = []
        self.inputs: dict[str, int] = {}
        slot: dict[Node, int] = {}
        width = 0
        for node in postorder([root]) if not root.is_const else [root]:
            width = max(width, node.width)
            op = node.op
            if op == "const" or op == "input":
                slot[node] = len(template)
                template.append(const_value(node) if op == "const" else None)
                widths.append(node.width)
                dep.append(0 if op == "const" else _input_dep(node.static[0]))
                if op == "input":
                    self.inputs[node.static[0]] = slot[node]
                continue
            args, d = [], 0
            for a in node.args:
                s = slot.get(a)
                if s is None:                      # a constant, first seen here
                    s = slot[a] = len(template)
                    template.append(const_value(a))
                    widths.append(a.width)
                    dep.append(0)
                    width = max(width, a.width)
                args.append(s)
                d |= dep[s]
            slot[node] = len(template)
            template.append(None)
            widths.append(node.width)
            dep.append(d)
            code.append((op, tuple(args), node.static, slot[node]))
        self.template, self._dep, self.code = template, dep, code
        self.widths = widths                      # bits of every slot (0: a Bool)
        self.max_width = width
        self.out = slot[root]
        self._run_code = self._with_drops(code)
        self._hoisted: tuple[list, list, list[int]] | None = None

    # -- running ---------------------------------------------------------------

    def run(self, I, inputs: dict):
        """The recorded datapath's result for these input words."""
        env = list(self.template)
        for name, s in self.inputs.items():
            env[s] = inputs[name]
        _execute(I, self._run_code, env)
        return env[self.out]

    def run_hoisted(self, I, a_inputs: dict, b_inputs: dict):
        """Run the A-only and B-only instructions once (A's words [M, 1],
        B's [1, N]); returns a function (rows, cols, c word) -> the tile's
        result, which runs the remaining instructions on slices."""
        env = list(self.template)
        for name, s in self.inputs.items():
            env[s] = a_inputs.get(name, b_inputs.get(name))
        if self._hoisted is None:
            self._hoisted = self._plan_hoisting()
        pre, rest, shared = self._hoisted
        _execute(I, pre, env)
        c_slot = self.inputs.get("c")

        def tile(rows: slice, cols: slice, c):
            tenv = list(self.template)
            for s in shared:
                sl = (rows, slice(None)) if self._dep[s] == A_DEP else (slice(None), cols)
                tenv[s] = _slice(env[s], sl)
            if c_slot is not None:
                tenv[c_slot] = c
            _execute(I, rest, tenv)
            return tenv[self.out]
        return tile

    def _plan_hoisting(self) -> tuple[list, list, list[int]]:
        """(instructions on A or B alone, the others with their drops, the
        slots of A-only or B-only values the others read)."""
        pre = [(*ins, ()) for ins in self.code if self._dep[ins[3]] in (A_DEP, B_DEP)]
        rest = [ins for ins in self.code if self._dep[ins[3]] not in (A_DEP, B_DEP)]
        used = {a for ins in rest for a in ins[1]} | {self.out}
        shared = sorted(s for s in used if self._dep[s] in (A_DEP, B_DEP))
        return pre, self._with_drops(rest), shared

    def _with_drops(self, code: list) -> list:
        """code with, on each instruction, the slots it reads for the last
        time (never constants, never the result)."""
        last: dict[int, int] = {}
        for i, ins in enumerate(code):
            for a in ins[1]:
                last[a] = i
        drops: list = [()] * len(code)
        template, out = self.template, self.out
        for s, i in last.items():
            if template[s] is None and s != out:
                drops[i] += (s,)
        return [(op, args, static, res, d) for (op, args, static, res), d in zip(code, drops)]


def _execute(I, code: list, env: list) -> None:
    fns = {op: getattr(I, op) for op in {ins[0] for ins in code}}
    for op, args, static, out, drops in code:
        env[out] = fns[op](*[env[a] for a in args], *static)
        for s in drops:
            env[s] = None


def _slice(x, sl):
    """A word or Bool of A's [M, 1] (or B's [1, N]) values cut to a tile."""
    if isinstance(x, NpWord):
        return x if type(x.v) is int else NpWord(x.v[sl], x.w, x.dirty)
    return x if type(x.b) is bool else NpBool(x.b[sl])


def _input_dep(name: str) -> int:
    """a{i}, the scales of a (sa{j}) and a sparse model's mask bits (m{i},
    the metadata of A's rows) follow the rows of A; b{i} and sb{j} the
    columns of B; c the tile."""
    return {"a": A_DEP, "b": B_DEP, "sa": A_DEP, "sb": B_DEP, "m": A_DEP}.get(
        name[:2] if name[:1] == "s" else name[:1], C_DEP)


def const_value(node: Node):
    if node.width == 0:
        return NpBool(bool(node.value))
    return NpWord(node.value, node.width)




@functools.lru_cache(maxsize=32)
def record(p: ModelParams, k: int) -> Program:
    """The program of ``datapath.dot`` under p for dot products of length k,
    with inputs named a0..a{k-1}, b0..b{k-1} and c, for a block-scaled
    model the scales sa0.., sb0.. (one per scale_block products), for a
    sparse model the mask bits m0..m{k-1}."""
    T = TraceInterp()
    a = [T.input(f"a{i}", p.fin.bits) for i in range(k)]
    b = [T.input(f"b{i}", p.fb.bits) for i in range(k)]
    n = p.scale_count(k)
    sw = p.scaling()[0].bits if n else 0
    sa = [T.input(f"sa{j}", sw) for j in range(n)] if n else None
    sb = [T.input(f"sb{j}", sw) for j in range(n)] if n else None
    mask = [T.input(f"m{i}", 1) for i in range(k)] if p.sparsity != "dense" else None
    out = datapath.dot(T, p, a, b, T.input("c", p.fc.bits), sa=sa, sb=sb, mask=mask)
    return Program(out, p.name, p.scale_block if n else None)
