"""``report.html`` from ``predict --html`` and ``validate --html``: it holds the figures the CSV files hold,
escapes what it prints, is byte-identical for equal inputs, loads nothing from anywhere, and renders in a real
headless Chromium (Debian's package) without a console message, with its charts drawn; the screenshots are kept
in ``out/test-artifacts/``."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import re
import shutil
import subprocess

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from tracegen.cli import main
from tracegen.curve import Curve, CurvePoint
from tracegen.html_report import comparison_html, prediction_html

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = ROOT / "data" / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03"
ARTIFACTS = ROOT / "out" / "test-artifacts"
QUICK = ["--steps", "4", "--seeds", "2"]


def _cells(page: str, table_id: str) -> list[list[str]]:
    """The body cells of the table ``table_id``, row by row."""
    body = page.split(f'id="{table_id}"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body)]


def _predict(out: pathlib.Path, *extra: str) -> pathlib.Path:
    assert main(["predict", str(CONFIG / "trace"), "--workers", "1-4", *QUICK, *extra, "--html",
                 "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def predicted(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A bandwidth-only prediction (so with a band) with its report."""
    return _predict(tmp_path_factory.mktemp("predict"), "--bandwidth", "500Mbit/s")


@pytest.fixture(scope="module")
def validated(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A validation against a development configuration's measurements, with its report."""
    out = tmp_path_factory.mktemp("validate")
    assert main(["validate", "--measured", str(CONFIG), *QUICK, "--html", "--out", str(out)]) == 0
    return out


def test_prediction_report_holds_the_curve_the_knee_and_the_band(predicted: pathlib.Path) -> None:
    page = (predicted / "report.html").read_text(encoding="utf-8")
    curve = pd.read_csv(predicted / "curve.csv", dtype=str)
    cells = _cells(page, "points")
    assert [c[0] for c in cells] == list(curve["n_workers"])
    for got, want in zip(cells, curve.to_dict("records"), strict=True):
        assert float(got[1]) == pytest.approx(float(want["steps_per_s"]), abs=0.006)
        assert float(got[5]) == pytest.approx(float(want["band_low"]), abs=0.006)  # band low, band high
        assert float(got[6]) == pytest.approx(float(want["band_high"]), abs=0.006)
        assert got[-1] == want["bottleneck"]
    plateau = float(re.search(r"Plateau ([0-9.]+) steps/s", page).group(1))  # type: ignore[union-attr]
    knee = min(int(n) for n, r in zip(curve["n_workers"], curve["steps_per_s"], strict=True)
               if float(r) >= 0.95 * plateau)
    assert f"knee (95 % of the plateau): N={knee};" in page and f"knee N={knee}</text>" in page
    assert "band: the link&#x27;s two-way loss unknown" in page and "plateau is not pinned" in page
    assert "<dt>trace</dt><dd>" + str(CONFIG / "trace") in page and "<dt>single worker</dt>" in page
    assert len(page.encode()) < 100_000


def test_validation_report_holds_the_measurements_and_every_predictor(validated: pathlib.Path) -> None:
    page = (validated / "report.html").read_text(encoding="utf-8")
    table = pd.read_csv(validated / "comparison.csv")
    cells = _cells(page, "errors")
    names = ["simulator", "roofline", "no_overlap", "ps_queue", "roofline_cycle", "simulator_bw", "roofline_bw",
             "no_overlap_bw", "ps_queue_bw"]
    assert [f"{name} (error)" for name in names] == re.findall(r"<th>(\S+ \(error\))</th>", page)
    for got, want in zip(cells, table.to_dict("records"), strict=True):
        assert int(got[0]) == want["n_workers"] and float(got[2]) == pytest.approx(want["measured_mean"], abs=6e-4)
        low, high = (float(v) for v in got[3].split(" to "))
        assert (low, high) == pytest.approx((want["measured_min"], want["measured_max"]), abs=6e-4)
        for name, cell in zip(names, got[4:-1], strict=True):
            value, error = re.fullmatch(r"(\S+) \((\S+)%\)", cell).groups()  # type: ignore[union-attr]
            assert float(value) == pytest.approx(want[name], abs=6e-4)
            assert float(error) == pytest.approx(100 * want[f"{name}_error"], abs=0.06)
        band = re.fullmatch(r"(\S+) to (\S+)( \(mean outside\))?", got[-1])  # the bandwidth-only simulator's
        assert band is not None
        assert (float(band[1]), float(band[2])) == pytest.approx(
            (want["simulator_bw_band_low"], want["simulator_bw_band_high"]), abs=6e-4)
        assert (band[3] is None) == (want["simulator_bw_band_low"] <= want["measured_mean"]
                                     <= want["simulator_bw_band_high"])
    assert "simulator_bw band" in page and "measured (mean, range)" in page
    assert f"<dd>{CONFIG / 'trace' / 'link-profile.json'}</dd>" in page


def test_the_simulated_line_counts_the_seeds_in_words(predicted: pathlib.Path, validated: pathlib.Path,
                                                       tmp_path: pathlib.Path) -> None:
    """The reports' inputs said '2 seed(s) from 0' (predict) and '2 seed(s)' (validate); one seed in the singular."""
    assert re.search(r"measured steps per worker, 2 seeds from \d+; link model ",
                     (predicted / "report.html").read_text(encoding="utf-8"))
    assert "measured steps per worker, 2 seeds; link model " in (validated / "report.html").read_text(encoding="utf-8")
    assert main(["predict", str(CONFIG / "trace"), "--workers", "1-2", "--steps", "3", "--seeds", "1", "--jobs", "1",
                 "--html", "--out", str(tmp_path)]) == 0
    assert re.search(r"measured steps per worker, 1 seed from \d+; link model ",
                     (tmp_path / "report.html").read_text(encoding="utf-8"))


@dataclasses.dataclass(frozen=True)
class _Score:
    mape: float = 0.1
    max_error: float = 0.2
    knee_n_workers: int = 2
    inside_range: int | None = 1
    with_repeats: int = 2
    in_band: int | None = None
    band_width: float | None = None


@dataclasses.dataclass(frozen=True)
class _Comparison:
    table: pd.DataFrame
    scores: dict[str, _Score]
    measured_knee_n_workers: int = 2


def _curve() -> Curve:
    points = tuple(CurvePoint(n_workers=n, steps_per_s=r, steps_per_s_low=r, steps_per_s_high=r,
                              pull_link_utilisation=0.5, push_link_utilisation=0.9, ps_cpu_utilisation=0.2,
                              bottleneck="link-push") for n, r in ((1, 10.0), (2, 18.0)))
    return Curve(points=points, plateau_steps_per_s=18.0, saturation_workers=2, knee_n_workers=2,
                 link_bound_steps_per_s=float("inf"), ps_bound_steps_per_s=40.0, link_description="x",
                 n_events=1)


def test_names_are_escaped() -> None:
    evil = "<script>alert('x')</script> & <b>"
    page = prediction_html(_curve(), title=evil, inputs=[("trace", evil)]).decode()
    table = pd.DataFrame({"n_workers": [1, 2], "n_repeats": [1, 2], "measured_mean": [10.0, 17.0],
                          "measured_min": [10.0, 16.0], "measured_max": [10.0, 18.0], "a<b&c": [9.0, 18.0],
                          "a<b&c_error": [0.1, 0.06]})
    other = comparison_html(_Comparison(table=table, scores={"a<b&c": _Score()}), title=evil,
                            inputs=[("x", evil)], warnings=[evil]).decode()
    for text in (page, other):
        assert "<script>alert" not in text and "<b>" not in text and text.count("<script>") == 1
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &lt;b&gt;" in text
    assert "<td>a&lt;b&amp;c</td>" in other and "a&lt;b&amp;c 18.000 (error 6.0%)" in other


def test_a_validation_pages_tips_count_one_run_in_the_singular() -> None:
    # an N measured once said 'N=1 (1 runs)'
    table = pd.DataFrame({"n_workers": [1, 2], "n_repeats": [1, 2], "measured_mean": [10.0, 17.0],
                          "measured_min": [10.0, 16.0], "measured_max": [10.0, 18.0], "sim": [9.0, 18.0],
                          "sim_error": [0.1, 0.06]})
    page = comparison_html(_Comparison(table=table, scores={"sim": _Score()}), title="t", inputs=[],
                           warnings=[]).decode()
    assert "N=1 (1 run)" in page and "N=2 (2 runs)" in page and "1 runs" not in page


def test_report_loads_nothing_and_is_the_same_for_the_same_inputs(predicted: pathlib.Path,
                                                                   tmp_path: pathlib.Path) -> None:
    again = _predict(tmp_path, "--bandwidth", "500Mbit/s")
    page = (predicted / "report.html").read_bytes()
    assert (again / "report.html").read_bytes() == page
    text = page.decode()
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert re.findall(r"""(?:src|href)\s*=\s*["'](?!data:|#)""", text) == []
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in text


# Headless Chromium: the page as a reader's browser runs it.

def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.geteuid() == 0:
            pytest.fail("chromium is missing: scripts/test.sh installs Debian's package when run as root")
        pytest.skip("needs Debian's chromium package (scripts/test.sh installs it when run as root)")
    return found


def render_in_chromium(page: pathlib.Path, screenshot: pathlib.Path, fragment: str = "") -> tuple[str, list[str]]:
    """Open ``page`` in headless Chromium: the DOM after its script ran, and what it logged to the console."""
    profile = screenshot.parent / f"{screenshot.stem}-chromium-profile"
    done = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}", "--no-first-run",
         "--enable-logging=stderr", "--v=0", "--hide-scrollbars", "--window-size=1000,1400",
         f"--screenshot={screenshot}", "--dump-dom", page.as_uri() + fragment],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console


