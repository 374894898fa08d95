"""The step function's registration in a TF2 profile, and the variables it describes.

A profile of a ``tf.function``'s first call holds its registration: every ``FunctionDef`` in the text of an
``EagerService:Enqueue`` event (``register_function``), the whole function and, on each PS, its component
(``__inference_<f>_partitioned_<id>_<k>``). Their resource arguments record the dtype and shape of the variable
each handle holds (``arg_attr``: ``_handle_dtypes``, ``_handle_shapes``). :mod:`parsers.xplane` sizes transfers
with these variables; :mod:`parsers.xgraph` rebuilds the partition graphs from the functions.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import Any

from google.protobuf import text_format

from parsers.errors import TraceContentError, quoted
from parsers.limits import check_text_shape
from parsers.proto import tf_trace_pb2 as tfpb
from parsers.trace import DTYPE_BYTES, MAX_SIZE_BYTES
from parsers.xspace import Event, tally

# A traced tf.function as the runtime names it, and its per-device components after partitioning.
INFERENCE = re.compile(r"^__inference_(?P<name>.+?)_(?P<uid>[0-9]+)(?P<part>_partitioned_[0-9]+_[0-9]+)?$")
_DTYPES = {"DT_FLOAT": "float32", "DT_DOUBLE": "float64", "DT_INT32": "int32", "DT_UINT8": "uint8",
           "DT_INT16": "int16", "DT_INT8": "int8", "DT_COMPLEX64": "complex64", "DT_INT64": "int64",
           "DT_BOOL": "bool", "DT_BFLOAT16": "bfloat16", "DT_UINT16": "uint16", "DT_COMPLEX128": "complex128",
           "DT_HALF": "float16", "DT_UINT32": "uint32", "DT_UINT64": "uint64"}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Variable:
    """A resource argument of the step function with its handle's dtype and shape."""

    arg: str
    dtype: str
    dims: tuple[int, ...]
    size_bytes: int


def _function_texts(text: str) -> Iterable[str]:
    """The body of every ``function_def { ... }`` block of an Enqueue request's text (strings skipped)."""
    start = 0
    while (at := text.find("function_def {", start)) >= 0:
        pos = at + len("function_def {")
        depth, quote = 1, ""
        body_start = pos
        while pos < len(text) and depth:
            c = text[pos]
            if quote:
                if c == "\\":
                    pos += 1
                elif c == quote:
                    quote = ""
            elif c in "\"'":
                quote = c
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            pos += 1
        if depth:
            return  # cut off: TensorFlow did not record the whole request
        yield text[body_start : pos - 1]
        start = pos


def registered_functions(events: Sequence[Event], skipped: dict[str, int]) -> dict[str, Any]:
    """Every FunctionDef registered in the profile, by name (the first registration of each)."""
    found: dict[str, Any] = {}
    for event in events:
        text = event.stats.get("debug_str")
        if not isinstance(text, str) or "register_function" not in text:
            continue
        for body in _function_texts(text):
            data = body.encode()
            check_text_shape(data, event.where)
            fdef = tfpb.FunctionDef()
            try:
                text_format.Parse(body, fdef, allow_unknown_field=True)
            except (text_format.ParseError, RecursionError):
                tally(skipped, "function registrations whose text does not parse")
                continue
            found.setdefault(fdef.signature.name, fdef)
    return found


def step_functions(functions: dict[str, Any], step_name: str) -> list[Any]:
    """The registered FunctionDefs of the step function: the whole function first, then its components."""
    found = [(m["part"] or "", name) for name in functions if (m := INFERENCE.match(name)) and m["name"] == step_name]
    return [functions[name] for _, name in sorted(found)]


def function_variables(fdef: Any, where: str) -> dict[str, Variable]:
    """The resource arguments of ``fdef`` whose handle dtype and shape its ``arg_attr`` records."""
    out: dict[str, Variable] = {}
    for index, arg in enumerate(fdef.signature.input_arg):
        if arg.type != tfpb.DT_RESOURCE:
            continue
        attrs = fdef.arg_attr[index].attr if index in fdef.arg_attr else {}
        types = list(attrs["_handle_dtypes"].list.type) if "_handle_dtypes" in attrs else []
        shapes = list(attrs["_handle_shapes"].list.shape) if "_handle_shapes" in attrs else []
        dtype = _DTYPES.get(tfpb.DataType.Name(types[0])) if len(types) == 1 and types[0] in tfpb.DataType.values() \
            else None
        if dtype is None or len(shapes) != 1 or shapes[0].unknown_rank or any(d.size < 0 for d in shapes[0].dim):
            continue  # the whole function's arguments carry no handle shapes; its components' do
        dims = tuple(int(d.size) for d in shapes[0].dim)
        size = DTYPE_BYTES[dtype]
        for d in dims:
            size *= d
            if size > MAX_SIZE_BYTES:
                raise TraceContentError(f"{where}: argument {quoted(arg.name)} of shape {quoted(dims, 120)} holds more "
                                        "than 2**44 bytes")
        out[arg.name] = Variable(arg=arg.name, dtype=dtype, dims=dims, size_bytes=size)
    return out


def node_name(tensor: str) -> str:
    """The node of a FunctionDef input (``node:output:0``, ``node``, ``^node``)."""
    return tensor.lstrip("^").split(":", 1)[0]
