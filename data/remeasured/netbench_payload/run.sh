#!/usr/bin/env bash
# Link profiles with the model's own payload (data/README.md, "remeasured/netbench_payload/"): for each
# configuration, its link and caps as its campaign ran them, netbench's tensors set to its parameters' count and
# mean size. Run from the repository root as root: bash data/remeasured/netbench_payload/run.sh
# Another run of the same kind: bash data/remeasured/netbench_payload/run.sh OUT_DIR LIST (LIST: lines as below)
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
here=${1:-data/remeasured/netbench_payload}
# name model rate(Mbit/s) queue(ms) burst(B) ps(cores) tensors tensor_bytes
run_list() {
while read -r name model rate queue burst ps tensors bytes; do
  out="$here/$name"
  if [ -e "$out" ]; then echo "skip $out (exists)"; continue; fi
  echo "== $name"
  "$TRACEGEN" testbed --only-link-profile --model "$model" --bandwidth "${rate}Mbit/s" --queue-latency "$queue" \
    --burst "$burst" --cpu-ps "$ps" --cpu-worker 0.25 --netbench-tensors "$tensors" --netbench-tensor-bytes "$bytes" \
    --out "$out" < /dev/null
done
}
if [ $# -ge 2 ]; then
  run_list < "$2"
  exit 0
fi
run_list <<'LIST'
deep_300mbit_q5_b16k_ps05 deep 300 5 16384 0.5 130 8212
wide_2000mbit_q5_b16k_ps03 wide 2000 5 16384 0.3 4 4239370
deep_500mbit_q100_b16k_ps03 deep 500 100 16384 0.3 130 8212
resnet_200mbit_q20_b16k_ps03 resnet 200 20 16384 0.3 43 16285
cnn_2000mbit_q100_b16k_ps05 cnn 2000 100 16384 0.5 8 138805
LIST