def _chart(dom: str, chart_id: str) -> str:
    found = re.search(rf'<svg class="chart" id="{chart_id}".*?</svg>', dom, re.DOTALL)
    assert found is not None, f"no chart {chart_id!r} in the rendered page"
    return found.group(0)


@pytest.mark.parametrize(("kind", "charts"),
                         [("predict", ("throughput", "utilisation")), ("validate", ("comparison",))])
def test_report_renders_in_chromium(kind: str, charts: tuple[str, ...], predicted: pathlib.Path,
                                    validated: pathlib.Path, tmp_path: pathlib.Path) -> None:
    page = (predicted if kind == "predict" else validated) / "report.html"
    shot = tmp_path / f"report-{kind}.png"
    dom, console = render_in_chromium(page, shot, "#n=3")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, ARTIFACTS / shot.name)
    assert console == []
    assert 'data-ready="1"' in dom  # the page's script ran to its end
    for chart_id in charts:
        svg = _chart(dom, chart_id)
        assert svg.count("<polyline") >= 1 and svg.count("<circle") >= 4 and svg.count('class="hit"') == 4 + (
            kind == "validate")
    tip = re.search(r'<div id="tip" style="display: block;[^"]*">(.*?)</div>', dom, re.DOTALL)
    assert tip is not None and tip.group(1).startswith("N=3")  # #n=3 shows N=3's values, as hovering does
    pixels = matplotlib.image.imread(str(shot))[..., :3]
    blue = np.all(np.abs(pixels - np.array([0x1F, 0x77, 0xB4]) / 255) < 0.03, axis=-1)
    assert pixels.shape[:2] == (1400, 1000) and blue.sum() > 300  # the blue curve is drawn, not only the text


