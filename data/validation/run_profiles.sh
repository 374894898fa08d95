#!/usr/bin/env bash
# Link profiles for every configuration of both campaigns, measured with the final `tracegen netbench` (two steps
# in flight per loading client, and the rpc_* points) after the training runs: the same link shape and PS cap,
# the PS and ONE client host, never the N-worker cluster. Writes <folder>/trace/link-profile.json.
# Needs root, iproute2, cgroup v1 cpu and TensorFlow; nothing else should run: bash data/validation/run_profiles.sh
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
profile() {  # campaign-csv data-root
  tail -n +2 "$1" | while IFS=, read -r name set model rate queue burst ps worker; do
    folder="$2/$name"
    [ "$2" = data/validation ] && folder="$2/$set/$name"
    if [ -e "$folder/trace/link-profile.json" ]; then echo "skip $folder (has a profile)"; continue; fi
    echo "== $folder"
    "$TRACEGEN" testbed --only-link-profile --model "$model" --bandwidth "${rate}Mbit/s" --queue-latency "$queue" \
      --burst "$burst" --cpu-ps "$ps" --cpu-worker "$worker" --out "$folder" < /dev/null
  done
}
profile data/validation/campaign.csv data/validation
profile data/testbed/campaign.csv data/testbed
