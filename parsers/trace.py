"""The format-neutral trace: one frozen :class:`Trace` of typed pandas tables.

Every reader in this package returns a ``Trace``; everything downstream reads only this. Times are integer
nanoseconds on the trace's own clock (TensorFlow's: microseconds since the epoch, times 1000). The column
schemas below are the contract: readers build tables through :func:`make_table`, which checks them, and the
columns never change with options. Unknown values are pandas' ``<NA>`` (nullable dtypes), never a made-up 0;
in the text columns that may be unknown, an empty string is unknown too (``NULLABLE_TEXT``).

Tables (column: dtype — meaning):

``ops`` — one row per executed node (not transfers) per traced step:
    step: int64 — index of the traced step (0, 1, ... in reading order)
    device: string — full TensorFlow device name, ``/job:worker/replica:0/task:0/device:CPU:0``
    node_name: string — graph node name
    op_type: string — op type (``MatMul``, ``_Recv``, ``ResourceApplyGradientDescent``, ...); <NA> when unknown
    start_ns: int64 — start time
    dur_ns: int64 — wall time from start to the end of all its work (TF's ``all_end_rel``)
    lane: int64 — executor thread id from the RunMetadata; a display lane for Chrome input

``transfers`` — one row per ``RecvTensor`` record (a tensor received over the network):
    step: int64
    tensor_name: string — rendezvous key, ``edge_34_conv3/kernel/read``; <NA> when the format lost it
    src_device: string — sending device; <NA> when unknown
    dst_device: string — receiving device
    direction: string — ``pull`` (PS → worker), ``push`` (worker → PS) or ``other``
    size_bytes: Int64 — bytes on the wire as TensorFlow reported them; <NA> when unknown
    start_ns: int64
    dur_ns: int64

``graph_nodes`` — every node of the partition graphs TensorFlow ran (absent in Chrome input, then empty):
    device: string — the partition's device
    node_name: string
    op_type: string

``graph_edges`` — every input edge in the partition graphs:
    device: string
    src_node: string — producing node
    src_output: int64 — its output slot (-1 for a control edge)
    dst_node: string — consuming node
    kind: string — ``data`` or ``control``

``rendezvous`` — cross-device tensors: the ``_Send``/``_Recv`` pairs of the partition graphs:
    tensor_name: string — the key that ``transfers.tensor_name`` uses
    send_device: string
    recv_device: string
    send_node: string — the ``_Send`` node (its input is the tensor's producer)
    recv_node: string — the ``_Recv`` node (its consumers wait for the transfer)
    direction: string — ``pull``, ``push`` or ``other``

``variables`` — variables held by the parameter server(s), from the partition graphs:
    name: string
    device: string
    dtype: string — ``float32``, ``int64``, ...
    shape: string — for display only, ``784x512``; ``scalar`` for rank 0
    n_elements: int64
    size_bytes: int64

``steps`` — one row per traced step:
    step: int64
    source: string — file the step came from
    start_ns: int64 — earliest start of any record in the step
    end_ns: int64 — latest end of any record in the step

Ranges (``BOUNDS``, checked by :func:`make_table`, so that sums and differences downstream stay far inside
int64): times ``0 <= t < 2**62`` ns (the year 2116 on TensorFlow's epoch clock), durations at most ``2**52`` ns
(52 days) with ``start + dur < 2**62``, sizes and element counts at most ``2**44`` (16 TiB), steps at most
``2**40``, lanes ``0 .. 2**32 - 1`` (TensorFlow's uint32 thread ids), output slots ``-1 .. 2**31 - 1``; and
(``CHOICES``) directions are ``pull``, ``push`` or ``other``, edge kinds ``data`` or ``control``. Within a row
(:func:`row_contradiction`, checked where tables are read back: :mod:`parsers.tables`): a data edge's slot is from
0 up and a control edge's -1; a variable's dtype is one of ``DTYPE_BYTES``, its ``n_elements`` the product of its
shape and its ``size_bytes`` that times the dtype's bytes; a direction is the one its devices give
(:func:`direction_of`); and (:func:`outside_step`) every op and transfer lies within its step's start and end.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from parsers.errors import SchemaError, TraceContentError, counted, quoted

STR = "string"
INT = "int64"
NULLABLE_INT = "Int64"

OPS_SCHEMA: Mapping[str, str] = {
    "step": INT, "device": STR, "node_name": STR, "op_type": STR, "start_ns": INT, "dur_ns": INT, "lane": INT,
}
TRANSFERS_SCHEMA: Mapping[str, str] = {
    "step": INT, "tensor_name": STR, "src_device": STR, "dst_device": STR, "direction": STR,
    "size_bytes": NULLABLE_INT, "start_ns": INT, "dur_ns": INT,
}
GRAPH_NODES_SCHEMA: Mapping[str, str] = {"device": STR, "node_name": STR, "op_type": STR}
GRAPH_EDGES_SCHEMA: Mapping[str, str] = {
    "device": STR, "src_node": STR, "src_output": INT, "dst_node": STR, "kind": STR,
}
RENDEZVOUS_SCHEMA: Mapping[str, str] = {
    "tensor_name": STR, "send_device": STR, "recv_device": STR, "send_node": STR, "recv_node": STR,
    "direction": STR,
}
VARIABLES_SCHEMA: Mapping[str, str] = {
    "name": STR, "device": STR, "dtype": STR, "shape": STR, "n_elements": INT, "size_bytes": INT,
}
STEPS_SCHEMA: Mapping[str, str] = {"step": INT, "source": STR, "start_ns": INT, "end_ns": INT}

# Text columns a format may leave unknown (NA). An empty string there says no more, and is kept as NA, so that
# every format reads back the same trace (CSV cannot tell the two apart).
NULLABLE_TEXT: Mapping[str, tuple[str, ...]] = {"ops": ("op_type",), "transfers": ("tensor_name", "src_device")}

# Text columns a reader leaves null without the format saying it may: a TF2 profile without the step function's
# graphs names no ``_Recv`` node (parsers/xplane.py). Kept as they are read (a null, not refused as one).
_LEFT_NULL: Mapping[str, tuple[str, ...]] = {"rendezvous": ("recv_node",)}

SCHEMAS: Mapping[str, Mapping[str, str]] = {
    "ops": OPS_SCHEMA, "transfers": TRANSFERS_SCHEMA, "graph_nodes": GRAPH_NODES_SCHEMA,
    "graph_edges": GRAPH_EDGES_SCHEMA, "rendezvous": RENDEZVOUS_SCHEMA, "variables": VARIABLES_SCHEMA,
    "steps": STEPS_SCHEMA,
}

PULL, PUSH, OTHER = "pull", "push", "other"
DIRECTIONS = (PULL, PUSH, OTHER)
# Bytes per element of the dtypes a variable can have (``variables.dtype``); others (string, resource, variant) are
# skipped by the readers, which have no size for them.
DTYPE_BYTES: Mapping[str, int] = {
    "float32": 4, "float64": 8, "int32": 4, "uint8": 1, "int16": 2, "int8": 1, "complex64": 8, "int64": 8,
    "bool": 1, "bfloat16": 2, "uint16": 2, "complex128": 16, "float16": 2, "uint32": 4, "uint64": 8,
}
_SHAPE = re.compile(r"[0-9]+(?:x[0-9]+)*")

MAX_TIME_NS = 2**62
MAX_DUR_NS = 2**52
MAX_SIZE_BYTES = 2**44
MAX_STEP = 2**40
MAX_LANE = 2**32 - 1
MAX_SLOT = 2**31 - 1
_TIME = (0, MAX_TIME_NS - 1)
_DUR = (0, MAX_DUR_NS)
_SIZE = (0, MAX_SIZE_BYTES)
_STEP = (0, MAX_STEP)
BOUNDS: Mapping[str, Mapping[str, tuple[int, int]]] = {
    "ops": {"step": _STEP, "start_ns": _TIME, "dur_ns": _DUR, "lane": (0, MAX_LANE)},
    "transfers": {"step": _STEP, "size_bytes": _SIZE, "start_ns": _TIME, "dur_ns": _DUR},
    "graph_nodes": {},
    "graph_edges": {"src_output": (-1, MAX_SLOT)},
    "rendezvous": {},
    "variables": {"n_elements": _SIZE, "size_bytes": _SIZE},
    "steps": {"step": _STEP, "start_ns": _TIME, "end_ns": _TIME},
}
CHOICES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "transfers": {"direction": DIRECTIONS}, "graph_edges": {"kind": ("data", "control")},
    "rendezvous": {"direction": DIRECTIONS},
}


def printable(value: Any) -> Any:
    """A string that UTF-8 can hold: a lone surrogate (a file name that is not UTF-8, as ``os.fsdecode`` gives it)
    written as its escape, ``\\udcff``; the strings in a dict, list or tuple so too; anything else as it is."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(printable(v) for v in value)
    return value