def test_the_chromium_check_sees_a_script_error(tmp_path: pathlib.Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><script>noSuchFunction();</script></body></html>")
    _dom, console = render_in_chromium(page, tmp_path / "broken.png")
    assert len(console) == 1 and "noSuchFunction is not defined" in console[0]


def test_plan_report_holds_the_answer_and_every_pair_and_renders(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "plan"
    assert main(["plan", str(CONFIG / "trace"), "--catalogue", str(ROOT / "data" / "catalogue" / "example.csv"),
                 "--workers", "1-6", "--target-rate", "1000", "--html", "--out", str(out)]) == 0
    page = (out / "plan.html").read_text(encoding="utf-8")
    plan = pd.read_csv(out / "plan.csv", dtype=str)
    best = plan[plan["best_of_pair"] == "yes"]
    cells = _cells(page, "pairs")
    assert [(c[0], c[1], c[2]) for c in cells] == list(zip(best["worker_type"], best["ps_type"], best["n_workers"],
                                                           strict=True))
    chosen = plan[plan["chosen"] == "yes"]
    assert len(chosen) == 1 and f"{chosen['n_workers'].iloc[0]} x {chosen['worker_type'].iloc[0]}" in page
    assert "http://" not in page and "https://" not in page
    dom, console = render_in_chromium(out / "plan.html", tmp_path / "report-plan.png")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(tmp_path / "report-plan.png", ARTIFACTS / "report-plan.png")
    assert console == [] and 'data-ready="1"' in dom


def test_one_n_measured_shows_no_knee_and_notes_are_shown() -> None:
    """With one N measured the page led with 'Measured knee N=4', drew a knee rule and gave each predictor that
    knee: a knee is a point of a curve, which one N is not. A note (a knee among N with gaps) is shown."""
    table = pd.DataFrame({"n_workers": [4], "n_repeats": [1], "measured_mean": [16.8], "measured_min": [16.8],
                          "measured_max": [16.8], "sim": [17.0], "sim_error": [0.012]})
    page = comparison_html(_Comparison(table=table, scores={"sim": _Score(knee_n_workers=4)},
                                       measured_knee_n_workers=4), title="t", inputs=[],
                           notes=["One N measured (4): no knee."]).decode()
    assert "One N measured, no knee; lowest mean error: sim" in page and "Measured knee" not in page
    assert "measured knee N=" not in page and "knee (measured -)" in page
    assert _cells(page, "scores")[0][:4] == ["sim", "10.0%", "20.0%", "-"]
    assert "<p>One N measured (4): no knee.</p>" in page
    two = table.assign(n_workers=[2])
    table = pd.concat([table.assign(n_workers=[1]), two], ignore_index=True)
    page = comparison_html(_Comparison(table=table, scores={"sim": _Score()}), title="t", inputs=[]).decode()
    assert "Measured knee N=2;" in page and "measured knee N=2</text>" in page and _cells(page, "scores")[0][3] == "2"


def test_the_errors_table_shows_each_ns_band_and_the_means_outside_it() -> None:
    """The page counted 'means inside band' but its errors table had no band: which N fell outside was unsaid."""
    table = pd.DataFrame({"n_workers": [1, 2], "n_repeats": [1, 1], "measured_mean": [10.0, 17.0],
                          "measured_min": [10.0, 17.0], "measured_max": [10.0, 17.0], "sim": [9.0, 18.0],
                          "sim_error": [0.1, 0.06], "sim_band_low": [8.0, 12.0], "sim_band_high": [11.0, 16.5]})
    page = comparison_html(_Comparison(table=table, scores={"sim": _Score(in_band=1, band_width=0.3)}), title="t",
                           inputs=[]).decode()
    assert "<th>sim band</th>" in page
    assert [row[-1] for row in _cells(page, "errors")] == ["8.000 to 11.000", "12.000 to 16.500 (mean outside)"]
