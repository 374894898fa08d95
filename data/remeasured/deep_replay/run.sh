#!/usr/bin/env bash
# Two development traces of `deep` behind slow links, N = 1 only, with the validation campaign's command: why does
# one `deep` worker replay slow? Plan and outcome: data/README.md. Run from the repository root as root with
# nothing else busy: bash data/remeasured/deep_replay/run.sh
set -euo pipefail
here=data/remeasured/deep_replay
TRACEGEN=${TRACEGEN:-tracegen}
while read -r name rate queue burst ps; do
  out="$here/$name"
  if [ -e "$out" ]; then echo "skip $out (exists)"; continue; fi
  echo "== $name"
  "$TRACEGEN" testbed --model deep --bandwidth "${rate}Mbit/s" --queue-latency "$queue" --burst "$burst" \
    --cpu-ps "$ps" --cpu-worker 0.25 --workers 1 --repeats 1 --window 15 --window-steps 60 \
    --max-window 30 --warmup 5 --traced-steps 12 --no-worker-traces --out "$out" < /dev/null
done <<'LIST'
deep_300mbit_q20_b16k_ps05 300 20 16384 0.5
deep_150mbit_q5_b128k_ps03 150 5 131072 0.3
LIST
