"""tcsmt from Python: one call per command, returning the document the
command prints (and, where it writes a file, writes).

    >>> import tcsmt
    >>> doc = tcsmt.diff("volta", "ampere")                     # a tcsmt-result/2 dict
    >>> doc["verdict"], doc["vectors"][0]["outputs"]
    >>> tcsmt.find("rounding", "ampere")["vectors"]
    >>> tcsmt.prove_carry_bits("ampere")["query"]["fewest"]

Model arguments are an architecture (``ampere``), a model name
(``ampere-bf16-fp32``) or a model file; ``formats`` picks another of an
architecture's format pairs and ``overrides`` are ``KEY=VALUE`` changes of
parameters (as ``--set``). Solvers: "portfolio" (every installed solver at
once, the first definitive answer wins) or one of bitwuzla, cvc5, z3.
Every call that asks a solver takes ``emit_smt2`` (a folder, or a file
ending in .smt2): the SMT-LIB text of every query it solves, one file per
query, with an index of the answers (tcsmt.smt.emit). Nothing here
prints; bad input raises ``tcsmt.errors.UserError``.
"""

from __future__ import annotations

import functools
import inspect
import shlex
from collections.abc import Sequence
from pathlib import Path

from tcsmt.enums import Verdict
from tcsmt.errors import (
    BadOption,
    FormatMismatch,
    ShapeError,
    SolverTimeout,
    UnknownModel,
    UserError,
)
from tcsmt.invocation import command_line
from tcsmt.model.catalogue import select_models
from tcsmt.model.choose import choose
from tcsmt.model.overrides import apply_overrides
from tcsmt.model.params import ModelParams
from tcsmt.smt.service import DEFAULT_TIMEOUT


def _emits(fn):
    """Gives a call that asks solvers the keyword ``emit_smt2``: a folder,
    or a file ending in .smt2, that gets the SMT-LIB text of every query
    the call solves, one file per query (tcsmt.smt.emit). The call's
    signature shows it beside the call's own keywords."""
    @functools.wraps(fn)
    def call(*args, emit_smt2: str | Path | None = None, **kw):
        with emitting(emit_smt2):
            return fn(*args, **kw)
    sig = inspect.signature(fn)
    extra = inspect.Parameter("emit_smt2", inspect.Parameter.KEYWORD_ONLY, default=None,
                              annotation="str | Path | None")
    call.__signature__ = sig.replace(parameters=[*sig.parameters.values(), extra])  # type: ignore[attr-defined]
    return call


def emitting(path: str | Path | None):
    """The block (a context manager) within which every query solved, here
    and in local worker processes, is written under ``path`` (a folder, or a
    file ending in .smt2; None: nothing is): ``--emit-smt2``."""
    from tcsmt.smt import emit
    return emit.emitting(path)


def emitted(path: str | Path) -> tuple[int, Path]:
    """How many query files the index under ``path`` names, and the index."""
    from tcsmt.smt import emit
    return emit.count(path), emit.index_path(path)


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------


def models(archs=(), scaled: bool | None = None) -> list[ModelParams]:
    """The shipped models: all, or those of the named architectures; only
    the block-scaled ones (``scaled`` True) or only the others (False)."""
    return select_models(archs, scaled)


def simulate(arch, a, b, c=0, *, formats: str | None = None, overrides=(), scale_a=None,
             scale_b=None, mask=None, explain: bool = False) -> dict:
    """One dot product d = c + sum a_i*b_i under a model, as ``tcsmt
    simulate`` prints it: {"model", "summary": {the model's formats, block,
    fraction bits, rounding, scales}, "a", "b", "c" (and "scale_a",
    "scale_b"): [{"hex", "decimal", "text"}], "d": {"hex", "decimal",
    "kind"}, "stages": [[stage, text], ...] (with ``explain``)}. Each input
    is an int (a bit pattern, as tcsmt.dot takes), a string ("0x3c00", a bit
    pattern; "1.5", "2^-24", an exact number) or a float or Fraction; the
    scales of a block-scaled model (one per scale_block terms) are bit
    patterns of its scale format; a sparse model's ``mask`` is one 0 or 1
    per term (1: the metadata selects it)."""
    from tcsmt.sim.dot import simulate_document
    p = choose(arch, formats, list(overrides))
    return simulate_document(p, list(a), list(b), c, scale_a, scale_b, explain, mask)


def conformance(folder: str | Path, arch: str | None = None, *, engine: str = "auto",
                limit: int | None = None, json: str | Path | None = None) -> dict:
    """Recorded GPU outputs (DIR/DEVICE/FORMAT/{a,b,c,d}_*.txt) replayed
    through the models: the tcsmt-conformance/2 document ``tcsmt
    conformance --json`` writes ({"summary": {"rows", "judged", "matched",
    "not_judged": {why: rows}...}, "folders": [{"device", "folder",
    "output", "model", "rows", "matched", "judged", "mismatches", "notes"...}]}),
    also written to ``json`` when given."""
    from tcsmt.fileio import write_json_atomic
    from tcsmt.judge import conformance as cf
    doc = cf.document(cf.run(folder, arch, engine, limit))
    if json:
        write_json_atomic(json, doc)
    return doc


