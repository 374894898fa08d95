#!/usr/bin/env bash
# The test set's link profiles measured again (data/README.md, "validation/profile_repeat/"): for each test
# configuration of data/validation/campaign.csv, netbench between the PS and ONE client host with the campaign's
# link and caps, nothing else. Needs root, iproute2, cgroup v1 cpu and TensorFlow; run from the repository root
# with nothing else busy: bash data/validation/profile_repeat/run.sh [test|dev] (default test)
# then: LINK_PROFILE=profile_repeat bash data/validation/run_validation.sh
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
here=data/validation/profile_repeat
wanted=${1:-test}
tail -n +2 data/validation/campaign.csv | sort | while IFS=, read -r name set model rate queue burst ps worker; do
  [ "$set" = "$wanted" ] || continue
  out="$here/$set/$name"
  if [ -e "$out" ]; then echo "skip $out (exists)"; continue; fi
  echo "== $set $name"
  "$TRACEGEN" testbed --only-link-profile --model "$model" --bandwidth "${rate}Mbit/s" --queue-latency "$queue" \
    --burst "$burst" --cpu-ps "$ps" --cpu-worker "$worker" --out "$out" < /dev/null
done
