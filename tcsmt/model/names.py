"""Short names of formats, as in model names and ``--formats`` (fp16, bf16,
e4m3...)."""

from __future__ import annotations

SHORT = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
         "tf32": "tf32", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2",
         "float8_e4m3fnuz": "e4m3fnuz", "float8_e5m2fnuz": "e5m2fnuz",
         "float6_e2m3fn": "e2m3", "float6_e3m2fn": "e3m2", "float4_e2m1fn": "e2m1",
         "float8_e8m0fnu": "ue8m0",
         "int8": "s8", "uint8": "u8", "int4": "s4", "uint4": "u4", "int32": "s32"}


def short_format(name: str) -> str:
    return SHORT.get(name, name)
