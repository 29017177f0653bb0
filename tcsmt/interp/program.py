"""Datapath pieces as straight-line programs, run on the NumPy interpretation.

A ``Program`` is a recorded piece of the datapath (tcsmt.interp.chain
records the chain's: the c the first block starts from, one block's step,
what follows the last block): the graph the recording interpretation
(tcsmt.interp.trace) leaves, as a list of instructions, each one primitive
of the vocabulary with the slots of its arguments, its static parameters
(extract's bit range, zext's count), the slot of its result and the slots
to drop after it. Inputs are named (a0.., b0.., the scales sa0.., sb0..,
the fields of a Term c.sign, c.exp..., a block result d, the word c);
outputs are named too.

Order and memory: instructions run depth first from the outputs, in the
datapath's argument order, and every value is dropped right after its last
use.

Hoisting, for matrix products: an instruction that depends only on A's
inputs (a{i}, sa{j}: the unpacking of A's words) gives the same values for
every column of D, and one on B's alone the same for every row. ``hoisted``
splits a program into those parts and the rest, which the NumPy engine
(tcsmt.sim.replay) and the compiled kernels run apart.

Running a program calls the very primitives of the interpretation it is
given, in an order the datapath's data flow allows, so its results are
those of the datapath with that interpretation (tests compare both ways
bit for bit).
"""

from __future__ import annotations

from tcsmt.interp.arrays import NpBool, NpWord
from tcsmt.interp.graph import postorder
from tcsmt.interp.trace import Node

A_DEP, B_DEP, C_DEP = 1, 2, 4


class Program:
    """Instructions (op, argument slots, static parameters, result slot,
    slots to drop) in run order, with constants preloaded in ``template``;
    ``inputs`` and ``outs`` map names to slots."""

    def __init__(self, roots: dict[str, Node], name: str = ""):
        self.name = name
        template: list = []
        dep: list[int] = []
        widths: list[int] = []
        code: list = []
        self.inputs: dict[str, int] = {}
        slot: dict[Node, int] = {}
        width = 0

        def leaf(node: Node) -> int:
            s = slot[node] = len(template)
            template.append(const_value(node) if node.is_const else None)
            widths.append(node.width)
            dep.append(_input_dep(node.static[0]) if node.op == "input" else 0)
            if node.op == "input":
                self.inputs[node.static[0]] = s
            return s
        for node in postorder(list(roots.values())):
            width = max(width, node.width)
            if node.op == "input":
                leaf(node)
                continue
            args = [slot[a] if a in slot else leaf(a) for a in node.args]
            width = max([width] + [a.width for a in node.args])
            slot[node] = len(template)
            template.append(None)
            widths.append(node.width)
            dep.append(_or(dep[s] for s in args))
            code.append((node.op, tuple(args), node.static, slot[node]))
        self.outs = {name: slot[r] if r in slot else leaf(r) for name, r in roots.items()}
        self.template, self.dep, self.code = template, dep, code
        self.widths = widths                      # bits of every slot (0: a Bool)
        self.max_width = max([width] + widths)
        self._run_code = with_drops(code, template, set(self.outs.values()))

    def run(self, I, inputs: dict) -> dict:
        """The outputs, by name, for these input words."""
        env = list(self.template)
        for name, s in self.inputs.items():
            env[s] = inputs[name]
        execute(I, self._run_code, env)
        return {name: env[s] for name, s in self.outs.items()}

    def hoisted(self) -> tuple[list, list, list]:
        """(instructions on A's inputs alone, those on B's alone, the rest),
        each instruction (op, argument slots, static, result slot)."""
        part: dict[int, list] = {A_DEP: [], B_DEP: [], 0: []}
        for ins in self.code:
            d = self.dep[ins[3]]
            part[d if d in (A_DEP, B_DEP) else 0].append(ins)
        return part[A_DEP], part[B_DEP], part[0]


def _or(deps) -> int:
    d = 0
    for x in deps:
        d |= x
    return d


def with_drops(code: list, template: list, keep: set) -> list:
    """code with, on each instruction, the slots it reads for the last
    time (never constants, never those in ``keep``)."""
    last: dict[int, int] = {}
    for i, ins in enumerate(code):
        for a in ins[1]:
            last[a] = i
    drops: list = [()] * len(code)
    for s, i in last.items():
        if template[s] is None and s not in keep:
            drops[i] += (s,)
    return [(op, args, static, res, d) for (op, args, static, res), d in zip(code, drops)]


def execute(I, code: list, env: list) -> None:
    """Run instructions (op, args, static, result, drops) on ``env``."""
    fns = {op: getattr(I, op) for op in {ins[0] for ins in code}}
    for op, args, static, out, drops in code:
        env[out] = fns[op](*[env[a] for a in args], *static)
        for s in drops:
            env[s] = None


def _input_dep(name: str) -> int:
    """a{i} and the scales of a (sa{j}) follow the rows of A; b{i} and sb{j}
    the columns of B; everything else (c, a Term's fields, a block result)
    the element of D."""
    head = name.rstrip("0123456789")
    return {"a": A_DEP, "b": B_DEP, "sa": A_DEP, "sb": B_DEP}.get(head, C_DEP)


def const_value(node: Node):
    if node.width == 0:
        return NpBool(bool(node.value))
    return NpWord(node.value, node.width)
