"""Proofs that a device model's parameters outside a space change nothing.

``tcsmt identify --device sim:ARCH`` ends in a class of the space; the
shipped model may still differ from the class's hypotheses in parameters
the space does not vary (min_exponent floors on NVIDIA, carry_bits = 3 on
Volta). Asking the solvers whether the whole 16-term datapath with and
without such a parameter ever differs times out (minutes, measured: no
answer from any solver in 120 s for ampere's floor). Two small lemmas
settle those parameters instead:

* min_exponent (the floor of the alignment point): over every block of the
  dot product, some term non-zero and the alignment point below the floor
  is UNSAT. A block's terms are those its register sums
  (tcsmt.datapath.blocks.block_terms): its products (inputs from the plan's
  domain, products free: the over-approximation of tcsmt.smt.abstraction,
  so UNSAT is a proof for the real products), in exact groups of
  group_size as tcsmt.datapath.chain.group_terms makes them (with block
  scales each group times a scale pair of its own, any words of the scale
  format: the real pairs are among them), and its c, left as ANY bit
  pattern of each format a block's c can have (c's own for the first
  block, the block result's for a chained one).
  When every term is zero the sum is zero whatever the alignment point,
  so the floor changes nothing then either. The lemma is proved for the
  block with min(block_size, k) products; blocks with fewer products (the
  last one) are the same question with some products zero, which the free
  products already allow (a zero input). It is written for the block
  register (block normalisation, c placed globally, no scale windows) and
  answers unknown elsewhere.
* carry_bits: ``tcsmt.search.prove.prove_carry_bits`` finds the fewest carry bits
  that give the same outputs as unbounded ones on every input of a block
  (with a witness that one fewer does not); the device's count is enough
  when it is at least that.

With the parameters settled, the device model with them set to the
space's values must build the very same circuit as a hypothesis of the
class (the recording interpretation gives equal roots): then the device is
that hypothesis on the plan's domain.
"""

from __future__ import annotations

import hashlib
from functools import partial

from tcsmt import datapath, runner
from tcsmt.datapath import bv
from tcsmt.enums import Verdict
from tcsmt.model.formats import Format
from tcsmt.model.params import ModelParams
from tcsmt.search.domain import Domain
from tcsmt.smt import abstraction, service


def floor_formula(p: ModelParams, k: int, domain: Domain, c_format: Format | None = None):
    """SAT exactly when some block's alignment point, without the floor, is
    below p.min_exponent with a non-zero term. The block's terms are those
    its register sums (tcsmt.datapath.blocks.block_terms): its products
    (free products, in exact groups of group_size; with block scales, each
    group times a scale pair of its own, any words of the scale format:
    the real pairs, one per scale block, are among them) and its c, any
    bit pattern of ``c_format``: c's format for the first block (read as
    the datapath reads c), the block result's for a chained one."""
    from tcsmt.datapath.blocks import block_terms
    from tcsmt.datapath.chain import group_terms, next_c, products
    from tcsmt.datapath.terms import unpack_input
    n = max(1, min(p.block_size, k))
    cf = c_format or p.fc
    fs = p.fscale

    def build(I):
        ew = datapath.exp_width(p)
        a = [I.var(f"a{i}", p.fin.bits) for i in range(n)]
        b = [I.var(f"b{i}", p.fb.bits) for i in range(n)]
        c = I.var("c", cf.bits)
        c_dom = I.var("c_domain", p.fc.bits)          # the domain's c is not this block's c
        out = domain.constraints(I, p.fin, p.fc, a, b, c_dom, p.fb)
        sa = sb = None
        if fs is not None:
            sa = [I.var(f"sa{i}", fs.bits) for i in range(n)]
            sb = [I.var(f"sb{i}", fs.bits) for i in range(n)]
        # the block's terms as block_step makes them: exact groups, each
        # times the scale words of its first product (free words here)
        prods = group_terms(I, p, list(products(I, p, a, b, ew)), sa, sb, ew)
        c_term = unpack_input(I, p, p.fc, c, ew, is_c=True) if c_format is None else next_c(I, p, c, ew)
        terms = block_terms(I, p, prods, c_term, ew)
        free = datapath.alignment_point(I, terms, ew, None)
        floored = datapath.alignment_point(I, terms, ew, p.min_exponent)
        nonzero = I.not_(bv.all_(I, [bv.is_zero(I, t.sig) for t in terms]))
        return out + [nonzero, I.not_(I.eq(free, floored))]

    f, _ = abstraction.free_products(build, description=f"tcsmt floor lemma: {p.name}, block of {n}, "
                                                        f"c in {cf.name}, min_exponent {p.min_exponent}")
    return f


