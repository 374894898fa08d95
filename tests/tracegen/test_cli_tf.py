"""The commands that run real TensorFlow (:mod:`tracegen.cli_tf`: ``profile``, ``testbed``, ``netbench``): the
options and outputs they refuse, each before any job starts."""

from __future__ import annotations

import pathlib

import pytest

from tracegen.cli import main


@pytest.mark.parametrize(("widths", "said"), [(",,", "width 1 of ',,' must be a whole number"),
                                              ("512,,512", "width 2 of '512,,512' must be a whole number"),
                                              ("9" * 30, "must be less than 10^18")])
def test_widths_with_an_empty_or_huge_entry_are_refused(widths: str, said: str, tmp_path: pathlib.Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """'--widths ,,' traced the zoo's default widths without a word (the empty entries were dropped)."""
    with pytest.raises(SystemExit) as exited:
        main(["profile", "--widths", widths, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and said in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("api", ["tf1", "tf2"])
def test_profile_out_naming_a_file_says_so_before_any_job(api: str, tmp_path: pathlib.Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """It said only '/path: File exists', once TensorFlow's version had been looked up."""
    import validation.capture
    import validation.capture_tf2

    def no_tensorflow() -> str:
        raise AssertionError("looked for TensorFlow with an --out it cannot write into")

    for module in (validation.capture, validation.capture_tf2):
        monkeypatch.setattr(module, "tensorflow_version", no_tensorflow)
    taken = tmp_path / "results"
    taken.write_text("mine")
    assert main(["profile", "--api", api, "--warmup", "0", "--out", str(taken)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{taken}: is a file, not a directory; --out names the directory" in err
    assert taken.read_text() == "mine"
    loop = tmp_path / "loop"  # said 'loop: File exists'
    loop.symlink_to("loop")
    assert main(["profile", "--api", api, "--warmup", "0", "--out", str(loop)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{loop}: a symbolic link that loops; --out names the directory" in err, err


@pytest.mark.parametrize(("argv", "what"), [
    (["profile"], "a directory"), (["profile", "--api", "tf2", "--warmup", "0"], "a directory"),
    (["netbench", "run", "--ps", "127.0.0.1:7070"], "the profile's file"),
])
def test_an_empty_out_is_refused_not_read_as_the_current_directory(argv: list[str], what: str,
                                                                   tmp_path: pathlib.Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """'--out ""' (an unset shell variable) is no path, as predict and sweep already said: pathlib reads '' as '.',
    so profile traced into the current directory, and netbench run blamed '.' ('a directory; --out names the
    profile's file'), a name the user never gave."""
    import validation.capture
    import validation.capture_tf2

    def no_tensorflow() -> str:
        raise AssertionError("looked for TensorFlow with an --out that names nothing")

    for module in (validation.capture, validation.capture_tf2):
        monkeypatch.setattr(module, "tensorflow_version", no_tensorflow)
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--out", ""]) == 2
    err = capsys.readouterr().err
    assert err == f"tracegen {argv[0]}: error: '--out' must name {what} (got an empty string)\n"
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(("argv", "option"), [
    (["profile", "--out", "trace", "--netbench"], "--netbench"), (["netbench", "run", "--ps"], "--ps"),
])
@pytest.mark.parametrize("bad", ["host", "host:", ":7070", "host:0", "[::1]:0", "[::1]:70700"])
def test_a_bad_ps_address_is_named_by_its_option(argv: list[str], option: str, bad: str, tmp_path: pathlib.Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The refusal named the config's field, 'ps', an option neither command has ('profile --netbench host' said
    "'ps' must be HOST:PORT ...")."""
    monkeypatch.chdir(tmp_path)
    assert main([*argv, bad]) == 2
    err = capsys.readouterr().err
    assert err == (f"tracegen {argv[0]}: error: '{option}' must be HOST:PORT (an IPv6 address in brackets: "
                   f"[::1]:PORT) with a port from 1 to 65535 (got {bad!r})\n")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(("option", "value", "said"), [
    ("--window", "0", "'window_s' (--window) must be > 0 (got 0.0)"),
    ("--queue-latency", "-1", "'latency_ms' (--queue-latency) must be > 0 and <= 10000 (got -1.0)"),
    ("--burst", "100", "'burst_bytes' (--burst) must be >= 1514 (one full Ethernet frame) (got 100)"),
    ("--cpu-ps", "0", "'cpu_cap_ps' (--cpu-ps) must be > 0 cores (got 0.0)"),
    ("--warmup", "0", "'warmup_steps' (--warmup) must be >= 1 (got 0)"),
    ("--netbench-tensors", "2000", "--netbench-tensors must be from 1 to 1000 (got 2000)"),
    ("--netbench-tensor-bytes", "2", "--netbench-tensor-bytes must be from 4 to 1073741824 (got 2)"),
])
@pytest.mark.usefixtures("no_testbed")
def test_a_testbed_setting_is_refused_with_the_option_that_sets_it(option: str, value: str, said: str,
                                                                    tmp_path: pathlib.Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The settings' checks name their fields ('window_s', 'latency_ms'), which no option is called: the user of
    ``--window 0`` or ``--queue-latency -1`` was left to guess which of some thirty options was meant."""
    argv = ["testbed", "--bandwidth", "100Mbit/s", "--workers", "1", option, value, "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"tracegen testbed: error: {said}\n"
    assert not (tmp_path / "o").exists()


@pytest.mark.usefixtures("no_testbed")
def test_a_netbench_payload_without_a_link_profile_is_refused(tmp_path: pathlib.Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """--netbench-tensors shapes the profile's payload; with --no-link-profile nothing would use it, and the run
    would have gone ahead as if it had."""
    argv = ["testbed", "--bandwidth", "100Mbit/s", "--workers", "1", "--netbench-tensors", "8", "--no-link-profile",
            "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    assert capsys.readouterr().err == ("tracegen testbed: error: --netbench-tensors and --netbench-tensor-bytes shape "
                                       "the link profile's payload, and --no-link-profile measures none\n")
    assert not (tmp_path / "o").exists()


def test_a_tf2_profile_of_one_step_and_one_host_is_said_in_the_singular(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # said 'profiled 1 step(s) of mlp ..., 1 hosts, into'. Only the words are tested here: the capture is replaced
    # by one that returns one host's file (test_capture.py runs the real one, which writes several)
    import validation.capture_tf2

    def one_host(out: pathlib.Path, **_kw: object) -> list[pathlib.Path]:
        return [out / "plugins/profile/run/h.xplane.pb"]

    monkeypatch.setattr(validation.capture_tf2, "capture", one_host)
    assert main(["profile", "--api", "tf2", "--steps", "1", "--out", str(tmp_path / "o")]) == 0
    line = capsys.readouterr().out
    assert "profiled 1 step of " in line and ", 1 host, into " in line, line


def test_profile_ps_goes_to_the_tf2_capture_and_is_refused_where_it_cannot_run(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """--ps K profiles a TF2 job on K PS tasks (tests/parsers/test_xplane_ps2.py reads one it made); a tf1 profile
    runs one PS, and more than the emulated cluster's PS tasks are refused, each before any job."""
    import validation.capture
    import validation.capture_tf2

    asked: list[object] = []

    def capture(out: pathlib.Path, **kw: object) -> list[pathlib.Path]:
        asked.append(kw["ps_tasks"])
        return [out / "plugins/profile/run/h.xplane.pb"]

    def no_job(*_args: object, **_kw: object) -> None:
        raise AssertionError("ran a job with a --ps it cannot honour")

    monkeypatch.setattr(validation.capture_tf2, "capture", capture)
    monkeypatch.setattr(validation.capture, "profile", no_job)
    assert main(["profile", "--api", "tf2", "--ps", "2", "--steps", "1", "--out", str(tmp_path / "o")]) == 0
    assert asked == [2]
    for argv, said in ((["--ps", "2"], "--ps: a tf1 profile runs one PS task; several need --api tf2 (got 2)"),
                       (["--api", "tf2", "--ps", "9"], "--ps must be from 1 to 8 PS tasks (got 9)"),
                       (["--api", "tf2", "--ps", "0"], "--ps must be from 1 to 8 PS tasks (got 0)")):
        capsys.readouterr()
        assert main(["profile", *argv, "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and said in err, err
    assert asked == [2] and not (tmp_path / "x").exists()


@pytest.mark.parametrize(("steps", "said"), [(1, "traced 1 step of mlp"), (3, "traced 3 steps of mlp")])
def test_a_tf1_profile_counts_its_steps_in_words(steps: int, said: str, tmp_path: pathlib.Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """It said 'traced 1 step(s) of mlp'; as the TF2 test above, the capture is replaced (test_capture.py runs it)."""
    import validation.capture

    def traced(_config: object, out: pathlib.Path) -> list[pathlib.Path]:
        return [out / f"step_{i:03d}.pb" for i in range(steps)]

    monkeypatch.setattr(validation.capture, "profile", traced)
    assert main(["profile", "--steps", str(steps), "--out", str(tmp_path / "o")]) == 0
    assert capsys.readouterr().out.startswith(f"{said} (batch "), said
