#!/usr/bin/env bash
# The PS-shards campaign (issue 11): every configuration of data/shards/campaign.csv (its dev/test split was
# written before any of them ran; see data/README.md) measured on the emulated cluster by `tracegen testbed`
# with K PS tasks (--ps K, each with its own link of the given shape and its own CPU cap) and the given
# placement, N = 1..4 workers, one run each. The k = 1 configurations ("base") also measure the link profile
# (netbench, PS and ONE client host) and the single-worker trace: the only inputs of every prediction. The
# K > 1 runs trace their own N = 1 step too (a K-PS trace), which no prediction uses.
# Writes data/shards/<set>/<name>/. Needs root, iproute2, cgroup v1 cpu and TensorFlow; run from the
# repository root with nothing else busy: bash data/shards/run_campaign.sh
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
tail -n +2 data/shards/campaign.csv | while IFS=, read -r name set model rate queue burst ps worker k placement base; do
  out="data/shards/$set/$name"
  if [ -e "$out" ]; then echo "skip $out (exists)"; continue; fi
  echo "== $set $name"
  extra=()
  [ "$k" != 1 ] && extra=(--ps "$k" --ps-placement "$placement" --no-link-profile)
  "$TRACEGEN" testbed --model "$model" --bandwidth "${rate}Mbit/s" --queue-latency "$queue" --burst "$burst" \
    --cpu-ps "$ps" --cpu-worker "$worker" --workers 1-4 --repeats 1 --window 15 --window-steps 60 \
    --max-window 30 --warmup 5 --traced-steps 12 --no-worker-traces "${extra[@]}" --out "$out" < /dev/null
done
