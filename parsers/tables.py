"""The Trace as plain tables: one CSV or Parquet file per table plus ``trace.json`` (source, lost, skipped).

Columns are exactly the schemas of :mod:`parsers.trace`. A directory written here reads back (``read_tables``,
or ``read_trace`` on the directory) into an equal Trace.
"""

from __future__ import annotations

import io
import json
import os
import pathlib
from typing import Literal

import pandas as pd

from parsers.atomic import write_bytes_atomic
from parsers.errors import TraceFormatError
from parsers.trace import SCHEMAS, Trace, make_table

MANIFEST = "trace.json"
TableFormat = Literal["csv", "parquet"]


def table_paths(out_dir: pathlib.Path, fmt: TableFormat) -> list[pathlib.Path]:
    """The files :func:`write_tables` writes into ``out_dir``."""
    return [out_dir / f"{name}.{fmt}" for name in SCHEMAS] + [out_dir / MANIFEST]


def write_tables(trace: Trace, out_dir: str | os.PathLike[str], fmt: TableFormat) -> list[pathlib.Path]:
    """Write every table of ``trace`` as ``<table>.<fmt>`` and the manifest into ``out_dir``; atomic per file."""
    target = pathlib.Path(out_dir)
    target.mkdir(parents=True, exist_ok=True)
    for name in SCHEMAS:
        frame: pd.DataFrame = getattr(trace, name)
        buf = io.BytesIO()
        if fmt == "csv":
            frame.to_csv(buf, index=False, lineterminator="\n")
        else:
            frame.to_parquet(buf, index=False)
        write_bytes_atomic(target / f"{name}.{fmt}", buf.getvalue())
    manifest = {"source": trace.source, "source_format": trace.source_format, "table_format": fmt,
                "lost": list(trace.lost), "skipped": dict(trace.skipped)}
    write_bytes_atomic(target / MANIFEST, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
    return table_paths(target, fmt)


def is_table_dir(path: pathlib.Path) -> bool:
    """Whether ``path`` is a directory written by :func:`write_tables`."""
    return path.is_dir() and (path / MANIFEST).is_file()


def read_tables(in_dir: str | os.PathLike[str]) -> Trace:
    """Read a directory written by :func:`write_tables` back into a Trace."""
    source = pathlib.Path(in_dir)
    try:
        manifest = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
        fmt = manifest["table_format"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TraceFormatError(f"{source / MANIFEST}: not a tracegen table manifest ({exc})") from exc
    if fmt not in ("csv", "parquet"):
        raise TraceFormatError(f"{source / MANIFEST}: 'table_format' must be csv or parquet (got {fmt!r})")
    tables = {}
    for name, schema in SCHEMAS.items():
        path = source / f"{name}.{fmt}"
        try:
            if fmt == "csv":
                frame = pd.read_csv(path, dtype=dict(schema), keep_default_na=False, na_values=[""])
            else:
                frame = pd.read_parquet(path)
        except (OSError, ValueError) as exc:
            raise TraceFormatError(f"{path}: cannot read table {name!r}: {exc}") from exc
        tables[name] = make_table(name, frame)
    return Trace(source=str(manifest.get("source", source)), source_format=str(manifest.get("source_format")),
                 lost=tuple(manifest.get("lost") or ()),
                 skipped={str(k): int(v) for k, v in (manifest.get("skipped") or {}).items()}, **tables)
