"""``tracegen convert``: the normalised trace as Chrome JSON or as tables, and the files that sit beside it.

The commands that read a trace also read the files beside it (:data:`parsers.read.BESIDE`: ``meta.json``'s batch
size, ``link-profile.json``'s measured link, ``single-worker.json``'s untraced worker). ``convert`` carries those
that are beside the trace to where the readers look beside its output (:func:`parsers.read.beside_dir`: into the
table directory; into a Chrome file's folder), so that ``predict`` on the output gives what it gives on the trace;
without them it used the trace's own link estimate and a batch of 1. They are written with the trace as one set
(:func:`parsers.atomic.staged_set`). A file of one of those names already at the output that is not the trace's
(another trace's, converted into the same folder), or that the trace has none of (it would be read as the new
trace's), is refused unless ``--force``, which replaces or removes it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import pathlib

from parsers import read_trace
from parsers.atomic import staged_set
from parsers.chrome import write_trace
from parsers.files import read_file
from parsers.read import BESIDE, beside_dir, is_pattern, side_files, trace_files_in, trace_inputs, would_join
from parsers.tables import MANIFEST, earlier_tables, is_table_dir, table_paths, write_tables
from parsers.trace import REPEATED_RECORDS
from tracegen.errors import ConfigError
from tracegen.outputs import folders_made, output_file, refuse_existing, refuse_input, refuse_sweep_dataset
from tracegen.units import counted

MAX_SIDE_BYTES = 1 << 20  # each reader's limit is at most this (a link profile's is 1 MiB)


def add_convert_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``tracegen convert``."""
    parser.add_argument("trace", help="any trace tracegen reads (see inspect)")
    parser.add_argument("--to", choices=("chrome", "parquet", "csv"), required=True,
                        help="chrome: one JSON file for Perfetto/chrome://tracing, gzipped if OUT ends in .gz; "
                             "parquet/csv: one file per table "
                             "(columns documented in parsers.trace) plus trace.json, into directory OUT. The files "
                             f"beside the trace ({', '.join(BESIDE)}) are copied beside the output: into OUT for "
                             "tables, into OUT's folder for chrome")
    parser.add_argument("out", help="output file (chrome) or directory (parquet, csv; a new one named like a file, "
                                    f"ending in {', '.join(FILE_SUFFIXES)}, must end in '/': out.json/; --to parquet "
                                    "may name it x.parquet, as datasets are)")
    parser.add_argument("--force", action="store_true",
                        help="overwrite existing output files, and replace (or remove, when the trace has none) "
                             f"any {', '.join(BESIDE)} beside the output that are not the trace's")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Carried:
    """What ``convert`` does to the files beside its output: ``write`` (where, what), ``kept`` (already there,
    the same bytes) and ``remove`` (there, but the trace has none). The trace's own, when the output goes beside
    it, are in none."""

    write: tuple[tuple[pathlib.Path, bytes], ...]
    kept: tuple[pathlib.Path, ...]
    remove: tuple[pathlib.Path, ...]

    def names(self) -> list[str]:
        """The names of the files carried (written or already there, the same), in :data:`BESIDE` order."""
        there = {p.name for p, _ in self.write} | {p.name for p in self.kept}
        return [name for name in BESIDE if name in there]


def carry_plan(trace: str, folder: pathlib.Path, *, force: bool) -> Carried:
    """What to write into and remove from ``folder`` so that it holds the files beside ``trace``
    (:func:`parsers.read.side_files`), no more and no fewer; ConfigError, before anything is written, for a file
    there that is not the trace's (unless ``force``) or that is a folder."""
    source = {p.name: p for p in side_files(trace)}
    write, kept, remove = [], [], []
    for name in BESIDE:
        target = folder / name
        if name in source and _same_file(source[name], target):  # a Chrome file written beside the trace: in place
            continue
        there = os.path.lexists(target)  # a link that leads nowhere is the user's too
        if there and target.is_dir():
            raise ConfigError(f"{target}: a directory where convert puts the trace's {name}; move it away")
        if name in source:
            data = read_file(source[name], MAX_SIDE_BYTES, ConfigError)
            if there and _holds(target, data):
                kept.append(target)
                continue
            if there and not force:
                raise ConfigError(f"{target}: already exists and differs from the trace's {source[name]}; it would be "
                                  "read with the converted trace: write into a folder of its own, or pass --force "
                                  "to replace it")
            write.append((target, data))
        elif there:
            if not force:
                raise ConfigError(f"{target}: would be read with the converted trace, which has no {name} beside "
                                  f"it ({beside_dir(trace)}): write into a folder of its own, or pass --force to "
                                  "remove it")
            remove.append(target)
    return Carried(write=tuple(write), kept=tuple(kept), remove=tuple(remove))


