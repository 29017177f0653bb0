"""The words results are made of: verdicts, solver run statuses, property
kinds and what regeneration did to a file. String enums, so they compare
equal to, and serialise as, the plain words the result files hold."""

from enum import StrEnum


class Verdict(StrEnum):
    """The answer to a query: SAT (vectors separate hypotheses), UNSAT
    (proved: no input of the domain does), UNKNOWN (no answer in time)."""
    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


class Status(StrEnum):
    """How one solver's run on one formula ended."""
    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"      # a timeout, or a solver that gave up
    ERROR = "error"          # a crash
    STOPPED = "stopped"      # another run settled the question first


class PairVerdict(StrEnum):
    """What is known of a pair of hypotheses no vector separates."""
    UNSAT = "unsat"          # proved inseparable
    UNKNOWN = "unknown"
    FOLLOWS = "follows"      # set aside: another proved pair decides it


class PropertyKind(StrEnum):
    SEPARATE = "separate"    # vectors that tell hypotheses apart
    MONOTONIC = "monotonic"  # x <= y with f(x) > f(y)


class FileStatus(StrEnum):
    """What regenerating a result file did."""
    NEW = "new"
    CHANGED = "changed"          # stable content changed (verdicts, vectors, proofs)
    UNCHANGED = "unchanged"      # re-run; stable content equal: the file is left as it was
    CACHED = "cached"            # not re-run: its question and code are unchanged
    SKIPPED = "skipped"          # the property does not apply
    FAILED = "failed"
    LOST = "lost"                # was proved, now unknown: left as it was, reported
