"""What blind identification starts from, knowing only the unit's formats
and scales (those of the instruction it runs): the committed plan of those
formats (phase 1), the instruction's k, and the shipped models of those
formats (what a user knows beforehand: the centres of phase 2's search).
A simulated unit (tcsmt.identify.simdevice) and a real one start alike."""

from __future__ import annotations

from dataclasses import dataclass

from tcsmt.errors import UserError
from tcsmt.identify.plan import Plan, committed_plan, formats_record, read_plan
from tcsmt.model.names import short_format
from tcsmt.model.params import ModelParams


def same_formats(p: ModelParams, q: ModelParams) -> bool:
    """The same formats, scales and sparsity: rows of one run on the other."""
    return formats_record(p) == formats_record(q) and (p.scale_block if p.fscale else 0) == \
        (q.scale_block if q.fscale else 0) and p.sparsity == q.sparsity


def shipped_like(p: ModelParams) -> list[ModelParams]:
    """The shipped models of p's formats and scales (what a user knows)."""
    from tcsmt.model.catalogue import all_models
    return [m for m in all_models() if same_formats(m, p)]


def plan_for(p: ModelParams, plan_file: str | None) -> Plan | None:
    """The plan given, else the committed plan of p's formats (None if none)."""
    if plan_file:
        return read_plan(plan_file)
    fmts = f"{short_format(p.in_format)}:{short_format(p.out_format)}"
    scales = f"{short_format(p.fscale.name)}/{p.scale_block}" if p.fscale is not None else None
    path = committed_plan(fmts, scales)
    if path is None:
        return None
    plan = read_plan(path)
    return plan if same_formats(plan.space.base, p) else None


def instruction_k(p: ModelParams) -> int:
    from tcsmt.instructions.table import choose_instruction
    return choose_instruction(p.fin.name, p.fc.name, p.fout.name, fb=p.fb.name,
                              scale=p.fscale.name if p.fscale else "",
                              scale_block=p.scale_block or 0).k


@dataclass
class Setting:
    plan: Plan | None
    fmt: ModelParams          # a model of the unit's formats and scales (the plan's base, else a shipped one)
    k: int
    shipped: list[ModelParams]


def setting(p: ModelParams, plan: Plan | str | None = None, confirm: bool = True) -> Setting:
    """The plan (given, or the committed one of p's formats), k and the
    shipped models for a unit of p's formats and scales (nothing else of p
    is read)."""
    plan = plan if isinstance(plan, Plan) else plan_for(p, plan)
    if plan is not None and not same_formats(plan.space.base, p):
        raise UserError(f"the unit computes {p.formats_label}; the plan is for "
                        f"{plan.space.base.formats_label}")
    if plan is None and not confirm:
        raise UserError(f"no committed plan for {p.formats_label}: phase 1 needs one (tcsmt plan)")
    shipped = shipped_like(p)
    if not shipped and plan is None:
        raise UserError(f"no shipped model and no plan for {p.formats_label}: nothing to start from")
    fmt = plan.space.base if plan is not None else shipped[0]
    return Setting(plan, fmt, plan.k if plan is not None else _unit_k(fmt, shipped), shipped)


def _unit_k(fmt: ModelParams, shipped: list[ModelParams]) -> int:
    """The products one instruction of these formats takes; where the
    instruction tables hold none (Volta's m8n8k4 with an fp16 c and an
    fp32 d), the largest block of a shipped model of these formats."""
    try:
        return instruction_k(fmt)
    except UserError:
        if not shipped:
            raise
        return max(m.block_size for m in shipped)
