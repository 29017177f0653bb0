"""The ``tcsmt`` command line: models, simulate, conformance, the help, and
bad input (one line on stderr, exit code 2, no traceback).

Commands run in this process through ``tcsmt.cli.main(argv)`` (the entry
point's own error handling), and a few through the installed ``tcsmt``
script in a subprocess. find/prove/properties/regen are in test_find.py,
gemm in test_cli_gemm.py, diff/equiv/replay in test_smt_diff.py and
test_results.py.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
from decimal import Decimal, getcontext
from pathlib import Path

import pytest
from cli_run import script, tcsmt

from tcsmt.model.catalogue import load_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = sorted((ROOT / "models").glob("*.toml"))
HWDATA = ROOT / "data" / "hwdata"
SHORT = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64",
         "tf32": "tf32", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2", "float6_e2m3fn": "e2m3",
         "float6_e3m2fn": "e3m2", "float4_e2m1fn": "e2m1", "float8_e8m0fnu": "ue8m0",
         "ue4m3": "ue4m3", "float8_e4m3fnuz": "e4m3fnuz", "float8_e5m2fnuz": "e5m2fnuz",
         "xf32": "xf32", "int8": "s8", "uint8": "u8", "int4": "s4", "uint4": "u4", "int32": "s32"}


def exact_decimal(num: int, den_pow2: int = 0) -> str:
    """num * 2^-den_pow2 written out exactly (independent of tcsmt.model.formats)."""
    getcontext().prec = 200
    text = format(Decimal(num) / Decimal(2) ** den_pow2, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


# ---------------------------------------------------------------------------
# help
# ---------------------------------------------------------------------------

COMMANDS = ["models", "simulate", "conformance", "find", "prove", "properties", "regen",
            "diff", "equiv", "replay", "gemm", "harness", "plan", "identify", "error"]


def listed_commands(help_text: str) -> list[str]:
    section = help_text.split("Commands:", 1)[1]
    return [m.group(1) for m in re.finditer(r"^\s{2}([a-z][a-z0-9-]*)\s", section, re.M)]


def test_help_lists_every_command(capsys):
    code, out, err = tcsmt(["--help"], capsys)
    assert code == 0 and err == ""
    listed = listed_commands(out)
    assert set(COMMANDS) <= set(listed), set(COMMANDS) - set(listed)
    assert len(listed) == len(set(listed))


def test_bare_tcsmt_prints_the_help(capsys):
    code, out, _ = tcsmt([], capsys)
    assert code == 0
    assert set(COMMANDS) <= set(listed_commands(out))


# ---------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------

def model_rows(text: str) -> dict[str, dict[str, str]]:
    """The CSV of ``tcsmt models --format csv`` by model name."""
    import csv
    import io
    return {r["model"].removesuffix(" ~").removesuffix(" *"): r
            for r in csv.DictReader(io.StringIO(text))}


def check_models_csv(text: str) -> None:
    rows = model_rows(text)
    assert sorted(rows) == sorted(p.stem for p in MODELS)
    for path in MODELS:
        m = load_model(path)          # files with a base list only what differs
        r = rows[path.stem]
        assert r["arch"] == m.arch
        ins = SHORT[m.in_format] + ("" if m.fb.name == m.fin.name else "," + SHORT[m.fb.name])
        formats = f"{ins}:{SHORT[m.out_format]}"
        if m.c_format != m.out_format:
            formats += f" c {SHORT[m.c_format]}"
        if m.sparsity != "dense":
            formats += f" {m.sparsity}"
        assert r["formats"] == formats, path.stem
        assert r["block"] == str(m.block_size), path.stem
        if m.fout.is_integer:          # exact sums: no alignment, the overflow rule instead
            assert r["align"] == "-" and r["rounding"].startswith(("wrap", "saturate")), path.stem
            continue
        assert r["align"] == str(m.align_bits), path.stem
        assert re.search(rf"\b{m.final_rounding}\b", r["rounding"]), path.stem
        if m.final_frac_bits:
            assert f"e8m{m.final_frac_bits}" in r["rounding"]
        assert r["scales"] == ("-" if m.scale_format is None else f"{SHORT[m.scale_format]}/{m.scale_block}"
                               + (f", groups of {m.group_size}" if m.group_size > 1 else "")), path.stem
        assert r["model"].removesuffix(" ~").endswith(" *") == m.default, path.stem
        assert r["model"].endswith(" ~") == m.from_sources, path.stem


def check_models_table(text: str) -> None:
    """Every model on a line of its own, the default ones starred, within 100 columns."""
    lines = text.splitlines()
    header = re.split(r"\s{2,}", lines[0].strip())
    assert header[:3] == ["model", "instruction", "formats"]
    body = lines[1:lines.index(next(ln for ln in lines if ln.startswith("* the architecture")))]
    names = {line.split()[0]: line.split()[1:2] == ["*"] for line in body if line[:1].strip()}
    assert sorted(names) == sorted(p.stem for p in MODELS)
    for path in MODELS:
        assert names[path.stem] == load_model(path).default
    assert max(len(line) for line in lines) <= 100


def test_models_lists_every_model_file(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    code, out, err = tcsmt(["models"], capsys)
    assert code == 0 and err == ""
    check_models_table(out)
    code, out, err = tcsmt(["models", "--format", "csv"], capsys)
    assert code == 0 and err == ""
    check_models_csv(out)


def test_models_through_the_installed_script():
    r = subprocess.run([script(), "models"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "COLUMNS": "100"})
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    check_models_table(r.stdout)


def test_models_instruction_tells_wgmma_from_mma_sync(capsys):
    code, out, _ = tcsmt(["models", "--format", "csv"], capsys)
    rows = model_rows(out)
    assert rows["hopper-e4m3-fp32"]["instruction"] == "wgmma"
    assert rows["hopper-e4m3-fp32-mma"]["instruction"] == "mma.sync"


def test_models_json_has_every_record(capsys):
    code, out, _ = tcsmt(["models", "--json"], capsys)
    assert code == 0
    records = json.loads(out)
    assert sorted(r["name"] for r in records) == sorted(p.stem for p in MODELS)
    by_name = {r["name"]: r for r in records}
    for path in MODELS:
        m = load_model(path)
        for key in ("block_size", "align_bits", "final_rounding", "in_format", "out_format"):
            assert by_name[path.stem][key] == getattr(m, key)


# ---------------------------------------------------------------------------
# simulate
# ---------------------------------------------------------------------------

def stages(out: str) -> dict[str, str]:
    """--explain lines: '  stage<spaces>text' -> {stage: text}."""
    found = {}
    for line in out.splitlines():
        m = re.match(r"^  (\S.*?)\s{2,}(\S.*)$", line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def d_line(out: str) -> str:
    lines = [ln for ln in out.splitlines() if ln.startswith("d ")]
    assert len(lines) == 1, out
    return lines[0].split(None, 1)[1]


AMPERE_EXAMPLE = ["simulate", "--arch", "ampere", "--a", "0x3c00,0x3c00", "--b", "0x3c00,0x1",
                  "--c", "0x3f800000"]


def test_simulate_prints_hex_and_exact_decimal(capsys):
    """1*1 + 1*2^-24 + 1 = 2 + 2^-24 exactly. Ampere keeps 24 fraction bits
    below the alignment point 2^0, so 2^-24 survives alignment; the sum
    2 + 2^-24 is then truncated (rz) to binary32, whose last bit at 2 is
    2^-22: d = 2 = 0x40000000."""
    code, out, err = tcsmt(AMPERE_EXAMPLE, capsys)
    assert code == 0 and err == ""
    assert d_line(out) == "0x40000000 = 2"
    assert "ampere-fp16-fp32" in out.splitlines()[0]
    assert out.splitlines()[2].startswith("b ") and "0x0001 (" + exact_decimal(1, 24) + ")" in out


def test_simulate_explain_prints_every_stage(capsys):
    code, out, _ = tcsmt(AMPERE_EXAMPLE + ["--explain"], capsys)
    assert code == 0
    st = stages(out)
    for stage in ("product 0", "product 1", "alignment point", "aligned c", "aligned product 0",
                  "aligned product 1", "raw sum", "normalised", "rounded"):
        assert stage in st, (stage, out)
    assert st["product 0"].endswith("= 1 (exact)")
    assert st["product 1"].endswith(f"= {exact_decimal(1, 24)} (exact)")
    assert st["alignment point"].startswith("2^0 ") and "24 fraction bits" in st["alignment point"]
    assert st["aligned product 1"].startswith(exact_decimal(1, 24) + " ")     # kept: F = 24
    assert st["raw sum"].startswith(exact_decimal(2 ** 25 + 1, 24) + " ")    # 2 + 2^-24
    assert st["raw sum"].endswith("(33554433 x 2^-24)")
    assert st["normalised"].endswith("x 2^1")
    assert st["rounded"].startswith("0x40000000 = 2 (rz to float32)")
    assert d_line(out) == "0x40000000 = 2"


def test_simulate_explain_shows_the_truncated_term_on_volta(capsys):
    """Volta keeps 23 fraction bits below 2^0: the product 2^-24 is
    truncated away and the raw sum is exactly 2."""
    code, out, _ = tcsmt(["simulate", "--arch", "volta", "--a", "0x3c00,0x3c00",
                          "--b", "0x3c00,0x1", "--c", "0x3f800000", "--explain"], capsys)
    assert code == 0
    st = stages(out)
    assert st["aligned product 1"].startswith("0 ")
    assert st["raw sum"].startswith("2 ") and st["raw sum"].endswith("(16777216 x 2^-23)")
    assert d_line(out) == "0x40000000 = 2"


@pytest.mark.parametrize("argv,want", [
    # F21: a=[1], b=[1], c=-(1-2^-24): 2^-23 on V100 (no extra bit), 2^-24 on A100
    (["--arch", "volta", "--a", "1", "--b", "1", "--c", "0xbf7fffff"], ("0x34000000", 1, 23)),
    (["--arch", "ampere", "--a", "1", "--b", "1", "--c", "0xbf7fffff"], ("0x33800000", 1, 24)),
    (["--arch", "ampere", "--set", "align_bits=0", "--a", "1", "--b", "1", "--c", "0xbf7fffff"],
     ("0x34000000", 1, 23)),
    # F21: a=[p], b=[4] -> 2^-22, for fp32 and fp16 output (exact numbers as input)
    (["--arch", "volta", "--a", "2^-24", "--b", "4"], ("0x34800000", 1, 22)),
    (["--arch", "volta", "--formats", "fp16:fp16", "--a", "2^-24", "--b", "4", "--c", "0"],
     ("0x0004", 1, 22, " (subnormal)")),
    # more terms than the block: run as two chained blocks, not an error
    (["--arch", "volta", "--a", "1,1,1,1,1", "--b", "1,1,1,1,1"], ("0x40a00000", 5, 0)),
    (["--arch", "hopper", "--formats", "bf16:fp32", "--a", "-1.5", "--b", "0x4000", "--c", "0x0"],
     ("0xc0400000", -3, 0)),
])
def test_simulate_published_and_chained_vectors(capsys, argv, want):
    code, out, err = tcsmt(["simulate"] + argv, capsys)
    assert code == 0, err
    hexval, num, den, *kind = want
    assert d_line(out) == f"{hexval} = {exact_decimal(num, den)}" + "".join(kind)


# ---------------------------------------------------------------------------
# conformance
# ---------------------------------------------------------------------------

def rows_in(folder: Path) -> int:
    with gzip.open(next(folder.glob("a_*.txt.gz")), "rt") as f:
        return sum(1 for line in f if line.strip())


def test_conformance_matches_every_v100_row(capsys, tmp_path):
    n = rows_in(HWDATA / "V100" / "fp16")
    report = tmp_path / "report.json"
    code, out, err = tcsmt(["conformance", HWDATA / "V100", "--json", report], capsys)
    assert code == 0, out + err
    lines = out.splitlines()
    assert any(re.fullmatch(rf"V100\s+fp16\s+->\s+fp32\s+volta-fp16-fp32\s+matched {n}/{n}", ln)
               for ln in lines), out
    assert any(re.fullmatch(rf"V100\s+fp16\s+->\s+fp16\s+volta-fp16-fp16\s+matched {n}/{n}", ln)
               for ln in lines), out
    assert "MISMATCH" not in out
    doc = json.loads(report.read_text())
    assert [(f["output"], f["matched"], f["rows"]) for f in doc["folders"]] == \
        [("fp32", n, n), ("fp16", n, n)]


def copy_folder(tmp_path: Path, device: str = "V100", as_device: str | None = None) -> Path:
    """DEVICE/fp16 of the recorded data under tmp_path (renamed as another device)."""
    as_device = as_device or device
    dst = tmp_path / as_device / "fp16"
    dst.mkdir(parents=True)
    for f in (HWDATA / device / "fp16").iterdir():
        shutil.copy(f, dst / f.name.replace(f"_{device}_", f"_{as_device}_"))
    return dst


def test_conformance_fails_on_one_corrupted_row(capsys, tmp_path):
    folder = copy_folder(tmp_path)
    gz = folder / "d_V100_fp32.txt.gz"
    with gzip.open(gz, "rt") as f:
        lines = f.read().splitlines()
    row = 7
    flipped = ("1" if lines[row][0] == "0" else "0") + lines[row][1:]   # the sign bit
    lines[row] = flipped
    gz.unlink()
    (folder / "d_V100_fp32.txt").write_text("\n".join(lines) + "\n")    # plain .txt is read too
    n = len(lines)
    code, out, err = tcsmt(["conformance", tmp_path / "V100"], capsys)
    assert code == 1, out + err
    assert re.search(rf"fp16\s+->\s+fp32\s+volta-fp16-fp32\s+matched {n - 1}/{n}\s+MISMATCH", out)
    assert f"first mismatching rows (0-based): [{row}]" in out
    assert re.search(rf"fp16\s+->\s+fp16\s+volta-fp16-fp16\s+matched {n}/{n}$", out, re.M)


def test_conformance_infers_the_architecture_from_the_device(capsys, tmp_path):
    copy_folder(tmp_path, "V100", "X999")
    code, out, err = tcsmt(["conformance", tmp_path / "X999", "--limit", "300"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "X999" in err and "--arch" in err
    code, out, err = tcsmt(["conformance", tmp_path / "X999", "--limit", "300", "--arch", "volta"],
                           capsys)
    assert code == 0, err
    assert re.search(r"X999\s+fp16\s+->\s+fp32\s+volta-fp16-fp32\s+matched 300/300", out)
    # the wrong architecture for these recordings: rows mismatch, exit 1
    code, out, _ = tcsmt(["conformance", tmp_path / "X999", "--limit", "300", "--arch", "hopper"],
                         capsys)
    assert code == 1 and "MISMATCH" in out


# ---------------------------------------------------------------------------
# Bad input: one line on stderr, exit 2, no traceback
# ---------------------------------------------------------------------------

def broken_model(tmp_path: Path) -> Path:
    text = (ROOT / "models" / "ampere-fp16-fp32.toml").read_text()
    path = tmp_path / "broken.toml"
    path.write_text(text.replace("\nalign_bits = 1\n", '\nalign_bits = "one"\n'))
    return path


SIM = ["simulate", "--arch", "ampere"]
BAD = [
    ("unknown arch", ["simulate", "--arch", "pascal", "--a", "1", "--b", "1"],
     ["unknown architecture", "pascal"]),
    ("bad hex", SIM + ["--a", "0xzz", "--b", "1"], ["0xzz", "hex"]),
    ("hex too wide", SIM + ["--a", "0x13c00", "--b", "1"], ["0x13c00", "16 bits"]),
    ("signed hex", SIM + ["--a", "-0x3c00", "--b", "1"], ["sign"]),
    ("not a number", SIM + ["--a", "one", "--b", "1"], ["not a number"]),
    ("inexact", SIM + ["--a", "0.1", "--b", "1"], ["not exactly representable", "float16"]),
    ("lengths differ", SIM + ["--a", "1,1", "--b", "1"], ["--a has 2", "--b has 1", "match"]),
    ("empty a", SIM + ["--a", "", "--b", "1"], ["--a", "empty"]),
    ("two c", SIM + ["--a", "1", "--b", "1", "--c", "1,2"], ["--c", "one value"]),
    ("unknown set key", SIM + ["--a", "1", "--b", "1", "--set", "foo=1"],
     ["unknown parameter", "foo"]),
    ("set without =", SIM + ["--a", "1", "--b", "1", "--set", "block_size"], ["key=value"]),
    ("conflicting set", SIM + ["--a", "1", "--b", "1", "--set", "block_size=4", "--set",
                               "block_size=8"], ["conflicting", "block_size"]),
    ("bad set value", SIM + ["--a", "1", "--b", "1", "--set", "block_size=x"],
     ["block_size", "not an integer"]),
    ("bad formats", SIM + ["--formats", "fp17:fp32", "--a", "1", "--b", "1"], ["--formats"]),
    ("formats not there", ["simulate", "--arch", "volta", "--formats", "bf16:fp32", "--a", "1",
                           "--b", "1"], ["volta", "bf16:fp32"]),
    ("missing model file", ["simulate", "--arch", "no/such/model.toml", "--a", "1", "--b", "1"],
     ["no/such/model.toml", "cannot read"]),
    ("missing option", ["simulate", "--a", "1", "--b", "1"], ["--arch"]),
    ("unknown command", ["simulat"], ["simulat"]),
    ("missing folder", ["conformance", "no/such/folder"], ["no/such/folder", "not a folder"]),
]


@pytest.mark.parametrize("what,argv,words", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_one_line_and_exit_2(capsys, what, argv, words):
    code, out, err = tcsmt(argv, capsys)
    assert code == 2, (out, err)
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("error: ") and "Traceback" not in err
    for w in words:
        assert w in err, (w, err)


def test_malformed_model_file_is_one_line_naming_file_and_key(capsys, tmp_path):
    path = broken_model(tmp_path)
    code, out, err = tcsmt(["simulate", "--arch", path, "--a", "1", "--b", "1"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and str(path) in err and "'align_bits'" in err


def test_empty_conformance_folder_is_one_line(capsys, tmp_path):
    code, out, err = tcsmt(["conformance", tmp_path], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "no DEVICE/FORMAT folders" in err


def test_installed_script_bad_input_exits_2_without_traceback():
    r = subprocess.run([script(), "simulate", "--arch", "ampere", "--a", "0xzz", "--b", "1"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ") and "0xzz" in r.stderr


def test_models_filter_by_architecture_and_scales(capsys):
    code, out, _ = tcsmt(["models", "--arch", "rtx-blackwell", "--scaled", "--format", "csv"], capsys)
    assert code == 0
    rows = model_rows(out)
    assert rows and all(r["arch"] == "rtx-blackwell" and r["scales"] != "-" for r in rows.values())
    assert "rtx-blackwell-nvfp4" in rows and "rtx-blackwell-fp16-fp32" not in rows
    code, out, _ = tcsmt(["models", "--arch", "blackwell", "--unscaled", "--format", "csv"], capsys)
    assert "blackwell-e2m1-e4m3-fp16" in model_rows(out) and "blackwell-mxf4" not in model_rows(out)
    code, _, err = tcsmt(["models", "--arch", "no-such-gpu"], capsys)
    assert code == 2 and err.startswith("error: unknown architecture")
