#!/usr/bin/env bash
# The campaign scored again with the single-worker input measured three more times, in separate one-worker jobs
# (data/validation/single_worker_x3/<set>/<name>/trace/single-worker.json, their median; data/README.md): every
# other input as in run_validation.sh (the campaign's trace and link profile). Writes
# data/validation/reports_single_worker_x3/ beside the campaign's reports/. Minutes, no root needed.
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
PYTHON=${PYTHON:-python}
dir=data/validation
tail -n +2 "$dir/campaign.csv" | while IFS=, read -r name set _rest; do
  single="$dir/single_worker_x3/$set/$name/trace/single-worker.json"
  [ -f "$single" ] || { echo "skip $name (no single_worker_x3 measurement)"; continue; }
  "$TRACEGEN" validate --measured "$dir/$set/$name" --single-worker "$single" \
    --out "$dir/reports_single_worker_x3/$set/$name" --force > /dev/null
  echo "validated $name"
done
"$PYTHON" -m validation.summary "$dir/reports_single_worker_x3" "$dir/campaign.csv"
