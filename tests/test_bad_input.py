"""Bad input reproduced from issue 12: each command gives one line
"error: ..." and exit 2 (never exit 3, a traceback, a hang or an empty
line), before any output where the input is read first, and a solved
query still prints its answer when its file cannot be written."""

from __future__ import annotations

import gzip
import json
import shutil

import numpy as np
import pytest
from checkout import HWDATA, RESULTS
from cli_run import run


def one_line_error(r, *words: str) -> str:
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert lines[-1].startswith("error: ") and "Traceback" not in r.output, r.output
    for w in words:
        assert w in lines[-1], r.output
    return lines[-1]


SIMULATE = ["simulate", "--arch", "volta", "--b", "1", "--c", "0"]


@pytest.mark.parametrize("a,words", [
    ("2^99999999999999", ["bad power"]),            # grew memory without bound
    ("1e-99999999", ["decimal exponent"]),          # spun at 100 % CPU
    ("1.5*2^-99999999999", ["bad power"]),
    ("1,,2", ["term 2 is empty"]),                  # dropped the empty term
])
def test_numbers_are_bounded_and_terms_never_dropped(a, words):
    one_line_error(run([*SIMULATE, "--a", a]), *words)


@pytest.mark.parametrize("setting,words", [
    ("min_exponent=5000", ["min_exponent", "5000"]),
    ("in_format=e15m112", ["in_format", "64 bits"]),
])
def test_bad_parameter_values_are_refused_before_any_output(setting, words):
    r = run([*SIMULATE, "--a", "1", "--set", setting])
    assert r.output.count("\n") == 1
    one_line_error(r, *words)


def test_a_bad_value_in_a_model_file_is_refused_before_any_output(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text('# source: test\nbase = "volta-fp16-fp32"\n# source: test\nmin_exponent = 5000\n')
    r = run([*SIMULATE, "--a", "1", "--arch", str(f)])
    assert r.output.count("\n") == 1
    one_line_error(r, "min_exponent")


def recorded_copy(tmp_path, damage: bytes | None, plain: bytes | None = None):
    """V100/fp16 copied with its a file replaced by ``damage`` (raw bytes)
    or by ``plain`` gzipped."""
    folder = tmp_path / "hw" / "V100" / "fp16"
    shutil.copytree(HWDATA / "V100" / "fp16", folder)
    a = folder / "a_V100_fp16.txt.gz"
    a.write_bytes(damage if damage is not None else gzip.compress(plain))
    return tmp_path / "hw", folder


DAMAGE = {
    "truncated": (lambda: (HWDATA / "V100/fp16/a_V100_fp16.txt.gz").read_bytes()[:20000], None,
                  "truncated"),
    "not gzip": (lambda: b"hello\n", None, "not a readable gzip file"),
    "not ASCII": (lambda: None, b"\xff\xfe\x00 3c00\n", "not ASCII"),
}


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_recorded_file_is_one_line_in_conformance_and_identify(tmp_path, kind):
    """A truncated .gz ended as "error: interrupted" (exit 130), a .gz that
    is not gzip as an internal error."""
    raw, plain, words = DAMAGE[kind]
    root, folder = recorded_copy(tmp_path, raw(), plain)
    one_line_error(run(["conformance", str(root)]), "a_V100_fp16.txt.gz", words)
    one_line_error(run(["identify", str(folder)]), "a_V100_fp16.txt.gz", words)


def npys(tmp_path):
    for name, dtype in (("A", np.float16), ("B", np.float16), ("C", np.float32)):
        np.save(tmp_path / f"{name}.npy", np.ones((4, 4), dtype))
    return [str(tmp_path / f"{n}.npy") for n in "ABC"]


def test_gemm_refuses_a_header_that_claims_more_than_the_file_holds(tmp_path):
    a, b, c = npys(tmp_path)
    big = tmp_path / "big.npy"
    big.write_bytes((tmp_path / "A.npy").read_bytes().replace(b"(4, 4)", b"(100000000, 100000000)"))
    one_line_error(run(["gemm", str(big), b, c, "-o", str(tmp_path / "D.npy"), "--arch", "volta"]),
                   "100000000x100000000")
    assert not (tmp_path / "D.npy").exists()


def test_gemm_never_writes_over_its_input(tmp_path):
    a, b, c = npys(tmp_path)
    before = (tmp_path / "A.npy").read_bytes()
    one_line_error(run(["gemm", a, b, c, "-o", a, "--arch", "volta"]), "-o", "is also A")
    assert (tmp_path / "A.npy").read_bytes() == before


@pytest.mark.parametrize("change,words", [
    (lambda o: o[1].update(index=o[0]["index"]), "is already the index"),
    (lambda o: o[0].update(index=-1), "at least 0"),
])
def test_identify_refuses_duplicate_and_negative_indices(tmp_path, change, words):
    doc = json.loads((RESULTS / "hardware/H100/mma-f16-f32.json").read_text())
    change(doc["observations"])
    f = tmp_path / "obs.json"
    f.write_text(json.dumps(doc))
    one_line_error(run(["identify", str(f)]), words)


def test_a_solved_query_prints_its_answer_when_its_file_cannot_be_written():
    """find threw the answer it had solved away (exit 3) when the folder
    could not be written (a path under /proc stands for a read-only folder
    or a full disk: the tests run as root, which writes read-only folders)."""
    r = run(["find", "nan-inf", "--arch", "volta", "--timeout", "60", "-o", "/proc/none/x.json"])
    line = one_line_error(r, "/proc/none/x.json", "cannot write")
    assert "verdict unsat" in r.output and "not written" in r.output, r.output
    assert line == r.output.strip().splitlines()[-1]
