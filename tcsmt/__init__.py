"""tcsmt: bit-accurate models of GPU matrix units (tensor cores, matrix
cores), interpreted as a simulator, a batch simulator and SMT formulas.

    >>> from tcsmt import dot, model
    >>> p = model("ampere")                  # the record of ampere-fp16-fp32
    >>> dot(p, [0x3c00, 0x3c00], [0x3c00, 0x0001], 0x3f800000).hex
    '0x40000000'
"""

__version__ = "0.1.0"

from tcsmt.model.catalogue import all_models, find_model  # noqa: E402
from tcsmt.model.params import ModelParams, load_model  # noqa: E402
from tcsmt.sim.batch import matmul  # noqa: E402
from tcsmt.sim.dot import Result, dot, model  # noqa: E402


def check(source, models=(), **kw) -> dict:
    """Observations against models, row by row (tcsmt.api.check)."""
    from tcsmt.api import check as run
    return run(source, models, **kw)


__all__ = ["ModelParams", "Result", "all_models", "check", "dot", "find_model", "load_model",
           "matmul", "model"]
