"""The ``tracegen`` command: a thin shell over the library, one subcommand per task.

Every subcommand parses its options, calls one library function, prints a short summary and writes files only
where told. Library errors become one line on stderr and exit code 2; a traceback is a bug. The CLI is the
outermost layer, so it alone may reach into ``validation`` (for the commands that run real TensorFlow), and
only lazily, inside the handler that needs it.
"""

from __future__ import annotations

import argparse
import json
import logging
import pathlib
import re
import signal
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from parsers import TraceError, read_trace
from parsers.errors import one_line
from parsers.traceviewer import clock_note
from tracegen.cli_convert import add_convert_arguments, run_convert
from tracegen.cli_plan import add_plan_arguments, run_plan
from tracegen.cli_predict import TRACE_HELP, add_predict_arguments, run_predict
from tracegen.cli_sweep import add_sweep_arguments, run_sweep
from tracegen.cli_tf import add_tf_commands
from tracegen.console import StdoutError, discard_stdout, standard_streams
from tracegen.errors import TracegenError
from tracegen.inputs import profile_beside
from tracegen.summary import summarize
from tracegen.units import counted, format_bytes

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a tool killed by a closed pipe returns


def _inspect(args: argparse.Namespace) -> int:
    summary = summarize(read_trace(args.trace))
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        print(format_summary(summary, profile_beside(args.trace)))
    return 0


def _fmt_bytes(n: float | None) -> str:
    if n is None:
        return "unknown"
    return format_bytes(n) if n < 1000 else f"{format_bytes(n)} ({int(n)} B)"


def _moved_bytes(s: dict[str, Any], direction: str) -> str:
    """A direction's bytes per step; where some tensors were never recorded with a size, the bytes of the rest
    and how many (a TF2 profile's control edge: 'unknown' hid the 342 kB its other four pulls carry)."""
    unsized, sized = s[f"{direction}_unsized"], s[f"{direction}_sized_bytes"]
    if not unsized or sized is None:
        return _fmt_bytes(s[f"{direction}_bytes"])
    return (f"{_fmt_bytes(sized)} in the {s[f'{direction}_count'] - unsized} sized, "
            f"{counted(unsized, 'tensor')} never recorded with a size (predict: its variable's size; 0 B beside "
            "a gather or a sparse update, or where no variable is near)")


LISTED_STEPS = 12  # a line lists at most this many steps' figures (a synthetic trace of 8 workers has hundreds)


def _per_step(figures: list[str]) -> str:
    """Each step's figure, comma-separated; past :data:`LISTED_STEPS`, the first ones and the last, and how many."""
    if len(figures) <= LISTED_STEPS:
        return ", ".join(figures)
    return (", ".join(figures[:LISTED_STEPS - 2]) + f", ..., {figures[-1]} ({len(figures)} steps; each in "
            "inspect --json)")


def _recorded(counts: list[int]) -> str:
    """Records per step as a list; a long one as one count, where every step has it, else shortened."""
    if len(counts) <= LISTED_STEPS:
        return str(counts)
    if len(set(counts)) == 1:
        return f"{counts[0]} in each of the {len(counts)} steps"
    return "[" + _per_step([str(c) for c in counts]) + "]"


def _fmt_ms(ns: float | None) -> str:
    return "unknown" if ns is None else f"{ns / 1e6:.3f} ms"


