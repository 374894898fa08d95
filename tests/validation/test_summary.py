"""Scores over validation campaigns (validation/summary.py): worked out by hand on small reports, and the stored
scores (what the README and docs/ show, test_accuracy.py) worked out again from the stored per-N tables."""

from __future__ import annotations

import os
import pathlib

import pandas as pd
import pytest

from validation.errors import ConfigError
from validation.summary import main, read_campaign, scores, summary_markdown, write_summary

from parsers_support import check_message

ROOT = pathlib.Path(__file__).resolve().parents[2]
STORED = sorted((ROOT / "data").glob("*/reports*/scores.csv"))


def _report(reports: pathlib.Path, group: str, name: str, rows: str) -> None:
    folder = reports / group / name
    folder.mkdir(parents=True)
    (folder / "comparison.csv").write_text(rows)


def test_scores_by_hand(tmp_path: pathlib.Path) -> None:
    campaign = tmp_path / "campaign.csv"
    campaign.write_text("name,set,model\na,test,mlp\nb,dev,cnn\nnever_ran,test,mlp\n")
    _report(tmp_path, "test", "a",
            "n_workers,measured_mean,simulator,simulator_error,simulator_bw,simulator_bw_error,"
            "simulator_bw_band_low,simulator_bw_band_high\n"
            "1,10,11,0.1,10,0,9,12\n"  # width 0.3; 10 inside
            "2,20,18,0.1,19,0.05,18,20\n"  # width 0.1; 20 on the high end: inside
            "3,20,20,0,25,0.25,21,30\n")  # width 0.45; 20 below the low end
    _report(tmp_path, "dev", "b", "n_workers,measured_mean,simulator,simulator_error\n1,5,4,0.2\n2,10,9,0.1\n")
    table = scores(read_campaign(campaign), tmp_path)
    assert list(zip(table["configuration"], table["predictor"], strict=True)) == [
        ("a", "simulator"), ("a", "simulator_bw"), ("b", "simulator")]  # never_ran has no report: left out
    a_sim, a_bw, b_sim = table.to_dict("records")
    assert (a_sim["mape"], a_sim["max_error"]) == pytest.approx((0.2 / 3, 0.1))
    # measured 10, 20, 20: 95 % of 20 first at N = 2; simulator 11, 18, 20: at N = 3; simulator_bw 10, 19, 25: N = 3
    assert (a_sim["measured_knee"], a_sim["knee"], a_bw["knee"]) == (2, 3, 3)
    assert pd.isna(a_sim["in_band"]) and pd.isna(a_sim["band_width"])
    assert (a_bw["mape"], a_bw["max_error"]) == pytest.approx((0.1, 0.25))
    assert (a_bw["in_band"], a_bw["n_points"]) == (2, 3)
    assert a_bw["band_width"] == pytest.approx(0.3)  # the median of 0.3, 0.1, 0.45 (their mean is 0.283)
    assert (b_sim["set"], b_sim["mape"], b_sim["max_error"], b_sim["knee"]) == ("dev", pytest.approx(0.15), 0.2, 2)


