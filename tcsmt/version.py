"""The version of tcsmt, and how files name the tool that wrote them.

The lowest room of the package: everything may import it, it imports
nothing of tcsmt (``tcsmt.__version__`` is re-exported from here, so no
module needs to climb back up to the package face)."""

__version__ = "0.1.0"


def tool() -> dict:
    """The ``tool`` entry of every file tcsmt writes."""
    return {"name": "tcsmt", "version": __version__}