def _frame(rows: Sequence[Mapping[str, Any]], columns: list[str]) -> pd.DataFrame:
    """The rows as a frame; strings that UTF-8 cannot hold (the string dtype refuses them) made printable."""
    try:
        return pd.DataFrame(list(rows), columns=columns)
    except UnicodeError:
        return pd.DataFrame([{k: printable(v) for k, v in row.items()} for row in rows], columns=columns)


Position = Callable[[int], str]  # a table row (from 0) as a file's reader names it: 'line 7', 'rows[5]'


def make_table(name: str, rows: Sequence[Mapping[str, Any]] | pd.DataFrame, *, where: str = "",
               position: Position | None = None) -> pd.DataFrame:
    """Build table ``name`` from rows (or a frame), with exactly its schema's columns and dtypes, every
    integer within its ``BOUNDS`` and every enumerated string one of its ``CHOICES``; ``where`` (a file)
    prefixes the message of a SchemaError, and ``position`` names a row there as the file has it (a CSV file's
    line; without it, the row counted from 0)."""
    schema = SCHEMAS[name]
    prefix = f"{where}: table {name!r}" if where else f"table {name!r}"
    at = row_naming(name, where, position)
    frame = rows.copy() if isinstance(rows, pd.DataFrame) else _frame(rows, list(schema))
    missing = [c for c in schema if c not in frame.columns]
    if missing:
        raise SchemaError(f"{prefix} lacks columns {missing}")
    frame = frame[list(schema)]
    for column, dtype in schema.items():
        _check_cells(frame[column].reset_index(drop=True), column, dtype, at=at, nullable=dtype == NULLABLE_INT
                     or column in NULLABLE_TEXT.get(name, ()) or column in _LEFT_NULL.get(name, ()))
    try:
        frame = frame.astype(dict(schema))
    except (TypeError, ValueError, OverflowError) as exc:
        raise SchemaError(f"{prefix}: a column does not fit its type: {exc}") from exc
    frame = frame.reset_index(drop=True)
    for column in NULLABLE_TEXT.get(name, ()):
        frame.loc[(frame[column] == "").fillna(value=False), column] = pd.NA
    for column, (low, high) in BOUNDS[name].items():
        outside = ~frame[column].between(low, high).fillna(value=True)
        if outside.any():
            row = int(outside.to_numpy().argmax())
            raise SchemaError(f"{at(row)}: {column!r} must be from {low} to {high} "
                              f"(got {frame[column].iloc[row]})")
    for column, allowed in CHOICES.get(name, {}).items():
        other = ~frame[column].isin(allowed)
        if other.any():
            row = int(other.to_numpy().argmax())
            raise SchemaError(f"{at(row)}: {column!r} must be one of {', '.join(allowed)} "
                              f"(got {quoted(frame[column].iloc[row])})")
    _check_times(frame, at)
    return frame


