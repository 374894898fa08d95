#!/usr/bin/env bash
# What each configuration's two hosts can measure, after the training runs, under the same link shape and caps:
# the link profile (`tracegen netbench`, two steps in flight per loading client, the rpc_* points; the PS and ONE
# client host, never the N-worker cluster) and one untraced worker's rate with the PS's CPU per step (PS and one
# worker). Writes <folder>/trace/link-profile.json and <folder>/trace/single-worker.json where missing.
# Needs root, iproute2, cgroup v1 cpu and TensorFlow; nothing else should run: bash data/validation/run_profiles.sh
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
measure() {  # campaign-csv data-root
  tail -n +2 "$1" | while IFS=, read -r name set model rate queue burst ps worker; do
    folder="$2/$name"
    [ "$2" = data/validation ] && folder="$2/$set/$name"
    for what in link-profile single-worker; do
      if [ -e "$folder/trace/$what.json" ]; then echo "skip $folder ($what.json exists)"; continue; fi
      echo "== $folder $what"
      "$TRACEGEN" testbed "--only-$what" --model "$model" --bandwidth "${rate}Mbit/s" --queue-latency "$queue" \
        --burst "$burst" --cpu-ps "$ps" --cpu-worker "$worker" --warmup 5 --window 40 --out "$folder" < /dev/null
    done
  done
}
measure data/validation/campaign.csv data/validation
measure data/testbed/campaign.csv data/testbed
