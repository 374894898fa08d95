#!/usr/bin/env bash
# The validation reports: tracegen validate on every configuration of the campaigns (data/validation/campaign.csv:
# dev and test; data/testbed/campaign.csv: the older, dev-only one), each from its trace, its link profile and
# its link rate -- nothing measured with N workers -- then the scores per set. Minutes, no root needed.
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
PYTHON=${PYTHON:-python}
validate() {  # campaign-csv data-root
  tail -n +2 "$1" | while IFS=, read -r name set _rest; do
    folder="$2/$name"
    [ "$2" = data/validation ] && folder="$2/$set/$name"
    [ -f "$folder/measured.csv" ] || { echo "skip $folder (not measured)"; continue; }
    "$TRACEGEN" validate --measured "$folder" --out "data/validation/reports/$set/$name" --force > /dev/null
    echo "validated $folder"
  done
}
validate data/validation/campaign.csv data/validation
validate data/testbed/campaign.csv data/testbed
"$PYTHON" -m validation.summary data/validation/reports data/validation/campaign.csv data/testbed/campaign.csv