def test_the_summary_by_hand() -> None:
    rows = [  # set, configuration, predictor, mape, max_error, knee, measured_knee, in_band, n_points, band_width
        ("test", "x", "simulator", 0.10, 0.20, 3, 3, None, 4, None),
        ("test", "y", "simulator", 0.30, 0.35, 2, 4, None, 5, None),
        ("test", "x", "simulator_bw", 0.05, 0.10, 3, 3, 4, 4, 0.20),
        ("test", "y", "simulator_bw", 0.15, 0.40, 4, 4, 3, 5, 0.60),
        ("test", "w", "simulator_bw", 0.04, 0.10, 2, 2, 2, 2, 0.30),
        ("dev", "z", "simulator_bw", 0.01, 0.02, 1, 2, 1, 3, 0.10),
    ]
    table = pd.DataFrame(rows, columns=["set", "configuration", "predictor", "mape", "max_error", "knee",
                                        "measured_knee", "in_band", "n_points", "band_width"])
    text = summary_markdown(table)
    test, dev = text.split("### dev set")
    assert text.startswith("### test set") and "### test set" not in dev  # the test set first, each once
    assert "| x | 3 | 10.0% / 20.0% / 3 | 5.0% / 10.0% / 3 |" in test
    assert "| y | 4 | 30.0% / 35.0% / 2 | 15.0% / 40.0% / 4 |" in test
    assert "| w | 2 | - | 4.0% / 10.0% / 2 |" in test  # no simulator row: a dash
    # mean MAPE (simulator_bw: 0.05, 0.15, 0.04: 0.08, their median 0.05), worst max error, the share of knees
    # equal to the measured one
    assert "| **all** | | 20.0% / 35.0% / 50% exact | 8.0% / 40.0% / 100% exact |" in test
    # widths 0.2, 0.6, 0.3: the median 0.3 (their mean is 0.367)
    assert ("Band (bandwidth only): 9 of 11 measured means inside [band_low, band_high]; median band width 30% of "
            "the measured value.") in test
    assert "| z | 2 | 1.0% / 2.0% / 1 |" in dev and "| **all** | | 1.0% / 2.0% / 0% exact |" in dev
    assert "simulator:" not in dev  # a predictor the set has no row of gets no column
    assert "1 of 3 measured means" in dev and "median band width 10%" in dev


def test_a_campaign_row_without_a_set_is_refused_by_its_line(tmp_path: pathlib.Path) -> None:
    campaign = tmp_path / "campaign.csv"
    campaign.write_text("name,set\na,test\nb,holdout\n")
    with pytest.raises(ConfigError, match=rf"^{campaign}:3: each row needs a name and a set of dev or test"):
        read_campaign(campaign)


def test_scores_csv_round_trips_into_the_summary(tmp_path: pathlib.Path) -> None:
    campaign = tmp_path / "campaign.csv"
    campaign.write_text("name,set\na,test\n")
    _report(tmp_path, "test", "a", "n_workers,measured_mean,simulator,simulator_error\n1,3,2,0.33333333\n2,6,6,0\n")
    stored = write_summary(tmp_path, [campaign])
    assert (tmp_path / "scores.csv").read_text().splitlines()[1] == "test,a,simulator,0.1667,0.3333,2,2,,2,"
    assert (tmp_path / "summary.md").read_text() == summary_markdown(stored)
    assert "| a | 2 | 16.7% / 33.3% / 2 |" in summary_markdown(stored)


@pytest.mark.parametrize("path", STORED, ids=lambda p: str(p.parent.relative_to(ROOT / "data")))
def test_stored_scores_are_the_stored_tables_errors(path: pathlib.Path) -> None:
    """Each stored score, worked out again from its configuration's comparison.csv without the summary's code:
    the error of every N from the predicted and measured steps/s (not the table's own error column), their mean
    and largest, and the measured means inside the band; to the 4 decimals the files keep."""
    stored = pd.read_csv(path)
    assert len(stored) > 0
    for row in stored.to_dict("records"):
        table = pd.read_csv(path.parent / row["set"] / row["configuration"] / "comparison.csv")
        predicted, mean = table[row["predictor"]], table["measured_mean"]
        errors = (predicted - mean).abs() / mean
        where = (path.name, row["configuration"], row["predictor"])
        # the files' 4 decimals: half a unit in each rate, divided by the mean (0.34 steps/s at 100 Mbit/s for a
        # 17 MB step: 3.7e-4 of error), and half in the score itself
        slack = float((0.5e-4 * (1 + predicted / mean) / mean).max()) + 1e-4
        assert row["mape"] == pytest.approx(errors.mean(), abs=slack), where
        assert row["max_error"] == pytest.approx(errors.max(), abs=slack), where
        assert row["n_points"] == len(table), where
        low = table.get(f"{row['predictor']}_band_low")
        if low is None:
            assert pd.isna(row["in_band"]), where
        else:
            high = table[f"{row['predictor']}_band_high"]
            assert row["in_band"] == ((low <= mean) & (mean <= high)).sum(), where


