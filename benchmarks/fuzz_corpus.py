"""The seed corpus of ``fuzz_parsers.py``: the bundled real traces written out once per run in binary, text and
JSON forms, and gzip bombs; and the helpers every mutation family draws with (``pick``, ``pick_seed``).

Input ``k`` of a family is made from ``numpy.random.default_rng([seed, k, FAMILIES.index(family)])``: a family
draws only through its own generator, so the order of the draws in each module is the inputs themselves.
"""

from __future__ import annotations

import dataclasses
import gzip
import pathlib
import shutil
import struct
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
TRACES = ROOT / "data" / "traces"
FAMILIES = ("protobuf", "text", "json", "gzip", "bitflip")

Rng = np.random.Generator
Edit = tuple[bytes, str]  # an edited input and what was done to it


def pick(rng: Rng, items: Sequence[Any]) -> Any:
    """One of ``items``, uniformly."""
    return items[int(rng.integers(len(items)))]


def pick_seed(rng: Rng, corpus: Corpus, names: Sequence[str]) -> str:
    """One of the seed files ``names``, larger ones less often (weights 1/sqrt(size)): reading and modelling
    cost grows with size, and the large resnet trace would otherwise take most of a run's time."""
    weights = np.array([corpus.size(name) ** -0.5 for name in names])
    return names[int(rng.choice(len(names), p=weights / weights.sum()))]


# ----------------------------------------------------------------------------------------------- the corpus


@dataclasses.dataclass(frozen=True)
class Corpus:
    """Seed files made once per run from the bundled real traces, and gzip bombs; ``quick`` leaves out the
    edits that take seconds to read (very many events or records), for runs that must be short."""

    root: pathlib.Path
    quick: bool = False

    def read(self, name: str) -> bytes:
        return (self.root / name).read_bytes()

    def names(self, prefix: str) -> list[str]:
        return sorted(p.name for p in self.root.iterdir() if p.name.startswith(prefix))

    def size(self, name: str) -> int:
        return (self.root / name).stat().st_size


def build_corpus(root: pathlib.Path, bomb_bytes: int, *, quick: bool = False) -> Corpus:
    """Write the seeds into ``root``: binary, text and JSON forms of each bundled model's traced steps."""
    from google.protobuf import text_format

    from parsers import read_trace
    from parsers.chrome import write_trace
    from parsers.limits import MAX_BYTES
    from parsers.proto import tf_trace_pb2 as pb

    root.mkdir(parents=True, exist_ok=True)
    for model in sorted(p.name for p in TRACES.iterdir() if (p / "step_000.pb").is_file()):
        for step in ("000", "001"):
            shutil.copyfile(TRACES / model / f"step_{step}.pb", root / f"pb_{model}_{step}.pb")
        shutil.copyfile(TRACES / model / "step_000.json", root / f"tfjson_{model}.json")
        write_trace(read_trace(TRACES / model / "step_000.pb"), root / f"ownjson_{model}.json")
        if model != "resnet":  # text format parses at ~1 MB/s: the small models keep inputs quick
            md = pb.RunMetadata()
            md.ParseFromString((TRACES / model / "step_000.pb").read_bytes())
            (root / f"text_{model}.pbtxt").write_text(text_format.MessageToString(md))
    tf2 = sorted((TRACES / "tf2_pss").rglob("*.xplane.pb"))  # TF2 profiles: XSpaces, and as the trace viewer shows them
    for i, path in enumerate(tf2):
        shutil.copyfile(path, root / f"xplane_{i}.xplane.pb")
    for i, path in enumerate(sorted((TRACES / "tf2_pss_viewer").rglob("*.trace.json.gz"))):
        (root / f"viewer_{i}.json").write_bytes(gzip.decompress(path.read_bytes()))
    heads = {"zeros": b"", "json": b'{"traceEvents": [', "text": b"step_stats {\n"}
    for size_name, mib in (("big", bomb_bytes >> 20), ("under", (MAX_BYTES >> 20) - 1)):
        for head_name, head in heads.items():
            data = bomb(head, b" " if head else b"\0", mib, valid=size_name == "under")
            (root / f"bomb_{size_name}_{head_name}.gz").write_bytes(data)
    return Corpus(root, quick=quick)


def bomb(head: bytes, fill: bytes, mib: int, *, valid: bool = True) -> bytes:
    """A gzip file of ``head`` then ``fill`` bytes, ``mib`` MiB in all, made in milliseconds: after a full
    flush deflate forgets what came before, so every further MiB of ``fill`` compresses to the same block,
    written ``mib - 1`` times; then an empty last block and the trailer (CRC-32 and size), whose CRC is left 0
    unless ``valid`` (computing it takes a second per GiB, and a reader stopping at its limit never sees it)."""
    chunk = fill * (1 << 20)
    first = head + chunk[len(head) :]
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    start = comp.compress(first) + comp.flush(zlib.Z_FULL_FLUSH)
    block = comp.compress(chunk) + comp.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(first)
    for _ in range(mib - 1 if valid else 0):
        crc = zlib.crc32(chunk, crc)
    return start + block * (mib - 1) + b"\x03\x00" + struct.pack("<II", crc, (mib << 20) & 0xFFFFFFFF)