def matmul(A, B, C=None, arch=None, formats: str | None = None, overrides=None, *, model=None,
           round_inputs: str | None = None, scale_a=None, scale_b=None, backend: str | None = None,
           threads: int | None = None, max_memory: int | None = None, progress=None):
    """D = C + A @ B as the modelled matrix unit computes it. The result is
    a NumPy array whose ``.model`` is the ModelParams that computed it
    (``D.model.name``).

    C may be left out: zeros in the model's c format. A model is chosen by
    ``arch`` (or ``model``): a ModelParams, a model name or file, or an
    architecture, whose model then matches the dtypes of A, B and C (or
    ``formats``, "IN:OUT"); ``overrides`` are "KEY=VALUE" changes as
    ``--set``. Inputs in a wider format than the model reads (float32 or
    float64 for an fp16, bf16 or fp8 model) are refused unless
    ``round_inputs`` names how to round them: "rne" (round to nearest, ties
    to even), "rz", "ru" or "rd"; they are then rounded into the model's
    formats, and a bare architecture means its default model (or
    ``formats``). float32 feeds a tf32 model only when one is asked for
    (formats="tf32:fp32", or a tf32 model's name): it keeps the top 19 bits
    of each value.

    A block-scaled model (``tcsmt models --scaled``) takes ``scale_a``
    (M x S) and ``scale_b`` (S x N), S = ceil(K / scale_block), in the scale
    format's dtype (see tcsmt.sim.batch.matmul). ``backend``: "numpy",
    "cpu" (the compiled kernel on ``threads`` cores) or "cuda"; None: the
    fastest available. ``max_memory`` bounds the bytes of one tile's work.
    ``progress(name, done, total)`` is called as tiles of D are done. With
    a dask array among A, B and C, D is a dask array of tasks (tcsmt.sim.chunked),
    without ``.model``."""
    import numpy as np

    from tcsmt.sim import batch, chunked
    from tcsmt.sim.inputs import round_array, with_model
    from tcsmt.sim.npio import dtype_of
    if model is not None and arch is not None:
        raise UserError("give the model once: arch= or model=, not both")
    spec = model if arch is None else arch
    if spec is None:
        raise UnknownModel("matmul needs a model: arch= or model= (an architecture or model name)")
    lazy = any(chunked.is_dask(x) for x in (A, B, C))     # dask arrays stay dask arrays
    if not lazy:
        A, B = np.asarray(A), np.asarray(B)
    p = matmul_model(spec, formats, overrides, A, B, C, round_inputs)
    if C is None:
        if A.ndim != 2 or B.ndim != 2:
            raise ShapeError(f"A and B must be 2-D; got {A.ndim}-D and {B.ndim}-D")
        C = np.zeros((A.shape[0], B.shape[1]), dtype=dtype_of(p.fc))
    if lazy:
        if round_inputs:
            raise UserError("round_inputs is not taken with dask arrays: round A and B first")
        batch.check_shapes(A, B, C)
        batch.check_supported(p, A.shape[1])
        return chunked.matmul_dask(A, B, C, p, backend, scale_a, scale_b,
                                   max_memory=max_memory or chunked.TASK_MEMORY)
    if round_inputs:
        if A.ndim == 2 and B.ndim == 2:           # rounding copies the operands: check first
            rounded = sum(x.size * np.dtype(dtype_of(f)).itemsize
                          for x, f in ((A, p.fin), (B, p.fb), (C, p.fc)))
            batch.check_memory(p, A.shape[0], B.shape[1], A.shape[1], backend, max_memory, threads,
                               extra=rounded)
        A, B, C = (round_array(x, f, round_inputs, n) for x, f, n in ((A, p.fin, "A"), (B, p.fb, "B"),
                                                                      (C, p.fc, "C")))
    D = batch.matmul(A, B, np.asarray(C), p, scale_a=scale_a, scale_b=scale_b, backend=backend,
                     threads=threads, max_memory=max_memory, progress=progress)
    return with_model(D, p)


def matmul_model(spec, formats, overrides, A, B, C=None, round_inputs: str | None = None) -> ModelParams:
    """The model ``matmul`` uses for these operands (see matmul): chosen
    once, here (tcsmt.model.choose), by name and the operands' dtypes; a
    refusal, naming the way out, for float32 or float64 operands handed to
    a bare architecture or a narrower model."""
    import numpy as np

    from tcsmt.model.choose import choose, is_architecture
    from tcsmt.sim.chunked import is_dask
    from tcsmt.sim.npio import dtype_of, model_for_arrays
    wide = lambda x: x.dtype in (np.float32, np.float64)  # noqa: E731
    bare = isinstance(spec, str) and formats is None and is_architecture(spec)
    if round_inputs or (bare and (wide(A) or wide(B))):
        p = choose(spec, formats, list(overrides or []))
        if round_inputs:
            return p
        which = " and ".join(f"{n} is {x.dtype}" for n, x in (("A", A), ("B", B)) if wide(x))
        raise FormatMismatch(f"{which}; {spec}'s default model {p.name} reads "
                             f"{p.in_format}: give round_inputs='rne' (or rz, ru, rd) to round them, "
                             f"or name a model that reads them (formats='tf32:fp32' reads float32 as "
                             f"tf32, its top 19 bits)")
    c = C if C is not None else np.zeros((1, 1), dtype=np.float32)
    p = model_for_arrays(spec, formats, overrides, A, c if is_dask(c) else np.asarray(c), B)
    for name, x, f in (("A", A, p.fin), ("B", B, p.fb)):
        if x.dtype != dtype_of(f) and wide(x):
            raise FormatMismatch(f"{name} is {x.dtype} and {p.name} reads {f.name}: give "
                                 f"round_inputs='rne' (or rz, ru, rd) to round it, or pass "
                                 f"{dtype_of(f).name}")
    return p