def _check_cells(values: pd.Series, column: str, dtype: str, *, nullable: bool, at: Callable[[int], str]) -> None:
    """SchemaError for the first cell of ``column`` that its dtype would take wrongly: a null where the schema has
    none (a Parquet table written back by pandas; it failed later, in a traceback), a string or a bool where the
    schema has an integer (astype reads '12' as 12 and True as 1), or a float that is not a
    whole number (astype cuts the fraction off without a word) or beyond 2**53 (the float nearest the integer
    written: its last bits are lost)."""
    if not nullable:
        nulls = values.isna().to_numpy()
        if nulls.any():
            raise SchemaError(f"{at(int(nulls.argmax()))}: {column!r} must not be empty (got null)")
    if dtype != STR and (pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values)):
        wrong = values.map(lambda v: v is not None and v is not pd.NA and (
            isinstance(v, bool | np.bool_) or not isinstance(v, int | float | np.integer | np.floating)),
        ).to_numpy(dtype=bool)
        if wrong.any():
            row = int(wrong.argmax())
            cell = values.iloc[row]
            cell = cell.item() if isinstance(cell, np.generic) else cell  # True, not np.True_
            raise SchemaError(f"{at(row)}: {column!r} must be a whole number, stored as one (got {quoted(cell)}, a "
                              f"{'string' if isinstance(cell, str) else type(cell).__name__})")
    if dtype != STR and pd.api.types.is_float_dtype(values):
        fractional = (values.notna() & (values % 1 != 0)).to_numpy()
        if fractional.any():
            row = int(fractional.argmax())
            raise SchemaError(f"{at(row)}: {column!r} must be a whole number (got {values.iloc[row]})")
        inexact = (values.abs() > 2**53).to_numpy()
        if inexact.any():
            row = int(inexact.argmax())
            raise SchemaError(f"{at(row)}: {column!r} is {values.iloc[row]:.16g} as a float, which holds whole "
                              "numbers exactly only up to 2**53: write the column as integers")


