"""``tracegen predict``: files, determinism, the seeds' spread, the batch size, worker classes, emitted traces, and
the refusal of bad options and bad input. The plateau and knee (``test_predict_plateau.py``), the cost
estimate (``test_predict_cost.py``) and the measured link and single worker (``test_predict_measurements.py``)
have files of their own."""

from __future__ import annotations

import pathlib
import re
import shutil
import statistics

import pytest

from parsers import TraceError, read_trace
from parsers.chrome import load_events
from parsers.linkprofile import PROFILE_NAME
from parsers.perfetto import check_perfetto
from parsers.singleworker import SINGLE_WORKER_NAME
from tracegen.cli import main
from tracegen.cli_predict import run_predict
from tracegen.errors import ConfigError
from tracegen.inputs import batch_size_of
from tracegen.model import TaskKind, build_model
from tracegen.plots import CSV_COLUMNS

from tracegen_support import parse, rows


def test_predict_writes_curve_plot_and_traces(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(mlp_trace_dir), "--workers", "1-3,6", "--steps", "4", "--seeds", "2", "--emit-traces", "1,3"]
    assert run_predict(parse([*argv, "--out", str(tmp_path / "a")])) == 0
    out = capsys.readouterr().out
    assert "knee (95% of the plateau)" in out and "estimated from the trace" in out
    table = rows(tmp_path / "a" / "curve.csv")
    assert tuple(table[0]) == CSV_COLUMNS
    assert [int(r["n_workers"]) for r in table] == [1, 2, 3, 6]
    for r in table:  # two seeds: low and high are the two runs, and the point their mean
        low, mean, high = (float(r[k]) for k in ("steps_per_s_low", "steps_per_s", "steps_per_s_high"))
        assert mean == pytest.approx((low + high) / 2, abs=1e-4)
        assert r["band_low"] == r["band_high"] == ""  # no bandwidth given: the trace's own link, no band
    assert any(float(r["steps_per_s_low"]) < float(r["steps_per_s_high"]) for r in table)  # the seeds differ
    assert (tmp_path / "a" / "curve.png").read_bytes().startswith(b"\x89PNG")
    events, _ = load_events((tmp_path / "a" / "traces" / "n3.json").read_bytes(), "n3.json")
    assert check_perfetto(events) == []
    # same trace, config and seed: byte-identical outputs
    assert run_predict(parse([*argv, "--out", str(tmp_path / "b")])) == 0
    for name in ("curve.csv", "traces/n1.json", "traces/n3.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_outputs_are_never_replaced_without_asking(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    model = build_model(read_trace(mlp_trace_dir))
    pulls = [model.names[t] for t in range(model.n_tasks) if model.kinds[t] == TaskKind.PULL]
    order = tmp_path / "order.txt"
    order.write_text("# last pull first\n" + "\n".join(reversed(pulls)) + "\n")
    base = [str(mlp_trace_dir), "--workers", "2", "--policy", str(order), "--steps", "3", "--seeds", "1",
            "--out", str(tmp_path / "o")]
    assert run_predict(parse([*base, "--emit-traces", "2"])) == 0
    with pytest.raises(ConfigError, match=r"curve\.csv: already exists; pass --force"):
        run_predict(parse(base))
    # --force replaces the whole earlier run: its traces/n2.json does not survive beside the new curve
    assert run_predict(parse([*base, "--force"])) == 0
    assert not (tmp_path / "o" / "traces" / "n2.json").exists()
    order.write_text("no_such_tensor\n")
    with pytest.raises(ConfigError, match="no_such_tensor"):
        run_predict(parse([*base, "--force"]))


def test_bad_options_raise_config_errors(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path) -> None:
    # each: the option, the rule and the value given (the option's name alone passed a message without the rest)
    with pytest.raises(ConfigError, match=r"cannot read '10 furlongs' as a rate; write e\.g\. "):
        run_predict(parse([str(mlp_trace_dir), "--bandwidth", "10 furlongs", "--out", str(tmp_path)]))
    with pytest.raises(ConfigError, match=r"^'--workers': '4-2' must be N or LO-HI with 1 <= LO <= HI.*\(got '4-2'\)$"):
        run_predict(parse([str(mlp_trace_dir), "--workers", "4-2", "--out", str(tmp_path)]))
    with pytest.raises(ConfigError, match=r"^'--steps' must be from 3 to \d+ \(got 2\)$"):
        run_predict(parse([str(mlp_trace_dir), "--steps", "2", "--out", str(tmp_path)]))
    with pytest.raises(ConfigError, match="'out' must name a directory"):
        run_predict(parse([str(mlp_trace_dir), "--out", ""]))
    # by the option's name, not predict's field ('policy', 'placement'), and --placement before the trace is read
    with pytest.raises(ConfigError, match=r"'--policy': cannot read order file 'no-such-order\.txt'"):
        run_predict(parse([str(mlp_trace_dir), "--policy", "no-such-order.txt", "--out", str(tmp_path)]))
    with pytest.raises(ConfigError, match=r"'--placement' must be round-robin, greedy or a placement file \(got "
                                          r"'nowhere.csv': no such file\)"):
        run_predict(parse([str(mlp_trace_dir), "--ps-shards", "2", "--placement", "nowhere.csv", "--out",
                           str(tmp_path)]))


def test_the_batch_size_from_meta_json_is_refused_when_unclear(tmp_path: pathlib.Path) -> None:
    """A meta.json that says two things, or something that is not a batch size, was read as batch size 1."""
    assert batch_size_of(str(tmp_path), None) == 1  # no meta.json
    meta = tmp_path / "meta.json"
    meta.write_text('{"batch_size": 32}')
    assert batch_size_of(str(tmp_path), None) == 32 and batch_size_of(str(tmp_path), 8) == 8
    meta.write_text('{"batch_size": "32"}')
    with pytest.raises(ConfigError, match=r"meta\.json: 'batch_size' must be an integer from 1 to 10\^9 \(got '32'\)"):
        batch_size_of(str(tmp_path), None)
    meta.write_text('{"batch_size": 32, "batch_size": 64}')
    with pytest.raises(TraceError, match=r"meta\.json: the top-level object: key 'batch_size' appears twice"):
        batch_size_of(str(tmp_path), None)


def test_an_emitted_trace_too_large_to_read_back_is_named_on_a_warning_line(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader's event limit lowered to 100 (a real one holds 200,000): the trace is still written, and the
    run says which tools cannot open it."""
    monkeypatch.setattr("tracegen.synth.MAX_RECORDS", 100)
    argv = [str(mlp_trace_dir), "--workers", "1", "--bandwidth", "1Gbit/s", "--emit-traces", "2", "--out",
            str(tmp_path / "o")]
    assert run_predict(parse(argv)) == 0
    output = capsys.readouterr()
    warning = [line for line in (output.out + output.err).splitlines() if line.startswith("warning: n2.json is ")]
    assert len(warning) == 1 and "tracegen inspect and convert" in warning[0], output
    assert (tmp_path / "o" / "traces" / "n2.json").is_file()


def test_the_seed_spread_is_a_confidence_interval_of_the_mean(mlp_trace_dir: pathlib.Path,
                                                              tmp_path: pathlib.Path) -> None:
    from tracegen.curve import ci95_half_width

    assert ci95_half_width([1.0, 2.0, 3.0]) == pytest.approx(4.303 / 3**0.5)  # t(2) x s / sqrt(n), s = 1
    assert ci95_half_width([5.0]) is None
    assert ci95_half_width([2.0] * 50) == 0.0
    base = [str(mlp_trace_dir), "--workers", "2,4", "--steps", "4"]
    assert run_predict(parse([*base, "--seeds", "1", "--out", str(tmp_path / "one")])) == 0
    assert run_predict(parse([*base, "--seeds", "3", "--out", str(tmp_path / "three")])) == 0
    assert all(r["steps_per_s_ci95"] == "" for r in rows(tmp_path / "one" / "curve.csv"))
    for r in rows(tmp_path / "three" / "curve.csv"):
        half = float(r["steps_per_s_ci95"])
        # three seeds: t(2) s / sqrt(3) = 2.48 s, wider than half the min-max range, which is at most s
        assert half >= (float(r["steps_per_s_high"]) - float(r["steps_per_s_low"])) / 2
        # and exactly that: the three seeds' rates are the low, the high and what makes the point their mean
        # (4-decimal figures: 1e-3 holds their rounding); a normal 1.96 s / sqrt(3) or a population s passed above
        low, mean, high = (float(r[k]) for k in ("steps_per_s_low", "steps_per_s", "steps_per_s_high"))
        seeds = [low, 3 * mean - low - high, high]
        assert low <= seeds[1] <= high and high - low > 0.01  # the seeds differ: the figure can tell
        assert half == pytest.approx(4.303 * statistics.stdev(seeds) / 3**0.5, abs=1e-3)


def test_worker_classes_no_n_asked_reaches_are_named(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A file of 6 workers in 3 classes with --workers 1-2: the two later classes were read and went unused, the
    curve that of 2 slow workers, with no word but the classes' list (a new user's file)."""
    classes = tmp_path / "classes.csv"
    classes.write_text("# tracegen-worker-classes version 2\nname,count,speed,link_bits_per_s\nslow,2,0.5,-\n"
                       "mid,2,0.8,-\nfast,2,1.5,-\n")
    argv = [str(mlp_trace_dir), "--worker-classes", str(classes), "--workers", "1-2", "--steps", "3", "--seeds",
            "1", "--bandwidth", "10Gbit/s", "--jobs", "1", "--out", str(tmp_path / "out")]
    assert run_predict(parse(argv)) == 0
    assert (f"note: {classes}:4: class 'mid' and 1 more listed past the 2 workers asked: no N asked has a worker of "
            "them") in capsys.readouterr().out.splitlines()


def test_a_batch_size_from_nowhere_is_said(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The mlp trace converted to tables (its meta.json not carried) predicted 10.4 samples/s at N = 1 where the
    trace itself gives 332.8 (batch 32), with no word: samples/s were steps/s. (convert now carries meta.json;
    tables without it, as an older convert wrote them, still say so.)"""
    tables = tmp_path / "tables"
    assert main(["convert", str(mlp_trace_dir), "--to", "csv", str(tables)]) == 0
    (tables / "meta.json").unlink()
    argv = ["--workers", "1", "--steps", "3", "--seeds", "1", "--bandwidth", "10Gbit/s", "--jobs", "1"]
    capsys.readouterr()
    assert run_predict(parse([str(tables), *argv, "--out", str(tmp_path / "tables_out")])) == 0
    assert (f"note: samples/s are steps/s (a batch of 1): no --batch-size, and {tables / 'meta.json'} is not there"
            in capsys.readouterr().out.splitlines())
    assert run_predict(parse([str(tables), *argv, "--batch-size", "32", "--out", str(tmp_path / "given")])) == 0
    assert "samples/s are steps/s" not in capsys.readouterr().out
    shutil.copy(mlp_trace_dir / "meta.json", tables)  # beside the tables, read as beside any trace
    assert run_predict(parse([str(tables), *argv, "--out", str(tmp_path / "beside")])) == 0
    assert "samples/s are steps/s" not in capsys.readouterr().out


def test_the_worker_classes_cover_every_worker_of_an_emitted_trace(mlp_trace_dir: pathlib.Path,
                                                                    tmp_path: pathlib.Path) -> None:
    """--emit-traces past the plateau search's largest N (256): the workers beyond it ran at speed 1, not their
    class's, in the trace written, with no word (a hardening pass)."""
    import json
    import statistics

    classes = tmp_path / "classes.csv"
    classes.write_text("# tracegen-worker-classes version 2\nname,count,speed,link_bits_per_s\nfast,*,4,-\n")
    argv = [str(mlp_trace_dir), "--worker-classes", str(classes), "--workers", "1", "--emit-traces", "258",
            "--steps", "3", "--warmup-steps", "1", "--seeds", "1", "--bandwidth", "10Gbit/s", "--jobs", "1",
            "--out", str(tmp_path / "out")]
    assert run_predict(parse(argv)) == 0
    doc = json.loads((tmp_path / "out" / "traces" / "n258.json").read_bytes())
    task = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "process_name"}
    ops: dict[str, list[float]] = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "op":
            ops.setdefault(task[e["pid"]], []).append(e["dur"])
    first, last = (statistics.median(ops[f"/job:worker/replica:0/task:{w}/device:CPU:0"]) for w in (0, 257))
    assert last == pytest.approx(first, rel=0.5)  # both at speed 4; at speed 1 the last one's ops took ~4x as long


def test_a_payload_fraction_with_nothing_to_take_it_of_is_refused(mlp_trace_dir: pathlib.Path,
                                                                   tmp_path: pathlib.Path) -> None:
    """--payload-fraction is the share of a --bandwidth (or of a worker class's own link); without either it went
    unused, and the curve was the trace's own link's with no word (a hardening pass)."""
    argv = [str(mlp_trace_dir), "--workers", "1", "--steps", "3", "--seeds", "1", "--payload-fraction", "0.5",
            "--out", str(tmp_path / "out")]
    with pytest.raises(ConfigError, match=r"^'--payload-fraction' 0\.5 is the share of a --bandwidth .*neither was "):
        run_predict(parse(argv))
    assert not (tmp_path / "out").exists()
    assert run_predict(parse([*argv[:-2], "--bandwidth", "1Gbit/s", "--out", str(tmp_path / "bw")])) == 0
    classes = tmp_path / "classes.csv"
    classes.write_text("# tracegen-worker-classes version 2\nname,count,speed,link_bits_per_s\nfar,*,1.0,1e9\n")
    assert run_predict(parse([*argv[:-2], "--worker-classes", str(classes), "--out", str(tmp_path / "own")])) == 0


def test_a_slow_link_s_rates_are_not_written_as_zero(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A big model on a slow link is a few thousandths of a step per second: the mlp trace on 1 kbit/s printed
    'steps/s 0.00', 'plateau 0.00 steps/s' and 'link bound 0.00 steps/s', curve.csv steps_per_s 0.0000 and
    report.html 'Plateau 0.00 steps/s, 0.0 samples/s': a curve that says nothing trains at all."""
    args = parse([str(mlp_trace_dir), "--workers", "1,2", "--bandwidth", "1kbit/s", "--steps", "3", "--seeds", "1",
                  "--html", "--out", str(tmp_path)])
    assert run_predict(args) == 0
    out = capsys.readouterr().out
    assert "plateau 0.00 steps/s" not in out and "link bound 0.00 steps/s" not in out, out
    table = out[out.index("bottleneck\n"):out.index("plateau ")]
    assert not re.search(r"(^|\s)0\.0+(\s|$)", table), table
    for r in rows(tmp_path / "curve.csv"):
        for column in ("steps_per_s", "samples_per_s", "steps_per_s_low", "steps_per_s_high", "band_low",
                       "band_high"):
            assert float(r[column]) > 0, (column, r)
    page = (tmp_path / "report.html").read_text()
    assert "Plateau 0.00 steps/s" not in page and " 0.0 samples/s" not in page and "<td>0.00</td>" not in page


@pytest.mark.parametrize("bad", [b"", b'{"traceEvents": [', b"\x00\xff garbage"])
def test_a_bad_trace_gives_its_one_error_line_and_no_notes(tmp_path: pathlib.Path, bad: bytes,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """predict said 'note: samples/s are steps/s (a batch of 1) ...' (and the notes of a link profile and a
    single-worker run beside the trace) before reading the trace, so a trace that could not be read gave the notes
    and then the error: a bad input gives only its one error line."""
    dev = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    trace_dir = tmp_path / "trace"
    trace_dir.mkdir()
    for name in (PROFILE_NAME, SINGLE_WORKER_NAME):  # their notes: 'is not used: --bandwidth', 'using ...'
        shutil.copy(dev / name, trace_dir)
    trace = trace_dir / "step_000.json"
    trace.write_bytes(bad)
    capsys.readouterr()
    assert main(["predict", str(trace), "--workers", "1", "--steps", "3", "--seeds", "1", "--bandwidth",
                 "10Gbit/s", "--jobs", "1", "--out", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and str(trace) in err, (out, err)


def test_a_null_batch_size_in_meta_json_is_said_as_a_batch_of_1(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """meta.json's "batch_size": null was taken as a batch of 1 (samples/s were steps/s), but the note that says
    so looked only for the key, found it, and said nothing."""
    import json

    from tracegen.cli_predict import batch_note

    trace = tmp_path / "trace"
    shutil.copytree(mlp_trace_dir, trace)
    meta = json.loads((trace / "meta.json").read_text())
    (trace / "meta.json").write_text(json.dumps({**meta, "batch_size": None}))
    assert batch_size_of(str(trace), None) == 1
    note = f"note: samples/s are steps/s (a batch of 1): no --batch-size, and {trace / 'meta.json'} gives no batch_size"
    assert batch_note(str(trace), None) == note
    assert run_predict(parse([str(trace), "--workers", "1", "--steps", "3", "--seeds", "1", "--bandwidth", "10Gbit/s",
                              "--jobs", "1", "--out", str(tmp_path / "out")])) == 0
    assert note in capsys.readouterr().out.splitlines()
