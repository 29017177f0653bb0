"""Judging rows: observed or recorded outputs against models, row by row
(``tcsmt check``, ``tcsmt conformance``)."""
