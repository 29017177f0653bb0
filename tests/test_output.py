"""Output a person can read and a script can parse: with COLUMNS=100 no
line of the tables is wider than 100 characters, --wide prints every
column, and --format json / csv print the data alone on stdout."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from cli_run import tcsmt
from rich.console import Console

from tcsmt.report.tables import instruction_short, result_csv, separates_text
from tcsmt.report.terminal import Column, fit_table, wrap

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def narrow(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")


@pytest.fixture(scope="module")
def rounding_file(tmp_path_factory) -> Path:
    """A copy of the committed Ampere rounding result (find starts from its vectors)."""
    path = tmp_path_factory.mktemp("find") / "rounding.json"
    shutil.copy(ROOT / "results" / "ampere" / "rounding.json", path)
    return path


def widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


@pytest.mark.parametrize("argv", [
    ["models"],
    ["properties"],
    ["properties", "--arch", "hopper"],
])
def test_quick_tables_fit_100_columns(argv, narrow, capsys):
    code, out, err = tcsmt(argv, capsys)
    assert code == 0, err
    assert widest(out) <= 100


def test_find_rounding_fits_100_columns(narrow, rounding_file, capsys):
    code, out, err = tcsmt(["find", "rounding", "--arch", "ampere", "-o", rounding_file], capsys)
    assert code == 0, err
    # the path of the file written is the user's, of any length (pytest-xdist's are longer)
    assert str(rounding_file) in out
    assert widest(out.replace(str(rounding_file), "rounding.json")) <= 100
    for h in ("truncate", "rz", "rne", "ru", "rd"):
        assert h in out
    doc = json.loads(rounding_file.read_text())
    for v in doc["vectors"]:                    # every output of every vector is shown
        for o in v["outputs"].values():
            assert o["hex"] in out


def test_find_json_and_csv_hold_the_data_alone(rounding_file, capsys):
    code, out, err = tcsmt(["find", "rounding", "--arch", "ampere", "-o", rounding_file,
                            "--format", "json"], capsys)
    assert code == 0 and str(rounding_file) in err            # where it went, on stderr
    doc = json.loads(out)
    assert doc == json.loads(rounding_file.read_text()) | {"run": doc["run"]}
    rows = list(csv.reader(io.StringIO(result_csv(doc))))
    assert rows[0] == ["vector", "a", "b", "c", "truncate", "rz", "rne", "ru", "rd", "separates"]
    assert len(rows) == 1 + len(doc["vectors"])


def test_coverage_fits_100_columns_and_verbose_lists_every_pair(narrow, tmp_path, capsys):
    out_file = tmp_path / "cov.json"
    code, out, err = tcsmt(["coverage", "fasi-a100", "--no-generate", "-o", out_file, "-v"], capsys)
    assert code == 0, err
    assert widest(out) <= 100
    doc = json.loads(out_file.read_text())
    flat = " ".join(out.split())
    for v in doc["suite_vectors"]:
        for space, pairs in v["separates"].items():
            for p in pairs:
                assert p in flat, (v["id"], space, p)
    code, csv_out, _ = tcsmt(["coverage", "fasi-a100", "--no-generate", "-o", out_file,
                              "--format", "csv"], capsys)
    rows = list(csv.DictReader(io.StringIO(csv_out)))
    assert len(rows) == sum(max(1, sum(map(len, v["separates"].values()))) for v in doc["suite_vectors"])


def test_wide_keeps_every_column(capsys):
    code, out, _ = tcsmt(["models", "--wide"], capsys)
    header = out.splitlines()[0].split()
    assert "devices" in header and "arch" in header and "instruction" in header


def test_models_and_properties_json(capsys):
    code, out, _ = tcsmt(["models", "--format", "json"], capsys)
    assert {m["name"] for m in json.loads(out)} >= {"ampere-fp16-fp32", "hopper-e4m3-fp32"}
    code, out, _ = tcsmt(["properties", "--format", "json"], capsys)
    assert "rounding" in {p["property"] for p in json.loads(out)}


def test_fit_table_drops_columns_in_order_then_wraps_at_spaces_then_prints_records():
    cols = [Column("a"), Column("b", wrap=True), Column("c", 2), Column("d", 1)]
    rows = [["x" * 10, "word " * 10, "y" * 30, "z" * 30]]
    assert [c.header for c in fit_table(cols, rows, 200).columns] == ["a", "b", "c", "d"]
    assert [c.header for c in fit_table(cols, rows, 100).columns] == ["a", "b", "c"]
    assert [c.header for c in fit_table(cols, rows, 60).columns] == ["a", "b", "c"]   # b wrapped
    assert [c.header for c in fit_table(cols, rows, 40).columns] == ["a", "b"]
    narrow = printed(fit_table(cols, rows, 12), 12)
    assert narrow.splitlines()[0] == "x" * 10 and "  b" in narrow         # a record per row
    for width in (12, 30, 60):                                   # no word is ever cut
        assert printed(fit_table(cols, rows, width), width).split().count("word") == 10


def printed(renderable, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width, highlight=False, markup=False).print(renderable)
    return out.getvalue()


@pytest.mark.parametrize("argv", [
    ["diff", "ampere", "--formats", "bf16:fp32", "--set-a", "final_rounding=rz", "--set-b",
     "final_rounding=rne"],
    ["models", "--arch", "cdna3"], ["properties"], ["find", "rounding", "--arch", "ampere"],
])
def test_at_80_columns_no_word_is_cut(argv, tmp_path, monkeypatch, capsys):
    """The issue's example: long hypothesis names get short labels with a
    legend, the inputs column keeps its minimum width, and every word a
    table holds is printed whole."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    code, out, err = tcsmt(argv, capsys)
    assert code == 0, err
    assert all(len(x) <= 80 or len(x.split()) == 1 for x in out.splitlines())   # a longer word alone
    (tmp_path / "wide").mkdir()
    monkeypatch.chdir(tmp_path / "wide")                     # the same file name written again
    wide_code, wide_out, _ = tcsmt([*argv, "--wide"], capsys)
    words = set(re.sub("[\u2500-\u257f]", " ", wide_out).split())    # box drawing is not a word
    for w in set(re.sub("[\u2500-\u257f]", " ", out).split()):
        if re.fullmatch(r"\(?\d+\.\d+", w):                   # seconds differ from run to run
            continue
        headers = {"*:", "*", "d", "hypothesis", "value", "vector", "separates"}     # of the long form
        assert w in words or w in headers, f"{w!r} is not a word of the wide output"


