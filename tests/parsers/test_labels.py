"""TensorFlow's label and input strings (``parsers/labels.py``): a receive's label, an op's type and a GraphDef
input, read exactly or refused."""

from __future__ import annotations

import pytest

from parsers.labels import RecvLabel, parse_op_type, parse_recv_label, split_input


@pytest.mark.parametrize("text", ["a:\u00b2", "a:\u0663", "^a:1", "a:9999999999", "", "^", ":1", "a::1"])
def test_malformed_inputs_are_refused(text: str) -> None:
    assert split_input(text) is None


@pytest.mark.parametrize(("text", "parsed"), [("a", ("a", 0)), ("a/b:2", ("a/b", 2)), ("^a/b", ("a/b", -1))])
def test_well_formed_inputs(text: str, parsed: tuple[str, int]) -> None:
    assert split_input(text) == parsed


def test_a_receive_label_gives_its_tensor_devices_and_exact_size() -> None:
    label = ("[20480B] [1.7Gb/s] edge_16_MatMul_2/ReadVariableOp from /job:ps/replica:0/task:0/device:CPU:0 "
             "to /job:worker/replica:0/task:0/device:CPU:0")
    assert parse_recv_label(f"  {label} ") == RecvLabel(
        tensor_name="edge_16_MatMul_2/ReadVariableOp", src_device="/job:ps/replica:0/task:0/device:CPU:0",
        dst_device="/job:worker/replica:0/task:0/device:CPU:0", size_bytes=20480)
    rounded = parse_recv_label(label.replace("[20480B]", "[20.0KB]"))
    assert rounded is not None and rounded.size_bytes is None  # a rounded size is no size
    assert parse_recv_label(label.replace(" from ", " of ")) is None
    assert parse_recv_label("fc1/kernel = VarHandleOp()") is None


def test_an_op_label_gives_its_type_after_any_memory_note() -> None:
    assert parse_op_type("fc1/kernel = VarHandleOp()") == "VarHandleOp"
    assert parse_op_type("[mklcpu 1.0MB 1.0MB] gradients/MatMul_1_grad/MatMul_1 = _MklMatMul(Relu, y)") == "_MklMatMul"
    assert parse_op_type("[a] [b] x = Op>Name.v2(y)") == "Op>Name.v2"
    assert parse_op_type("Relu _MklNativeFusedMatMul(x)") is None
    assert parse_op_type("[20480B] [1.7Gb/s] edge_1 from a to b") is None
