"""How the ``tracegen`` command ends when the world around it does (:mod:`tracegen.cli`, :mod:`tracegen.entry`):
SIGTERM, SIGHUP and Ctrl-C (while it imports, runs, or serves), a signal a library's catch-all must not swallow, a
hangup the caller ignores, a reader that closes the pipe, a full disk under standard output and a closed stderr."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

from tracegen.cli import Terminated, main

from tracegen_support import ROOT


def test_a_closed_pipe_ends_the_command_quietly() -> None:
    """``tracegen inspect X | head -1``: the reader goes away; no error message, the SIGPIPE exit code."""
    exe = pathlib.Path(sys.executable).parent / "tracegen"
    script = f"'{exe}' inspect --json '{ROOT / 'data/traces/resnet'}' | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False, timeout=120)
    assert done.stderr == ""
    assert done.stdout.strip() in ("0", "141")  # 0 when all was written before head left


def _default_stop_signals() -> None:
    import signal

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize(("sig", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_sigterm_removes_temporary_files_and_exits_143(sig: str, code: int, tmp_path: pathlib.Path) -> None:
    """A prediction stopped by SIGTERM (or a closed terminal's SIGHUP, which exited 143 too) leaves neither
    half-written outputs nor hidden temporary files, and says so in one line (with --jobs 2, a SIGHUP to the
    process group killed multiprocessing's resource tracker, whose tracebacks followed it)."""
    import signal

    exe = pathlib.Path(sys.executable).parent / "tracegen"
    # long enough, with any engine, to run in two processes and still be running when the signal comes
    proc = subprocess.Popen([str(exe), "predict", str(ROOT / "data/traces/cnn"), "--workers", "1-40", "--every-n",
                             "--steps", "300", "--jobs", "2", "--out", str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=_default_stop_signals)  # noqa: PLW1509 - a SIGTERM or SIGHUP ignored by whoever started pytest must not be inherited; only the signal dispositions are touched
    assert proc.stderr is not None
    said = []
    for line in proc.stderr:  # progress lines: the simulation is under way
        said.append(line)
        if "N=1 done" in line:
            break
    assert any("in 2 processes" in line for line in said), said
    os.killpg(proc.pid, getattr(signal, sig))  # the whole group, as a closed terminal does
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code and err.strip().splitlines()[-1] == f"tracegen predict: stopped by {sig}"
    assert "Traceback" not in err and "Warning" not in err
    assert not (tmp_path / "out").exists()  # it made the directory: nothing of it is left, its lock included


def test_a_signal_passes_through_a_librarys_catch_all() -> None:
    # SIGTERM's handler raises where the main thread is, maybe inside a library that catches Exception to retry
    # or to wrap it; the signal must reach main() (exit 143), not be swallowed or become "error" (exit 1)
    def library_call() -> None:
        try:
            raise Terminated("SIGTERM")
        except Exception:  # noqa: BLE001, S110 - what a library may do
            pass

    with pytest.raises(Terminated):
        library_call()


def _run(argv: list[str], *, unbuffered: bool = False, **how: Any) -> subprocess.CompletedProcess[str]:
    """The command in a process of its own (this checkout's), PYTHONUNBUFFERED as asked (pytest's may have it
    set, users mostly do not)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | ({"PYTHONUNBUFFERED": "1"} if unbuffered
                                                                              else {})
    return subprocess.run([sys.executable, "-m", "tracegen", *argv], text=True, check=False, timeout=120, env=env,
                          cwd=ROOT, **how)


@pytest.mark.parametrize("unbuffered", [False, True])
@pytest.mark.parametrize("command", ["inspect", "predict"])
def test_a_full_disk_under_standard_output_is_said_in_words(command: str, unbuffered: bool,
                                                             tmp_path: pathlib.Path) -> None:
    """It printed 'error: : No space left on device' (a hardening pass); then 'cannot write its output', which
    named no output, and only where PYTHONUNBUFFERED was set: without it (as users run it) the summary failed at
    the interpreter's exit, in two lines of "Exception ignored ... OSError" and exit code 120."""
    argv = ["inspect", str(ROOT / "data/traces/mlp")] if command == "inspect" else [
        "predict", str(ROOT / "data/traces/mlp"), "--workers", "1", "--steps", "3", "--seeds", "1", "--jobs", "1",
        "--out", str(tmp_path / "out")]
    with pathlib.Path("/dev/full").open("w") as full:
        done = _run(argv, unbuffered=unbuffered, stdout=full, stderr=subprocess.PIPE)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1:] == [f"tracegen {command}: error: cannot write to standard output: No space "
                                             "left on device"], done.stderr
    assert "Exception" not in done.stderr


def _close_stderr() -> None:
    os.close(2)


def test_with_stderr_closed_notes_and_warnings_do_not_go_to_stdout(tmp_path: pathlib.Path) -> None:
    """Started with 2>&- (a cron job, a service), Python has no sys.stderr, and print(file=None) writes to
    standard output: the warning and the progress lines went into the summary a script reads (a hardening pass).
    They are dropped, as a closed stderr asks; stdout is what it is with stderr elsewhere. A stderr that cannot be
    written (2> /dev/full) is as good as closed: the first progress line ended the run (exit 1)."""
    mlp = ROOT / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"  # its single-worker.json gives a warning

    def predict(out: str, **how: Any) -> subprocess.CompletedProcess[str]:
        return _run(["predict", str(mlp), "--workers", "1", "--bandwidth", "200Mbit/s", "--steps", "3", "--seeds",
                     "1", "--jobs", "1", "--out", str(tmp_path / out)], stdout=subprocess.PIPE, **how)

    seen = predict("seen", stderr=subprocess.PIPE)
    assert seen.returncode == 0 and "warning: " in seen.stderr and "simulating" in seen.stderr
    closed = predict("closed", stderr=subprocess.DEVNULL, preexec_fn=_close_stderr)
    assert closed.returncode == 0 and closed.stdout == seen.stdout.replace(str(tmp_path / "seen"),
                                                                           str(tmp_path / "closed"))
    with pathlib.Path("/dev/full").open("w") as full:
        unwritable = predict("full", stderr=full)
    assert unwritable.returncode == 0 and "wrote " in unwritable.stdout


def test_a_ctrl_c_while_the_command_line_is_imported_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A Ctrl-C in the first second (pandas and pyarrow importing) printed a KeyboardInterrupt traceback (a
    hardening pass): the import is where it lands, made to happen here."""
    import builtins

    from tracegen import entry

    real_import = builtins.__import__

    def interrupted(name: str, *args: Any, **kwargs: Any) -> Any:
        fromlist = args[2] if len(args) > 2 else kwargs.get("fromlist")
        if name == "tracegen" and "cli" in (fromlist or ()):
            raise KeyboardInterrupt
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", interrupted)
    assert entry.main(["inspect", "x"]) == 130
    assert capsys.readouterr().err == "tracegen: interrupted\n"


@pytest.mark.parametrize(("sig", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_sigterm_while_the_command_line_is_imported_is_one_line(sig: str, code: int) -> None:
    """A SIGTERM or SIGHUP in the first second (the command line's modules importing, before main() handles them)
    killed the command without a word; it is one line and the exit code the shell reports, as a Ctrl-C there is.
    Run in a process of its own: before the fix the signal kills whatever process it lands in."""
    script = f"""
import builtins, signal, sys
from tracegen import entry
real_import = builtins.__import__
def stopped(name, *args, **kwargs):
    fromlist = args[2] if len(args) > 2 else kwargs.get("fromlist")
    if name == "tracegen" and "cli" in (fromlist or ()):
        signal.raise_signal(signal.{sig})
    return real_import(name, *args, **kwargs)
builtins.__import__ = stopped
sys.exit(entry.main(["inspect", "x"]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120,
                          cwd=ROOT)
    assert (done.returncode, done.stderr) == (code, f"tracegen: stopped by {sig}\n")


def test_a_hangup_the_caller_ignores_stays_ignored(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``nohup tracegen predict ... &`` and a closed terminal: the command replaced nohup's ignored SIGHUP by its own
    handler and stopped ('stopped by SIGHUP', exit 129), losing the run nohup was there to keep. A signal the
    caller ignores is left ignored; the hangup lands here while the trace is read."""
    import signal

    from tracegen import cli

    real = cli.read_trace

    def hung_up(*args: Any, **kwargs: Any) -> Any:
        signal.raise_signal(signal.SIGHUP)
        return real(*args, **kwargs)

    monkeypatch.setattr(cli, "read_trace", hung_up)
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert main(["inspect", str(ROOT / "data/traces/mlp")]) == 0
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert "stopped" not in capsys.readouterr().err


@pytest.mark.parametrize(("sig", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_netbench_server_stopped_by_a_signal_says_so_with_the_shells_exit_code(sig: str, code: int) -> None:
    """``netbench serve`` (and the testbed) turn SIGTERM and SIGHUP into their own exception to remove what they
    started; the command printed it as an error ('error: received SIGTERM; stopping and removing what this run
    started') with exit code 2, a usage error's, where every other command says 'stopped by SIGTERM', 143."""
    import signal

    from validation.ports import free_port

    argv = [sys.executable, "-m", "tracegen", "netbench", "serve", "--bind", "127.0.0.1", "--port", str(free_port())]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True,
                            preexec_fn=_default_stop_signals)  # noqa: PLW1509 - only the signal dispositions are touched
    try:
        assert proc.stdout is not None
        assert "listening on" in proc.stdout.readline()
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert (proc.returncode, err) == (code, f"tracegen netbench: stopped by {sig}\n")


def test_a_testbed_stopped_by_a_hangup_says_what_it_could_not_remove(monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """What the emulated cluster could not remove rides on the stop as a note; the stop's one line keeps it."""
    import signal

    from validation import testbed
    from validation.errors import TerminatedError

    def hung_up(*_args: Any, **_kwargs: Any) -> None:
        stop = TerminatedError("received SIGHUP (signal 1); removing the emulated cluster 3fa9c1", signal.SIGHUP)
        stop.add_note("emulated cluster 3fa9c1: could not remove cgroup /sys/fs/cgroup/cpu/tracegen_3fa9c1_ps")
        raise stop

    monkeypatch.setattr(testbed, "run_testbed", hung_up)
    assert main(["testbed", "--bandwidth", "100Mbit/s", "--workers", "1", "--out", "o"]) == 129
    assert capsys.readouterr().err == ("tracegen testbed: stopped by SIGHUP emulated cluster 3fa9c1: could not remove "
                                       "cgroup /sys/fs/cgroup/cpu/tracegen_3fa9c1_ps\n")
