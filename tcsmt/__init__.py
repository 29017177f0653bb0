"""tcsmt: bit-accurate models of GPU matrix units (tensor cores, matrix
cores), interpreted as a simulator, a batch simulator and SMT formulas.

    >>> from tcsmt import dot, model
    >>> p = model("ampere")                  # the record of ampere-fp16-fp32
    >>> dot(p, [0x3c00, 0x3c00], [0x3c00, 0x0001], 0x3f800000).hex
    '0x40000000'

Every command has its Python call, returning the document the command
prints (tcsmt.api): ``tcsmt.diff``, ``tcsmt.find``, ``tcsmt.check``, ``tcsmt.coverage``...
(``tcsmt.all_models`` for ``tcsmt models``, ``tcsmt.list_properties`` for
``tcsmt properties`` and ``tcsmt.regenerate`` for ``tcsmt regen``, ``tcsmt.stale_results`` for
``tcsmt regen --check``:
tcsmt.models, tcsmt.properties and tcsmt.regen are packages of their own).
"""



def _source_checkout() -> None:
    """Run from a source checkout on sys.path (no pip install, as on a lent
    GPU machine: benchmarks/gpu_campaign.py), ``tcsmt.queries`` is the
    folder queries/ beside tcsmt/, as pyproject.toml's package-dir maps it
    for an install. An installed or editable package is left as it is."""
    import importlib.util
    import sys
    from pathlib import Path
    here = Path(__file__).resolve().parent
    src = here.parent / "queries" / "__init__.py"
    if "tcsmt.queries" in sys.modules or (here / "queries").is_dir() or not src.is_file():
        return
    if importlib.util.find_spec("tcsmt.queries") is not None:     # an editable install's finder
        return
    spec = importlib.util.spec_from_file_location("tcsmt.queries", src,
                                                  submodule_search_locations=[str(src.parent)])
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["tcsmt.queries"] = module
    spec.loader.exec_module(module)


_source_checkout()

from tcsmt.model.catalogue import all_models, load_model  # noqa: E402
from tcsmt.model.choose import choose as choose_model  # noqa: E402
from tcsmt.model.params import ModelParams  # noqa: E402
from tcsmt.sim.dot import Result, dot, model  # noqa: E402
from tcsmt.version import __version__  # noqa: E402,F401

find_model = choose_model
"""The older name of choose_model (tcsmt.model.choose.choose)."""

API = {"simulate": "simulate", "conformance": "conformance", "matmul": "matmul", "gemm": "gemm",
       "diff": "diff", "equiv": "equiv", "replay": "replay", "find": "find",
       "prove_carry_bits": "prove_carry_bits", "list_properties": "properties",
       "compare_algorithms": "compare_algorithms", "coverage": "coverage", "regenerate": "regen",
       "stale_results": "regen_check", "check": "check", "error": "error",
       "params": "params", "model_save": "model_save", "harness": "harness",
       "list_instructions": "instructions", "agreement": "agreement", "plan": "plan",
       "identify_unit": "identify", "write_result": "write"}
"""Names of tcsmt -> the call in tcsmt.api (imported when first used)."""


def __getattr__(name: str):
    if name in API:
        from tcsmt import api
        return getattr(api, API[name])
    raise AttributeError(f"module 'tcsmt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = ["ModelParams", "Result", "all_models", "choose_model", "dot", "find_model", "load_model",
           "model", *API]