def _same_file(a: pathlib.Path, b: pathlib.Path) -> bool:
    with contextlib.suppress(OSError):  # either not there: not the same file
        return a.samefile(b)
    return False


def _holds(path: pathlib.Path, data: bytes) -> bool:
    """Whether ``path`` is a regular file holding ``data``."""
    try:
        return read_file(path, len(data), ConfigError) == data
    except ConfigError:  # longer, unreadable, not a regular file: not the same
        return False


def run_convert(args: argparse.Namespace) -> int:
    """``tracegen convert``: check the output, read the trace, write it with the files beside it."""
    if not args.out.strip():  # pathlib reads '' as '.': the tables went into the current directory
        raise ConfigError(f"'out' must name {'a file' if args.to == 'chrome' else 'a directory'} "
                          "(got an empty string)")
    if args.out == "-":  # the usual 'standard output' would have been a file named '-', and this line beside it
        raise ConfigError(f"'out' '-': convert writes {'a file' if args.to == 'chrome' else 'a directory'}, not "
                          "to standard output; name it (a file called '-' is './-')")
    _check_name(args.out, args.to)
    trace = read_trace(args.trace)
    out = pathlib.Path(args.out)
    _check_out(out, args.to, [*trace.steps["source"], args.trace, *side_files(args.trace)])
    _check_not_trace_file(out, args.trace)
    carried = carry_plan(args.trace, beside_dir(out) if args.to == "chrome" else out, force=args.force)
    if args.to == "chrome":
        with output_file(out, force=args.force, what="the trace there"), staged_set(carried.write):
            write_trace(trace, out)  # missing folders made, as tables' are
        written = [out]
    else:
        refuse_existing(table_paths(out, args.to), args.force)
        stale = earlier_tables(out, args.to) if out.is_dir() else []  # with --force: refused above without it
        # a link that loops or dangles on the way named as such
        with folders_made(out, "the tables there"), staged_set(carried.write):
            written = write_tables(trace, out, args.to)
        for path in stale:  # the replaced conversion's, of the old trace: removed once the new ones are written
            path.unlink(missing_ok=True)
        if stale:
            print(f"removed {counted(len(stale), 'file')} of the earlier conversion in {stale[0].suffix[1:]}: "
                  f"{', '.join(p.name for p in stale)}")
    for path in carried.remove:
        path.unlink(missing_ok=True)
    print(f"wrote {counted(len(written), 'file')}: {', '.join(str(p) for p in written)}")
    if names := carried.names():
        print(f"carried {', '.join(names)} from {beside_dir(args.trace)} into {beside_dir(written[0])}, where the "
              "commands that read the trace look for them")
    if carried.remove:
        print(f"removed {', '.join(str(p) for p in carried.remove)}: the trace has none, and predict would have "
              "read it with the converted trace")
    if repeated := trace.skipped.get(REPEATED_RECORDS):  # read once, as every command reads them: written once
        one = repeated == 1
        print(f"note: {counted(repeated, 'record')} that TensorFlow wrote twice, exactly the same, "
              f"{'is' if one else 'are'} written once, as {'it was' if one else 'they were'} read (inspect counts "
              f"{'it' if one else 'them'} under 'skipped')")
    return 0


# names that read as one file: a table directory named so ('out.json', 'x.parquet') surprised whoever expected one
FILE_SUFFIXES = (".json", ".gz", ".parquet", ".csv", ".pb", ".pbtxt", ".txt", ".zip")


