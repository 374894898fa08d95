"""Which parameter each pull reads and each apply updates, so that the simulator can count staleness.

A step model has no variables as such, only the PS graph's nodes. A variable is the PS node that an apply op
takes as input (TF1's ``ResourceApplyGradientDescent`` reads the variable's handle, the learning rate and the
gradient) *and* from which a pull's tensor is read (the pull's producer on the PS is a ``ReadVariableOp`` or a
``Gather`` of that handle, a few PS nodes up). Applies whose input no pull reads (the global-step increment)
update nothing a worker reads: they carry no staleness. A pull below an apply is no read but the PS telling the
worker its update is done (a control edge): it would make the apply's other inputs (the learning rate) look read.

Staleness of a gradient (Ho et al. 2013; Dai et al. 2018): the number of updates the PS applied to its parameter
between the worker's read of that parameter and this gradient's apply. :func:`variable_map` gives the ids;
:class:`tracegen.simulate` counts.
"""

from __future__ import annotations

import dataclasses

from tracegen.model import PS_KINDS, StepModel, TaskKind

READ_DEPTH = 3  # PS nodes between a variable and a pull: handle -> ReadVariableOp/Gather -> (Identity) -> pull


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class VariableMap:
    """Per task: the variable (an index into ``names``) a pull reads or an apply updates, else -1."""

    of_task: tuple[int, ...]
    names: tuple[str, ...]

    @property
    def n_variables(self) -> int:
        """How many variables the step both reads and updates."""
        return len(self.names)


def _ps_ancestors(model: StepModel, task: int, depth: int) -> set[int]:
    """PS nodes at most ``depth`` PS hops above ``task``."""
    found: set[int] = set()
    frontier = [task]
    for _ in range(depth):
        nxt = [p for t in frontier for p in model.preds(t) if model.kinds[p] in PS_KINDS and p not in found]
        found.update(nxt)
        frontier = nxt
    return found


def variable_map(model: StepModel) -> VariableMap:
    """The variables of ``model`` (module docstring), numbered in the order of their node ids."""
    ancestors = {t: _ps_ancestors(model, t, READ_DEPTH) for t in range(model.n_tasks)
                 if model.kinds[t] == TaskKind.PULL}
    reads = {t: a for t, a in ancestors.items() if not any(model.kinds[p] == TaskKind.APPLY for p in a)}
    read_nodes = set().union(*reads.values()) if reads else set()
    updated: dict[int, int] = {}
    for t in range(model.n_tasks):
        if model.kinds[t] == TaskKind.APPLY:
            inputs = sorted(p for p in model.preds(t) if model.kinds[p] in PS_KINDS and p in read_nodes)
            if len(inputs) == 1:  # one variable per apply; none or several: not a parameter update we can place
                updated[t] = inputs[0]
    nodes = sorted(set(updated.values()))
    index = {node: i for i, node in enumerate(nodes)}
    of_task = [-1] * model.n_tasks
    for t, node in updated.items():
        of_task[t] = index[node]
    for t, above in reads.items():
        hit = sorted(above & index.keys())
        if len(hit) == 1:
            of_task[t] = index[hit[0]]
    return VariableMap(of_task=tuple(of_task), names=tuple(model.names[n] for n in nodes))