@pytest.mark.parametrize(("data", "why"), [
    (b"", "empty file"),
    (b"name,set\n", ":1: the header and no configurations after it"),
    (b"name\na\n", ":1: missing column 'set'"),
    (b"name,set,set\na,dev,test\n", ":1: column 'set' appears twice in the header"),
    (b"name,set\na,dev,extra\n", ":2: 3 cells, the header has 2"),
    (b'name,set\n"a,dev\n', ":2: not a readable CSV"),
    (b"name,set\na\xe9,dev\n", ":2: column 'name': not UTF-8 text"),
    (b"name,set\n../../elsewhere,dev\n", ":2: name '../../elsewhere' must be 1 to 200 characters"),
    (b"name,set\na\x00,dev\n", ":2: name 'a\\x00' must be"),
    (b"name,set\na,dev\nb,test\na,dev\n", ":4: configuration 'a' of set 'dev' is already on line 2"),
])
def test_a_bad_campaign_is_one_line_naming_the_file_and_line(tmp_path: pathlib.Path, data: bytes, why: str) -> None:
    """Each was a traceback (UnicodeDecodeError, csv.Error), an empty summary taken for a real one, a report read
    from outside REPORTS_DIR, or a configuration scored twice and weighed twice in its set's means."""
    campaign = tmp_path / "campaign.csv"
    campaign.write_bytes(data)
    with pytest.raises(ConfigError) as info:
        read_campaign(campaign)
    check_message(str(info.value), campaign, why)


def test_a_campaign_with_a_byte_order_mark_reads_as_without(tmp_path: pathlib.Path) -> None:
    """A spreadsheet's UTF-8 export: the mark was read into the first column's name, and every row refused."""
    campaign = tmp_path / "campaign.csv"
    campaign.write_bytes(b"\xef\xbb\xbfname,set\r\na,test\r\n")
    assert read_campaign(campaign) == [("test", "a")]


def test_a_fifo_or_a_huge_campaign_is_refused_without_reading_it(tmp_path: pathlib.Path) -> None:
    """A FIFO with no writer blocked open() forever; a 2 GB file was read whole into memory."""
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError) as info:  # each named, with its rule (the words alone passed a nameless one)
        read_campaign(fifo)
    check_message(str(info.value), fifo, "a FIFO (named pipe), not a regular file: refused")
    huge = tmp_path / "huge.csv"
    with huge.open("wb") as fh:
        fh.truncate(2 << 30)  # sparse: no disk taken
    with pytest.raises(ConfigError) as info:
        read_campaign(huge)
    check_message(str(info.value), huge, "file is more than the limit of 1048576 bytes")


def test_a_configuration_in_two_campaigns_is_refused(tmp_path: pathlib.Path) -> None:
    first, second = tmp_path / "one.csv", tmp_path / "two.csv"
    first.write_text("name,set\na,test\n")
    second.write_text("name,set\nb,dev\na,test\n")
    with pytest.raises(ConfigError, match=rf"^{second}: configuration 'a' of set 'test' is also in {first}"):
        write_summary(tmp_path, [first, second])


def test_main_says_a_bad_campaign_in_one_line_with_exit_code_2(tmp_path: pathlib.Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """It raised ConfigError out of main: a traceback."""
    campaign = tmp_path / "campaign.csv"
    campaign.write_text("name,set\na,holdout\n")
    assert main([str(tmp_path), str(campaign)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("validation.summary: error: ") and err.count("\n") == 1
    check_message(err.strip(), campaign, ":2: each row needs a name and a set of dev or test")


def test_main_names_the_configurations_without_a_report(tmp_path: pathlib.Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Left out of the scores, as documented; said, so that a misspelt name is not a configuration gone quietly."""
    campaign = tmp_path / "campaign.csv"
    campaign.write_text("name,set\na,test\nmisspelt,dev\n")
    _report(tmp_path, "test", "a", "n_workers,measured_mean,simulator,simulator_error\n1,3,2,0.33333333\n")
    assert main([str(tmp_path), str(campaign)]) == 0
    err = capsys.readouterr().err
    assert "note: 1 configuration has no " in err and "comparison.csv and is left out: dev/misspelt\n" in err
    assert "test/a" not in err
    campaign.write_text("name,set\na,test\nmisspelt,dev\nother,test\n")
    assert main([str(tmp_path), str(campaign)]) == 0
    err = capsys.readouterr().err
    assert "note: 2 configurations have no " in err and "and are left out: dev/misspelt, test/other\n" in err
