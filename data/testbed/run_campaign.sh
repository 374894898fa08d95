#!/usr/bin/env bash
# The measurement campaign behind data/testbed/: real async-PS TensorFlow training on the emulated cluster,
# 3 zoo models x 2 PS link rates x N = 1..5 workers x 3 repeats. Needs root, iproute2, cgroup v1 cpu, TF.
# Each configuration writes data/testbed/<model>_<rate>/ (measured.csv, trace/, workers/).
# Run from the repository root with nothing else busy on the machine: bash data/testbed/run_campaign.sh
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
common=(--workers 1-5 --repeats 3 --window 20 --window-steps 60 --max-window 60 --warmup 5
        --cpu-ps 0.3 --cpu-worker 0.3 --batch-size 32)
run() {  # model rate-label rate
  local out="data/testbed/$1_$2"
  if [ -f "$out/measured.csv" ]; then echo "skip $out (exists)"; return; fi
  "$TRACEGEN" testbed --model "$1" --bandwidth "$3" --out "$out" "${common[@]}"
}
run mlp 200mbit 200Mbit/s
run cnn 100mbit 100Mbit/s
run resnet 50mbit 50Mbit/s
run mlp 500mbit 500Mbit/s
run cnn 300mbit 300Mbit/s
run resnet 200mbit 200Mbit/s
