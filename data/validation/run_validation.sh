#!/usr/bin/env bash
# The validation reports in data/validation/: tracegen validate on every testbed configuration (its trace,
# its recorded link rate and its measured PS two-way rate), then one summary table. Seconds, no root needed.
set -euo pipefail
TRACEGEN=${TRACEGEN:-tracegen}
PYTHON=${PYTHON:-python}
dirs=()
for folder in data/testbed/*/; do
  name=$(basename "$folder")
  [ -f "$folder/measured.csv" ] || continue
  "$TRACEGEN" validate --measured "$folder" --out "data/validation/$name" --force
  dirs+=("data/validation/$name")
done
"$PYTHON" -m validation.summary "${dirs[@]}" > data/validation/summary.md
cat data/validation/summary.md
