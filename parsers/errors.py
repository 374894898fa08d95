"""Errors raised by the parsers package.

    TraceError                 base of everything this package raises on purpose
    ├── TraceFormatError       a file that is not a trace in any supported format, or is damaged
    │                          (names the path, the position and what was wrong)
    ├── TraceContentError      a well-formed file whose content cannot be a PS training trace
    │                          (no worker device, no ops, times that run backwards, ...)
    └── SchemaError            a table that does not match its documented column schema
"""

from __future__ import annotations


class TraceError(Exception):
    """Base class of the parsers package's errors."""


class TraceFormatError(TraceError):
    """A file that is not a readable trace: wrong format, truncated, corrupt or too large."""


class TraceContentError(TraceError):
    """A readable file whose content is not a usable parameter-server training trace."""


class SchemaError(TraceError):
    """A table whose columns or types differ from the documented schema."""
