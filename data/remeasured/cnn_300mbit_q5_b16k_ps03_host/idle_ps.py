"""How much CPU does an idle TensorFlow PS use? (a check behind data/README.md, not part of tracegen)

Starts a TF1 parameter server and a worker on localhost, runs 50 training steps, then reads the PS process's CPU
time (utime + stime from /proc) over 10 s while the worker stays connected and idle, and again over 10 s of
steps. Run: ``python data/remeasured/cnn_300mbit_q5_b16k_ps03_host/idle_ps.py`` (needs TensorFlow).
"""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_s(pid: int) -> float:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


NODE = """
import os, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
role, ps, worker = sys.argv[1], sys.argv[2], sys.argv[3]
cluster = tf.train.ClusterSpec({"ps": [ps], "worker": [worker]})
server = tf.distribute.Server(cluster, job_name=role, task_index=0)
if role == "ps":
    server.join()
with tf.device("/job:ps/task:0"):
    v = tf.compat.v1.get_variable("v", shape=[256, 1024])
loss = tf.reduce_sum(v * v)
train = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(loss)
sess = tf.compat.v1.Session(server.target)
sess.run(tf.compat.v1.global_variables_initializer())
for line in sys.stdin:
    n = int(line)
    for _ in range(n):
        sess.run(train)
    print("done", flush=True)
"""


def main() -> None:
    ps, worker = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    procs = [subprocess.Popen([sys.executable, "-c", NODE, "ps", ps, worker]),
             subprocess.Popen([sys.executable, "-c", NODE, "worker", ps, worker], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)]
    ps_proc, w = procs
    try:
        if w.stdin is None or w.stdout is None:
            raise RuntimeError("the worker has no pipes")
        w.stdin.write("50\n")
        w.stdin.flush()
        w.stdout.readline()
        a = cpu_s(ps_proc.pid)
        time.sleep(10)
        idle = (cpu_s(ps_proc.pid) - a) / 10
        a, t0 = cpu_s(ps_proc.pid), time.monotonic()
        w.stdin.write("200\n")
        w.stdin.flush()
        w.stdout.readline()
        busy_s = time.monotonic() - t0
        busy = (cpu_s(ps_proc.pid) - a) / busy_s
        print(f"idle PS (worker connected, no steps), 10 s: {idle:.4f} cores")
        print(f"PS during 200 steps ({200 / busy_s:.0f} steps/s), {busy_s:.1f} s: {busy:.3f} cores")
    finally:
        for p in procs:
            p.kill()
            p.wait()


if __name__ == "__main__":
    main()
