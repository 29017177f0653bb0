"""Every test runs with TCSMT_CHECK_SCHEMAS=1: tcsmt's one JSON writer
(tcsmt.fileio.write_json_atomic) and the JSON a command prints check each
document against its schema before it goes out (tcsmt.schemas.check_written;
a document that breaks it is an InternalError), so every file the tests make
tcsmt write is checked. It is set in the environment rather than patched in
here so that what the tests run in other processes (the tcsmt command, the
regen and runner workers, Dask workers) checks too. TCSMT_CHECK_SCHEMAS=0
turns it off."""

import os

import pytest

os.environ.setdefault("TCSMT_CHECK_SCHEMAS", "1")


@pytest.fixture(autouse=True)
def _inputs_unguarded_between_tests():
    """A command run in this process guards the files it read against being
    written over, for the rest of the process (tcsmt.fileio.guard_inputs);
    each test starts unguarded, so a file a later test makes (maybe on a
    freed inode) is not taken for an input of an earlier command."""
    yield
    from tcsmt.fileio import stop_guarding_inputs
    stop_guarding_inputs()
