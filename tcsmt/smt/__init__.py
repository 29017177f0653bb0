"""The model as SMT formulas, and solving them as a service.

How a query module uses it (it never touches a solver API):

    from tcsmt import datapath
    from tcsmt.smt.smtlib import build_formula
    from tcsmt.smt.service import solve

    def build(I):                               # I: the SMT interpretation
        a = [I.var(f"a{i}", p.fin.bits) for i in range(k)]
        ...
        d0 = datapath.dot(I, p0, a, b, c)       # the datapath builds the terms
        return [domain.constraints(I, ...), ..., I.not_(I.eq(d0, d1))]

    formula = build_formula(build)              # SMT-LIB text + its inputs
    answer = solve(formula, "portfolio", timeout=DEFAULT_TIMEOUT, cross_check=False)
    answer.status                               # sat / unsat / unknown / error
    answer.values                               # {"a0": 0x3c00, ...} when sat

Modules:

  terms     SmtInterp: the vocabulary as a hash-consed term DAG with
            constant folding (``SmtInterp(fold=False)`` for tests; a
            ``mul_hook`` for a query's own abstraction of multipliers)
  smtlib    SMT-LIB 2 text, Formula, build_formula, evaluation_formula
  service   solve, race (several formulas and solvers at once), Answer, Run
  abstraction  free products: an over-approximation of the multipliers
  backend_bitwuzla, backend_cvc5, backend_z3: run in worker processes only
"""
