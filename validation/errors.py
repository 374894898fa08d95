"""Errors raised by the validation package.

    ValidationError              base of everything this package raises on purpose
    ├── ConfigError              an option or setting that cannot be used (quotes the value)
    ├── JobError                 a real TensorFlow job that failed to start, crashed or timed out
    │   └── NodeCrashedError     one of its processes was killed by a signal it was not sent (TensorFlow's own
    │                            SIGSEGV, the OOM killer): the testbed runs that measurement again, once
    ├── MissingDependencyError   TensorFlow (the ``tf`` extra) is not installed
    ├── ClusterError             the emulated cluster cannot be built or removed here (not root, no ip/tc,
    │                            no cgroup v1 cpu controller, address range in use, leftovers it could not remove)
    └── TerminatedError          SIGTERM or SIGHUP arrived while an emulated cluster or a run's processes were up
                                 (raised after their removal began); ``signum`` says which
"""

from __future__ import annotations

import signal


class ValidationError(Exception):
    """Base class of the validation package's errors."""


class ConfigError(ValidationError):
    """An option or setting that cannot be used."""


class JobError(ValidationError):
    """A real TensorFlow job that failed to start, crashed or timed out."""


class NodeCrashedError(JobError):
    """A process of a real TensorFlow job died by a signal the testbed did not send (a crash)."""


class MissingDependencyError(ValidationError):
    """TensorFlow is needed for this command but is not installed."""


class ClusterError(ValidationError):
    """The emulated cluster cannot be built (or fully removed) on this machine."""


class TerminatedError(ValidationError):
    """SIGTERM or SIGHUP arrived while an emulated cluster (or a run's processes) was up; what it started is removed
    as the error propagates. ``signum``: the signal, for the command's exit code (128 + it, as a shell reports)."""

    def __init__(self, message: str, signum: int = signal.SIGTERM) -> None:
        super().__init__(message)
        self.signum = signum