def gemm(a: str | Path, b: str | Path, c: str | Path | None = None, *, output: str | Path,
         arch: str, formats: str | None = None, overrides=(), round_inputs: str | None = None,
         backend: str | None = None, scale_a: str | Path | None = None,
         scale_b: str | Path | None = None, scheduler: str | None = None, progress=None) -> dict:
    """``tcsmt gemm``: D = C + A @ B from .npy files (C zeros when left out),
    written to ``output`` whole or not at all, as ``arch``'s model computes
    it (see matmul). A file it reads is never its output. With a Dask
    ``scheduler`` (or TCSMT_SCHEDULER), tiles of D are tasks on the cluster.
    Returns {"model", "shape": [M, N], "dtype", "output"}."""
    import numpy as np

    from tcsmt import runner
    from tcsmt.fileio import refuse_overwriting
    from tcsmt.sim.npio import dtype_of
    from tcsmt.sim.npyfiles import load_npy, one_byte_as, save_npy_atomic
    refuse_overwriting(output, {"A": a, "B": b, "C": c, "--scale-a": scale_a, "--scale-b": scale_b}, "-o")
    A, B = load_npy(a, "A"), load_npy(b, "B")
    C = load_npy(c, "C") if c else None
    SA, SB = (None if x is None else load_npy(x, n) for x, n in ((scale_a, "--scale-a"),
                                                                (scale_b, "--scale-b")))
    p = matmul_model(arch, formats, list(overrides), A, B, C, round_inputs)
    A, B = one_byte_as(A, p.fin), one_byte_as(B, p.fb)
    if p.scale_format is not None:
        SA, SB = (None if x is None else one_byte_as(x, p.fscale) for x in (SA, SB))
    address = runner.scheduler_address(scheduler)
    if address:
        from tcsmt.sim.chunked import matmul_on_cluster
        if round_inputs:
            raise UserError("--round-inputs is not taken with --scheduler: round A and B first")
        if C is None:
            C = np.zeros((A.shape[0], B.shape[1]), dtype=dtype_of(p.fc))
        D = matmul_on_cluster(address, A, B, C, p, backend, scale_a=SA, scale_b=SB)
    else:
        D = matmul(A, B, C, p, round_inputs=round_inputs, backend=backend, scale_a=SA, scale_b=SB,
                   progress=progress)
    D = np.asarray(D)
    save_npy_atomic(output, D)
    return {"model": p.name, "shape": list(D.shape), "dtype": str(D.dtype), "output": str(output)}


def params(arch: str | None = None, *, formats: str | None = None, overrides=()) -> dict:
    """``tcsmt params``: every parameter of a model (its values, default and
    meaning) and the reference models: {"parameters": [...], "references":
    [{"name", "meaning", "parameters"}]}. With ``arch`` (an architecture,
    model name or file, as --arch takes it), that model's values instead,
    each with its source: tcsmt.model.paramdoc.model_values."""
    from tcsmt.model.paramdoc import model_values, parameter_docs
    from tcsmt.model.reference import REFERENCES
    if arch is not None:
        return model_values(choose(arch, formats, list(overrides)), list(overrides))
    return {"parameters": parameter_docs(),
            "references": [{"name": n, "meaning": d, "parameters": v} for n, (d, v) in REFERENCES.items()]}


def model_save(name: str, base: str, *, formats: str | None = None, overrides=(), source: str = "",
               description: str = "", output: str | Path | None = None) -> dict:
    """``tcsmt model save``: write NAME as a model file with ``base = BASE``
    and only what ``overrides`` change (each with its ``# source:`` line);
    returns {"path", "name", "base", "differs"}."""
    from tcsmt.model.modelfile import save_derived
    return save_derived(output or f"{name}.toml", name, base, formats, list(overrides), source, description)


# ---------------------------------------------------------------------------
# diff, equiv, replay
# ---------------------------------------------------------------------------

def _spec(model: str, formats: str | None, sets: list[str]) -> str:
    words = [model] + (["--formats", formats] if formats else [])
    for s in sets:
        words += ["--set", s]
    return shlex.join(words)


def comparison(*models: str | None, formats: str | None = None, set_both=(), set_a=(), set_b=()):
    """The hypotheses of a diff or equiv: one per model (a single model is
    compared with itself, changed by ``set_b``), ``set_a``/``set_b``
    applied to the first/second. Their ids are the models' names, made
    unique with the changed parameters (or #2, #3...)."""
    from tcsmt.search.diff import check_comparable
    from tcsmt.search.vectors import Hypothesis
    named = [m for m in models if m is not None]
    if not named:
        raise UserError("name at least one model")
    if len(named) == 1:
        named = named * 2
    sets = [[*set_both, *(set_a if i == 0 else set_b if i == 1 else ())] for i in range(len(named))]
    params = _comparison_params(named, formats, sets)
    for p in params[1:]:
        check_comparable(params[0], p)
    ids = _unique_ids([p.name for p in params], sets)
    return [Hypothesis(i, p, _spec(m, formats, s)) for i, p, m, s in zip(ids, params, named, sets)]


def _comparison_params(models, formats, sets) -> list[ModelParams]:
    """Each model's record; without ``formats``, a reference model (exact,
    fma-chain...) takes the formats of the first model that is not one."""
    from tcsmt.model.reference import is_reference, reference_like
    params = [choose(m, formats, s) for m, s in zip(models, sets)]
    hardware = next((p for m, p in zip(models, params) if not is_reference(m)), None)
    if formats or hardware is None:
        return params
    return [apply_overrides(reference_like(m, hardware), s) if is_reference(m) else p
            for m, p, s in zip(models, params, sets)]


