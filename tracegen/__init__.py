"""tracegen: predict how asynchronous parameter-server training scales, from one worker's trace."""

import contextlib
import importlib.metadata
import pathlib

from tracegen import native

native.guard(__name__, pathlib.Path(__file__).resolve().parent)  # before anything imports the engine


def own_version() -> str:
    """The installed package's version (``unknown`` when run from a tree that is not installed)."""
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        return importlib.metadata.version("tracegen-ps")
    return "unknown"
