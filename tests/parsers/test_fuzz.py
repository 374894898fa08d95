"""Fuzzing the readers with mutated real traces: only the package's own errors may come out."""

from __future__ import annotations

import gzip
import pathlib
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsers import Trace, TraceError, read_trace

TRACES = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces"
SEEDS = {
    "pb": (TRACES / "mlp" / "step_000.pb").read_bytes(),
    "json": (TRACES / "mlp" / "step_000.json").read_bytes(),
    "json.gz": gzip.compress((TRACES / "cnn" / "step_001.json").read_bytes(), mtime=0),
}

mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**7), st.integers(1, 255)),
    st.tuples(st.just("truncate"), st.integers(0, 10**7), st.just(0)),
    st.tuples(st.just("delete"), st.integers(0, 10**7), st.integers(1, 64)),
    st.tuples(st.just("insert"), st.integers(0, 10**7), st.integers(0, 255)),
)


def _mutate(data: bytes, edits: list[tuple[str, int, int]]) -> bytes:
    buf = bytearray(data)
    for kind, pos, arg in edits:
        if not buf:
            break
        i = pos % len(buf)
        if kind == "flip":
            buf[i] ^= arg
        elif kind == "truncate":
            del buf[i:]
        elif kind == "delete":
            del buf[i : i + arg]
        else:
            buf.insert(i, arg)
    return bytes(buf)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(sorted(SEEDS)), edits=st.lists(mutation, min_size=1, max_size=4))
def test_mutated_real_traces_give_a_trace_or_our_error(seed: str, edits: list[tuple[str, int, int]]) -> None:
    data = _mutate(SEEDS[seed], edits)
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / f"fuzz.{seed}"
        path.write_bytes(data)
        outcome: Trace | TraceError
        try:
            outcome = read_trace(path)
        except TraceError as exc:
            outcome = exc
        assert isinstance(outcome, Trace) or str(path) in str(outcome)  # every error names the file
