"""How many parameter servers for N workers: the scaling curve for k = 1, 2, ... PS shards, in one table.

For each k the parameters are placed (:mod:`tracegen.placement`), the curve is simulated with every shard a PS
like the traced one (its own link of the same spec, its own CPU), and the row gives the knee, the plateau and
the shard that saturates there: the busiest resource of any shard in a run at the plateau's N. A shard that
holds the one big tensor saturates first whatever k is — the table shows when more PS stop helping.

The knee follows the curve's rule (:func:`tracegen.curvetext.knee_short`): where the N just below it were not
simulated (``--workers 1,2,8``: N = 3-7) and the plateau is reached, the knee may lie among them, and the table
prints ``<=8`` as ``predict``'s words say "N=8 or earlier (N=3-7 not simulated)"; against a plateau that is a
lower bound it prints ``>=3`` as they say "N=3 or later"; with no knee in the simulated N it prints ``>8`` as they
say "not reached by N=8". ``shards.csv`` keeps ``knee`` a number (pandas reads it as one; empty when not reached)
and writes the table's cell beside it in ``knee_as_printed`` (``8``, ``<=8``, ``>=3`` or ``>8``): a
``knee_or_earlier`` flag there could say "or earlier" but not "or later" nor "not reached by N=8".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from parsers.trace import Trace
from tracegen.curve import Simulations, scaling_curve
from tracegen.curvetext import knee_short
from tracegen.errors import ConfigError
from tracegen.link import LinkSpec
from tracegen.metrics import busiest_shard
from tracegen.model import StepModel
from tracegen.placement import Placement, creation_order, place, stored_bytes, variable_order
from tracegen.simulate import SimConfig, simulate
from tracegen.variables import variable_map

COLUMNS = ("n_shards", "placement", "knee", "knee_as_printed", "plateau_steps_per_s", "plateau_workers",
           "saturating_shard", "saturating_resource", "saturating_utilisation", "shard_pull_bytes")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ShardRow:
    """One k: its curve's knee and plateau, and the shard busiest at the plateau."""

    n_shards: int
    placement: str
    knee_n_workers: int | None
    knee_short: str  # the knee as the table prints it (tracegen.curvetext.knee_short): k, <=k, >=a, or >n for none
    plateau_steps_per_s: float
    plateau_workers: int
    saturating_shard: int
    saturating_resource: str
    saturating_utilisation: float
    shard_pull_bytes: tuple[int, ...]


def placements(model: StepModel, trace: Trace, shards: Sequence[int], how: str) -> list[Placement]:
    """The placement for each number of shards in ``shards`` (ascending): quick, so a bad placement file is
    refused before anything is simulated."""
    created, stored = creation_order(trace), stored_bytes(trace)
    return [place(model, k, how, created, stored) for k in sorted(set(shards))]


def holding(model: StepModel, trace: Trace, shards: Sequence[int]) -> tuple[tuple[int, ...], str | None]:
    """The numbers of PS in ``shards`` that can each hold a variable, and a note naming the others (None when
    there are none): with more PS than variables, some PS serve nothing, so they change no rate and only cost.
    ConfigError when none is left."""
    most = len(variable_order(variable_map(model), creation_order(trace)))
    kept = tuple(k for k in sorted(set(shards)) if k <= most)
    left = [k for k in sorted(set(shards)) if k > most]
    if not kept:
        raise ConfigError(f"'ps_shards' {', '.join(map(str, left))}: the trace's PS holds {most} variables, so at "
                          f"most {most} PS can each serve one; ask for {most} or fewer")
    note = None if not left else (f"{', '.join(map(str, left))} PS shards left out: the trace's PS holds {most} "
                                  f"variables, so some PS would serve nothing (no faster than {most}, and dearer)")
    return kept, note


def shard_table(model: StepModel, placed: Sequence[Placement], config: SimConfig, spec: LinkSpec,
                workers: Sequence[int], *, seeds: int, processes: Simulations | None = None,
                stop_at_plateau: bool = False) -> list[ShardRow]:
    """A row per placement of :func:`placements` (module docstring); ``processes`` and ``stop_at_plateau`` as
    for :func:`~tracegen.curve.scaling_curve`."""
    rows = []
    for placement in placed:
        k = placement.n_shards
        sim = dataclasses.replace(config, link_spec=spec, ps_shard_of_task=placement.shard_of_task if k > 1 else ())
        curve = scaling_curve(model, sim, workers, seeds=seeds, processes=processes, stop_at_plateau=stop_at_plateau)
        at_plateau = simulate(model, dataclasses.replace(sim, n_workers=curve.saturation_workers))
        busiest = busiest_shard(at_plateau)
        resource, value = busiest.busiest
        rows.append(ShardRow(n_shards=k, placement=placement.how, knee_n_workers=curve.knee_n_workers,
                             knee_short=knee_short(
                                 (p.n_workers for p in curve.points), curve.knee_n_workers, curve.plateau_reached),
                             plateau_steps_per_s=curve.plateau_steps_per_s,
                             plateau_workers=curve.saturation_workers, saturating_shard=busiest.shard,
                             saturating_resource=resource, saturating_utilisation=value,
                             shard_pull_bytes=placement.bytes_per_shard(model)))
    return rows


def knee_cell(row: ShardRow) -> str:
    """The row's knee in the printed table and ``shards.csv``'s ``knee_as_printed``: the curve's short form
    (``knee_short``: ``<=k`` where it may lie earlier, ``>=a`` where the plateau is a lower bound, ``>n`` where it
    was not reached by the largest N simulated, else k). It printed ``-`` for the last, not saying by which N."""
    return row.knee_short


def shards_csv(rows: Sequence[ShardRow]) -> str:
    """The table as CSV (fixed decimals: equal tables, equal bytes)."""
    lines = [",".join(COLUMNS)]
    for r in rows:
        lines.append(",".join([
            str(r.n_shards), r.placement, "" if r.knee_n_workers is None else str(r.knee_n_workers),
            knee_cell(r),
            f"{r.plateau_steps_per_s:.4f}", str(r.plateau_workers), str(r.saturating_shard), r.saturating_resource,
            f"{r.saturating_utilisation:.4f}", ";".join(str(b) for b in r.shard_pull_bytes)]))
    return "\n".join(lines) + "\n"