def _unique_ids(names: list[str], sets: list[list[str]]) -> list[str]:
    ids = [n if names.count(n) == 1 or not s else f"{n} {' '.join(s)}" for n, s in zip(names, sets)]
    out: list[str] = []
    for i in ids:
        out.append(i if i not in out else f"{i} #{sum(x.split(' #')[0] == i for x in out) + 1}")
    return out


@_emits
def diff(*models: str, formats: str | None = None, set_both=(), set_a=(), set_b=(),
         k: int | None = None, domain=None, solver: str = "portfolio",
         timeout: float = DEFAULT_TIMEOUT, cross_check: bool = False, count: int = 1,
         command: str | None = None) -> dict:
    """The fewest inputs that tell every pair of models apart (as find does
    for a property's hypotheses), shrunk to few non-zero products and
    significant bits and replayed on the concrete models; with ``count``,
    more, each unlike the others. Models whose arithmetic parameters are
    equal are reported as identical circuits, without a solver.
    ``run.notes`` says when a vector lies outside the inputs a model was
    validated on. ``domain`` is a tcsmt.search.domain.Domain (finite inputs
    by default); ``emit_smt2`` (a folder, or a file ending in .smt2) gets
    the SMT-LIB text of every query solved (tcsmt.smt.emit). No answer in
    time is a UserError."""
    from tcsmt.observed.validated import outside_notes
    from tcsmt.report.documents import diff_document
    from tcsmt.search.diff import default_k, diff_models
    from tcsmt.search.domain import Domain
    timeout = _seconds(timeout)
    hyps = comparison(*models, formats=formats, set_both=set_both, set_a=set_a, set_b=set_b)
    k = k or default_k(*(h.params for h in hyps))
    domain = domain or Domain()
    found = diff_models(hyps, k, domain, solver, timeout, cross_check, count)
    doc = diff_document(found, k, domain, _command(command))
    if doc["verdict"] == Verdict.UNKNOWN:
        reasons = "; ".join(sorted({p["reason"] for p in doc["run"]["pairs"] if p["reason"]}))
        raise SolverTimeout(f"no answer within {timeout:g} s ({reasons or 'no answer'}); "
                        "try a longer --timeout or another --solver")
    doc["run"]["notes"] = outside_notes([h.params for h in hyps], doc["vectors"])
    return doc


@_emits
def equiv(model_a: str, model_b: str | None = None, *, formats: str | None = None,
          set_both=(), set_a=(), set_b=(), k: int | None = None, domain=None,
          solver: str = "portfolio", timeout: float = DEFAULT_TIMEOUT, cross_check: bool = False,
          command: str | None = None) -> dict:
    """The proof that two models agree on every input of the domain (the
    full formula only: no restrictions, which cost a proof time), or a
    counterexample, replayed. No answer in time is a UserError."""
    from tcsmt.report.documents import separation_document
    from tcsmt.search import separation as sep
    from tcsmt.search.diff import default_k, run_diff
    from tcsmt.search.domain import Domain
    timeout = _seconds(timeout)
    hyps = comparison(model_a, model_b, formats=formats, set_both=set_both, set_a=set_a, set_b=set_b)
    if len(hyps) != 2:
        raise UserError("equiv compares two models")
    k = k or default_k(hyps[0].params, hyps[1].params)
    domain = domain or Domain()
    forms = sep.formulations(hyps, k, domain, restrictions=False)
    out = run_diff(hyps, k, domain, solver, timeout, cross_check, forms)
    if out.verdict == Verdict.UNKNOWN:
        raise SolverTimeout(f"no answer within {timeout:g} s ({out.reason}); "
                        "try a longer --timeout or another --solver")
    return separation_document("equiv", hyps, k, domain, out, _command(command))


def replay(path: str | Path):
    """Every vector of a result file through the concrete model of every
    hypothesis it names (a ReplayReport: ``ok``, ``problems``)."""
    from tcsmt.report.results import replay as replay_file
    return replay_file(path)


# ---------------------------------------------------------------------------
# Properties and proofs
# ---------------------------------------------------------------------------

@_emits
def find(prop: str, arch: str, *, formats: str | None = None, overrides=(),
         solver: str = "portfolio", timeout: float = DEFAULT_TIMEOUT, readable: bool = True,
         pool: bool = True, cross_check: bool = False, prior: str | Path | None = None,
         command: str | None = None, progress=None) -> dict:
    """The fewest vectors that tell a property's hypotheses apart on an
    architecture, and the verdict on every pair left (a tcsmt-result/2
    document with ``pairs``). ``prior``: an earlier result whose vectors are
    tried first; ``progress(name, done, total)`` hears of a proof in parts
    (monotonicity) as it goes."""
    from tcsmt.properties.registry import get_property
    from tcsmt.properties.run import resolve_base, run_property
    timeout = _seconds(timeout)
    p = get_property(prop)
    base = resolve_base(p, arch, formats, list(overrides))
    return run_property(p, base, solver, timeout, readable, cross_check, _command(command),
                        prior, pool, progress)


@_emits
def prove_carry_bits(arch: str, *, formats: str | None = None, overrides=(),
                     solver: str = "portfolio", timeout: float = DEFAULT_TIMEOUT,
                     cross_check: bool = True, prior: str | Path | None = None,
                     command: str | None = None) -> dict:
    """The fewest carry bits of the architecture's block accumulator, proved,
    with the replayed witness that one fewer is not enough."""
    from tcsmt.report.documents import carry_proof_document, prior_vectors
    from tcsmt.search.prove import prove_carry_bits as prove
    timeout = _seconds(timeout)
    base = choose(arch, formats, list(overrides))
    old = prior_vectors(prior) if prior else []
    proof = prove(base, solver, timeout, cross_check, old[0] if old else None)
    return carry_proof_document(proof, _command(command))


