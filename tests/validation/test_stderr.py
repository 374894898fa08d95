"""The one line quoted from a failed process's stderr (``validation.stderr``): edge cases written by hand; what
a real TensorFlow worker's failure gives is checked in ``test_capture``."""

from __future__ import annotations

import pytest

from validation.stderr import MAX_CHARS, NO_OUTPUT, summarize_stderr

GRAPH_ERROR = """\
Traceback (most recent call last):
  File "/x/node.py", line 104, in _train
    sess.run(train_op)
tensorflow.python.framework.errors_impl.InternalError: Graph execution error:

From /job:worker/replica:0/task:0:
Failed to encode tensor to byte buffer: Cannot encode a Tensor that exceeds the 2GB protobuf limit.
\t [[{{node MatMul/ReadVariableOp_S11}}]]
"""

BANNER = """\
ValueError: widths must be positive
ERROR:tensorflow:==================================
Object was never used (type <class 'tensorflow.python.framework.ops.Operation'>):
If you want to mark it as used call its "mark_used()" method.
==================================
"""


@pytest.mark.parametrize(("text", "expected"), [
    (GRAPH_ERROR, "InternalError: Graph execution error: Failed to encode tensor to byte buffer: Cannot encode a "
                  "Tensor that exceeds the 2GB protobuf limit."),
    (GRAPH_ERROR.replace("\nFrom /job", "\n=====================\nINTERNAL: From /job"),  # TF's other layout
     "InternalError: Graph execution error: Failed to encode tensor to byte buffer: Cannot encode a Tensor that "
     "exceeds the 2GB protobuf limit."),
    (BANNER, "ValueError: widths must be positive"),
    (BANNER.replace("ValueError: widths must be positive", "worker 0: lost the PS"), "worker 0: lost the PS"),
    ("Traceback (most recent call last):\n  File \"a\", line 1\n    KeyboardInterrupt\nKeyboardInterrupt\n",
     "KeyboardInterrupt"),
    ("RTNETLINK answers: File exists\n\n", "RTNETLINK answers: File exists"),
    ("", NO_OUTPUT),
    ("\n  \n=====\n", NO_OUTPUT),
])
def test_the_line_quoted_is_the_reason_not_the_last_line(text: str, expected: str) -> None:
    assert summarize_stderr(text) == expected


def test_a_long_reason_is_cut_to_one_readable_line() -> None:
    line = summarize_stderr("OSError: " + "x" * 5000)
    assert len(line) == MAX_CHARS and line.startswith("OSError: xxx") and line.endswith("...")
