"""The files of the source checkout the tests run in: the recorded GPU
outputs (data/hwdata) and the committed results. They are found beside
tests/, never beside the installed package (CI installs tcsmt
non-editable, so nothing lies beside it). A checkout that lacks them fails
the tests that read them: it never skips them."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tcsmt.observed import recorded

ROOT = Path(__file__).resolve().parent.parent
HWDATA = ROOT / "data" / "hwdata"
RESULTS = ROOT / "results"

# every recorded folder the checkout ships (device, folder), as data/hwdata/README.md lists them
EXPECTED_FOLDERS = 19


def hwdata_dir() -> Path:
    """data/hwdata of this checkout; fails the calling test when it is missing."""
    if not (HWDATA / "README.md").is_file():
        pytest.fail(f"no recorded data at {HWDATA}: the tests judge every recorded row and need "
                    "the checkout's data/hwdata (a clone of the repository has it)", pytrace=False)
    return HWDATA


@functools.cache
def hwdata_folders() -> list[tuple[str, Path]]:
    """(device, folder path) of every recorded folder of the checkout, for
    parametrising tests; empty when the data are missing, which fails at
    collection (empty_parameter_set_mark = fail_at_collect in pyproject.toml)."""
    return recorded.discover(HWDATA) if HWDATA.is_dir() else []


@functools.cache
def read(device: str, folder: str) -> recorded.Recording:
    """One recorded folder, read once per test session."""
    return recorded.read_folder(hwdata_dir() / device / folder, device)
