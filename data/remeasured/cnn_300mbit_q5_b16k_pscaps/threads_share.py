"""Where the PS's CPU went in each job of run.sh: the share of each thread group (names without their trailing
numbers) over the 20 s before the PS's last sample but 2 (the window and the workers' last steps; the samples do
not mark the window itself), from ps_threads.log.gz. ``python3 threads_share.py`` from this folder."""

import collections
import gzip
import re

samples = collections.defaultdict(list)  # pid -> [(t, tid, group, ticks)]
with gzip.open("ps_threads.log.gz", "rt") as log:
    for line in log:
        if line.startswith("#"):
            continue
        t, pid, tid, comm, ticks, _vol, _inv = line.split()
        samples[pid].append((float(t), tid, re.sub(r"\d+$", "", comm), int(ticks)))
print("pid    life_s  event_engine  tf_Compute  other")
for pid, rows in samples.items():
    end = rows[-1][0] - 2
    start = end - 20
    first, last = {}, {}
    for t, tid, group, ticks in rows:
        if start <= t <= end:
            first.setdefault((tid, group), ticks)
            last[(tid, group)] = ticks
    used = collections.Counter()
    for key, ticks in last.items():
        used[key[1] if key[1] in ("event_engine", "tf_Compute") else "other"] += ticks - first[key]
    total = sum(used.values()) or 1
    print(f"{pid:>6} {rows[-1][0] - rows[0][0]:7.0f}  {used['event_engine'] / total:11.0%}  "
          f"{used['tf_Compute'] / total:10.0%}  {used['other'] / total:5.0%}")