def group_cut_formula(p: ModelParams, k: int, size: int):
    """SAT exactly when, in a block of the raw-exponent window
    (tcsmt.datapath.window) with min(block_size, k) products, c does not
    dominate and some non-zero group of ``size`` products loses a bit to
    the window's quantum: the claim of window.grouping_is_moot, asked of
    the datapath's own quantum and groups, over every input (a, b, c and
    the scales: any bit patterns; free products, so UNSAT is a proof for
    the real ones)."""
    from tcsmt.datapath.chain import products, scale_of
    from tcsmt.datapath.scales import apply_scales
    from tcsmt.datapath.terms import is_dead, unpack, unpack_input
    from tcsmt.datapath.window import groups, quantum, truncate_at
    from tcsmt.search import separation as sep
    n = max(1, min(p.block_size, k))

    def build(I):
        ew = datapath.exp_width(p)
        a, b, c = sep.declare_inputs(I, p, n)
        sa, sb = sep.declare_scales(I, p, n)
        prods = list(products(I, p, a, b, ew))
        ua = [unpack(I, p.fscale, x, ew, False) for x in sa]     # as block_step unpacks them
        ub = [unpack(I, p.fscale, x, ew, False) for x in sb]
        ta, tb = [ua[scale_of(p, i)] for i in range(n)], [ub[scale_of(p, i)] for i in range(n)]
        c_term = unpack_input(I, p, p.fc, c, ew, is_c=True)
        scaled = [apply_scales(I, p, t, ta[i], tb[i]) for i, t in enumerate(prods)]
        pairs = [I.add(ta[i].exp, tb[i].exp) for i in range(n)]
        _, q, c_dom = quantum(I, p, scaled, pairs, c_term, ew)
        G, _ = groups(I, p, prods, ta, tb, size, ew)
        cut = [I.and_(I.not_(is_dead(I, g)), I.not_(I.eq(truncate_at(I, g, q, ew).sig, g.sig)))
               for g in G]
        return [I.not_(c_dom), I.or_(*cut)]

    f, _ = abstraction.free_products(build, description=f"tcsmt group lemma: {p.name}, block of {n}, "
                                                        f"groups of {size} cut by the window")
    return f


def c_formats(p: ModelParams, k: int) -> list[Format | None]:
    """What a block's c can be: c itself (None), and for a dot product of
    more than one block the result of the block before, in its format."""
    from tcsmt.datapath.chain import block_count
    out: list[Format | None] = [None]
    rf = datapath.result_format(p)
    if block_count(p, k) > 1 and (rf.name != p.fc.name or p.c_lead_bits):
        out.append(rf)
    return out


_ANSWERS: dict = {}
"""The solvers' answers (SAT or UNSAT) by the formula asked, its comments
aside (``_question``): hypotheses that differ only after the alignment
point (roundings, the sign of a zero) ask the same formula, solved once
per process."""


