"""The ``tracegen`` command's entry point: the command line's modules imported under a Ctrl-C guard.

Importing them (pandas, pyarrow, matplotlib) takes about a second; a Ctrl-C then raised KeyboardInterrupt out of
an import, with a traceback, before :func:`tracegen.cli.main` could say "interrupted" in one line.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Import :mod:`tracegen.cli` and run it; a Ctrl-C during the import is one line and exit code 130."""
    try:
        from tracegen import cli
    except KeyboardInterrupt:
        print("tracegen: interrupted", file=sys.stderr)
        return 130
    return cli.main(argv)
