#!/usr/bin/env bash
# The validation reports: tracegen validate on every configuration of the campaign (data/validation/campaign.csv:
# dev and test), each from what its two hosts gave -- the trace, the link profile, the single-worker measurement
# and the link rate; nothing measured with N > 1 workers -- then the scores per set. Minutes, no root needed.
# (The older data/testbed/ configurations ran on another machine and have no link profile: not in these tables;
# each is scored from its trace and link rate alone, tracegen validate --measured data/testbed/NAME, README.)
# Another campaign laid out the same way (CAMPAIGN.csv, SET/NAME/, reports/): bash data/validation/run_validation.sh
# data/tf2
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
PYTHON=${PYTHON:-python}
dir=${1:-data/validation}
# SINGLE_WORKER=NAME: each configuration's single-worker input from $dir/NAME/<set>/<name>/trace/ instead of its
# trace's (e.g. single_worker_x3: three one-worker jobs of their own, data/README.md), reports in reports_NAME/
# LINK_PROFILE=NAME: each configuration's link profile from $dir/NAME/<set>/<name>/trace/ instead of its trace's
# (profile_repeat: measured again), reports in reports_link_NAME/; configurations without one are skipped
reports="$dir/reports${SINGLE_WORKER:+_$SINGLE_WORKER}${LINK_PROFILE:+_link_$LINK_PROFILE}"
tail -n +2 "$dir/campaign.csv" | while IFS=, read -r name set _rest; do
  folder="$dir/$set/$name"
  [ -f "$folder/measured.csv" ] || { echo "skip $folder (not measured)"; continue; }
  inputs=()
  if [ -n "${SINGLE_WORKER:-}" ]; then
    file="$dir/$SINGLE_WORKER/$set/$name/trace/single-worker.json"
    [ -f "$file" ] || { echo "skip $folder (no $file)"; continue; }
    inputs=(--single-worker "$file")
  fi
  if [ -n "${LINK_PROFILE:-}" ]; then
    file="$dir/$LINK_PROFILE/$set/$name/trace/link-profile.json"
    [ -f "$file" ] || { echo "skip $folder (no $file)"; continue; }
    inputs+=(--link-profile "$file")
  fi
  "$TRACEGEN" validate --measured "$folder" "${inputs[@]}" --out "$reports/$set/$name" --force > /dev/null
  echo "validated $folder"
done
"$PYTHON" -m validation.summary "$reports" "$dir/campaign.csv"
