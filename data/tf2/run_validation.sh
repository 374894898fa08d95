#!/usr/bin/env bash
# The TF2 validation reports: tracegen validate on every configuration of data/tf2/campaign.csv, each from its
# N = 1 TF2 profile, the link profile, the single-worker measurement and the link rate -- nothing measured with
# N > 1 workers -- then the scores per set (data/tf2/reports/{scores.csv,summary.md}). Minutes, no root needed.
exec bash "$(dirname "$0")/../validation/run_validation.sh" data/tf2