def properties(arch: str = "ampere") -> list[dict]:
    """Every property: its name, description, and hypotheses on ``arch``
    (or why it does not apply there)."""
    from tcsmt.enums import PropertyKind
    from tcsmt.properties.registry import all_properties
    from tcsmt.properties.run import hypotheses, resolve_base
    out = []
    for name, p in sorted(all_properties().items()):
        row = {"property": name, "description": p.description, "parameters": list(p.parameters)}
        try:
            base = resolve_base(p, arch)
            row["hypotheses"] = [h.id for h in hypotheses(p, base)] \
                if p.kind == PropertyKind.SEPARATE else []
            row["model"] = base.name
        except UserError as e:
            row["not_applicable"] = str(e)
        out.append(row)
    return out


# ---------------------------------------------------------------------------
# Hardware
# ---------------------------------------------------------------------------

def check(source: str | Path, models=(), *, overrides=(), show: int = 3,
          limit: int | None = None, device: str | None = None, instruction: str | None = None,
          formats: str | None = None, observations: str | Path | None = None, log=None) -> dict:
    """Observations (a probe's JSON, a recorded DEVICE/FORMAT folder, or any
    file of vectors tcsmt writes) against models, row by row: the
    tcsmt-check/1 document ``tcsmt check`` prints. ``models``: names,
    architectures or model files (one, or a list); none: the architecture
    of the observations' device. Each model's ``matched``/``rows`` and its
    first ``show`` mismatches, explained stage by stage.

    With ``device`` (cuda[:N], hip[:N], cuda-host:MODEL, hip-host:MODEL) the
    vectors of ``source`` run there first, in one launch of a probe
    (``instruction``: another than the file's; ``formats``: one set of a
    file that holds several), and the rows it returned are checked; they
    are kept in ``observations`` (default observed-DEVICE-NAME.json, never
    written over), named in the document's "observations_file"."""
    from tcsmt.judge.check import check as run
    models = [models] if isinstance(models, (str, Path)) else list(models)
    if device is not None:
        from tcsmt.fileio import refuse_overwriting
        from tcsmt.probes.device import run_file
        refuse_overwriting(observations, {"OBSERVATIONS": source}, "--observations")
        source = run_file(device, source, instruction=instruction, formats=formats,
                          observations=observations, log=log)
    doc = run(source, [str(m) for m in models], list(overrides), show, limit)
    if device is not None:
        doc["observations_file"] = str(source)
    return doc


# ---------------------------------------------------------------------------
# Probes
# ---------------------------------------------------------------------------

def harness(vectors: str | Path, output: str | Path, *, target: str = "cuda",
            instruction: str | None = None, expect=(), formats: str | None = None) -> dict:
    """``tcsmt harness``: write a self-contained CUDA or HIP program that runs
    the vectors of a file (or a shipped plan's name) on a GPU, one matrix
    instruction per vector, and prints the bits of D as observations; with
    ``expect`` models it also prints PASS/FAIL per vector. Returns
    {"output", "vectors", "instruction", "k", "build"}."""
    from tcsmt.probes.build import build_command
    from tcsmt.probes.harness import write_probe
    ins, count = write_probe(vectors, output, instruction, target, list(expect), formats)
    return {"output": str(output), "vectors": count, "instruction": ins.name, "k": ins.k,
            "build": build_command(ins, str(output), "probe")}


def instructions(target: str = "cuda") -> list[dict]:
    """The matrix instructions a probe for ``target`` (cuda or hip) can run:
    [{"name", "k", "archs", "default"}]."""
    from tcsmt.instructions.instruction import AMD_APIS
    from tcsmt.instructions.table import all_instructions, default_names
    defaults = default_names()
    return [{"name": ins.name, "k": ins.k,
             "archs": list(ins.archs) if ins.archs else [ins.arch + ("" if ins.arch.endswith("a") else "+")],
             "default": ins.name in defaults}
            for ins in all_instructions() if (ins.api in AMD_APIS) == (target == "hip")]


def agreement(names=(), *, vectors: int = 100_000, seed: int = 0,
              output: str | Path = "results/mmasim-agreement.json", fresh: bool = False,
              progress=None) -> dict:
    """``tcsmt agreement``: every MMA-Sim configuration of the named models
    or architectures (all without names) through tcsmt's batch simulator
    and MMA-Sim, compared bit for bit, and the table written to ``output``
    (JSON) and a Markdown copy beside it; rows of configurations not run are
    kept from the table already there unless ``fresh``. ``progress(row)``
    is called per configuration. Returns the table, with "written": [json, md]."""
    from tcsmt.peer.agreement import agreement as run
    from tcsmt.peer.agreement import check_output, read_previous, write
    check_output(output)
    previous = None if fresh else read_previous(output)
    doc = run(list(names), vectors, seed, progress=progress, previous=previous)
    doc["written"] = [str(x) for x in write(doc, output)]
    return doc


# ---------------------------------------------------------------------------
# Identification
# ---------------------------------------------------------------------------

