#!/usr/bin/env bash
# The TF2 validation reports: tracegen validate on every configuration of data/tf2/campaign.csv, each from what its
# two hosts gave -- its N = 1 TF2 profile, the link profile, the single-worker measurement and the link rate;
# nothing measured with N > 1 workers -- then the scores per set (data/tf2/reports/{scores.csv,summary.md}).
# Minutes, no root needed.
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
PYTHON=${PYTHON:-python}
tail -n +2 data/tf2/campaign.csv | while IFS=, read -r name set _rest; do
  folder="data/tf2/$set/$name"
  [ -f "$folder/measured.csv" ] || { echo "skip $folder (not measured)"; continue; }
  "$TRACEGEN" validate --measured "$folder" --out "data/tf2/reports/$set/$name" --force > /dev/null
  echo "validated $folder"
done
"$PYTHON" -m validation.summary data/tf2/reports data/tf2/campaign.csv
