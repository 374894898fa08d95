"""Fuzzing the readers with mutated real traces, each input read in a child process limited to 10 s and 2 GiB
of address space: only a Trace or one line of the package's own error may come out, never a traceback, a hang
or a memory blow-up. The mutation families are those of ``benchmarks/fuzz_parsers.py``, which runs the same
children for 100,000 inputs and more."""

from __future__ import annotations

import gzip
import json
import math
import pathlib
import tempfile
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TRACES = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces"
SEEDS = {
    "pb": (TRACES / "mlp" / "step_000.pb").read_bytes(),
    "json": (TRACES / "mlp" / "step_000.json").read_bytes(),
    "json.gz": gzip.compress((TRACES / "cnn" / "step_001.json").read_bytes(), mtime=0),
    # TF2: the PS's XSpace, and the worker's trace-viewer JSON (gzip: most edits break the gzip, which is tested)
    "xplane.pb": next(p for p in sorted((TRACES / "tf2_pss").rglob("*.xplane.pb"))
                      if b"AssignSubVariableOp" in p.read_bytes()).read_bytes(),
    "trace.json": gzip.decompress(sorted((TRACES / "tf2_pss_viewer").rglob("*.trace.json.gz"))[-1].read_bytes()),
}
CLEAN = ("error", "read")

edit = st.one_of(
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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(family=st.integers(0, 4), k=st.integers(0, 2**32 - 1))
def test_every_mutation_family_gives_a_trace_or_one_line_error(child_runner: Any, harness: Any, family: int,
                                                               k: int) -> None:
    result = child_runner.read_generated(harness.FAMILIES[family], k)
    assert result["read"]["outcome"] in CLEAN, result  # the input is result["input"]; "what" says how it was made


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(sorted(SEEDS)), edits=st.lists(edit, min_size=1, max_size=4))
def test_byte_edits_of_real_traces_give_a_trace_or_one_line_error(child_runner: Any, seed: str,
                                                                  edits: list[tuple[str, int, int]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / f"fuzz.{seed}"
        path.write_bytes(_mutate(SEEDS[seed], edits))
        result = child_runner.read_file(path)
    assert result["read"]["outcome"] in CLEAN, result


def test_the_harness_tells_every_failure_apart(harness: Any, tmp_path: pathlib.Path) -> None:
    """Readers that fail on purpose (a traceback, a hang, a memory blow-up, a crash, a two-line message): the
    tests above can fail. Each stage gets 5 s: 2 s, with other jobs on both cores, made all four look like hangs."""
    limits = harness.Limits(time_s=5.0)
    with harness.pool(harness.Corpus(tmp_path), tmp_path, limits, 1, model=False) as pool:
        seen = harness.self_check(pool)
    assert seen == {family: harness.expected_outcome(family) for family in harness.SELF_CHECKS}


# ---------------------------------------------------------------- the link profile (bounded to 1 MiB: read here)

PROFILE = next((TRACES.parent / "validation").rglob("link-profile.json")).read_bytes()
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=10**15, max_value=10**400)
    | st.floats() | st.text(st.characters(categories=("Ll", "Nd", "Cs", "Zl")), max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)


def _slots(doc: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in ``doc``, depth first."""
    found: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            found.append((node, key))
            stack.append(value)
    return found


def _holds_the_schema(profile: Any) -> None:
    """What a profile the reader takes promises the model (parsers/linkprofile.py's rules), checked here on the
    values, not by the reader's own checks: whatever the edit, a profile read is one the model may use."""
    from parsers.linkprofile import MAX_RATE_BYTES_PER_S, MIN_RATE_BYTES_PER_S, MODES

    assert 0 < profile.window_s <= 86_400 and profile.tensors >= 1 and profile.tensor_bytes >= 1, profile
    assert 1 <= len(profile.points) == len({(p.mode, p.connections) for p in profile.points}), profile.points
    for p in profile.points:
        assert p.mode in MODES and 1 <= p.connections <= 10_000, p
        rates = (p.pull_bytes_per_s, p.push_bytes_per_s)
        assert all(math.isfinite(r) and 0 <= r <= MAX_RATE_BYTES_PER_S for r in rates), p
        measured = {"pull": rates[:1], "rpc_pull": rates[:1], "push": rates[1:], "rpc_push": rates[1:]}.get(p.mode,
                                                                                                          rates)
        assert min(measured) >= MIN_RATE_BYTES_PER_S, p  # the direction the point measured carried something
    probes = [p.probe_rtt_ns for p in profile.points if p.probe_rtt_ns]
    assert profile.idle_rtt_ns is None or not probes or profile.idle_rtt_ns <= max(probes), profile


def _check_profile(data: bytes) -> None:
    from parsers.linkprofile import ProfileError, read_link_profile

    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "link-profile.json"
        path.write_bytes(data)
        try:
            profile = read_link_profile(path)
        except ProfileError as exc:
            text = str(exc)
            assert len(text.splitlines()) == 1 and len(text) <= 300 and str(path) in text, text
        else:  # 'isinstance(read_link_profile(path), LinkProfile)' held of any profile the reader returned
            _holds_the_schema(profile)


def test_every_number_of_the_profile_at_its_edges_gives_a_profile_or_one_line_error() -> None:
    """The swaps below pick a slot and a value at random and rarely land a small number on a measured rate: each
    number of the profile's first point and of its header set, in turn, to values either side of the rules' limits,
    so that a rule the reader stops checking lets through a profile _holds_the_schema refuses."""
    doc = json.loads(PROFILE)
    first = doc["points"][0]
    numbers = [(doc, "window_s"), (doc, "idle_rtt_ns"), (doc["payload"], "tensors"), (doc["payload"], "tensor_bytes"),
               *((first, key) for key, value in first.items() if isinstance(value, int | float))]
    assert len(numbers) >= 10
    for container, key in numbers:
        for value in (-1, 0, 0.5, 124.9, 125, 10**9, 10**12 + 1, 10**15 + 1):
            kept = container[key]
            container[key] = value
            _check_profile(json.dumps(doc).encode())
            container[key] = kept


@settings(max_examples=150, deadline=None)
@given(slot=st.integers(0, 10**6), value=json_values)
def test_link_profile_value_swaps_give_a_profile_or_one_line_error(slot: int, value: Any) -> None:
    doc = json.loads(PROFILE)
    slots = _slots(doc)
    container, key = slots[slot % len(slots)]
    container[key] = value
    _check_profile(json.dumps(doc).encode())


@settings(max_examples=100, deadline=None)
@given(edits=st.lists(edit, min_size=1, max_size=4))
def test_link_profile_byte_edits_give_a_profile_or_one_line_error(edits: list[tuple[str, int, int]]) -> None:
    _check_profile(_mutate(PROFILE, edits))