def format_summary(s: dict[str, Any], profile: pathlib.Path | None = None) -> str:
    """The human-readable form of :func:`tracegen.summary.summarize`'s result; ``profile``: the link profile
    beside the trace, if any, which ``predict`` uses for the PS link instead of the trace's own estimate."""
    rate = {k: "unknown" if s[k] is None else f"{s[k] * 8 / 1e6:.1f} Mbit/s"
            for k in ("pull_rate_bytes_per_s", "push_rate_bytes_per_s")}
    lines = [
        f"trace      {s['source']} ({s['source_format']})",
        f"steps      {s['n_steps']} traced; step time {_fmt_ms(s['step_time_ns'])} (median); per step: "
        + _per_step([_fmt_ms(t) for t in s["step_time_ns_per_step"]]),
        f"devices    {len(s['devices'])}: " + ", ".join(s["devices"]),
        # a median of an even number of steps is a float: '48.0 per step' beside whole counts read as a measurement
        f"ops        {'unknown' if s['ops_per_step'] is None else format(s['ops_per_step'], 'g')} per step (median)",
        f"params     {'unknown variables' if s['n_variables'] is None else counted(s['n_variables'], 'variable')}, "
        f"{'unknown elements' if s['param_elements'] is None else counted(s['param_elements'], 'element')}, "
        f"{_fmt_bytes(s['param_bytes'])}"
        + (f"; plus {counted(s['n_other_variables'], 'other variable')} ({_fmt_bytes(s['other_variable_bytes'])})"
           if s["n_other_variables"] else ""),
        f"pulls      {s['pull_count']} per step, {_moved_bytes(s, 'pull')}; recorded per step: "
        f"{_recorded(s['pull_count_recorded_per_step'])}",
        f"pushes     {s['push_count']} per step, {_moved_bytes(s, 'push')}"
        + (f" ({counted(s['gradient_push_count'], 'gradient')}, {_fmt_bytes(s['gradient_push_bytes'])})"
           if s["gradient_push_count"] is not None else "")
        + f"; recorded per step: {_recorded(s['push_count_recorded_per_step'])}",
        # each figure is its own median over the steps, and the share the median of each step's own: on the mlp
        # trace 'in flight 20.706 ms; ... overlap 2.657 ms (21% of transfer time)', where 2.657 / 20.706 is 13 %
        f"transfers  in flight {_fmt_ms(s['transfer_time_ns'])}; compute {_fmt_ms(s['compute_time_ns'])}; "
        f"overlap {_fmt_ms(s['overlap_ns'])}"
        + (f", {s['overlap_fraction']:.0%} of a step's transfer time" if s["overlap_fraction"] is not None else "")
        + (" (each the median over steps, taken apart)" if s["n_steps"] > 1 else ""),
        f"rate       pulls {rate['pull_rate_bytes_per_s']}, pushes {rate['push_rate_bytes_per_s']} (observed)",
    ]
    link = s["link_estimate"]
    if link is not None:
        lines.append(f"link est.  pull {link['pull_bandwidth_bytes_per_s'] * 8 / 1e6:.1f} Mbit/s, push "
                     f"{link['push_bandwidth_bytes_per_s'] * 8 / 1e6:.1f} Mbit/s, latency "
                     f"{link['latency_ns'] / 1e3:.0f} us (the trace's own: {link['method']}; "
                     + ("predict's PS link when no link-profile.json is beside the trace and no --bandwidth is given)"
                        if profile is None else
                        f"predict's PS link is {profile}, beside the trace, unless --bandwidth: this estimate only "
                        "caps one worker's connection and gives the latency)"))
    if s["lost"]:
        lines.append("not in this format: " + "; ".join(s["lost"]))
    if (clocks := clock_note(s["lost"])) is not None:
        lines.append(f"note: {clocks}")
    if s["skipped"]:
        # each reason is a plural phrase ("op events outside every step"): its count after it reads right for 1 too
        lines.append("skipped: " + "; ".join(f"{why}: {n}" for why, n in sorted(s["skipped"].items())))
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other error of the command (the usage is
    what ``--help`` prints); its subcommands' parsers are of this class too. Each records itself as the namespace's
    ``parser`` (the deepest subcommand's wins), for the errors that argparse raises on the top parser. An option
    is written in full: argparse's abbreviations took ``predict --seed 3`` (an option of plan and sweep) for
    ``--seeds 3``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})
        self.set_defaults(parser=self)

    def print_help(self, file: SupportsWrite[str] | None = None) -> None:
        if file is None or file is sys.stdout:
            _print_or_exit(self, self.format_help())
        else:
            super().print_help(file)

    def error(self, message: str) -> NoReturn:
        """Print ``<prog>: error: <message>`` and a pointer to ``--help`` on one line, exit 2. An option whose
        value is missing may have had one that argparse took for an option (``--bandwidth -1Gbit/s``): the line
        says how to give such a value."""
        missing = re.fullmatch(r"argument (--[\w-]+)(?:/\S+)?: expected one argument", message)
        if missing:
            message += f" (a value that begins with '-' is written {missing[1]}=VALUE)"
        self.exit(EXIT_USAGE, f"{self.prog}: error: {_one_line(message)} (see '{self.prog} --help')\n")


