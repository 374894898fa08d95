"""Errors raised by the tracegen package.

    TracegenError              base of everything this package raises on purpose
    ├── ConfigError            an option or configuration value that is out of range or unreadable
    │                          (names the option, the rule and the value: ``'n_workers' must be >= 1 (got 0)``)
    ├── ModelError             a trace that cannot be turned into a step model
    │                          (no transfers with tensor names, no worker ops, a dependency cycle, ...)
    └── ProcessDiedError       a local worker process running simulations ended abruptly (killed by a signal,
                               by the out-of-memory killer)

Errors of the trace reader (:class:`parsers.TraceError`) pass through unchanged.
"""

from __future__ import annotations


class TracegenError(Exception):
    """Base class of the tracegen package's errors."""


class ConfigError(TracegenError):
    """An option or configuration value that is out of range or cannot be parsed."""


class ModelError(TracegenError):
    """A trace from which no step model can be built."""


class ProcessDiedError(TracegenError):
    """A local worker process (:mod:`tracegen.processes`) ended abruptly while it had work."""
