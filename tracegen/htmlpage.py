"""One self-contained HTML page: markup builders that escape every piece of text, and the page around them.

Every builder returns :data:`Html`, markup that is safe to place as is; every ``str`` it takes is text and is
escaped (``<``, ``&``, quotes). The page carries its style and its script inline and a Content-Security-Policy
that forbids loading anything, so it opens offline and never reaches the network. The script only shows
tooltips, toggles series and marks the page ``data-ready``; it never writes to the console.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import NewType

Html = NewType("Html", str)

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif;color:#222;
margin:0 auto;max-width:1000px;padding:16px 24px}
h1{font-size:21px;margin:8px 0 4px}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #ddd}
p.lead{margin:4px 0 12px;color:#333}.warn{background:#fff4e5;border-left:4px solid #e8a33d;padding:6px 10px}
dl.inputs{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}
dl.inputs dt{color:#555}dl.inputs dd{margin:0;font-family:ui-monospace,monospace;font-size:12.5px;
overflow-wrap:anywhere}
table{border-collapse:collapse;font-size:13px;margin:6px 0}th,td{padding:3px 9px;border-bottom:1px solid #e4e4e4;
text-align:right;white-space:nowrap}th{background:#f5f5f5}td:first-child,th:first-child{text-align:left}
figure{margin:8px 0 18px}figcaption{font-weight:600;margin-bottom:2px}svg.chart{width:100%;height:auto;
max-width:760px;display:block}svg text{font-size:11.5px;fill:#333}.axis line,.axis path{stroke:#888}
.grid line{stroke:#eee}.hit{fill:transparent;cursor:crosshair}.guide{stroke:#999;stroke-dasharray:2 2}
.legend button{font:inherit;font-size:12.5px;border:1px solid #ccc;background:#fff;border-radius:3px;
margin:2px 4px 2px 0;padding:1px 7px;cursor:pointer}.legend button.off{opacity:.35}
.legend i{display:inline-block;width:14px;height:4px;margin:0 5px 3px 0;vertical-align:middle}
.hidden{display:none}.scroll{overflow-x:auto}
#tip{position:absolute;display:none;background:rgba(255,255,255,.96);border:1px solid #999;padding:5px 8px;
font-size:12.5px;white-space:pre;pointer-events:none;box-shadow:0 1px 4px rgba(0,0,0,.2)}
"""

SCRIPT = """
(function () {
  "use strict";
  var tip = document.getElementById("tip");
  function show(hit, pageX, pageY) {
    var guide = hit.ownerSVGElement.querySelector(".guide");
    guide.setAttribute("x1", hit.dataset.x);
    guide.setAttribute("x2", hit.dataset.x);
    guide.style.display = "";
    tip.textContent = hit.dataset.tip;
    tip.style.display = "block";
    var left = pageX + 14;
    if (left + tip.offsetWidth > document.documentElement.clientWidth) { left = pageX - 14 - tip.offsetWidth; }
    tip.style.left = Math.max(0, left) + "px";
    tip.style.top = (pageY + 14) + "px";
  }
  function hide(hit) {
    hit.ownerSVGElement.querySelector(".guide").style.display = "none";
    tip.style.display = "none";
  }
  document.querySelectorAll("rect.hit").forEach(function (hit) {
    hit.addEventListener("mousemove", function (e) { show(hit, e.pageX, e.pageY); });
    hit.addEventListener("mouseleave", function () { hide(hit); });
  });
  document.querySelectorAll(".legend button").forEach(function (button) {
    button.addEventListener("click", function () {
      var off = button.classList.toggle("off");
      document.querySelectorAll("g[data-s='" + button.dataset.s + "']").forEach(function (g) {
        g.classList.toggle("hidden", off);
      });
    });
  });
  var wanted = /^#n=([0-9]+)$/.exec(window.location.hash);
  var hit = wanted && document.querySelector("rect.hit[data-n='" + wanted[1] + "']");
  if (hit) {
    var box = hit.getBoundingClientRect();
    show(hit, box.left + window.scrollX + box.width / 2, box.top + window.scrollY + box.height / 4);
  }
  document.body.dataset.ready = "1";
})();
"""


def text(value: object) -> Html:
    """``value`` as escaped text."""
    return Html(html.escape(str(value), quote=True))


def join(parts: Sequence[Html], sep: str = "\n") -> Html:
    """Markup pieces one after another."""
    return Html(sep.join(parts))


def paragraph(value: str, css_class: str = "") -> Html:
    """A paragraph of text."""
    attr = f' class="{text(css_class)}"' if css_class else ""
    return Html(f"<p{attr}>{text(value)}</p>")


def section(heading: str, *parts: Html) -> Html:
    """A headed section."""
    return Html(f"<section><h2>{text(heading)}</h2>\n" + join(parts) + "\n</section>")


def definitions(items: Sequence[tuple[str, str]]) -> Html:
    """Name and value pairs (the inputs a report used)."""
    rows = "".join(f"<dt>{text(k)}</dt><dd>{text(v)}</dd>" for k, v in items)
    return Html(f'<dl class="inputs">{rows}</dl>')


def table(header: Sequence[str], rows: Sequence[Sequence[str]], *, table_id: str = "") -> Html:
    """A table of already formatted cells (numbers right-aligned by the style, the first column left)."""
    attr = f' id="{text(table_id)}"' if table_id else ""
    head = "".join(f"<th>{text(h)}</th>" for h in header)
    body = "\n".join("<tr>" + "".join(f"<td>{text(c)}</td>" for c in row) + "</tr>" for row in rows)
    return Html(f'<div class="scroll"><table{attr}><thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n'
                "</tbody></table></div>")


def page(title: str, parts: Sequence[Html]) -> bytes:
    """The whole page, UTF-8: no timestamps and no generated ids, so equal parts give equal bytes. A name that is
    not UTF-8 (a path's byte as ``os.fsdecode`` keeps it, a lone surrogate) is written as its escape, ``\\udcfe``."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{text(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{text(title)}</h1>\n" + join(parts) + "\n<div id=\"tip\"></div>\n"
        f"<script>{SCRIPT}</script>\n</body>\n</html>\n"
    ).encode("utf-8", "backslashreplace")
