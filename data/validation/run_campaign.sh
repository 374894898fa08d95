#!/usr/bin/env bash
# The validation campaign: every configuration of data/validation/campaign.csv (its dev/test split was drawn and
# written before any of them ran; see data/README.md) measured on the emulated cluster by `tracegen testbed`:
# first the link profile (tracegen netbench between the PS and ONE client host), then real async-PS training with
# N = 1..5 workers, one run each, the single-worker trace (12 steps) of the N = 1 run and, from that run, what
# one untraced worker did (trace/single-worker.json: its rate and the PS's CPU per step).
# Writes data/validation/<set>/<name>/. Needs root, iproute2, cgroup v1 cpu and TensorFlow; run from the
# repository root with nothing else busy: bash data/validation/run_campaign.sh [dev|test]
# Another campaign laid out the same way (DIR/campaign.csv, DIR/<set>/<name>/): CAMPAIGN=DIR bash ... (data/fresh)
# More testbed options for every configuration: TESTBED_ARGS="--ps-at-cap" bash ... (data/atcap)
# Other worker counts than 1..5: WORKERS=1-8 bash ... (data/pastknee)
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
dir=${CAMPAIGN:-data/validation}
only=${1:-}
tail -n +2 "$dir/campaign.csv" | sort -t, -k2,2 | while IFS=, read -r name set model rate queue burst ps worker; do
  [ -n "$only" ] && [ "$set" != "$only" ] && continue
  out="$dir/$set/$name"
  if [ -e "$out" ]; then echo "skip $out (exists)"; continue; fi
  echo "== $set $name"
  "$TRACEGEN" testbed --model "$model" --bandwidth "${rate}Mbit/s" --queue-latency "$queue" --burst "$burst" \
    --cpu-ps "$ps" --cpu-worker "$worker" --workers "${WORKERS:-1-5}" --repeats 1 --window 15 --window-steps 60 \
    --max-window 30 --warmup 5 --traced-steps 12 --no-worker-traces ${TESTBED_ARGS:-} --out "$out" < /dev/null
done
