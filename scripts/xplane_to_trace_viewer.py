"""Convert a TF2 profile's ``.xplane.pb`` files into TensorBoard's trace-viewer JSON (``.trace.json.gz``) with
TensorBoard's own converter, to test tracegen's reader of that format (``parsers/traceviewer.py``):

    pip install tensorboard-plugin-profile   # brings xprof; not a tracegen dependency
    python scripts/xplane_to_trace_viewer.py data/traces/tf2_pss data/traces/tf2_pss_viewer

Each ``<run>/<host>.xplane.pb`` under IN becomes ``<run>/<host>.trace.json.gz`` under OUT (gzip with mtime 0).
"""

from __future__ import annotations

import gzip
import pathlib
import sys

from xprof.convert import raw_to_tool_data  # type: ignore[import-not-found]


def main(src: str, dst: str) -> None:
    """Convert every ``.xplane.pb`` below ``src`` into the same place below ``dst``."""
    for path in sorted(pathlib.Path(src).rglob("*.xplane.pb")):
        data, _ = raw_to_tool_data.xspace_to_tool_data([str(path)], "trace_viewer", {})
        out = pathlib.Path(dst) / path.relative_to(src).with_name(path.name.replace(".xplane.pb", ".trace.json.gz"))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(gzip.compress(data.encode() if isinstance(data, str) else data, mtime=0))
        print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
