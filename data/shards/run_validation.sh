#!/usr/bin/env bash
# The PS-shards validation reports: tracegen validate on every configuration of data/shards/campaign.csv, each
# predicted from its one-PS base configuration's inputs only (the single-worker trace, its link profile and its
# single-worker measurement: two hosts, one PS) and the K and placement its runs were measured with; then the
# scores per set (data/shards/reports/{scores.csv,summary.md}). Then each K > 1 configuration again from the trace
# of its own K-PS job (the placement as traced; its N = 1 run's single-worker measurement; the base's link
# profile: the same PS link) into data/shards/reports_own/. Minutes, no root needed.
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
PYTHON=${PYTHON:-python}
declare -A set_of
while IFS=, read -r name set _rest; do set_of[$name]=$set; done < <(tail -n +2 data/shards/campaign.csv)
tail -n +2 data/shards/campaign.csv | while IFS=, read -r name set _m _r _q _b _p _w _k _pl base; do
  folder="data/shards/$set/$name"
  [ -f "$folder/measured.csv" ] || { echo "skip $folder (not measured)"; continue; }
  "$TRACEGEN" validate --measured "$folder" --trace "data/shards/${set_of[$base]}/$base/trace" \
    --out "data/shards/reports/$set/$name" --force > /dev/null
  echo "validated $folder"
done
"$PYTHON" -m validation.summary data/shards/reports data/shards/campaign.csv
tail -n +2 data/shards/campaign.csv | while IFS=, read -r name set _m _r _q _b _p _w k _pl base; do
  folder="data/shards/$set/$name"
  [ "$k" -gt 1 ] && [ -f "$folder/measured.csv" ] || continue
  "$TRACEGEN" validate --measured "$folder" --trace "$folder/trace" \
    --link-profile "data/shards/${set_of[$base]}/$base/trace/link-profile.json" \
    --out "data/shards/reports_own/$set/$name" --force > /dev/null
  echo "validated $folder from its own trace"
done
"$PYTHON" -m validation.summary data/shards/reports_own data/shards/campaign.csv
