"""Real TensorFlow: runs, measurements, and their comparison with predictions."""

from collections.abc import Callable

Progress = Callable[[str], None]
"""How a long run reports what it is doing: one line of text per call (the CLI prints each)."""
