"""A TF2 job with an embedding on two PS tasks (the bundled ``tf2_embed_ps2``, TensorFlow 2.21's own profiler): the
PS gathers the rows a step reads and scatters its sparse gradient back, so the tensors beside those ops carry some
rows of the 25.6 MB table, never the table. An XSpace records no byte counts: where a transfer's size is missing,
the model took its variable's, and a step pushed the whole table."""

from __future__ import annotations

import dataclasses
import pathlib

import pandas as pd

from parsers import read_trace
from tracegen.model import TaskKind, build_model

TRACE = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces" / "tf2_embed_ps2"
INDICES = "edge_71_gradient_tape/embedding_lookup/Reshape_1"  # the sparse gradient's row ids, into ResourceScatterSub
ROWS = "edge_16_embedding_lookup"  # the ResourceGather's rows, pulled


def _sized_bytes(trace: pd.DataFrame, direction: str) -> int:
    """The recorded bytes of one direction per step (the median step: each transfer is recorded once a step)."""
    moved = trace[(trace["direction"] == direction) & trace["size_bytes"].notna()]
    return int(moved.groupby("step")["size_bytes"].sum().median())


def test_the_sparse_gradients_row_ids_are_not_sized_as_the_whole_table() -> None:
    trace = read_trace(TRACE)
    table = trace.variables.loc[trace.variables["name"] == "embedding_lookup_78"].iloc[0]
    assert table["size_bytes"] == 100_000 * 64 * 4 and table["device"].endswith("task:0/device:CPU:0")
    ids = trace.transfers[trace.transfers["tensor_name"] == INDICES]
    assert len(ids) == 10 and ids["size_bytes"].isna().all()  # traced every step, never with a size
    model = build_model(trace)
    assert model.size_bytes[model.names.index(INDICES)] == 0
    assert model.bytes_of(TaskKind.PUSH) == _sized_bytes(trace.transfers, "push")
    assert model.bytes_of(TaskKind.PUSH) < table["size_bytes"] / 10
    assert any("beside a ResourceScatterSub" in note and INDICES in note for note in model.notes), model.notes


def test_a_gathers_rows_pulled_without_a_size_are_not_sized_as_the_whole_table() -> None:
    """The gather's pull is recorded with its size here (32 examples x 64 tokens = 2048 rows of 64 floats,
    524,288 B); with that record gone, as in a profile whose allocation events were dropped, it must not become the
    table's size."""
    trace = read_trace(TRACE)
    rows = trace.transfers["tensor_name"] == ROWS
    assert (trace.transfers.loc[rows, "size_bytes"] < 100_000 * 64 * 4).all()
    transfers = trace.transfers.copy()
    transfers.loc[rows, "size_bytes"] = pd.NA
    model = build_model(dataclasses.replace(trace, transfers=transfers))
    assert model.size_bytes[model.names.index(ROWS)] == 0
    assert any("beside a ResourceGather" in note and ROWS in note for note in model.notes), model.notes


def test_a_dense_read_pulled_without_a_size_still_takes_its_variables_size() -> None:
    """The rule stops at ops that touch some rows; a plain ReadVariableOp's pull keeps its variable's size."""
    trace = read_trace(TRACE)
    kernel = "edge_19_MatMul/ReadVariableOp"  # the 64 x 256 float32 kernel on PS task 1
    transfers = trace.transfers.copy()
    transfers.loc[transfers["tensor_name"] == kernel, "size_bytes"] = pd.NA
    model = build_model(dataclasses.replace(trace, transfers=transfers))
    assert model.size_bytes[model.names.index(kernel)] == 64 * 256 * 4
