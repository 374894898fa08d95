"""Several PS shards: which shard holds each parameter, and so which shard runs each PS task and transfer.

TF1 jobs place variables on k PS tasks with ``replica_device_setter``: round robin in creation order by default,
or by a ``ps_strategy`` such as a greedy byte-balancing one (what ``tf.contrib``'s
``GreedyLoadBalancingStrategy`` did: each variable, in creation order, to the shard holding the fewest bytes so
far). From a trace taken with one PS:

- the variables are placed in creation order, as the trace's partition graph lists its variable nodes
  (``VarHandleOp``/``VariableV2``, the global step among them; a TF2 profile's in the order its step function
  takes them; :func:`creation_order`); the parameters are
  :mod:`tracegen.variables`' (a variable both read by a pull and updated by an apply); without that list
  (a trace with no graph) the parameters in name order, the global step first;
- greedy weighs a variable as ``byte_size_load_fn`` did: the bytes it holds (its shape times its dtype's size, as
  the trace's variables table gives them), which for a table read sparsely (an embedding whose rows are gathered
  on the PS) is the whole table, not the rows a step moves; where the trace gives no size, the bytes its pulls
  move in a step, and a variable no pull moves (the global step) counts as an 8-byte scalar;
- a pull and an apply run on the shard of their parameter; a push on the shard of the apply that consumes it;
  the PS ops that read or hold a parameter on its shard; everything else of the PS (the global step, the
  learning rate's push, constants) on shard 0, where TensorFlow's chief PS would put it.

A placement file (``--placement FILE``) is UTF-8 CSV ``variable,shard`` with a header, naming every parameter, and
nothing else, by its variable's name (``fc1/kernel``, as ``tracegen inspect --json`` lists them under
``parameters``; ``ps:fc1/kernel``, as an error message lists them, is read too), shards from 0.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import pathlib
from collections.abc import Mapping

from parsers.csvfile import Records, cell_int
from parsers.errors import counted, quoted
from parsers.files import broken_link, not_utf8_at, read_expanded
from parsers.trace import Trace, device_role
from tracegen.errors import ConfigError
from tracegen.model import PS_KINDS, StepModel, TaskKind
from tracegen.variables import VariableMap, variable_map

PLACEMENTS = ("round-robin", "greedy")
MAX_SHARDS = 64
MAX_PLACEMENT_BYTES = 1 << 20
VARIABLE_OPS = ("VarHandleOp", "VariableV2", "Variable")
SCALAR_BYTES = 8  # a variable no pull moves (the global step: an int64 scalar) still weighs on a greedy shard


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """``shard_of_task``: the shard of every PS task and transfer (0 for worker ops, which it does not concern);
    ``shard_of_variable``: per parameter of ``variables``."""

    n_shards: int
    shard_of_variable: tuple[int, ...]
    shard_of_task: tuple[int, ...]
    variables: VariableMap
    how: str

    def bytes_per_shard(self, model: StepModel) -> tuple[int, ...]:
        """Bytes each shard serves per step (its pulls)."""
        out = [0] * self.n_shards
        for t in range(model.n_tasks):
            if model.kinds[t] == TaskKind.PULL:
                out[self.shard_of_task[t]] += model.size_bytes[t]
        return tuple(out)


def variable_bytes(model: StepModel, variables: VariableMap) -> list[int]:
    """Bytes the pulls of each parameter move per step."""
    size = [0] * variables.n_variables
    for t in range(model.n_tasks):
        v = variables.of_task[t]
        if v >= 0 and model.kinds[t] == TaskKind.PULL:
            size[v] += model.size_bytes[t]
    return size


def creation_order(trace: Trace) -> tuple[str, ...]:
    """The PS's variable nodes in the order the partition graph lists them (creation order), as model names. A TF2
    profile has no variable nodes: its variables are the step function's resource arguments, and the variables
    table lists them in the order the function takes them, the order it first reads them: creation order for a
    model that reads its variables in the order it makes them (the zoo's mlp, embed and resnet profiled on one PS
    task and placed round robin in it land where ParameterServerStrategy put them on two, 6 of 6, 5 of 5 and 43 of
    43, on 2026-12-07), not for one it makes early and reads late (the testbed's step counter, made first,
    incremented last), which goes last."""
    nodes = trace.graph_nodes
    rows = nodes[nodes["op_type"].isin(VARIABLE_OPS) & nodes["device"].map(lambda d: device_role(d) == "ps")]
    if len(rows):
        return tuple(dict.fromkeys(f"ps:{n}" for n in rows["node_name"]))
    table = trace.variables
    return tuple(dict.fromkeys(f"ps:{n}" for n, d in zip(table["name"], table["device"], strict=True)
                               if device_role(d) == "ps"))


def stored_bytes(trace: Trace) -> dict[str, int]:
    """The bytes each of the PS's variables holds, as the trace's variables table gives them, by model name."""
    table = trace.variables
    keep = table["device"].map(lambda d: device_role(d) == "ps")
    return {f"ps:{n}": int(b) for n, b in zip(table["name"][keep], table["size_bytes"][keep], strict=True)}


def variable_order(variables: VariableMap, created: tuple[str, ...] = ()) -> list[str]:
    """Every variable the PS holds, in the order round-robin placement takes them: ``created`` (creation order),
    then any the model names that it lacks (a trace without partition graphs: the global step first)."""
    order = list(created) or ["ps:global_step"]
    return order + [n for n in variables.names if n not in order]


def place(model: StepModel, n_shards: int, how: str, created: tuple[str, ...] = (),
          stored: Mapping[str, int] | None = None) -> Placement:
    """Place ``model``'s parameters on ``n_shards`` shards by ``how``: ``round-robin``, ``greedy`` or the path of
    a placement file; ``created``: every variable node in creation order; ``stored``: the bytes each holds, where
    known (:func:`stored_bytes`; module docstring)."""
    if not 1 <= n_shards <= MAX_SHARDS:
        raise ConfigError(f"'ps_shards' must be from 1 to {MAX_SHARDS} (got {n_shards})")
    variables = variable_map(model)
    order = variable_order(variables, created)
    size = {**dict(zip(variables.names, variable_bytes(model, variables), strict=True)), **(stored or {})}
    if how in PLACEMENTS:
        load = [0] * n_shards
        placed: dict[str, int] = {}
        for i, name in enumerate(order):
            target = i % n_shards if how == "round-robin" else min(range(n_shards), key=lambda s: (load[s], s))
            load[target] += size.get(name, SCALAR_BYTES)
            placed[name] = target
        shards = [placed[n] for n in variables.names]
    else:
        shards = _from_file(how, variables, n_shards, order)
    return Placement(n_shards=n_shards, shard_of_variable=tuple(shards),
                     shard_of_task=_task_shards(model, variables, shards), variables=variables,
                     how=how if how in PLACEMENTS else f"file {how}")


def traced_placement(model: StepModel) -> Placement:
    """The placement a trace of a job with several PS tasks shows (``model.traced_ps_task``): each parameter on
    the PS task its node ran on. ConfigError for a one-PS trace."""
    if not model.traced_ps_task:
        raise ConfigError(f"{model.source}: the trace has one PS task; there is no traced placement to keep")
    variables = variable_map(model)
    shards = [model.traced_ps_task[model.names.index(name)] for name in variables.names]
    return Placement(n_shards=max(model.traced_ps_task) + 1, shard_of_variable=tuple(shards),
                     shard_of_task=model.traced_ps_task, variables=variables, how="as traced")


def _task_shards(model: StepModel, variables: VariableMap, shards: list[int]) -> tuple[int, ...]:
    """Per task, the shard that runs it (module docstring)."""
    of_var = variables.of_task
    out = [0] * model.n_tasks
    succ: list[list[int]] = [[] for _ in range(model.n_tasks)]
    for t in range(model.n_tasks):
        for p in model.preds(t):
            succ[p].append(t)
    for t in range(model.n_tasks):
        if of_var[t] >= 0:
            out[t] = shards[of_var[t]]
        elif model.kinds[t] == TaskKind.PUSH:
            owners = sorted({of_var[s] for s in succ[t] if of_var[s] >= 0})
            out[t] = shards[owners[0]] if len(owners) == 1 else 0  # the learning rate feeds every apply: shard 0
    assigned: dict[int, int] = {t: out[t] for t in range(model.n_tasks) if of_var[t] >= 0}
    for v, name in enumerate(variables.names):
        node = model.names.index(name)
        out[node] = assigned[node] = shards[v]
    for t in model.topo_order():  # a read of a variable (its handle -> ReadVariableOp -> ...): that shard
        if model.kinds[t] in PS_KINDS and t not in assigned:
            read_on = {assigned[p] for p in model.preds(t) if p in assigned and model.kinds[p] in PS_KINDS}
            if len(read_on) == 1:
                out[t] = assigned[t] = read_on.pop()
    return tuple(out)


def _from_file(path: str, variables: VariableMap, n_shards: int, created: list[str]) -> list[int]:
    """The shard of every parameter, from a placement file; ``created``: every variable node (module docstring)."""
    source = os.fspath(path)
    if not pathlib.Path(source).is_file():
        what = "not a regular file" if pathlib.Path(source).exists() else broken_link(source) or "no such file"
        raise ConfigError(f"'placement' must be round-robin, greedy or a placement file (got {path!r}: {what})")
    data = read_expanded(source, MAX_PLACEMENT_BYTES, ConfigError)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:  # which line of hundreds, it did not say, and its byte was 3 short after a BOM
        line, at = not_utf8_at(data, exc, lone_cr=True)
        raise ConfigError(f"{source}: line {line}: not UTF-8 text at byte {at}") from None
    reader = Records(io.StringIO(text, newline=""))
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise ConfigError(f"{source}: line {reader.start}: not CSV: {exc}") from None
    if not rows or [c.strip() for c in rows[0][1]] != ["variable", "shard"]:
        raise ConfigError(f"{source}: line 1 must be the header variable,shard")
    given: dict[str, int] = {}
    for line, row in rows[1:]:
        if not row:
            continue
        got = f"(got {quoted(','.join(row))})"
        rule = f"expected variable,shard with a shard from 0 to {n_shards - 1}, placing on {counted(n_shards, 'shard')}"
        if len(row) != 2:
            raise ConfigError(f"{source}: line {line}: {rule} {got}")

        def refused(why: str, line: int = line, got: str = got) -> ConfigError:
            return ConfigError(f"{source}: line {line}: {why} {got}")

        shard = cell_int(row[1], rule, refused)  # digits 0-9, by the rule of every CSV's numbers
        if not 0 <= shard < n_shards:
            raise ConfigError(f"{source}: line {line}: {rule} {got}")
        name = row[0].strip()
        if name not in variables.names and f"ps:{name}" in variables.names:  # the variable's name, as in the code
            name = f"ps:{name}"
        if name not in variables.names:
            what = ("a variable but not a parameter (pulled and updated every step): its PS ops stay on shard 0; "
                    "leave it out" if name in created else "not a parameter the trace has")
            raise ConfigError(f"{source}: line {line}: {quoted(name)} is {what} (parameters: "
                              f"{_listed(variables.names)})")
        if name in given:
            raise ConfigError(f"{source}: line {line}: {quoted(name)} is placed twice (on shard {given[name]} above, "
                              f"now on shard {shard})")
        given[name] = shard
    missing = [n for n in variables.names if n not in given]
    if missing:
        raise ConfigError(f"{source}: no shard for {counted(len(missing), 'parameter')}, e.g. {missing[0]!r}")
    return [given[n] for n in variables.names]


def _listed(names: tuple[str, ...], limit: int = 3) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")
