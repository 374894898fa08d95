"""curve.png's figure: the N asked past a stalled curve, and its title."""

from __future__ import annotations

import pathlib

import pytest

from parsers import read_trace
from tracegen.curve import scaling_curve
from tracegen.html_report import prediction_html
from tracegen.model import build_model
from tracegen.plots import curve_axes, finish_png, plot_title
from tracegen.simulate import SimConfig, resolve_link

from tracegen_support import curve_of


def test_the_n_a_stalled_curve_did_not_simulate_are_drawn_and_named(mlp_trace_dir: pathlib.Path) -> None:
    """``--workers 1-40`` on a curve that stalls by N = 8 or so: the plot's axis ended at the last N simulated,
    as if the user had asked for no more, and the report did not say why the table stops there."""
    model = build_model(read_trace(mlp_trace_dir))
    config = SimConfig(steps=6, warmup_steps=1, link_spec=resolve_link(model, SimConfig()))
    curve = scaling_curve(model, config, range(1, 41), seeds=1, stop_at_plateau=True)
    last = curve.points[-1].n_workers
    assert curve.unsimulated_workers == tuple(range(last + 1, 41))
    _, ax = curve_axes(curve)
    assert ax.get_xlim()[1] >= 40
    carried = [line for line in ax.get_lines() if "not simulated" in line.get_label()]
    assert [line.get_label() for line in carried] == [f"N={last + 1}-40: not simulated, stalled"]
    assert list(carried[0].get_xdata()) == [last, 40]
    assert carried[0].get_ydata()[-1] == curve.plateau_steps_per_s
    page = prediction_html(curve, title="t", inputs=()).decode()
    assert f"N={last + 1}-40 not simulated: the rate stalled by N={last} at a saturated resource" in page
    # every N asked simulated: nothing carried on
    whole = scaling_curve(model, config, range(1, 5), seeds=1)
    assert not [line for line in curve_axes(whole)[1].get_lines() if "not simulated" in line.get_label()]


def test_a_plot_is_titled_by_the_traces_folder_and_its_parent() -> None:
    assert plot_title("data/validation/dev/cnn_300mbit_q5_b16k_ps03/trace") == "cnn_300mbit_q5_b16k_ps03/trace"
    assert plot_title("step_000.pb") == "step_000.pb"
    assert plot_title("/x/steps/step_*.pb") == "steps/step_*.pb"


@pytest.mark.parametrize("ns", [tuple(range(1, 17)), (1, 2, 100), (1, 2, 3, 4)])
def test_the_knees_label_stays_inside_the_figure(ns: tuple[int, ...]) -> None:
    """A knee at the last N asked was labelled to its right, off the figure's edge: ``--workers 1,2,100``'s
    curve.png read 'knee N=10', and a knee at N=16 would read 'knee N=1'."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    curve = curve_of(ns, tuple(10.0 * n for n in ns))
    assert curve.knee_n_workers == ns[-1]
    fig, ax = curve_axes(curve)
    finish_png(fig, ax, ylabel="y", title="t", legend="lower right")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    [label] = [t for t in ax.texts if t.get_text().startswith("knee")]
    # at most N=100 where 3-99 were not simulated (as the words say 'or earlier'); else the knee's own N
    assert label.get_text() == (f"knee N<={ns[-1]}" if ns == (1, 2, 100) else f"knee N={ns[-1]}")
    box = label.get_window_extent(canvas.get_renderer())
    assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1, (box, fig.bbox)
