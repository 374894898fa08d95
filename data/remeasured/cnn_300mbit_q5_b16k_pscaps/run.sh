#!/usr/bin/env bash
# Is the PS's CPU per step elastic? One untraced worker of the dev configuration cnn_300mbit_q5_b16k_ps03 against
# PS caps of 1.0, 0.3, 0.1, 0.05 and 0.03 cores (two jobs each), then the cluster at a PS cap of 0.1 cores, N = 1..4
# (one run each), with ../cnn_300mbit_q5_b16k_ps03_wakeups/ps_threads.py sampling the PS's threads throughout.
# Plan and outcome: data/README.md. Run from the repository root as root with nothing else busy.
set -euo pipefail
here=data/remeasured/cnn_300mbit_q5_b16k_pscaps
TRACEGEN=${TRACEGEN:-tracegen}
common=(--model cnn --bandwidth 300Mbit/s --queue-latency 5 --burst 16384 --cpu-worker 0.25 --warmup 5)
python3 data/remeasured/cnn_300mbit_q5_b16k_ps03_wakeups/ps_threads.py >> "$here/ps_threads.log" &
sampler=$!
trap 'kill $sampler 2>/dev/null || true' EXIT
for cap in 1.0 0.3 0.1 0.05 0.03; do
  if [ -e "$here/sw_ps$cap" ]; then echo "skip $here/sw_ps$cap (exists)"; continue; fi
  echo "== single worker, PS cap $cap"
  "$TRACEGEN" testbed "${common[@]}" --cpu-ps "$cap" --only-single-worker --repeats 2 --window 15 \
    --out "$here/sw_ps$cap" < /dev/null
done
echo "== cluster, PS cap 0.1"
"$TRACEGEN" testbed "${common[@]}" --cpu-ps 0.1 --workers 1-4 --repeats 1 --window 15 --window-steps 60 \
  --max-window 30 --traced-steps 12 --no-worker-traces --out "$here/cluster_ps0.1" < /dev/null
