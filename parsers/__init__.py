"""Trace formats, both ways: TensorFlow RunMetadata/StepStats and Chrome trace JSON → :class:`Trace` → files."""

from parsers.errors import SchemaError, TraceContentError, TraceError, TraceFormatError
from parsers.read import read_trace
from parsers.trace import SCHEMAS, Trace

__all__ = ["SCHEMAS", "SchemaError", "Trace", "TraceContentError", "TraceError", "TraceFormatError", "read_trace"]