def test_wrap_indents_continuations():
    lines = wrap("one two three four five six seven", 12, "  ", "  ")
    assert all(len(x) <= 12 for x in lines) and lines[0].startswith("  one")
    assert all(x.startswith("    ") for x in lines[1:])


def test_instruction_short_words():
    assert instruction_short("wgmma.mma_async m64nNk32.f32.e4m3.e4m3") == "wgmma"
    assert instruction_short("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32") == "mma.sync"
    assert instruction_short("mma.sync m16n8k16 / wgmma m64nNk16 .f32.f16.f16") == "mma.sync, wgmma"
    assert instruction_short("tcgen05.mma kind::f8f6f4 .f32.e4m3.e4m3") == "tcgen05 f8f6f4"
    assert instruction_short("v_mfma_f32_32x32x8_fp16") == "v_mfma 32x32x8"


def test_separates_text_names_what_is_left():
    ids = ["a", "b", "c", "d"]
    every = [[x, y] for i, x in enumerate(ids) for y in ids[i + 1:]]
    assert separates_text({"separates": every}, ids) == "every pair"
    assert separates_text({"separates": every[1:]}, ids) == "every pair but a|b"
    assert separates_text({"separates": [["a", "b"]]}, ids) == "a|b"
    assert separates_text({"separates": []}, ids) == "-"


def test_format_json_means_the_document_on_stdout_on_every_command(tmp_path, capsys):
    """One JSON option with one meaning: --format json prints the document
    of the command's Python call on stdout, whatever else it writes."""
    import numpy as np
    np.save(tmp_path / "A.npy", np.ones((4, 8), np.float16))
    np.save(tmp_path / "B.npy", np.ones((8, 2), np.float16))
    vectors = ROOT / "results" / "ampere" / "rounding.json"
    runs = {
        "simulate": ["simulate", "--arch", "ampere", "--a", "1,2", "--b", "1,1", "--c", "0"],
        "params": ["params", "--arch", "volta"],
        "check": ["check", ROOT / "results/hardware/H100/mma-f16-f32.json", "--limit", "5"],
        "gemm": ["gemm", "--arch", "hopper", tmp_path / "A.npy", tmp_path / "B.npy",
                 "-o", tmp_path / "D.npy"],
        "harness": ["harness", vectors, "-o", tmp_path / "probe.cu"],
        "conformance": ["conformance", ROOT / "data/hwdata/V100", "--limit", "5"],
    }
    docs = {}
    for name, argv in runs.items():
        code, out, err = tcsmt([*argv, "--format", "json"], capsys)
        assert code == 0, (name, err)
        docs[name] = json.loads(out)
    assert docs["simulate"]["model"] == "ampere-fp16-fp32" and docs["params"]["model"] == "volta-fp16-fp32"
    assert docs["check"]["models"][0]["rows"] == 5 and docs["harness"]["vectors"] >= 2
    assert docs["gemm"]["shape"] == [4, 2] and np.load(tmp_path / "D.npy").shape == (4, 2)
    assert docs["conformance"]["folders"]
