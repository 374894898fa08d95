#!/usr/bin/env bash
# The PS two-way transfer benchmark for every configuration of run_campaign.sh, run after it on the same
# quiet machine: over the same shaped link and CPU caps, one worker pulling, one pushing, then both at once
# (data/testbed/<model>_<rate>/ps_transfer.csv). validate reads the 'both' rate from there.
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
bench() {  # model rate-label rate
  local out="data/testbed/$1_$2"
  if [ -f "$out/ps_transfer.csv" ]; then echo "skip $out/ps_transfer.csv (exists)"; return; fi
  "$TRACEGEN" testbed --transfer-bench --model "$1" --bandwidth "$3" --out "$out" --window 10 --warmup 5 \
    --cpu-ps 0.3 --cpu-worker 0.3 --batch-size 32
}
bench mlp 200mbit 200Mbit/s
bench cnn 100mbit 100Mbit/s
bench resnet 50mbit 50Mbit/s
bench mlp 500mbit 500Mbit/s
bench cnn 300mbit 300Mbit/s
bench resnet 200mbit 200Mbit/s
