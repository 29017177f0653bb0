"""SMT-LIB 2 text of a term DAG (``tcsmt.smt.terms``), and the Formula record.

Every node used more than once, or nested deeper than MAX_INLINE_DEPTH, is
named ``_nID``: as a ``define-fun`` in a formula (``to_smtlib``), as a
``let`` binding inside a function body (``function_text``). Everything else
is written inline. Nodes are numbered in creation order, so children come
before parents and the text is in a valid order as it is.

``build_formula`` runs a callback that receives the interpretation and
returns the assertions; ``evaluation_formula`` turns one circuit into a
function applied to many constant inputs, so a solver evaluates the very
same terms at thousands of points in one query (concrete equals symbolic).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tcsmt.smt.terms import BOOL, SmtInterp, SmtTerm, reachable

MAX_INLINE_DEPTH = 40

_HEADS = {"add": "bvadd", "sub": "bvsub", "mul": "bvmul", "bvand": "bvand", "bvor": "bvor",
          "bvxor": "bvxor", "shl": "bvshl", "lshr": "bvlshr", "ashr": "bvashr",
          "eq": "=", "ult": "bvult", "ule": "bvule", "slt": "bvslt", "sle": "bvsle",
          "neg": "bvneg", "bvnot": "bvnot", "concat": "concat", "ite": "ite",
          "and_": "and", "or_": "or", "not_": "not"}


def sort_text(width: int) -> str:
    return "Bool" if width == BOOL else f"(_ BitVec {width})"


def const_text(t: SmtTerm) -> str:
    if t.width == BOOL:
        return "true" if t.value else "false"
    if t.width % 4 == 0:
        return f"#x{t.value:0{t.width // 4}x}"
    return f"#b{t.value:0{t.width}b}"


def value_text(value: int, width: int) -> str:
    return const_text(SmtTerm(-1, "const", (), (), width, value))


def _apply_text(t: SmtTerm, args: list[str]) -> str:
    if t.op == "extract":
        head = f"(_ extract {t.static[0]} {t.static[1]})"
    elif t.op == "zext":
        head = f"(_ zero_extend {t.static[0]})"
    elif t.op == "sext":
        head = f"(_ sign_extend {t.static[0]})"
    else:
        head = _HEADS[t.op]
    return f"({head} {' '.join(args)})"


@dataclass
class _Text:
    """How each node is written: its reference text, and the named nodes
    (shared or deep) with their bodies and let layers, in id order."""
    ref: dict[int, str] = field(default_factory=dict)
    named: list[tuple[SmtTerm, str, int]] = field(default_factory=list)


def _texts(roots: list[SmtTerm]) -> _Text:
    order, uses = reachable(roots)
    out = _Text()
    depth: dict[int, int] = {}
    layer: dict[int, int] = {}        # highest let layer a node's text refers to
    for t in order:
        if t.op in ("const", "input"):
            out.ref[t.id] = const_text(t) if t.op == "const" else t.static[0]
            depth[t.id] = layer[t.id] = 0
            continue
        body = _apply_text(t, [out.ref[a.id] for a in t.args])
        d = 1 + max(depth[a.id] for a in t.args)
        needs = max(layer[a.id] for a in t.args)
        if uses.get(t.id, 0) > 1 or d > MAX_INLINE_DEPTH:
            out.named.append((t, body, needs + 1))
            out.ref[t.id], depth[t.id], layer[t.id] = f"_n{t.id}", 0, needs + 1
        else:
            out.ref[t.id], depth[t.id], layer[t.id] = body, d, needs
    return out


def to_smtlib(assertions: list[SmtTerm], inputs: dict[str, SmtTerm],
              comments: Sequence[str] = (), get_values: bool = True) -> str:
    """SMT-LIB 2 text: options and logic, the inputs, shared subterms as
    define-fun, the assertions, then check-sat and get-value of the inputs
    (so the file runs as it is in any solver)."""
    tx = _texts(assertions)
    lines = [f"; {c}" for c in comments]
    lines += ["(set-option :produce-models true)", "(set-logic QF_BV)"]
    lines += [f"(declare-const {n} {sort_text(t.width)})" for n, t in inputs.items()]
    lines += [f"(define-fun _n{t.id} () {sort_text(t.width)} {body})" for t, body, _ in tx.named]
    lines += [f"(assert {tx.ref[a.id]})" for a in assertions]
    lines.append("(check-sat)")
    if get_values and inputs:
        lines.append(f"(get-value ({' '.join(inputs)}))")
    lines.append("(exit)")
    return "\n".join(lines) + "\n"


def function_text(name: str, params: dict[str, SmtTerm], body: SmtTerm) -> str:
    """``(define-fun name ((p sort) ...) sort body)`` with the shared
    subterms of body let-bound, one let per layer (each layer refers only
    to the layers outside it)."""
    tx = _texts([body])
    layers: dict[int, list[str]] = {}
    for t, text, lay in tx.named:
        layers.setdefault(lay, []).append(f"(_n{t.id} {text})")
    inner = tx.ref[body.id]
    for lay in sorted(layers, reverse=True):
        inner = f"(let ({' '.join(layers[lay])})\n {inner})"
    args = " ".join(f"({n} {sort_text(t.width)})" for n, t in params.items())
    return f"(define-fun {name} ({args}) {sort_text(body.width)}\n {inner})"


# ---------------------------------------------------------------------------
# Formulas
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Formula:
    """A satisfiability question as SMT-LIB text, with the inputs (name ->
    width in bits, 0 for a Bool) whose values a satisfying assignment gives."""
    text: str
    inputs: dict[str, int] = field(default_factory=dict)
    description: str = ""

    @property
    def trivially_unsat(self) -> bool:
        """Constant folding already reduced an assertion to false."""
        return "\n(assert false)\n" in self.text

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def build_formula(build: Callable[[SmtInterp], list], fold: bool = True,
                  description: str = "", comments: Sequence[str] = (),
                  mul_hook: Callable | None = None) -> Formula:
    """Run ``build(I)`` with a fresh SMT interpretation; it declares its
    inputs with ``I.var`` and returns the list of Bools to assert."""
    I = SmtInterp(fold=fold, mul_hook=mul_hook)
    assertions = list(build(I))
    for a in assertions:
        if a.width != BOOL:
            raise ValueError("an assertion is a word, not a Bool")
    if fold:   # drop assertions folded to true (keep one: a formula asserts something)
        assertions = [a for a in assertions if not (a.is_const and a.value)] or assertions[:1]
    head = [description] if description else []
    text = to_smtlib(assertions, I.inputs, head + list(comments))
    return Formula(text, {n: t.width for n, t in I.inputs.items()}, description)


def evaluation_formula(build: Callable[[SmtInterp], SmtTerm], points: list[dict[str, int]],
                       fold: bool = False, description: str = "") -> Formula:
    """A formula whose model holds ``build``'s word at every point.

    ``build(I)`` declares its inputs with ``I.var`` and returns one word; it
    becomes the function ``f`` of those inputs. ``out{j}`` is asserted equal
    to ``f`` applied to the constants of ``points[j]`` (an input missing
    from a point is 0), so a model's ``out{j}`` is the solver's own
    evaluation of the circuit there. Folding is off by default: the solver,
    not Python, computes every primitive."""
    I = SmtInterp(fold=fold)
    body = build(I)
    params = dict(I.inputs)
    lines = [function_text("f", params, body)]
    outs = {}
    for j, point in enumerate(points):
        args = " ".join(value_text(point.get(n, 0), t.width) for n, t in params.items())
        outs[f"out{j}"] = body.width
        lines.append(f"(declare-const out{j} {sort_text(body.width)})")
        lines.append(f"(assert (= out{j} (f {args})))")
    head = [f"; {description}"] if description else []
    text = "\n".join(head + ["(set-option :produce-models true)", "(set-logic QF_BV)"] + lines
                     + ["(check-sat)", "(exit)"]) + "\n"
    return Formula(text, outs, description)
