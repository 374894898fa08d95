"""Transfer-order policies: in which order a worker's step hands its transfers to the link.

A policy gives every task of one worker step a priority (lower goes first), which acts twice:

- **the order a worker requests its parameters in** (:func:`issued_in_order`): at step start TensorFlow's
  executor issues the parameter requests one after another, a few microseconds to a millisecond apart (the
  dispatch gaps the trace recorded); an ordering policy such as TicTac changes which tensor takes which of those
  moments, not the moments. The pulls that wait for nothing on the worker (only for the PS's reads) take the
  traced step's issue times in the policy's order;
- **transfers requested at the same nanosecond** queue in their connection in priority order
  (:mod:`tracegen.link`; under ``fair`` every transfer is served at once).

The policies:

- ``tf``: TensorFlow's default: each traced step's own issue order, as the trace recorded it (every simulated
  step replays one traced step's timings); transfers requested at the same nanosecond (synthetic steps, whose
  gaps are zero) in a random order drawn per step from the run's seeded RNG.
- ``tictac``: by first need (TicTac, Hashemi et al. 2019): a transfer whose first consumer started earlier in
  the trace goes first.
- ``fixed``: the order of tensor names read from a file (one per line, ``#`` comments); transfers not named
  go after the named ones, in trace order.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from parsers.errors import TraceFormatError, quoted
from parsers.files import not_utf8_at, read_expanded
from tracegen.errors import ConfigError
from tracegen.model import PS_KINDS, TRANSFER_KINDS, StepModel, StepTiming, TaskKind


class Policy(Protocol):
    """Priorities of one worker step's tasks."""

    @property
    def name(self) -> str:
        """Short name for output."""
        ...

    @property
    def random(self) -> bool:
        """Whether each step draws its own priorities (else every step has the same: computed once)."""
        ...

    def priorities(self, model: StepModel, rng: np.random.Generator) -> Sequence[int]:
        """One priority per task id (lower first); called once per worker step."""
        ...

    def priorities_of(self, model: StepModel, rng: np.random.Generator, tasks: npt.NDArray[np.intp]) -> list[int]:
        """The priorities of ``tasks`` only, drawn as :meth:`priorities` draws them all (the same numbers from the
        same generator): a simulation reads only its transfers', and a step has many more tasks."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class TfOrder:
    """The traced order; a random one per step among transfers requested at the same nanosecond."""

    name: str = "tf"
    random: bool = True

    def priorities(self, model: StepModel, rng: np.random.Generator) -> Sequence[int]:
        """A fresh permutation of task ids."""
        return self.priorities_of(model, rng, np.arange(model.n_tasks))

    def priorities_of(self, model: StepModel, rng: np.random.Generator, tasks: npt.NDArray[np.intp]) -> list[int]:
        """Those of ``tasks`` in a fresh permutation of task ids."""
        return rng.permutation(model.n_tasks)[tasks].tolist()  # type: ignore[no-any-return]


@dataclasses.dataclass(frozen=True, slots=True)
class TicTac:
    """By when the trace first needed each transfer."""

    name: str = "tictac"
    random: bool = False

    def priorities(self, model: StepModel, rng: np.random.Generator) -> Sequence[int]:
        """Rank by first need, ties by task id."""
        del rng
        order = sorted(range(model.n_tasks), key=lambda t: (model.first_need_ns[t], t))
        prio = [0] * model.n_tasks
        for r, t in enumerate(order):
            prio[t] = r
        return prio

    def priorities_of(self, model: StepModel, rng: np.random.Generator, tasks: npt.NDArray[np.intp]) -> list[int]:
        """Those of ``tasks``."""
        return _of_tasks(self.priorities(model, rng), tasks)


@dataclasses.dataclass(frozen=True, slots=True)
class FixedOrder:
    """A given order of tensor names."""

    order: tuple[str, ...]
    name: str = "fixed"
    random: bool = False

    def priorities(self, model: StepModel, rng: np.random.Generator) -> Sequence[int]:
        """Named transfers first, in file order; the rest after, in trace rank order."""
        del rng
        pos = {name: i for i, name in enumerate(self.order)}
        n = len(self.order)
        return [pos.get(model.names[t], n + model.rank[t]) for t in range(model.n_tasks)]

    def priorities_of(self, model: StepModel, rng: np.random.Generator, tasks: npt.NDArray[np.intp]) -> list[int]:
        """Those of ``tasks``."""
        return _of_tasks(self.priorities(model, rng), tasks)


def _of_tasks(priorities: Sequence[int], tasks: npt.NDArray[np.intp]) -> list[int]:
    """The priorities of ``tasks``, in their order."""
    return [priorities[t] for t in tasks.tolist()]


MAX_ORDER_BYTES = 1 << 20  # a tensor name per line: thousands of names are a few hundred kB


def read_order(path: str | os.PathLike[str], name: str = "policy") -> tuple[str, ...]:
    """Tensor names from a policy file, one per line (ended by ``\\n`` or ``\\r\\n``); blank lines and ``#``
    comments ignored. ``name``: what errors call the option (a CLI passes ``--policy``)."""
    return tuple(_order_lines(path, name))


def _order_lines(path: str | os.PathLike[str], option: str = "policy") -> dict[str, int]:
    """Each tensor name of the order file ``path`` and its line number, in the file's order."""
    p = os.fspath(path)
    try:  # bounded: '--policy /dev/zero' or a huge file is refused, not read until memory runs out
        data = read_expanded(path, MAX_ORDER_BYTES)
    except TraceFormatError as exc:
        raise ConfigError(f"'{option}': cannot read order file {p!r}: {exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:  # the line, as an editor numbers it, and the byte, the mark counted
        bad_line, at = not_utf8_at(data, exc)
        raise ConfigError(f"'{option}': order file {p!r}: line {bad_line}: not UTF-8 text at byte {at}") from None
    seen: dict[str, int] = {}
    # a line ends at '\n' (a '\r' before it is stripped with the other spaces), as editors number lines:
    # str.splitlines also ended one at \f, \v, \x1c-\x1e, \x85, \u2028 and \u2029, and errors named later lines
    for number, line in enumerate(text.split("\n"), start=1):
        name = line.split("#", 1)[0].strip()
        if "\r" in name:  # old Mac text: the whole file one line, refused as one unknown name shortened in the
            # middle, the '\r' that joined them out of sight; no TensorFlow name holds one
            raise ConfigError(f"'{option}': order file {p!r}: line {number}: {quoted(name)} holds a carriage "
                              "return inside it: end each line with '\\n' or '\\r\\n', not '\\r' alone")
        if name in seen:  # which place would it take? the file does not say
            raise ConfigError(f"'{option}': order file {p!r}: line {number}: {quoted(name)} is already on line "
                              f"{seen[name]}")
        if name:
            seen[name] = number
    if not seen:
        raise ConfigError(f"'{option}': order file {str(p)!r} names no tensors")
    return seen


def parse_policy(text: str, name: str = "policy") -> tuple[str, tuple[str, ...]]:
    """``tf`` or ``tictac`` as they are; anything else names an order file: (``fixed``, its tensor names).
    ``name``: what errors call the option."""
    if text in ("tf", "tictac"):
        return text, ()
    return "fixed", read_order(text, name)


def check_order(model: StepModel, order: Sequence[str], source: str = "", name: str = "policy") -> None:
    """ConfigError unless every name in ``order`` (read from the file ``source``, when given) is a transfer of
    ``model``. ``name``: what errors call the option, as :func:`read_order`'s (a CLI passes ``--policy``)."""
    transfers = {model.names[t] for t in range(model.n_tasks) if model.kinds[t] in TRANSFER_KINDS}
    unknown = [n for n in order if n not in transfers]
    if unknown:
        where = "order file"
        if source:  # the line of the first unknown name: the file was read a moment ago, so it reads again
            line = _order_lines(source, name).get(unknown[0]) if pathlib.Path(source).is_file() else None
            where = f"order file {source!r}" + ("" if line is None else f": line {line}")
        more = f" (and {len(unknown) - 1} more: {', '.join(quoted(u) for u in unknown[1:5])})" if unknown[1:] else ""
        first = next(model.names[t] for t in range(model.n_tasks) if model.kinds[t] in TRANSFER_KINDS)
        raise ConfigError(f"'{name}': {where}: {quoted(unknown[0])} is not a transfer of the model{more}; its tensor "
                          f"names are in transfers.csv of 'tracegen convert --to csv', e.g. {quoted(first, 40)}")


def step_start_pulls(model: StepModel) -> list[int]:
    """The pulls a worker requests at step start: those that wait for nothing on the worker (every task before
    them runs on the PS: the reads of the parameters)."""
    on_ps: dict[int, bool] = {}
    for t in model.topo_order():
        on_ps[t] = model.kinds[t] in PS_KINDS and all(on_ps[p] for p in model.preds(t))
    return [t for t in range(model.n_tasks)
            if model.kinds[t] == TaskKind.PULL and all(on_ps[p] for p in model.preds(t))]


def issued_in_order(model: StepModel, priority: Sequence[int]) -> tuple[StepTiming, ...]:
    """The model's timings with its step-start pulls (:func:`step_start_pulls`) requested in ``priority`` order
    (lower first): in each traced step, the moments its pulls were requested (from step start, with the PS's
    reads uncontended) go to the pulls in that order, each pull's dispatch gap set to reach its moment (never
    before its read is done)."""
    pulls = step_start_pulls(model)
    if len(pulls) < 2:
        return model.timings
    order = sorted(pulls, key=lambda t: (priority[t], t))
    timings = []
    for timing in model.timings:
        done: dict[int, int] = {}
        ready: dict[int, int] = {}
        for t in model.topo_order():
            ready[t] = max((done[p] for p in model.preds(t)), default=0)
            done[t] = ready[t] + timing.delay_ns[t] + timing.dur_ns[t]
        moments = sorted(ready[t] + timing.delay_ns[t] for t in pulls)
        delay = list(timing.delay_ns)
        for t, at in zip(order, moments, strict=True):
            delay[t] = max(0, at - ready[t])
        timings.append(dataclasses.replace(timing, delay_ns=tuple(delay)))
    return tuple(timings)
