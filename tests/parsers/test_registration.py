"""A TF2 step function's registration (``parsers/registration.py``): FunctionDefs found in an Enqueue event's text,
the step function's whole and components picked out and ordered, and the variables their resource arguments
describe, sized from dtype and shape."""

from __future__ import annotations

from typing import Any

import pytest

from parsers.errors import TraceContentError
from parsers.proto import tf_trace_pb2 as tfpb
from parsers.registration import function_variables, node_name, registered_functions, step_functions
from parsers.xspace import Event


def _event(text: str) -> Event:
    return Event(host="h", lane=0, line_name="l", name="EagerService:Enqueue", start_ns=0, dur_ns=1,
                 stats={"debug_str": text}, where="h.xplane.pb")


def _fdef(name: str, *args: tuple[str, int, str | None, tuple[int, ...]]) -> Any:
    """A FunctionDef of ``name`` with arguments (name, type, handle dtype or None, handle shape)."""
    fdef = tfpb.FunctionDef()
    fdef.signature.name = name
    for index, (arg, dtype, handle, dims) in enumerate(args):
        fdef.signature.input_arg.add(name=arg, type=dtype)
        if handle is not None:
            attrs = fdef.arg_attr[index].attr
            attrs["_handle_dtypes"].list.type.append(tfpb.DataType.Value(handle))
            shape = attrs["_handle_shapes"].list.shape.add()
            for d in dims:
                shape.dim.add(size=d)
    return fdef


def test_registered_functions_are_read_from_the_request_text_first_one_kept() -> None:
    skipped: dict[str, int] = {}
    text = ('register_function { function_def { signature { name: "f}_1" input_arg { name: "a" } } } } '
            'register_function { function_def { signature { name: "f}_1" input_arg { name: "b" } } } } '
            "register_function { function_def { signature { name: ) } } "
            'register_function { function_def { signature { name: "cut')
    found = registered_functions([_event(text), _event("no registration here"), _event("")], skipped)
    assert list(found) == ["f}_1"] and [a.name for a in found["f}_1"].signature.input_arg] == ["a"]
    assert skipped == {"function registrations whose text does not parse": 1}


def test_step_functions_are_the_whole_function_then_its_components() -> None:
    functions = {name: name for name in ("__inference_train_step_12_partitioned_40_7",
                                         "__inference_train_step_12", "__inference_train_step_12_partitioned_40_3",
                                         "__inference_train_step_eval_9", "__inference_other_5", "train_step")}
    assert step_functions(functions, "train_step") == ["__inference_train_step_12",
                                                       "__inference_train_step_12_partitioned_40_3",
                                                       "__inference_train_step_12_partitioned_40_7"]
    assert step_functions(functions, "absent") == []


def test_function_variables_size_the_resource_arguments_with_a_handle_shape() -> None:
    fdef = _fdef("f", ("w", tfpb.DT_RESOURCE, "DT_FLOAT", (256, 320)), ("b", tfpb.DT_RESOURCE, "DT_INT64", ()),
                 ("x", tfpb.DT_FLOAT, None, ()), ("h", tfpb.DT_RESOURCE, None, ()),
                 ("u", tfpb.DT_RESOURCE, "DT_HALF", (-1, 3)))
    found = function_variables(fdef, "h.xplane.pb")
    assert {k: (v.dtype, v.dims, v.size_bytes) for k, v in found.items()} == {
        "w": ("float32", (256, 320), 4 * 256 * 320), "b": ("int64", (), 8)}
    huge = _fdef("f", ("w", tfpb.DT_RESOURCE, "DT_DOUBLE", (2**21, 2**21)))
    with pytest.raises(TraceContentError, match=r"h\.xplane\.pb: argument 'w' of shape .* holds more than 2\*\*44"):
        function_variables(huge, "h.xplane.pb")


@pytest.mark.parametrize(("tensor", "node"), [("dense/MatMul:product:0", "dense/MatMul"), ("x", "x"), ("^ctl", "ctl"),
                                              ("^ctl:1", "ctl")])
def test_node_name(tensor: str, node: str) -> None:
    assert node_name(tensor) == node
