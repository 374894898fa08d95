#!/usr/bin/env bash
# The TF2 validation campaign (issue 9): every configuration of data/tf2/campaign.csv (split into dev and test
# before any ran; data/README.md) measured by `tracegen testbed --api tf2`: the link profile (tracegen netbench
# between the PS and ONE client host), then real ParameterServerStrategy training (a coordinator node, one PS,
# N = 1..5 workers) three times each, the N = 1 run profiled by TensorFlow's profiler from the step function's
# first call (trace/, a TensorBoard logdir) and what one unprofiled worker did (trace/single-worker.json).
# Writes data/tf2/<set>/<name>/. Needs root, iproute2, cgroup v1 cpu and TensorFlow; about 45 minutes; run from
# the repository root with nothing else busy: bash data/tf2/run_campaign.sh [dev|test]
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
only=${1:-}
tail -n +2 data/tf2/campaign.csv | sort -t, -k2,2 | while IFS=, read -r name set model rate queue burst ps worker coordinator; do
  [ -n "$only" ] && [ "$set" != "$only" ] && continue
  out="data/tf2/$set/$name"
  if [ -e "$out" ]; then echo "skip $out (exists)"; continue; fi
  echo "== $set $name"
  "$TRACEGEN" testbed --api tf2 --model "$model" --bandwidth "${rate}Mbit/s" --queue-latency "$queue" \
    --burst "$burst" --cpu-ps "$ps" --cpu-worker "$worker" --cpu-coordinator "$coordinator" --workers 1-5 --repeats 3 --window 12 \
    --window-steps 40 --max-window 20 --warmup 5 --traced-steps 12 --out "$out" < /dev/null
done