class _Version(argparse.Action):
    """``--version``: the package's version and its engine, compiled or pure Python (what a bug report needs;
    the engine is looked up only when asked, as it imports the simulation)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        from tracegen import native, own_version

        python = sys.version.split()[0]
        _print_or_exit(parser, f"tracegen {own_version()} (engine: {native.engine()}; Python {python})\n")
        parser.exit()


def _print_or_exit(parser: argparse.ArgumentParser, text: str) -> None:
    """Write ``text`` to standard output for ``--help`` or ``--version``; a reader gone ends the command quietly,
    as the commands end, and an output that cannot take it in one line (argparse dropped such an error and
    exited 0: ``tracegen --help > /dev/full`` printed nothing and said nothing)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        discard_stdout()
        parser.exit(EXIT_BROKEN_PIPE)
    except OSError as exc:
        discard_stdout()
        parser.exit(EXIT_USAGE, f"{parser.prog}: error: cannot write to standard output: {exc.strerror or exc}\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = _Parser(prog="tracegen", description=(
        "Predict how asynchronous parameter-server training scales, from one worker's TensorFlow trace."))
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (repeat for debug)")
    parser.add_argument("--version", action=_Version, help="print the version and which simulation engine runs")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("inspect", help="summarise a trace: steps, parameters, transfers, overlap, rates")
    p.add_argument("trace", help=TRACE_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object (keys in tracegen.summary)")
    p.set_defaults(handler=_inspect)

    p = sub.add_parser("convert", help="write the normalised trace as Chrome JSON or as tables, with the files "
                                       "predict reads beside it")
    add_convert_arguments(p)
    p.set_defaults(handler=run_convert)

    p = sub.add_parser("predict", help="predict throughput for N workers from one worker's trace")
    add_predict_arguments(p)
    p.set_defaults(handler=run_predict)

    p = sub.add_parser("plan", help="which cluster to rent: every worker type x PS type x N of an instance "
                                    "catalogue, priced, and the cheapest that reaches a target rate")
    add_plan_arguments(p)
    p.set_defaults(handler=run_plan)

    p = sub.add_parser("sweep", help="simulate a grid (N x links x PS shards x policies x worker speeds x seeds) "
                                     "into a Parquet dataset that a rerun resumes; local processes or a Ray cluster")
    add_sweep_arguments(p)
    p.set_defaults(handler=run_sweep)
    add_tf_commands(sub)
    return parser


class Terminated(BaseException):  # named for what happened, like KeyboardInterrupt
    """SIGTERM or SIGHUP arrived: unwinds the command so that its temporary files and processes go. A
    BaseException, as KeyboardInterrupt is: the handler raises it wherever the main thread happens to be, and a
    library's ``except Exception`` there (a thread pool's, a Parquet writer's) must not catch it and go on or
    turn it into another error."""


def _terminate(signum: int, _frame: object) -> None:
    raise Terminated(signal.Signals(signum).name)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tracegen`` command line; returns the exit code."""
    with standard_streams():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    from validation.errors import TerminatedError, ValidationError

    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # argparse names only 'tracegen' and points to its help, which lists no command's options
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.verbose:
        logging.basicConfig(level=logging.DEBUG if args.verbose > 1 else logging.INFO,
                            format="%(levelname)s %(name)s: %(message)s")
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, _terminate) for sig in (signal.SIGTERM, signal.SIGHUP)
                    if signal.getsignal(sig) is not signal.SIG_IGN}  # nohup's ignored SIGHUP stays ignored
    try:
        code = int(args.handler(args))
        sys.stdout.flush()  # here, where a failure is one line, not at the interpreter's exit (exit code 120)
        return code
    except (Terminated, TerminatedError) as exc:  # TerminatedError: the testbed's or netbench's, a stop too
        name = str(exc) if isinstance(exc, Terminated) else signal.Signals(exc.signum).name
        print(f"tracegen {args.command}: stopped by {name}{_when(exc)}", file=sys.stderr)
        return 128 + signal.Signals[name].value  # 143 for SIGTERM, 129 for SIGHUP, as the shell reports them
    except (TraceError, TracegenError, ValidationError) as exc:
        print(f"tracegen {args.command}: error: {_one_line(with_option(str(exc), args.command))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # the reader went away (| head): stop quietly, as other Unix tools do
        discard_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # an output that cannot be written: say which and why, in one line
        where = exc.filename or "cannot write its output"
        if isinstance(exc, StdoutError):  # a full disk under '> file' (Python's own error names no file)
            discard_stdout()  # what is still buffered: the interpreter's last flush would fail on it (exit 120)
            where = "cannot write to standard output"
        # a path may be longer than the system takes (File name too long): shortened in the middle, as a reader's
        print(f"tracegen {args.command}: error: {one_line(f'{where}: {exc.strerror or exc}')}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        print(f"tracegen {args.command}: interrupted{_when(exc)}", file=sys.stderr)
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


_SIMULATION_SETTINGS = {"steps": "--steps", "warmup_steps": "--warmup-steps", "seeds": "--seeds", "jobs": "--jobs",
           "batch_size": "--batch-size", "payload_fraction": "--payload-fraction", "workers": "--workers",
           "link": "--link", "policy": "--policy"}
# per command, the settings the library's checks name (``'window_s' must be > 0``) and the options that set them
OPTIONS_OF_FIELDS = {
    "predict": {**_SIMULATION_SETTINGS, "ps_threads": "--ps-threads", "timing": "--timing", "placement": "--placement"},
    "validate": _SIMULATION_SETTINGS,
    "plan": {**_SIMULATION_SETTINGS, "step_budget": "--step-budget", "samples": "--samples", "target_samples_per_s":
             "--target-rate", "placement": "--placement"},
    "sweep": {**_SIMULATION_SETTINGS, "placement": "--placement"},
    "testbed": {
        "model": "--model", "workers": "--workers", "n_workers": "--workers", "bandwidth": "--bandwidth",
        "rate_bits_per_s": "--bandwidth", "batch_size": "--batch-size", "widths": "--widths",
        "burst_bytes": "--burst", "latency_ms": "--queue-latency", "repeats": "--repeats", "window_s": "--window",
        "window_steps": "--window-steps", "max_window_s": "--max-window", "warmup_steps": "--warmup",
        "cpu_cap_ps": "--cpu-ps", "cpu_cap_worker": "--cpu-worker", "traced_steps": "--traced-steps",
        "subnet": "--subnet", "timeout_s": "--timeout", "worker_caps": "--worker-caps", "api": "--api",
        "cpu_cap_coordinator": "--cpu-coordinator", "worker_links": "--worker-links", "n_ps": "--ps",
        "ps_tasks": "--ps", "placement": "--ps-placement"},
    "netbench": {"max_connections": "--max-connections", "window_s": "--window", "tensors": "--tensors",
                 "tensor_bytes": "--tensor-bytes", "connect_timeout_s": "--connect-timeout", "port": "--port",
                 "tf_port": "--tf-port", "cores": "--cores"},
}


def with_option(message: str, command: str) -> str:
    """``message`` with the option that sets the setting it begins with beside that setting's name:
    ``'window_s' (--window) must be > 0``. The library's checks name their fields, which no option need be called;
    a message about a file begins with the file, and is left as it is."""
    found = re.match(r"'(\w+)' ", message)
    option = OPTIONS_OF_FIELDS.get(command, {}).get(found.group(1)) if found else None
    if found is None or option is None:
        return message
    return f"{found.group()}({option}) {message[found.end():]}"


def _when(stop: BaseException) -> str:
    """What a stop's notes say of when it came (:class:`tracegen.outputs.OutputDir`: after the outputs were in
    place, so they are the new ones), as the end of its message."""
    return "".join(f" {note}" for note in getattr(stop, "__notes__", ()))


def _one_line(text: str, limit: int = 300) -> str:
    """A message on one line of bounded length (a library message may quote a long or multi-line value), its
    whitespace runs made one space and what is too long shortened as the trace reader's are
    (:func:`parsers.errors.one_line`: the longest words in their middles): the end was cut, and with it the
    line and the rule of 'validate --measured <a 400-character path>/m.csv'."""
    return one_line(" ".join(text.split()), limit)


if __name__ == "__main__":
    sys.exit(main())
