"""The packages type-check under mypy's strict mode with the project's own settings (``[tool.mypy]``), as STYLE
asks: a change that loses a type, or passes ``None`` where a number is needed, fails here rather than at a user's
terminal (``netbench``'s idle round trip once did, when no small request completed in its window)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_packages_pass_mypy_strict(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the 'test' extra")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "--no-error-summary"],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=False,
        env={**os.environ, "MYPY_FORCE_COLOR": "0"})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