def row_naming(name: str, where: str = "", position: Position | None = None) -> Callable[[int], str]:
    """How a message names row ``row`` of table ``name`` read from ``where``: ``WHERE: table 'ops' row 3``, or
    with the file's own ``position`` (a file that holds that table, or names it in the position),
    ``WHERE: line 5``."""
    head = f"{where}: " if where else ""
    if position is None:
        return lambda row: f"{head}table {name!r} row {row}"
    return lambda row: f"{head}{position(row)}"


def _check_times(frame: pd.DataFrame, at: Callable[[int], str]) -> None:
    """SchemaError for a row that ends before it starts, or at or after 2**62 ns."""
    if "end_ns" in frame.columns:  # a step that ends before it starts has no length to replay
        backwards = frame["end_ns"] < frame["start_ns"]
        if backwards.any():
            row = int(backwards.to_numpy().argmax())
            raise SchemaError(f"{at(row)}: ends before it starts (start_ns {frame['start_ns'].iloc[row]}, "
                              f"end_ns {frame['end_ns'].iloc[row]})")
    if "start_ns" in frame.columns and "dur_ns" in frame.columns:
        late = frame["start_ns"] > MAX_TIME_NS - 1 - frame["dur_ns"]
        if late.any():
            row = int(late.to_numpy().argmax())
            raise SchemaError(f"{at(row)}: ends at or after 2**62 ns (start_ns "
                              f"{frame['start_ns'].iloc[row]}, dur_ns {frame['dur_ns'].iloc[row]})")


