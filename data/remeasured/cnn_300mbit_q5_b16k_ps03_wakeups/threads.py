"""The PS's threads over each measured window of a testbed run sampled by ``ps_threads.py`` (data/README.md): CPU,
wake-ups and preemptions per step, by thread name. From the repository root:
``python data/remeasured/cnn_300mbit_q5_b16k_ps03_wakeups/threads.py FOLDER`` (FOLDER holds ``ps_threads.log.gz``,
``progress.log`` and ``run/measured.csv``; default: this script's folder)."""

import gzip
import pathlib
import re
import sys

import pandas as pd

TICK_MS = 10  # /proc's clock ticks are 1/100 s here (ps_threads.log's first line says so)


def samples(folder: pathlib.Path) -> pd.DataFrame:
    """One row per thread per sample; thread names with their trailing numbers dropped."""
    rows = []
    with gzip.open(folder / "ps_threads.log.gz", "rt") as log:
        for line in log:
            if line.startswith("#"):
                continue
            t, pid, tid, comm, ticks, vol, inv = line.split()
            rows.append((float(t), int(pid), int(tid), re.sub(r"\d+$", "#", comm), int(ticks), int(vol), int(inv)))
    return pd.DataFrame(rows, columns=["t", "pid", "tid", "comm", "ticks", "vol", "inv"])


def windows(folder: pathlib.Path) -> list[tuple[int, float, float]]:
    """(N, start, length) of each window, from the progress lines' times (the window opens 0.3 s after)."""
    found = []
    with (folder / "progress.log").open() as log:
        for line in log:
            hit = re.match(r"(\S+) N=(\d+): all workers warm; measuring (\S+) s", line)
            if hit:
                found.append((int(hit[2]), float(hit[1]) + 0.3, float(hit[3])))
    return found


def main(folder: pathlib.Path) -> None:
    df = samples(folder)
    measured = pd.read_csv(folder / "run" / "measured.csv")
    for n, start, length in windows(folder):
        rate = float(measured[measured.n_workers == n].steps_per_s.iloc[0])
        inside = df[(df.t >= start) & (df.t <= start + length)]
        first_t, last_t = inside.t.min(), inside.t.max()
        first = inside[inside.t == first_t].set_index("tid")
        last = inside[inside.t == last_t].set_index("tid")
        both = first.index.intersection(last.index)
        diff = last.loc[both, ["ticks", "vol", "inv"]] - first.loc[both, ["ticks", "vol", "inv"]]
        diff["comm"] = last.loc[both, "comm"]
        steps = rate * (last_t - first_t)
        by_name = diff.groupby("comm")
        table = pd.DataFrame({"cpu_ms_per_step": by_name.ticks.sum() * TICK_MS / steps,
                              "wake_per_step": by_name.vol.sum() / steps,
                              "preempt_per_step": by_name.inv.sum() / steps, "threads": by_name.size()})
        table = table[table.cpu_ms_per_step + table.wake_per_step > 0.5].sort_values("cpu_ms_per_step",
                                                                                        ascending=False)
        print(f"N={n} {rate:.2f}/s over {last_t - first_t:.1f}s; total {diff.ticks.sum() * TICK_MS / steps:.1f} "
              f"ms/step {diff.vol.sum() / steps:.0f} wakes/step")
        print(table.round(2).to_string())


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).parent)