def _question(formula) -> str:
    """sha256 of the formula's text without its comment lines (the first
    names the hypothesis)."""
    body = "\n".join(line for line in formula.text.splitlines() if not line.startswith(";"))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def floor_lemma(p: ModelParams, k: int, domain: Domain, timeout: float = 120.0) -> dict:
    """Whether p's min_exponent ever moves an alignment point on the domain
    (over every c a block can start from)."""
    if p.min_exponent is None:
        return {"parameter": "min_exponent", "verdict": "unsat", "how": "no floor"}
    if (p.normalisation != "block" or p.c_placement != "global"
            or p.scale_window_bits is not None or p.fout.is_integer):
        return {"parameter": "min_exponent", "verdict": "unknown",
                "how": "the lemma is written for the block register: block normalisation, c placed "
                       "globally, no scale windows"}
    rec = {"parameter": "min_exponent", "value": p.min_exponent,
           "how": "free products" + (f" in exact groups of {p.group_size}" if p.group_size > 1 else "")
                  + (" times free scale pairs" if p.fscale is not None else "")
                  + "; c any bit pattern of each format a block's c can have; some term non-zero "
                    "and the alignment point below the floor"}
    proved: set[str] = set()
    digests: list[str] = []
    for cf in c_formats(p, k):
        formula = floor_formula(p, k, domain, cf)
        digests.append(formula.sha256)
        question = _question(formula)
        ans = _ANSWERS.get(question)
        if ans is None:
            ans = service.solve(formula, "portfolio", timeout, cross_check=True)
            if ans.status in (Verdict.SAT, Verdict.UNSAT):
                _ANSWERS[question] = ans
        if ans.status == Verdict.SAT:
            return {**rec, "verdict": "sat", "c_format": (cf or p.fc).name,
                    "values": {k2: hex(v) for k2, v in ans.values.items() if not k2.startswith("prod")}}
        if ans.status != Verdict.UNSAT:
            return {**rec, "verdict": ans.status, "c_format": (cf or p.fc).name,
                    "reason": getattr(ans, "reason", "")}
        proved |= set(getattr(ans, "proved_by", []) or [])
    return {**rec, "verdict": "unsat", "proved_by": sorted(proved), "sha256": digests}


def carry_lemma(p: ModelParams, timeout: float = 120.0) -> dict:
    """Whether p's carry_bits are as good as unbounded ones."""
    from tcsmt.errors import UserError
    from tcsmt.search.prove import prove_carry_bits
    if p.carry_bits is None:
        return {"parameter": "carry_bits", "verdict": "unsat", "how": "unbounded"}
    try:
        fewest = prove_carry_bits(p.replace(carry_bits=None), timeout=timeout, cross_check=True).fewest
    except UserError as e:
        return {"parameter": "carry_bits", "value": p.carry_bits, "verdict": "unknown", "reason": str(e)}
    return {"parameter": "carry_bits", "value": p.carry_bits, "fewest_that_suffice": fewest,
            "verdict": "unsat" if p.carry_bits >= fewest else "sat",
            "how": "tcsmt.search.prove.prove_carry_bits (per block, every input)"}


def same_circuit(p: ModelParams, q: ModelParams, k: int) -> bool:
    from tcsmt.sim.evaluate import trace
    ra, rb = trace([p, q], k)
    return ra.id == rb.id


def settle_outside(device: ModelParams, hyp: ModelParams, outside: list[str], k: int,
                   domain: Domain, timeout: float = 120.0) -> dict:
    """Lemmas for the parameters in which the device differs from the space's
    hypothesis (independent proofs: jobs of tcsmt.runner), then the circuit
    check. verdict: unsat (the device is the hypothesis on the domain),
    unknown, or sat (some parameter matters)."""
    proofs = {"min_exponent": partial(floor_lemma, device, k, domain, timeout),
              "carry_bits": partial(carry_lemma, device, timeout)}
    done = runner.run([runner.Task(key, proofs[key]) for key in outside if key in proofs])
    answers = {d.name: d.result() for d in done}
    none = {"verdict": "unknown", "how": "no lemma for this parameter"}
    lemmas = [answers.get(key) or {"parameter": key, **none} for key in outside]
    reduced = device
    for key, lem in zip(outside, lemmas):
        if lem["verdict"] == Verdict.UNSAT:
            reduced = reduced.replace(**{key: getattr(hyp, key)})
    same = same_circuit(reduced, hyp, k)
    if all(lem["verdict"] == Verdict.UNSAT for lem in lemmas) and same:
        verdict = "unsat"
    elif any(lem["verdict"] == Verdict.SAT for lem in lemmas):
        verdict = "sat"
    else:
        verdict = "unknown"
    return {"verdict": verdict, "lemmas": lemmas, "same_circuit_after_lemmas": same}