@_emits
def plan(formats: str | None = None, *, space: str | Path | None = None, scales: str | None = None,
         instruction: str | None = None, output: str | Path | None = None, candidates: int = 4000,
         solver_budget: float = 240.0, seed: int = 0, log=None, progress=None) -> dict:
    """``tcsmt plan``: build the decision procedure that tells the hypotheses
    of a space apart (the default space of ``formats``, IN:OUT, or a space
    file; ``scales`` FORMAT/BLOCK for block-scaled units) and write it to
    ``output`` (default: results/plans/IN-OUT.json for a default space,
    else plan.json). Returns {"output", "stats"}: hypotheses, classes,
    vectors, worst-case and expected runs. ``log(text)`` and
    ``progress(what, done, total)`` follow the build."""
    from tcsmt.environment import whole
    from tcsmt.identify.workflow import build
    candidates = whole(str(candidates), "candidates", 1, 1 << 40)
    solver_budget = _seconds(solver_budget, "solver budget", 0)
    seed = whole(str(seed), "seed", 0, 2**64 - 1)
    return build(formats, space, scales, instruction, output, candidates, solver_budget, seed,
                 log=log, progress=progress)


@_emits
def identify(observations: str | Path | None = None, *, plan: str | Path | None = None,
             formats: str | None = None, space: str | Path | None = None, device: str | None = None,
             batch: str | None = None, instruction: str | None = None,
             observations_out: str | Path | None = None, output: str = "fp32", limit: int | None = None,
             report: str | Path | None = None, model_file: str | Path | None = None,
             no_model_file: bool = False, prove: bool | None = None, timeout: float = 600.0,
             confirm: bool = True, log=None, progress=None) -> dict:
    """``tcsmt identify``: which hypotheses explain the observations (a
    probe's JSON, or a recorded DEVICE/FORMAT folder whose d ``output``,
    fp32 or fp16, is read), what to run next, and, when one class remains,
    its model file (``model_file``; none with ``no_model_file``); or, with
    ``device``, the whole loop on a unit: "sim:FILE" or "sim:ARCH" (a model
    plays the unit blind: the plan's adaptive search, ``batch`` saying what
    one launch on it runs: one, frontier, plan; then, with ``confirm``,
    confirmation parameter by parameter, the verdict "identified" with its
    model file or "unexplained" with the rows, and the check against the
    unit's own parameters, tcsmt.identify.blind), "cuda[:N]" or "hip[:N]"
    (probes built with nvcc or hipcc and run on the GPU, on ``instruction``
    if named; every row kept in ``observations_out``, default
    observed-DEVICE-PLAN.json), "cuda-host:MODEL" or "hip-host:MODEL" (the
    same probes run on this machine, d from MODEL). ``plan``
    or ``space`` choose the hypotheses (default: the committed plan of the
    observations' formats). The report document is returned (and written
    to ``report``); "failure" names the observation no hypothesis explains."""
    from tcsmt.environment import whole
    from tcsmt.fileio import refuse_overwriting, write_json_atomic
    from tcsmt.identify.workflow import identify as run
    timeout = _seconds(timeout)
    if limit is not None:
        limit = whole(str(limit), "limit", 1, 1 << 40)
    inputs = {"OBSERVATIONS": observations, "--plan": plan, "--space": space}
    refuse_overwriting(report, inputs, "-o")
    refuse_overwriting(model_file, {**inputs, "-o": report}, "--model-file")
    refuse_overwriting(observations_out, {**inputs, "-o": report, "--model-file": model_file},
                       "--observations")
    rec = run(observations, plan_file=plan, formats=formats, space_file=space, device=device,
              batch=batch, instruction=instruction, observations_out=observations_out,
              d_output=output, limit=limit, model_file=model_file, no_model_file=no_model_file,
              prove=prove, timeout=timeout, confirm=confirm, log=log, progress=progress)
    if report:
        write_json_atomic(report, rec)
    return rec


# ---------------------------------------------------------------------------
# Case studies
# ---------------------------------------------------------------------------

@_emits
def compare_algorithms(arch: str, k: int = 4, *, reproduce: bool = False, solver: str = "portfolio",
                       timeout: float = 280.0, prior: str | Path | None = None,
                       command: str | None = None, pool: bool = True,
                       seeds: Sequence[str | Path] = (), skip: str | Path | None = None) -> dict:
    """Can Ootomo and Yokota's error-corrected GEMM be less accurate than
    Markidis et al.'s on the architecture's fp16 tensor-core model?
    ``pool``: try the candidate search (tcsmt.cases.compare_pool) before
    the solvers; ``seeds``: compare-algorithms files, or folders of them,
    whose witnesses it tries first (other architectures' answers; ``skip``,
    the file being written, and ``prior`` are left out)."""
    from tcsmt.cases.compare import run_compare
    from tcsmt.cases.compare_pool import seeds_from
    timeout = _seconds(timeout)
    for path in seeds:
        if not Path(path).exists():
            raise UserError(f"--seeds {path}: no such file or folder")
    skip = skip if skip is not None else prior if isinstance(prior, (str, Path)) else None
    vectors = [v for path in seeds for v in seeds_from(path, skip=skip)]
    return run_compare(arch, k, solver, timeout, reproduce, _command(command), prior, seeds=vectors,
                       pool=pool)


def compare_methods() -> tuple[str, ...]:
    """The error-corrected GEMM methods compare_algorithms sets against each other."""
    from tcsmt.cases.algorithms import METHODS
    return METHODS


def compare_architectures() -> list[str]:
    """The architectures with an fp16:fp32 model (``--arch all`` of compare-algorithms)."""
    from tcsmt.cases.compare import fp16_fp32_models
    return [m.arch for m in fp16_fp32_models()]


