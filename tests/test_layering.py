"""The house rules that keep the three packages apart: imports flow parsers ← tracegen ← validation, and
each package is imported from this repository (PyPI has unrelated packages named tracegen and validation)."""

from __future__ import annotations

import ast
import importlib
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
LAYER = {"parsers": 0, "tracegen": 1, "validation": 2}
# The CLI (cli.py and its parts, cli_*.py) is the shell around all three packages; it alone reaches up, lazily,
# for the commands that run real TensorFlow.
ALLOWED_UPWARD = set((ROOT / "tracegen").glob("cli*.py"))


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _upward(package: str, root: pathlib.Path = ROOT) -> list[str]:
    """Each module of ``package`` (under ``root``) that imports a higher layer, with what it imports."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        if path in ALLOWED_UPWARD:
            continue
        upward = {n for n in _imports(path) if LAYER.get(n, -1) > LAYER[package]}
        if upward:
            found.append(f"{path.relative_to(root)} imports {sorted(upward)} from a higher layer")
    return found


# validation is the top layer: nothing lies above it, so only the two below it are checked.
@pytest.mark.parametrize("package", [p for p in sorted(LAYER) if LAYER[p] < max(LAYER.values())])
def test_imports_flow_one_way(package: str) -> None:
    assert not _upward(package)


def test_an_upward_import_is_found(tmp_path: pathlib.Path) -> None:
    """The check above finds what it looks for: a parsers module importing tracegen, in either form."""
    (tmp_path / "parsers").mkdir()
    (tmp_path / "parsers" / "a.py").write_text("import tracegen.model\n")
    (tmp_path / "parsers" / "b.py").write_text("from validation.errors import ValidationError\n")
    (tmp_path / "parsers" / "c.py").write_text("from . import trace\nimport numpy\n")
    assert _upward("parsers", tmp_path) == [
        "parsers/a.py imports ['tracegen'] from a higher layer",
        "parsers/b.py imports ['validation'] from a higher layer"]


@pytest.mark.parametrize("package", sorted(LAYER))
def test_packages_come_from_this_repository(package: str) -> None:
    module = importlib.import_module(package)
    assert pathlib.Path(module.__file__ or "").resolve().parent == ROOT / package


def test_reading_traces_needs_no_tensorflow() -> None:
    code = ("import sys; sys.modules['tensorflow'] = None\n"
            "from parsers import read_trace\n"
            f"t = read_trace({str(ROOT / 'data/traces/resnet')!r})\n"
            "print(len(t.variables))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(done.stdout) > 20


@pytest.mark.parametrize("proto", ["tf_trace", "xplane"])
def test_generated_protobuf_module_matches_its_proto(proto: str, tmp_path: pathlib.Path) -> None:
    proto_dir = ROOT / "parsers" / "proto"
    # In a process of its own: protoc's C++ protobuf clashes with TensorFlow's once both are loaded.
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{proto_dir}", f"--python_out={tmp_path}",
                    str(proto_dir / f"{proto}.proto")], check=True)
    # The serialized descriptor is the schema; the rest of the file only varies with protoc's version.
    fresh = [ln for ln in (tmp_path / f"{proto}_pb2.py").read_text().splitlines() if "AddSerializedFile" in ln]
    committed = (proto_dir / f"{proto}_pb2.py").read_text().splitlines()
    assert fresh and fresh[0] in committed, f"regenerate parsers/proto/{proto}_pb2.py (command in the .proto)"
