#!/usr/bin/env bash
# Link profiles with the traced step's count of requests (data/README.md, "remeasured/netbench_requests/"): the
# run of netbench_payload/run.sh with list.txt's payloads (each line: name model rate(Mbit/s) queue(ms) burst(B)
# ps(cores) tensors tensor_bytes). Run from the repository root as root: bash data/remeasured/netbench_requests/run.sh
# then python data/remeasured/netbench_payload/compare.py data/remeasured/netbench_requests
set -euo pipefail
exec bash data/remeasured/netbench_payload/run.sh data/remeasured/netbench_requests \
  data/remeasured/netbench_requests/list.txt