@_emits
def coverage(suite: str, *, space: str = "properties", generate: bool = True,
             solver: str = "portfolio", timeout: float = 10.0, budget: float = 240.0,
             prior: str | Path | None = None, command: str | None = None, progress=None) -> dict:
    """What a published test suite's vectors separate, and vectors for its
    gaps. ``progress(name, done, total)`` is called as each space is done."""
    from tcsmt.cases.coverage import run_coverage
    timeout, budget = _seconds(timeout), _seconds(budget, "budget", 1)
    return run_coverage(suite, space, generate, solver, timeout, budget, _command(command), prior,
                        progress)


@_emits
def regen(archs=(), props=(), *, jobs: int = 2, solver: str = "portfolio",
          timeout: float = DEFAULT_TIMEOUT, force: bool = False, root: str | Path = "results",
          stale: bool = False, progress=None, replace_answers: bool = False) -> dict:
    """Regenerate results/ (every shipped architecture and the models of
    tcsmt.regen.jobs.MODELS, or ``archs``; every property, or ``props``):
    {"outcomes": [{"name", "status", "seconds", "verdict", "note"}],
    "counts": {status: n}}. ``stale``: only the queries whose files
    regen_check names (run whatever the cache says). ``progress(name,
    done, total)`` is called as queries finish. A query whose new document
    would leave unknown an answer its file holds keeps the file ("lost")
    unless ``replace_answers``."""
    from tcsmt.environment import MAX_WORKERS, whole
    from tcsmt.regen import check
    from tcsmt.regen import jobs as rg
    from tcsmt.regen import plan as regen_plan
    timeout = _seconds(timeout)
    jobs = whole(str(jobs), "jobs", 1, MAX_WORKERS)
    plan = regen_plan.plan_jobs(list(archs) or None, list(props) or None, timeout, Path(root), solver)
    if stale:
        old = {s.path for s in check.check_plan(plan, whole=False)}
        plan.jobs, plan.skipped, force = [j for j in plan.jobs if j.path in old], [], True
    outcomes = sorted(rg.run_plan(plan, jobs, force, progress, replace_answers=replace_answers),
                      key=lambda o: o.name)
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[str(o.status)] = counts.get(str(o.status), 0) + 1
    return {"outcomes": [{"name": o.name, "status": str(o.status), "seconds": round(o.seconds, 3),
                          "verdict": str(o.verdict or ""), "note": o.note} for o in outcomes],
            "counts": counts}


def regen_check(archs=(), props=(), *, root: str | Path = "results", progress=None) -> dict:
    """Without a solver, which files under ``root`` the current code would
    write differently (tcsmt.regen.check): {"checked": files, "stale":
    [{"path", "why"}]}. Orphans (files no query writes any more) are looked
    for when neither ``archs`` nor ``props`` narrows the plan."""
    from tcsmt.regen import check
    from tcsmt.regen import plan as regen_plan
    plan = regen_plan.plan_jobs(list(archs) or None, list(props) or None, DEFAULT_TIMEOUT, Path(root))
    stale = check.check_plan(plan, whole=not archs and not props, progress=progress)
    return {"checked": len(plan.jobs), "stale": [{"path": str(s.path), "why": s.why} for s in stale]}


# ---------------------------------------------------------------------------
# Where results go, and writing them
# ---------------------------------------------------------------------------

def find_path(prop: str, arch: str, formats: str | None = None, overrides=(), *,
              output: str | Path | None = None, force: bool = False):
    """Where ``tcsmt find PROP --arch ARCH`` writes (tcsmt.report.where):
    ``output``, else ARCH-PROP.json in the current directory (the model's
    name for a model that is not the architecture's default), with the
    earlier answer to the same question there, whose vectors are tried
    first. Returns a tcsmt.report.where.Target (path, prior)."""
    from tcsmt.properties.registry import get_property
    from tcsmt.properties.run import resolve_base, result_dir
    from tcsmt.report.where import file_name, target
    p = get_property(prop)
    base = resolve_base(p, arch, formats, list(overrides))
    return target(file_name(result_dir(base, p), p.name), output, force,
                  {"schema": "tcsmt-result", "kind": p.name, "model": base.name})


def proof_path(arch: str, formats: str | None = None, overrides=(), *,
               output: str | Path | None = None, force: bool = False):
    """Where ``tcsmt prove carry-bits`` writes: ``output``, else
    ARCH-carry-bits-proof.json in the current directory (see find_path)."""
    from tcsmt.report.where import file_name, target
    base = choose(arch, formats, list(overrides))
    return target(file_name(base.arch if base.default else base.name, "carry-bits-proof"), output, force,
                  {"schema": "tcsmt-result", "kind": "prove carry-bits", "model": base.name})


def comparison_path(kind: str, doc: dict, output: str | Path | None = None, force: bool = False) -> Path:
    """Where a diff or equiv result goes: ``output`` (never over an existing
    file without ``force``), else KIND-A--B.json in the current directory,
    or the first of KIND-A--B-2.json, -3... that does not exist."""
    from tcsmt.report.where import file_name, target
    name = file_name(kind, "--".join(h["id"] for h in doc["hypotheses"]))
    return target(name, output, force).path


def compare_path(arch: str, k: int = 4, reproduce: bool = False, *, output: str | Path | None = None,
                 force: bool = False):
    """Where ``tcsmt compare-algorithms`` writes: ``output``, else
    compare-algorithms-ARCH-kK.json in the current directory (see find_path)."""
    from tcsmt.report.where import file_name, target
    return target(file_name("compare-algorithms", f"{arch}-k{k}", "reproduce" if reproduce else ""),
                  output, force,
                  {"schema": "tcsmt-compare", "kind": "compare-algorithms", "arch": arch, "k": k})