def row_contradiction(name: str, frame: pd.DataFrame) -> tuple[int, str] | None:
    """The first row of table ``name`` (built by :func:`make_table`) whose columns contradict one another by the
    table's meaning (module docstring), as (row, what is wrong); None when none does. Each cell may be in range and
    the row still say two things: a data edge from output slot -1 (a control edge's), a variable of shape 784x512
    holding 5 elements, or of 401408 float32 elements in 7 bytes, a pull from a worker to a PS. The readers of
    TensorFlow's files derive the one from the other; a table edited or written by other hands may not, and a
    prediction would take whichever column it reads."""
    if frame.empty:
        return None
    if name == "graph_edges":
        return _edge_contradiction(frame)
    if name == "variables":
        return _variable_contradiction(frame)
    ends = {"transfers": ("src_device", "dst_device"), "rendezvous": ("send_device", "recv_device")}.get(name)
    if ends is None:
        return None
    for row, (src, dst, direction) in enumerate(zip(frame[ends[0]], frame[ends[1]], frame["direction"],
                                                    strict=True)):
        expected = direction_of(src if isinstance(src, str) else None, dst)
        if direction != expected:
            sender = quoted(src) if isinstance(src, str) else "an unknown device"
            return row, (f"'direction' must be {expected} for a tensor sent from {sender} to {quoted(dst)} "
                         f"(got {quoted(direction)})")
    return None


def _edge_contradiction(frame: pd.DataFrame) -> tuple[int, str] | None:
    """:func:`row_contradiction` of ``graph_edges``: a data edge's slot from 0 up, a control edge's -1."""
    data = frame["kind"] == "data"
    wrong = (data & (frame["src_output"] < 0)) | (~data & (frame["src_output"] != -1))
    if not wrong.any():
        return None
    row = int(wrong.to_numpy().argmax())
    kind, slot = frame["kind"].iloc[row], int(frame["src_output"].iloc[row])
    rule = "from 0 up for a data edge" if kind == "data" else "-1 for a control edge"
    return row, f"'src_output' must be {rule} (got {slot}, kind {kind!r})"


def _variable_contradiction(frame: pd.DataFrame) -> tuple[int, str] | None:
    """:func:`row_contradiction` of ``variables``: a dtype of known size, ``n_elements`` the product of the shape,
    ``size_bytes`` that times the dtype's bytes."""
    for row, (dtype, shape, n, size) in enumerate(zip(frame["dtype"], frame["shape"], frame["n_elements"],
                                                      frame["size_bytes"], strict=True)):
        why = None
        if dtype not in DTYPE_BYTES:
            why = f"'dtype' must be one of {', '.join(DTYPE_BYTES)} (got {quoted(dtype)})"
        elif shape != "scalar" and not _SHAPE.fullmatch(shape):
            why = f"'shape' must be 'scalar' or sizes joined by x, as 784x512 (got {quoted(shape)})"
        else:
            elements = 1 if shape == "scalar" else math.prod(int(d) for d in shape.split("x"))
            if int(n) != elements:
                why = f"'n_elements' must be the product of shape {shape}, {elements} (got {int(n)})"
            elif int(size) != elements * DTYPE_BYTES[dtype]:
                why = (f"'size_bytes' must be {elements} elements x {DTYPE_BYTES[dtype]} bytes of {dtype}, "
                       f"{elements * DTYPE_BYTES[dtype]} (got {int(size)})")
        if why is not None:
            return row, why
    return None


def outside_step(tables: Mapping[str, pd.DataFrame]) -> tuple[str, int, str] | None:
    """The first op or transfer that runs outside its step's ``start_ns`` .. ``end_ns`` (which span every record
    of the step), as (table, row, what is wrong); None when none does. A step's length is read from those two
    columns: one that ends before its own ops do would be replayed short."""
    steps = tables["steps"].set_index("step")
    for name in ("ops", "transfers"):
        frame = tables[name]
        if frame.empty:
            continue
        start = frame["step"].map(steps["start_ns"]).to_numpy()
        end = frame["step"].map(steps["end_ns"]).to_numpy()
        begins, ends = frame["start_ns"].to_numpy(), (frame["start_ns"] + frame["dur_ns"]).to_numpy()
        wrong = (begins < start) | (ends > end)
        if wrong.any():
            row = int(wrong.argmax())
            return name, row, (f"runs from {int(begins[row])} to {int(ends[row])} ns, outside its step "
                               f"{int(frame['step'].iloc[row])}, from {int(start[row])} to {int(end[row])} ns "
                               "in the steps table (a step spans every record of it)")
    return None


