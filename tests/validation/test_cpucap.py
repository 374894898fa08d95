"""The CPU a process may use: cgroup v1 and v2 quotas, on its own cgroup or above it, and a real v1 cgroup."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from validation.cpucap import cfs_quota


def _write(root: pathlib.Path, rel: str, name: str, text: str) -> None:
    directory = root / rel
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(text)


def test_v2_a_limit_above_the_process_binds_it(tmp_path: pathlib.Path) -> None:
    """A pod limited to 2 CPUs, its container unlimited: the pod's limit holds (the tightest over the path)."""
    _write(tmp_path, "kubepods/pod1", "cpu.max", "200000 100000\n")
    _write(tmp_path, "kubepods/pod1/ctr", "cpu.max", "max 100000\n")
    assert cfs_quota("0::/kubepods/pod1/ctr\n", tmp_path) == (200_000, 100_000)
    _write(tmp_path, "kubepods/pod1/ctr", "cpu.max", "50000 100000\n")  # a tighter one of its own
    assert cfs_quota("0::/kubepods/pod1/ctr\n", tmp_path) == (50_000, 100_000)


def test_v1_own_group_as_cpu_or_as_cpu_cpuacct(tmp_path: pathlib.Path) -> None:
    _write(tmp_path, "cpu/node", "cpu.cfs_quota_us", "3000\n")
    _write(tmp_path, "cpu/node", "cpu.cfs_period_us", "10000\n")
    assert cfs_quota("4:cpu:/node\n", tmp_path) == (3000, 10_000)
    _write(tmp_path, "cpu,cpuacct/other", "cpu.cfs_quota_us", "50000\n")
    _write(tmp_path, "cpu,cpuacct/other", "cpu.cfs_period_us", "100000\n")
    assert cfs_quota("2:cpu,cpuacct:/other\n", tmp_path) == (50_000, 100_000)


@pytest.mark.parametrize("tree", [
    {"cpu.max": "max 100000\n"},  # v2, no limit
    {"cpu.max": "garbage\n"},  # unreadable: ignored, not an error
    {"cpu.max": "0 100000\n"},
    {},  # no files at all (no cgroup mount, or a sysfs that does not show it)
])
def test_no_quota_when_there_is_none_or_it_cannot_be_read(tmp_path: pathlib.Path, tree: dict[str, str]) -> None:
    for name, text in tree.items():
        _write(tmp_path, "a", name, text)
    assert cfs_quota("0::/a\n", tmp_path) is None
    assert cfs_quota("", tmp_path) is None and cfs_quota("not a cgroup line\n", tmp_path) is None


def test_a_path_cannot_climb_out_of_the_hierarchy(tmp_path: pathlib.Path) -> None:
    """'..' in /proc/self/cgroup's path is dropped: nothing above the hierarchy's root is read."""
    root = tmp_path / "root"
    _write(tmp_path, "root", "cpu.max", "100000 100000\n")
    (tmp_path / "cpu.max").write_text("1 100000\n")  # above the root: a tighter limit that must not count
    assert cfs_quota("0::/../..\n", root) == (100_000, 100_000)


V1_CPU = pathlib.Path("/sys/fs/cgroup/cpu")


@pytest.mark.root
@pytest.mark.skipif(not (V1_CPU / "cpu.cfs_quota_us").is_file(), reason="needs the cgroup v1 cpu controller")
def test_a_real_process_in_a_real_quota_reads_it() -> None:
    group = V1_CPU / f"tracegen_cpucap_test_{os.getpid()}"
    group.mkdir()
    try:
        (group / "cpu.cfs_period_us").write_text("10000\n")
        (group / "cpu.cfs_quota_us").write_text("3000\n")
        code = ("from validation.cpucap import cpu_allowance, cpu_quota; "
                "print(cpu_allowance(), cpu_quota()['period_us'])")
        out = subprocess.run(["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(group / "cgroup.procs"),
                              sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             cwd=pathlib.Path(__file__).resolve().parents[2]).stdout.split()
        assert out == ["0.3", "10000"]
    finally:
        group.rmdir()
