"""A line chart against the number of workers, as inline SVG with a legend and a hover text per N.

What a report needs and nothing more: lines with point markers (and whiskers for a measured range), shaded
areas between two lines (a band, a spread over seeds), reference lines (a knee at some N, a plateau at some
rate), an optional right-hand axis that is the left one times a factor (samples/s = steps/s x batch), and per N
an invisible column whose ``data-tip`` the page's script shows on hover (:mod:`tracegen.htmlpage`). Coordinates
are written with one decimal, so equal charts give equal bytes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

from tracegen.htmlpage import Html, text

WIDTH, HEIGHT = 760, 360
LEFT, RIGHT, TOP, BOTTOM = 64, 76, 16, 44

Scale = Callable[[float], float]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Series:
    """One value per x (None: no point there); ``low``/``high`` draw whiskers (a measured range)."""

    name: str
    values: tuple[float | None, ...]
    color: str
    dash: str = ""
    line: bool = True
    low: tuple[float, ...] | None = None
    high: tuple[float, ...] | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Area:
    """The region between two lines, one value of each per x."""

    name: str
    low: tuple[float, ...]
    high: tuple[float, ...]
    color: str
    opacity: float = 0.2


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """A reference line: vertical at ``x`` or horizontal at ``y``, labelled."""

    label: str
    x: float | None = None
    y: float | None = None
    color: str = "#666"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Chart:
    """What to draw. ``tips`` holds the hover text of each x; ``y_scale``/``y_scale_label`` add a right axis."""

    chart_id: str
    title: str
    xs: tuple[int, ...]
    x_label: str
    y_label: str
    tips: tuple[str, ...]
    series: tuple[Series, ...] = ()
    areas: tuple[Area, ...] = ()
    rules: tuple[Rule, ...] = ()
    y_top: float | None = None
    y_percent: bool = False
    y_scale: float | None = None
    y_scale_label: str = ""


def nice_ticks(high: float, count: int = 5, *, integer: bool = False) -> list[float]:
    """Ticks from 0 to at least ``high`` on a 1-2-5 step (integers only when ``integer``)."""
    if not math.isfinite(high) or high <= 0:
        return [0.0, 1.0]
    raw = high / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    if integer:
        step = max(1.0, float(math.ceil(step)))
    n = math.ceil(high / step - 1e-9)
    return [i * step for i in range(n + 1)]


def _number(value: float, percent: bool = False) -> str:
    return f"{value:.0f}%" if percent else f"{value:.4g}"


def render(chart: Chart) -> Html:
    """The chart as a ``<figure>``: caption, SVG and a legend whose buttons hide and show each series."""
    xs = chart.xs
    if not xs or len(chart.tips) != len(xs):
        raise ValueError(f"chart {chart.chart_id!r}: needs x values and one tip per x (got {len(xs)}, "
                         f"{len(chart.tips)})")
    x_lo, x_hi = (min(xs) - 1, max(xs) + 1) if len(xs) == 1 else (min(xs), max(xs))
    values = [v for s in chart.series for v in (*s.values, *(s.high or ())) if v is not None]
    values += [v for a in chart.areas for v in a.high] + [r.y for r in chart.rules if r.y is not None]
    top = max([v for v in values if math.isfinite(v)] + [chart.y_top or 0.0, 1e-9])
    ticks = nice_ticks(top if top == chart.y_top else top * 1.04)
    y_hi = ticks[-1]
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (x - x_lo) / (x_hi - x_lo) * plot_w

    def py(y: float) -> float:
        return TOP + plot_h - min(max(y, 0.0), y_hi) / y_hi * plot_h

    out = [f'<svg class="chart" id="{text(chart.chart_id)}" viewBox="0 0 {WIDTH} {HEIGHT}" '
           f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{text(chart.title)}">']
    out.append('<g class="grid">' + "".join(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{py(t):.1f}" '
                                            f'y2="{py(t):.1f}"/>' for t in ticks) + "</g>")
    out.append(_axes(chart, ticks, x_lo, x_hi, px, py))
    for k, area in enumerate(chart.areas):
        upper = " ".join(f"{px(x):.1f},{py(v):.1f}" for x, v in zip(xs, area.high, strict=True))
        lower = " ".join(f"{px(x):.1f},{py(v):.1f}" for x, v in reversed(list(zip(xs, area.low, strict=True))))
        out.append(f'<g data-s="{chart.chart_id}-a{k}"><polygon points="{upper} {lower}" fill="{area.color}" '
                   f'fill-opacity="{area.opacity}" stroke="none"/></g>')
    for rule in chart.rules:
        out.append(_rule(rule, px, py, plot_w, plot_h))
    for k, s in enumerate(chart.series):
        out.append(_series(s, f"{chart.chart_id}-s{k}", xs, px, py))
    out.append(f'<line class="guide" x1="0" x2="0" y1="{TOP}" y2="{TOP + plot_h}" style="display:none"/>')
    out.append(_hits(chart, px, plot_h))
    out.append("</svg>")
    legend = [f'<button type="button" data-s="{chart.chart_id}-a{k}"><i style="background:{a.color};'
              f'opacity:{max(a.opacity, 0.35)}"></i>{text(a.name)}</button>' for k, a in enumerate(chart.areas)]
    legend += [f'<button type="button" data-s="{chart.chart_id}-s{k}"><i style="background:{s.color}"></i>'
               f"{text(s.name)}</button>" for k, s in enumerate(chart.series)]
    return Html(f"<figure><figcaption>{text(chart.title)}</figcaption>\n" + "\n".join(out)
                + f'\n<div class="legend">{"".join(legend)}</div></figure>')


def _axes(chart: Chart, ticks: Sequence[float], x_lo: float, x_hi: float, px: Scale, py: Scale) -> str:
    bottom, right = HEIGHT - BOTTOM, WIDTH - RIGHT
    parts = [f'<g class="axis"><line x1="{LEFT}" x2="{right}" y1="{bottom}" y2="{bottom}"/>'
             f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}"/>']
    for t in ticks:
        parts.append(f'<text x="{LEFT - 6}" y="{py(t) + 4:.1f}" text-anchor="end">'
                     f"{_number(t, chart.y_percent)}</text>")
        if chart.y_scale is not None:
            parts.append(f'<text x="{right + 6}" y="{py(t) + 4:.1f}">{_number(t * chart.y_scale)}</text>')
    x_ticks = [t for t in nice_ticks(x_hi, 8, integer=True) if x_lo <= t <= x_hi] or [x_lo]
    for t in x_ticks:
        parts.append(f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{bottom}" y2="{bottom + 4}"/>'
                     f'<text x="{px(t):.1f}" y="{bottom + 17}" text-anchor="middle">{t:.0f}</text>')
    parts.append(f'<text x="{(LEFT + right) / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle">'
                 f"{text(chart.x_label)}</text>")
    parts.append(f'<text transform="translate(14 {(TOP + bottom) / 2:.1f}) rotate(-90)" text-anchor="middle">'
                 f"{text(chart.y_label)}</text>")
    if chart.y_scale is not None:
        parts.append(f'<text transform="translate({WIDTH - 8} {(TOP + bottom) / 2:.1f}) rotate(-90)" '
                     f'text-anchor="middle">{text(chart.y_scale_label)}</text>')
    return "".join(parts) + "</g>"


def _rule(rule: Rule, px: Scale, py: Scale, plot_w: float, plot_h: float) -> str:
    style = f'stroke="{rule.color}" stroke-dasharray="5 4"'
    if rule.x is not None:
        x = px(rule.x)
        return (f'<g class="rule"><line x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{TOP + plot_h}" {style}/>'
                f'<text x="{x + 4:.1f}" y="{TOP + 12}" fill="{rule.color}">{text(rule.label)}</text></g>')
    y = py(rule.y if rule.y is not None else 0.0)
    return (f'<g class="rule"><line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" {style}/>'
            f'<text x="{LEFT + 6}" y="{y - 4:.1f}" fill="{rule.color}">{text(rule.label)}</text></g>')


def _series(s: Series, key: str, xs: Sequence[int], px: Scale, py: Scale) -> str:
    points = [(px(x), py(v)) for x, v in zip(xs, s.values, strict=True) if v is not None]
    parts = [f'<g data-s="{key}">']
    if s.line and len(points) > 1:
        dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{s.color}" stroke-width="2"{dash}/>')
    if s.low is not None and s.high is not None:
        for x, lo, hi in zip(xs, s.low, s.high, strict=True):
            cx = px(x)
            parts.append(f'<path d="M{cx:.1f},{py(lo):.1f}V{py(hi):.1f}M{cx - 4:.1f},{py(lo):.1f}h8'
                         f'M{cx - 4:.1f},{py(hi):.1f}h8" stroke="{s.color}" fill="none"/>')
    parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{3.5 if s.line else 4.5}" fill="{s.color}"/>'
              for x, y in points]
    return "".join(parts) + "</g>"


def _hits(chart: Chart, px: Scale, plot_h: float) -> str:
    xs = chart.xs
    centres = [px(x) for x in xs]
    parts = ['<g class="hits">']
    for i, (x, tip) in enumerate(zip(xs, chart.tips, strict=True)):
        left = LEFT if i == 0 else (centres[i - 1] + centres[i]) / 2
        right = WIDTH - RIGHT if i == len(xs) - 1 else (centres[i] + centres[i + 1]) / 2
        parts.append(f'<rect class="hit" x="{left:.1f}" y="{TOP}" width="{max(right - left, 1.0):.1f}" '
                     f'height="{plot_h}" data-n="{x}" data-x="{centres[i]:.1f}" data-tip="{text(tip)}"/>')
    return "".join(parts) + "</g>"