def step_fault(tables: Mapping[str, pd.DataFrame]) -> tuple[str, int, str] | None:
    """The first row that breaks the tables' steps, as (table, row, what is wrong): a step listed twice in
    ``steps``, or a row of another table whose step is not listed there; None when there is none."""
    steps = tables["steps"]["step"].reset_index(drop=True)
    repeated = steps.duplicated()
    if repeated.any():
        row = int(repeated.to_numpy().argmax())
        return "steps", row, f"step {int(steps.iloc[row])} is listed more than once"
    known = set(steps.astype(int))
    for name, table in tables.items():
        if name == "steps" or "step" not in table.columns:
            continue
        unknown = ~table["step"].isin(known)
        if unknown.any():
            row = int(unknown.to_numpy().nonzero()[0][0])
            return name, row, (f"step {int(table['step'].iloc[row])} is not in the steps table (which has "
                               f"{counted(len(known), 'step')})")
    return None


# Tables in which no trace holds a record twice: an op runs, a tensor is received, a node, a rendezvous key or a
# variable is listed once. (Not graph_edges: ``Mul(x, x)`` has two equal input edges; steps: see step_fault.) The
# readers of TensorFlow's files read a record it wrote twice once (:func:`read_once`). A transfer whose tensor name
# the format lost (TF's timeline JSON) is no record of its own: two received at the same moment are equal rows.
ONCE_EACH = ("ops", "transfers", "graph_nodes", "rendezvous", "variables")
REPEATED_RECORDS = "records TensorFlow wrote twice, exactly the same (node, device, times, thread): read once"


def read_once(rows: Sequence[dict[str, Any]], skipped: dict[str, int],
              key: Callable[[dict[str, Any]], tuple[Any, ...]] | None = None) -> list[dict[str, Any]]:
    """``rows`` (of ops or transfers, as a reader builds them) without those that repeat an earlier one exactly,
    each ``key`` the same (default: every value), counted in ``skipped`` under :data:`REPEATED_RECORDS`. A
    RunMetadata's step stats can hold one node's record twice, every field the same: read twice, the ops counted
    one more a step, and the tables written from it were refused as a file joined to itself."""
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for row in rows:
        mark = key(row) if key is not None else tuple(row.values())
        if mark not in seen:
            seen.add(mark)
            kept.append(row)
    if len(kept) < len(rows):
        skipped[REPEATED_RECORDS] = skipped.get(REPEATED_RECORDS, 0) + len(rows) - len(kept)
    return kept


def repeated_row(frame: pd.DataFrame) -> tuple[int, int] | None:
    """The first row of ``frame`` that repeats an earlier one exactly, as (row, the first row it repeats), counted
    from 0; None when no row does. Nulls are equal to nulls here."""
    group = frame.groupby(list(frame.columns), dropna=False, sort=False).ngroup().to_numpy()  # equal rows, one id
    repeats = pd.Series(group).duplicated().to_numpy()
    if not repeats.any():
        return None
    row = int(repeats.argmax())
    return row, int((group == group[row]).argmax())


def repeated_record(name: str, frame: pd.DataFrame) -> tuple[int, int] | None:
    """:func:`repeated_row` of table ``name`` (one of :data:`ONCE_EACH`), leaving out the transfers whose tensor
    name the format lost (TF's timeline JSON): two received at the same moment, on two threads, are two equal
    rows."""
    if name != "transfers":
        return repeated_row(frame)
    named = frame[frame["tensor_name"].notna()]
    repeat = repeated_row(named.reset_index(drop=True))
    return None if repeat is None else (int(named.index[repeat[0]]), int(named.index[repeat[1]]))


def check_table(name: str, frame: pd.DataFrame) -> None:
    """Raise SchemaError unless ``frame`` has exactly table ``name``'s columns, in order, with its dtypes."""
    schema = SCHEMAS[name]
    got = {c: str(t) for c, t in frame.dtypes.items()}
    if list(got) != list(schema) or any(got[c] != schema[c] for c in schema):
        raise SchemaError(f"table {name!r} has columns {got}, expected {dict(schema)}")


