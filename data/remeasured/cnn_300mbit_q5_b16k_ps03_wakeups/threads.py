"""The PS's threads over each measured window of run/ (data/README.md): CPU, wake-ups and preemptions per step
by thread name, from ps_threads.log.gz and progress.log. Run from the repository root: python DIR/threads.py."""
import gzip, re, pandas as pd
D = "data/remeasured/cnn_300mbit_q5_b16k_ps03_wakeups"
rows = []
for line in gzip.open(f"{D}/ps_threads.log.gz", "rt"):
    if line.startswith("#"): continue
    t, pid, tid, comm, ticks, vol, inv = line.split()
    rows.append((float(t), int(pid), int(tid), re.sub(r"\d+$", "#", comm), int(ticks), int(vol), int(inv)))
df = pd.DataFrame(rows, columns="t pid tid comm ticks vol inv".split())
m = pd.read_csv(f"{D}/run/measured.csv")
wins = []
for line in open(f"{D}/progress.log"):
    g = re.match(r"(\S+) N=(\d+): all workers warm; measuring (\S+) s", line)
    if g: wins.append((int(g[2]), float(g[1]) + 0.3, float(g[3])))
for n, start, length in wins:
    rate = float(m[m.n_workers == n].steps_per_s.iloc[0])
    d = df[(df.t >= start) & (df.t <= start + length)]
    ts = sorted(d.t.unique()); a, b = ts[0], ts[-1]
    first = d[d.t == a].set_index("tid"); last = d[d.t == b].set_index("tid")
    common = first.index.intersection(last.index)
    diff = (last.loc[common, ["ticks", "vol", "inv"]] - first.loc[common, ["ticks", "vol", "inv"]])
    diff["comm"] = last.loc[common, "comm"]
    g = diff.groupby("comm").sum()
    steps = rate * (b - a)
    g = g[(g.ticks > 0) | (g.vol > 0)]
    out = pd.DataFrame({"cpu_ms_per_step": g.ticks * 10 / steps, "wake_per_step": g.vol / steps, "preempt_per_step": g.inv / steps, "threads": diff.groupby("comm").size()}).dropna()
    out = out[out.cpu_ms_per_step + out.wake_per_step > 0.5].sort_values("cpu_ms_per_step", ascending=False)
    print(f"N={n} {rate:.2f}/s over {b-a:.1f}s; total {g.ticks.sum()*10/steps:.1f} ms/step {g.vol.sum()/steps:.0f} wakes/step")
    print(out.round(2).to_string())
