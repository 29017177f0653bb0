"""The list of queries ``tcsmt regen`` runs: every property on every shipped
architecture (and the models of ``tcsmt.regen.jobs.MODELS``), the carry-bit
proofs and the case studies, each a ``tcsmt.regen.jobs.Job`` with its cache
key."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from tcsmt.enums import FileStatus
from tcsmt.errors import UserError
from tcsmt.regen import restate as rs
from tcsmt.regen.cases import plan_case_jobs
from tcsmt.regen.jobs import (
    MODELS,
    Job,
    Outcome,
    Plan,
    cache_key,
    code_fingerprint,
    find_command,
    prove_command,
    run_property_job,
    run_prove_job,
    solver_setting,
)


def plan_jobs(archs: list[str] | None, props: list[str] | None, timeout: float,
              root: Path, solver: str = "portfolio") -> Plan:
    from tcsmt.model.catalogue import architectures
    from tcsmt.model.choose import choose
    from tcsmt.properties.registry import aligns, all_properties

    archs = archs or architectures() + list(MODELS)
    for a in archs:
        choose(a)           # unknown architecture: one-line error
    allprops = all_properties()
    for p in props or []:
        if p not in allprops and p != "carry-bits-proof":
            raise UserError(f"unknown property {p!r} (known: {', '.join(sorted(allprops))})")
    code = code_fingerprint()
    setting = solver_setting(solver, timeout)
    plan = Plan(Path(root))
    for arch in archs:
        for name, prop in sorted(allprops.items()):
            if not props or name in props:
                _property_job(plan, arch, prop, code, setting)
        if not props or "carry-bits-proof" in props:
            base = choose(arch)
            if base.normalisation == "block" and aligns(base) is None:
                key = cache_key({"prove": "carry-bits", "model": base.parameter_dict(), **setting}, code)
                path = plan.root / arch / "carry-bits-proof.json"
                plan.jobs.append(Job(f"{arch}/carry-bits-proof", path, key,
                                     partial(run_prove_job, arch, timeout, solver),
                                     restate=partial(rs.restate_carry_proof, arch, prove_command(arch))))
    if not props:
        plan.jobs += plan_case_jobs(archs, timeout, code, plan.root, setting)
    return plan


def _property_job(plan: Plan, arch: str, prop, code: str, setting: dict) -> None:
    from tcsmt.properties.run import hypotheses, resolve_base, result_path
    try:
        base = resolve_base(prop, arch)
    except UserError as e:
        plan.skipped.append(Outcome(f"{arch}/{prop.name}", FileStatus.SKIPPED, note=str(e)))
        return
    source = __import__(f"tcsmt.queries.{prop.name.replace('-', '_')}", fromlist=["x"]).__file__
    assert source is not None               # a query is a module of a file
    module = Path(source)
    question = {"property": prop.name, "model": base.parameter_dict(), "k": prop.k(base),
                "domain": prop.domain(base).describe(),
                "hypotheses": [[h.id, h.params.parameter_dict()] for h in hypotheses(prop, base)],
                "settings": {"readable": True, "pool": True}, "module": module.read_text(),
                **setting}
    path = result_path(base, prop, plan.root)
    plan.jobs.append(Job(f"{arch}/{prop.name}", path, cache_key(question, code),
                         partial(run_property_job, prop.name, arch, setting["timeout"],
                                 setting["solver"]),
                         restate=partial(rs.restate_property, prop.name, arch,
                                         find_command(prop.name, arch))))