def coverage_path(suite: str, space: str = "properties", *, output: str | Path | None = None,
                  force: bool = False):
    """Where ``tcsmt coverage`` writes: ``output``, else coverage-SUITE.json
    in the current directory (see find_path)."""
    from tcsmt.cases import coverage as cv
    from tcsmt.report.where import file_name, target
    default = cv.result_path(suite, space)                     # results/coverage/NAME.json
    return target(file_name("coverage", default.stem), output, force,
                  {"schema": "tcsmt-coverage", "kind": "coverage"})


def write(path: str | Path, doc: dict, replace_answers: bool = False) -> str:
    """Write a document a call returned (a result of find, prove, diff or
    equiv; a compare-algorithms or coverage document) atomically, and only
    when its stable content changed: "new", "changed" or "unchanged". A
    document that would leave unknown an answer the file holds (a proof, a
    separating vector, a verdict) is not written unless
    ``replace_answers``: AnswersLost (its line says what, "lost")."""
    schema = str(doc.get("schema", ""))
    if schema.startswith("tcsmt-compare/"):
        from tcsmt.cases import compare as cp
        return str(cp.write(path, doc, replace_answers))
    if schema.startswith("tcsmt-coverage/"):
        from tcsmt.cases import coverage as cv
        return str(cv.write(path, doc, replace_answers))
    from tcsmt.report.results import write_result
    return str(write_result(path, doc, replace_answers=replace_answers))


# ---------------------------------------------------------------------------
# What a command line does around its commands
# ---------------------------------------------------------------------------

def begin_command() -> None:
    """Before a command of the command line: SIGTERM ends it as Ctrl-C does
    (files whole, what was written counted), no file it reads is written
    over (tcsmt.fileio.guard_inputs), and every TCSMT_* variable is checked
    (BadOption at the first whose value is not taken)."""
    from tcsmt import environment, fileio
    from tcsmt.processes import terminate_as_interrupt
    terminate_as_interrupt()
    fileio.guard_inputs()
    environment.check_all()


def check_output(path: str | Path) -> None:
    """An output path checked before the work it is to hold: a folder, a
    socket or a block device there is an OutputRefused at once."""
    from tcsmt.fileio import output_target
    output_target(path)


def out_of_memory() -> str:
    """The one line of an allocation that failed (a MemoryError)."""
    from tcsmt.budget import out_of_memory as line
    return line()


def _seconds(value, what: str = "timeout", lo: float = 0.1) -> float:
    """A time in seconds as an option takes it: a finite number from ``lo``
    to 10^6 (BadOption otherwise)."""
    from tcsmt.environment import number
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BadOption(f"{what} {value!r}: not a number of seconds")
    return number(str(value), what, lo, 1e6)


def _command(command: str | None) -> str:
    return command if command is not None else command_line()


# ---------------------------------------------------------------------------
# error
# ---------------------------------------------------------------------------

def error(models, m: int = 64, n: int = 64, ks=(16, 64, 256, 1024), *, distributions=None,
          seed: int = 0, formats: str | None = None, overrides=(), inputs=None,
          backend: str | None = None, plot: str | Path | None = None, json: str | Path | None = None,
          progress=None) -> dict:
    """The error of D = C + A @ B under each model (names, architectures,
    files or reference models such as fma-chain) against the exact result:
    per model, distribution of inputs (normal, uniform, positive,
    cancelling; all by default) and K, the largest and mean |error| in ulps
    of the output format, the relative error, the mean signed error and the
    share of inexact results rounded towards zero (the document's "rows").
    The exact result comes from integer sums of the products (see
    tcsmt.accuracy.exact). ``inputs=(A, B[, C])`` measures given matrices
    instead (arrays, or paths of .npy files); ``plot`` writes a PNG of the
    error against K (matplotlib), ``json`` the document. "cancelled" in a
    row is the share of elements whose exact sum cancelled below an ulp of
    its terms (their ulps are huge); "notes" says where a model is used
    beyond the inputs its recordings cover (tcsmt.observed.validated).
    ``progress(name, done, total)`` is called after each model's D."""
    import numpy as np

    from tcsmt.accuracy.error import measure, resolve_models
    from tcsmt.accuracy.inputs import KINDS
    from tcsmt.fileio import write_json_atomic
    from tcsmt.observed.validated import gemm_notes
    from tcsmt.report.accuracy import error_plot, pyplot
    from tcsmt.sim.npyfiles import load_npy
    if isinstance(models, str):
        models = [models]
    if inputs is not None:
        inputs = [load_npy(x, name) if isinstance(x, (str, Path)) else x
                  for x, name in zip(inputs, ("A", "B", "C"))]
    if plot:
        pyplot()                              # before the work: matplotlib is there
    doc = measure(list(models), m, n, ks, tuple(distributions or KINDS), seed, formats=formats,
                  overrides=overrides, inputs=inputs, backend=backend, progress=progress)
    c_zero = inputs is None or len(inputs) < 3 or not np.any(np.asarray(inputs[2]))
    doc["notes"] = gemm_notes(resolve_models(list(models), formats, overrides), doc["k"], c_zero)
    if plot:
        error_plot(doc, plot)
        doc["plot"] = str(plot)
    if json:
        write_json_atomic(json, doc)
    return doc
