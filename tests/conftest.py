"""Every test runs with TCSMT_CHECK_SCHEMAS=1: tcsmt's one JSON writer
(tcsmt.fileio.write_json_atomic) and the JSON a command prints check each
document against its schema before it goes out (tcsmt.schemas.check_written;
a document that breaks it is an InternalError), so every file the tests make
tcsmt write is checked. It is set in the environment rather than patched in
here so that what the tests run in other processes (the tcsmt command, the
regen and runner workers, Dask workers) checks too. TCSMT_CHECK_SCHEMAS=0
turns it off."""

import os

os.environ.setdefault("TCSMT_CHECK_SCHEMAS", "1")
