"""Published test suites as data (schema "tcsmt-suite/1"; see tcsmt.cases.suites).

One JSON file per suite. They are written by ``_build.py`` in this folder
from the transcriptions it holds (``python -m tcsmt.queries.suites._build``),
so that every bit pattern is encoded by tcsmt's own formats code; a test
checks that the shipped files are what the builder writes.
"""
