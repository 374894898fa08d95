"""``benchmarks/fuzz_parsers.py``'s inputs are the same bytes in every process: ``--only K`` remakes the input a
run reported as K, and a run is the same however its inputs are shared among processes."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
# the protobuf family's inputs 0-299 for run seed 7 (its edits through the protobuf API among them: a map field's
# entries were written in the order of the process's hash table), hashed in a fresh process
HASH_INPUTS = """
import hashlib, pathlib, sys, tempfile
sys.path.append("benchmarks")
import fuzz_parsers  # noqa: F401  (the fuzz modules as the benchmark loads them)
from fuzz_corpus import build_corpus
from fuzz_mutations import make_input
with tempfile.TemporaryDirectory() as tmp:
    corpus = build_corpus(pathlib.Path(tmp), 1 << 20, quick=True)
    digest, api = hashlib.sha256(), 0
    for k in range(300):
        _suffix, data, what = make_input("protobuf", 7, k, corpus)
        digest.update(data)
        api += "api " in what
    print(api, digest.hexdigest())
"""


def _hashed(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-c", HASH_INPUTS], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout


def test_the_protobuf_familys_inputs_are_the_same_bytes_in_two_processes() -> None:
    first, second = _hashed("1"), _hashed("2")
    assert int(first.split()[0]) > 0  # the API edits, whose maps were the part that moved, are among them
    assert first == second
