"""What a failed process's stderr says, in one line, for the error that reports its failure.

The last line of a TensorFlow process's stderr is rarely the reason it failed. A graph-execution error ends with
the node it ran (``[[{{node MatMul/ReadVariableOp_S11}}]]``); an object TensorFlow warns was never used prints a
banner of ``=`` at exit, after the traceback. So the line quoted is the last Python exception's (``InternalError:
Graph execution error:``), without its module, followed by the first line after it that says something (the
cause TensorFlow reports under ``From /job:...:``, which may follow a row of ``=``); without an exception, the
last line that holds a letter or a digit outside such a banner. Lines written before the exception are not
looked at once there is one.
"""

from __future__ import annotations

import re

MAX_CHARS = 300  # what one error line quotes of it at most
NO_OUTPUT = "(no output)"

_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w]*\.)*(?P<name>[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Warning))"
                        r"(?::\s*(?P<message>.*))?$")
_BANNER = re.compile(r"^(?:[A-Z]+:[\w.]+:)?=+$")  # TensorFlow's tf_should_use banner, maybe behind a log prefix
_NOT_A_CAUSE = re.compile(r"^(?:(?:[A-Z_]+: )?From /job:\S*:|\[\[.*\]\]|Traceback \(most recent call last\):"
                          r"|During handling .*)$")


def summarize_stderr(text: str) -> str:
    """One line for ``text`` (a process's stderr): module docstring; :data:`NO_OUTPUT` when it says nothing."""
    raw = [line.rstrip() for line in text.splitlines() if line.strip()]
    lines = [line.strip() for line in raw]
    for i in range(len(lines) - 1, -1, -1):
        if not raw[i][0].isspace() and (found := _EXCEPTION.match(lines[i])):  # a traceback's code is indented
            head = f"{found['name']}: {found['message']}" if found["message"] else found["name"]
            if head.endswith(":"):  # TensorFlow's 'Graph execution error:': the cause follows
                cause = next((x for x in lines[i + 1:] if _says_something(x) and not _NOT_A_CAUSE.match(x)), "")
                head = f"{head} {cause}".strip()
            return _cut(head)
    banner = False
    for line in reversed(lines):
        if _BANNER.match(line):
            banner = not banner
            continue
        if not banner and _says_something(line):
            return _cut(line)
    return NO_OUTPUT


def _says_something(line: str) -> bool:
    return any(c.isalnum() for c in line)


def _cut(line: str) -> str:
    return line if len(line) <= MAX_CHARS else line[:MAX_CHARS - 3] + "..."