def device_role(device: str) -> str:
    """``ps``, ``worker`` or ``other``, from a TensorFlow device name's job."""
    for part in device.split("/"):
        if part.startswith("job:"):
            job = part[len("job:"):]
            return job if job in ("ps", "worker") else "other"
    return "other"


def task_index(device: str) -> int:
    """The task number of a TensorFlow device name (``/job:ps/replica:0/task:2/...`` → 2; 0 when it names
    none)."""
    for part in device.split("/"):
        if part.startswith("task:") and part[len("task:"):].isdigit():
            return int(part[len("task:"):])
    return 0


def direction_of(src_device: str | None, dst_device: str) -> str:
    """``pull`` for PS → worker, ``push`` for worker → PS, else ``other`` (src may be unknown)."""
    dst_role = device_role(dst_device)
    src_role = device_role(src_device) if src_device else None
    if dst_role == "worker" and src_role in ("ps", None):
        return PULL
    if dst_role == "ps" and src_role in ("worker", None):
        return PUSH
    return OTHER


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Trace:
    """One worker's traced steps, format-neutral. Tables follow the schemas in this module's docstring.

    ``source_format`` names the format read; ``lost`` lists what that format cannot carry (stated, never
    invented); ``skipped`` counts records that were skipped, by reason.
    """

    source: str
    source_format: str
    ops: pd.DataFrame
    transfers: pd.DataFrame
    graph_nodes: pd.DataFrame
    graph_edges: pd.DataFrame
    rendezvous: pd.DataFrame
    variables: pd.DataFrame
    steps: pd.DataFrame
    lost: tuple[str, ...] = ()
    skipped: Mapping[str, int] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in SCHEMAS:
            check_table(name, getattr(self, name))
        fault = step_fault({name: getattr(self, name) for name in SCHEMAS})
        if fault is not None:
            name, row, why = fault
            raise SchemaError(f"{row_naming(name)(row)}: {why}")

    @property
    def devices(self) -> tuple[str, ...]:
        """Every device named by an op, a transfer or a graph, sorted."""
        names = set(self.ops["device"]) | set(self.transfers["dst_device"]) | set(self.graph_nodes["device"])
        names |= {d for d in self.transfers["src_device"] if isinstance(d, str)}
        return tuple(sorted(names))

    @property
    def has_graph(self) -> bool:
        """Whether the partition graphs were in the input (exact dependencies and variable shapes)."""
        return not self.graph_nodes.empty

    def equals(self, other: Trace) -> bool:
        """Same tables, same values; where they were read from (``source``, ``source_format`` and the steps'
        ``source`` column) may differ."""
        same = [getattr(self, n).equals(getattr(other, n)) for n in SCHEMAS if n != "steps"]
        steps = [t.steps.drop(columns="source") for t in (self, other)]
        return all(same) and steps[0].equals(steps[1])


def source_of(read_from: str, recorded: str) -> str:
    """A re-read trace's ``source``: the file read, then where it was first captured, so that a message names
    the path the user gave (``out/traces/n1.json (from tracegen synthetic: mlp/trace)``)."""
    return read_from if recorded in ("", read_from) else f"{read_from} (from {recorded})"


Locate = Callable[[str, Mapping[str, Any]], "str | None"]  # (table, row) → the file and the record's place in it


def trace_from(read_from: str, locate: Locate | None = None, /, **fields: Any) -> Trace:
    """A :class:`Trace` of ``fields``; a :class:`SchemaError` names ``read_from``, the file being read (the
    trace's own ``source`` may name where it was first captured). A step that lasts more than
    :data:`MAX_STEP_NS` is refused (:func:`span_fault`), naming the record that makes it so: where ``locate``
    finds it in the file read (``step_000.pb: dev_stats[1].node_stats[4]``, ``t.json: traceEvents[22]``), else
    by its table's row."""
    try:
        trace = Trace(**fields)
    except SchemaError as exc:
        raise SchemaError(f"{read_from}: {exc}") from None
    fault = span_fault(trace)
    if fault is not None:
        name, row, why = fault
        record = getattr(trace, name).iloc[row].to_dict()
        found = locate(name, record) if locate is not None and name != "steps" else None
        where = found or (read_from if name == "steps" else row_naming(name, read_from)(row))
        raise TraceContentError(f"{where}: {why}")
    return trace


