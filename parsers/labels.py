"""TensorFlow's ``timeline_label`` strings: the text that names a transfer or an op inside a NodeExecStats.

Two shapes occur in RunMetadata traces:
- a network receive: ``[20480B] [1.7Gb/s] edge_16_MatMul_2/ReadVariableOp from /job:ps/... to /job:worker/...``
  (size, observed rate, rendezvous tensor name, source and destination device);
- an op: ``fc1/kernel = VarHandleOp()`` or ``Relu = _MklNativeFusedMatMul(x, y, z)``, sometimes after a
  memory note: ``[mklcpu 1.0MB 1.0MB] gradients/MatMul_1_grad/MatMul_1 = _MklMatMul(Relu, ...)``.
"""

from __future__ import annotations

import dataclasses
import re

_RECV = re.compile(r"^\[(?P<size>[^\]]*)\] \[(?P<rate>[^\]]*)\] (?P<tensor>\S+) from (?P<src>\S+) to (?P<dst>\S+)$")
_OP = re.compile(r"^(?:\[[^\]]*\] )*(?P<name>\S+) = (?P<op>[A-Za-z0-9_>.]+)\(")
_EXACT_BYTES = re.compile(r"^(?P<n>[0-9]{1,20})B$")
# A GraphDef input: ``name``, ``name:slot`` or ``^name`` (control); slots in ASCII digits, at most 9 of them.
_INPUT = re.compile(r"(?P<control>\^?)(?P<name>[^:^][^:]*)(?::(?P<slot>[0-9]{1,9}))?")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RecvLabel:
    """What a ``RecvTensor`` label says. ``size_bytes`` is None when the label gives only a rounded size."""

    tensor_name: str
    src_device: str
    dst_device: str
    size_bytes: int | None


def parse_recv_label(label: str) -> RecvLabel | None:
    """Parse a ``RecvTensor`` label; None when it does not have the documented shape."""
    m = _RECV.match(label.strip())
    if m is None:
        return None
    exact = _EXACT_BYTES.match(m["size"])
    return RecvLabel(
        tensor_name=m["tensor"], src_device=m["src"], dst_device=m["dst"],
        size_bytes=int(exact["n"]) if exact else None,
    )


def split_input(text: str) -> tuple[str, int] | None:
    """A GraphDef node input: ``name:2`` → (name, 2); ``name`` → (name, 0); ``^name`` (control) → (name, -1);
    None for anything else (an empty name, a slot that is not ASCII digits, a control input with a slot)."""
    m = _INPUT.fullmatch(text)
    if m is None or (m["control"] and m["slot"] is not None):
        return None
    if m["control"]:
        return m["name"], -1
    return m["name"], int(m["slot"]) if m["slot"] is not None else 0


def parse_op_type(label: str) -> str | None:
    """The op type from an op label (``Relu = _MklNativeFusedMatMul(...)`` → ``_MklNativeFusedMatMul``)."""
    m = _OP.match(label.strip())
    return m["op"] if m else None
