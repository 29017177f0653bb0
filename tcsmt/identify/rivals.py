"""Rivals: other models that reproduce every row seen as well as the one
identified. Each is split from it by a row the unit then runs, or proved to
compute the same, or left undecided (and said so).

1. A pool of rows (tcsmt.identify.confirm.split_pool) is run through the
   identified model and its rivals; the rows on which rivals differ from
   it are chosen greedily (``split``).
2. A rival no pool row splits is settled by a proof (``settle``): a floor
   of the alignment point that never moves it (the floor lemma of
   tcsmt.identify.lemmas, for both models), carries that both hold every
   block sum (tcsmt.search.prove.prove_carry_bits), else the solvers on the
   two models over every finite input (tcsmt.search.find.ask: the full
   formula, the one with free products, restricted ones): a witness
   (replayed on the concrete models) is one more row to run; an UNSAT,
   cross-checked, proves them one behaviour.
"""

from __future__ import annotations

from tcsmt.enums import Verdict
from tcsmt.identify.classes import say
from tcsmt.identify.confirm import split_pool, splitting_rows
from tcsmt.identify.neighbours import arithmetic, differs
from tcsmt.model.params import ModelParams
from tcsmt.observed.random_rows import Rows
from tcsmt.search.domain import Domain
from tcsmt.search.vectors import Hypothesis

SETTLE_TIMEOUT = 10.0     # seconds of the solvers per rival
PER_CHANGE = 3            # rivals changing the same parameters that are asked of the solvers


def distinct(models: list[ModelParams], k: int, first: ModelParams) -> list[ModelParams]:
    """The models whose circuit differs from first's and from each other's."""
    from tcsmt.sim.evaluate import trace
    roots = trace([first, *models], k)
    seen = {roots[0].id}
    out = []
    for r, m in zip(roots[1:], models):
        if r.id not in seen:
            seen.add(r.id)
            out.append(m)
    return out


def split(h: ModelParams, rivals: list[ModelParams], k: int, seed: int
          ) -> tuple[Rows | None, list[str], list[ModelParams]]:
    """Pool rows on which the rivals differ from h (None when none does),
    their origins, and the rivals no pool row splits."""
    from tcsmt.sim.evaluate import evaluate
    pool, why = split_pool(h, k, seed)
    ev = evaluate([h, *rivals], pool.a, pool.b, pool.c, sa=pool.sa, sb=pool.sb)
    outs = ev.outputs
    usable = [i for i in range(len(rivals) + 1) if i not in set(ev.unsupported)]
    if 0 not in usable:
        return None, [], rivals
    picked = splitting_rows(outs[usable])
    split_ok = (outs[usable] != outs[0][None, :])[:, picked].any(axis=1) if picked else None
    left = [rivals[i - 1] for n, i in enumerate(usable) if i and not (split_ok is not None and split_ok[n])]
    left += [rivals[i - 1] for i in range(1, len(rivals) + 1) if i not in usable]
    if not picked:
        return None, [], left
    rows = Rows(pool.a[picked], pool.b[picked], pool.c[picked],
                None if pool.sa is None else pool.sa[picked], None if pool.sb is None else pool.sb[picked])
    return rows, [why[j] for j in picked], left


def settle(h: ModelParams, rival: ModelParams, k: int, timeout: float = SETTLE_TIMEOUT) -> dict:
    """Whether rival computes what h computes on every finite input: verdict
    unsat (the same; how), sat (with a replayed witness Vector), unknown."""
    from tcsmt.identify.lemmas import floor_lemma
    keys = set(differs(h, rival))
    dom = Domain()
    if keys == {"min_exponent"}:
        lem = [floor_lemma(p, k, dom, timeout) for p in (h, rival)]
        if all(x["verdict"] == Verdict.UNSAT for x in lem):
            return {"verdict": "unsat", "how": "floor lemma: neither floor ever moves the alignment point",
                    "proved_by": sorted({s for x in lem for s in x.get("proved_by", [])})}
    if keys == {"carry_bits"}:
        fewest = fewest_carries(h, timeout)
        if fewest is not None and all(p.carry_bits is None or p.carry_bits >= fewest for p in (h, rival)):
            return {"verdict": "unsat", "how": f"both carry counts hold every block sum ({fewest} "
                                               "suffice: tcsmt prove carry-bits)"}
    from tcsmt.search.find import ask
    out = ask([Hypothesis("identified", h), Hypothesis("rival", rival)], k, dom, [(0, 1)], "portfolio",
              timeout, readable=False, cross_check=True)
    rec: dict = {"verdict": str(out.verdict), "how": "solvers on every finite input"
                                               + (f" ({out.tag} formula)" if out.tag else ""),
           "proved_by": list(out.proved_by)}
    if out.verdict == Verdict.SAT:
        rec["witness"] = out.vector
    elif out.verdict != Verdict.UNSAT:
        rec["reason"] = out.reason
    return rec


_FEWEST: dict[str, int | None] = {}


def fewest_carries(p: ModelParams, timeout: float) -> int | None:
    """The fewest carry bits that give p's outputs with unbounded ones on
    every input of a block (None when not proved), once per arithmetic."""
    from tcsmt.errors import UserError
    from tcsmt.search.prove import prove_carry_bits
    key = repr(sorted((k, v) for k, v in arithmetic(p).items() if k != "carry_bits"))
    if key not in _FEWEST:
        try:
            proof = prove_carry_bits(p.replace(carry_bits=None), timeout=timeout, cross_check=True)
            _FEWEST[key] = proof.fewest
        except UserError:
            _FEWEST[key] = None
    return _FEWEST[key]


def settle_all(h: ModelParams, rivals: list[ModelParams], k: int, log=None) -> list[dict]:
    """``settle`` for at most PER_CHANGE rivals that change the same
    parameters (the rest, as a floor's many values, are like those asked),
    and for none after one of them is left undecided: the solvers that did
    not decide min_exponent = none in SETTLE_TIMEOUT do not decide -140
    either, and asking costs the whole timeout. A rival past either is
    unknown (not asked). What is asked depends on the answers alone, never
    on how long they took."""
    out: list[dict] = []
    asked: dict[tuple, int] = {}
    undecided: dict[tuple, str] = {}
    for r in rivals:
        keys = tuple(differs(h, r))
        if keys in undecided:
            out.append({"rival": r, "verdict": "unknown",
                        "how": f"not asked ({undecided[keys]} was not decided)"})
            continue
        asked[keys] = asked.get(keys, 0) + 1
        if asked[keys] > PER_CHANGE:
            out.append({"rival": r, "verdict": "unknown",
                        "how": f"not asked ({PER_CHANGE} values of {', '.join(keys)} were)"})
            continue
        say(log, f"no pool row tells {_changes(h, r)} apart: asking the solvers")
        got = {"rival": r, **settle(h, r, k, SETTLE_TIMEOUT)}
        if got["verdict"] not in ("sat", "unsat"):
            undecided[keys] = _changes(h, r)
        out.append(got)
    return out


def _changes(h: ModelParams, r: ModelParams) -> str:
    return ", ".join(f"{k} = {v}" for k, v in differs(h, r).items())