MAX_STEP_NS = 24 * 3600 * 10**9  # a day: no training step, nor any op or gap in one, lasts longer
_YEAR_NS = 365.25 * 24 * 3600 * 10**9


def _long(ns: int) -> str:
    """A span of more than a day, as a person reads it: ``2.0 days``, ``56.9 years``."""
    return f"{ns / _YEAR_NS:.1f} years" if ns >= _YEAR_NS else f"{ns / MAX_STEP_NS:.1f} days"


def span_fault(trace: Trace) -> tuple[str, int, str] | None:
    """The record that makes the first step lasting more than :data:`MAX_STEP_NS` so, as (table, row, what is
    wrong): one op's time read wrong (a start of 0 in a timeline of epoch microseconds) made a step of 56 years,
    which inspect reported as the step time. The record that runs for more than a day, else the one on the side of
    the step's longest gap with fewer records, else (no record, or none apart) the step; None when every step is
    shorter."""
    steps = trace.steps
    long = steps[(steps["end_ns"] - steps["start_ns"]) > MAX_STEP_NS]
    if long.empty:
        return None
    step = int(long["step"].iloc[0])
    records = []  # (start, end, table, row) of the step's records
    for name in ("ops", "transfers"):
        frame = getattr(trace, name)
        mine = frame[frame["step"] == step]
        records += [(int(s), int(s) + int(d), name, int(r))
                    for r, s, d in zip(mine.index, mine["start_ns"], mine["dur_ns"], strict=True)]
    records.sort()
    lasts = int(long["end_ns"].iloc[0]) - int(long["start_ns"].iloc[0])
    whole = "steps", int(long.index[0]), (f"step {step} lasts {_long(lasts)}, more than the day no training step "
                                          "takes: a time in the trace is wrong")
    if not records:  # a TF2 step's window, holding no record
        return whole
    start, end, name, row = max(records, key=lambda r: r[1] - r[0])
    if end - start > MAX_STEP_NS:
        return name, row, (f"{_what(trace, name, row)} runs for {_long(end - start)}, more than the day no op of a "
                           "training step takes: a time in the trace is wrong")
    gap, at, reach = 0, 0, records[0][1]
    for i, (begin, finish, _, _) in enumerate(records[1:], start=1):
        if begin - reach > gap:
            gap, at = begin - reach, i
        reach = max(reach, finish)
    if gap == 0:  # records that follow one another without a gap: none stands out
        return whole
    before, after = records[:at], records[at:]
    if len(before) <= len(after):
        _, _, name, row = before[0]
        others = "other record starts" if len(after) == 1 else f"other {len(after)} records start"
        where = f"ends {_long(gap)} before the step's {others}"
    else:
        _, _, name, row = max(after, key=lambda r: r[1])
        where = f"starts {_long(gap)} after the step's other {len(before)} records end"  # more than after: never 1
    return name, row, (f"{_what(trace, name, row)} {where} (step {step} lasts {_long(lasts)}, more than the day no "
                       "training step takes): a time in the trace is wrong")


def _what(trace: Trace, name: str, row: int) -> str:
    """Record ``row`` of table ``name`` in words: ``op 'Relu'``, ``transfer 'edge_3_w/read'``."""
    if name == "ops":
        return f"op {quoted(trace.ops['node_name'].iloc[row])}"
    tensor = trace.transfers["tensor_name"].iloc[row]
    return f"transfer {quoted(tensor if isinstance(tensor, str) else 'RecvTensor')}"