def _check_name(raw: str, to: str) -> None:
    """ConfigError when the output as typed names the other kind of thing than ``to`` writes: a folder (a trailing
    '/') for one Chrome file, which pathlib dropped to write a file of the folder's name; a file name for a
    directory of tables, unless it is a directory already or ends in '/' (a dataset named ``x.parquet/``)."""
    out = pathlib.Path(raw)
    ends_in_sep = raw.endswith(("/", os.sep))
    if to == "chrome" and ends_in_sep and not out.is_dir():
        raise ConfigError(f"{raw}: ends in '/', a directory; --to chrome writes one file: name it, e.g. "
                          f"{out / 'chrome.json'}")
    if to == "chrome" and out.suffix.lower() in (".parquet", ".csv"):
        raise ConfigError(f"{raw}: --to chrome writes one Chrome JSON file, but the name reads as {out.suffix!r}: "
                          f"name it .json or .json.gz, or use --to {out.suffix[1:].lower()} for tables (a directory)")
    dataset = to == "parquet" and out.suffix.lower() == ".parquet"  # a Parquet dataset is a folder named so
    if (to != "chrome" and not ends_in_sep and not dataset and not os.path.lexists(out)
            and out.suffix.lower() in FILE_SUFFIXES):
        # the path once, not three times: a long one left no room for the suggestion in the line's 300 characters
        raise ConfigError(f"{raw}: --to {to} writes a directory (a file per table, and trace.json), not one "
                          f"{out.suffix!r} file: name a directory, e.g. "
                          f"{out.with_name(out.name.split('.')[0] or 'tables')}, or end the name in '/' to use it")


def _check_out(out: pathlib.Path, to: str, inputs: list[str | pathlib.Path]) -> None:
    """ConfigError when ``out`` is no place for a conversion ``to`` that format; ``inputs``: the files it reads."""
    if to == "chrome" and out.is_dir():  # else the rename onto it fails, naming only a temporary file
        raise ConfigError(f"{out}: a directory; --to chrome writes one file: name it, e.g. {out / 'chrome.json'}")
    if to != "chrome" and out.exists() and not out.is_dir():
        raise ConfigError(f"{out}: not a directory; --to {to} writes one file per table into a directory")
    if to != "chrome" and out.is_dir() and (steps := trace_files_in(out)):
        raise ConfigError(f"{out}: holds trace files (e.g. {steps[0].name}); tables written there would be read "
                          "instead of them from then on: write them into another directory")
    if to != "chrome":  # a Chrome file's folder is checked where it is written (output_file)
        refuse_sweep_dataset(out)
    if to == "chrome" and is_table_dir(out.parent):  # read_trace refuses tables with trace files beside them
        raise ConfigError(f"{out.parent}: holds converted tables ({MANIFEST}); a trace written there would be "
                          "read with them, and they could not be read again: write it elsewhere")
    if to == "chrome":  # --force replaces an earlier output, never the trace's own files
        refuse_input(out, inputs, "write it elsewhere")
        if out.name == MANIFEST:  # the folder would then read as converted tables, and no longer as this trace
            raise ConfigError(f"{out}: {MANIFEST} is the name of converted tables' manifest: a folder holding it "
                              f"reads as tables, not as this trace; name it otherwise, e.g. "
                              f"{out.with_name('chrome.json')}")
        if out.name in BESIDE:  # the trace would be written there, then the side file over it
            raise ConfigError(f"{out}: {out.name} is read beside a trace, as a trace's {out.name}; name the trace "
                              f"otherwise, e.g. {out.with_name('chrome.json')}")


def _check_not_trace_file(out: pathlib.Path, trace: str) -> None:
    """ConfigError, whatever ``--force`` says, when ``out`` is one of the trace files in a folder the trace is read
    from (:func:`parsers.read.trace_inputs`, :func:`parsers.read.trace_files_in`): one read, or one passed over
    for others of the same steps (TensorFlow's timeline JSON beside its RunMetadata). ``convert mlp --to chrome
    mlp/step_000.json --force`` replaced TensorFlow's timeline of step 0 with tracegen's JSON of all three steps.
    Also when a new file at ``out`` would become part of the trace (:func:`parsers.read.would_join`: read from
    a folder, or matched by a glob pattern)."""
    for folder in dict.fromkeys(p.parent for p in trace_inputs(trace)):
        for listed in trace_files_in(folder):
            with contextlib.suppress(OSError):  # either not there: not the same file
                if out.samefile(listed):
                    raise ConfigError(f"{out}: one of the trace's own files, not an earlier run's output; write "
                                      "it elsewhere")  # its folder is in its path: not named again
    if not os.path.lexists(out) and would_join(out, trace):
        if is_pattern(trace):  # its matches may lie in several folders
            raise ConfigError(f"{out}: matches the trace's pattern {trace!r}, so would be read as part of it; "
                              "write it elsewhere")
        raise ConfigError(f"{out}: would be read with the trace's files beside it from then on (or have the folder "
                          "refused as two traces); write it elsewhere")
