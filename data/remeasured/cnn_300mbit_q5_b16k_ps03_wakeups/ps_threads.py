"""Sample every thread of the testbed's PS process once a second, beside a `tracegen testbed` run:
``python ps_threads.py > ps_threads.log`` (stop it with Ctrl-C). One line per thread per sample:
``<unix time> <pid> <tid> <comm> <cpu ticks (utime + stime)> <voluntary switches> <involuntary switches>``.
A PS process is a ``validation.node`` whose JSON job says ``"role": "ps"``."""

import os
import pathlib
import sys
import time

PROC = pathlib.Path("/proc")


def ps_pids() -> list[int]:
    found = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"validation.node" in cmd and b'"role": "ps"' in cmd:
                found.append(int(entry.name))
    return found


def sample() -> None:
    now = time.time()
    for pid in ps_pids():
        try:
            tasks = list((PROC / str(pid) / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                stat = (task / "stat").read_text()
                status = (task / "status").read_text()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")].replace(" ", "_")
            fields = stat.rsplit(")", 1)[1].split()
            ticks = int(fields[11]) + int(fields[12])
            switches = {k: v.strip() for k, _, v in (line.partition(":") for line in status.splitlines())}
            print(f"{now:.3f} {pid} {task.name} {comm} {ticks} {switches.get('voluntary_ctxt_switches')} "
                  f"{switches.get('nonvoluntary_ctxt_switches')}")
    sys.stdout.flush()


if __name__ == "__main__":
    print(f"# clock ticks per second: {os.sysconf('SC_CLK_TCK')}")
    try:
        while True:
            sample()
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
