"""The built-in model zoo: TF1-style graphs from ``tf.compat.v1.get_variable`` and ``tf.nn`` ops.

Every builder takes a :class:`ModelSpec` and returns the scalar loss of one batch of synthetic data. The
caller decides placement (``replica_device_setter``) and the optimiser; the builders only make variables
and ops, so the same model runs on one machine or across a PS cluster.

TensorFlow 2 (a ``tf.function`` under ``ParameterServerStrategy``, :mod:`validation.capture_tf2`) builds the same
models: inside :func:`variables_from`, every variable a builder asks for comes from the given function instead of
``get_variable`` (by its full name: ``fc1/kernel``), so that the strategy's variables, made once on the PS, are
used by every traced call. :func:`variable_specs` lists what a model asks for without running it.

TensorFlow is imported lazily: this module is importable without it, for the CLI's ``--help``.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
import math
import os
import pathlib
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

from tracegen.units import format_bytes
from validation.errors import ConfigError, JobError
from validation.stderr import summarize_stderr

MODEL_NAMES = ("mlp", "cnn", "resnet", "embed", "deep", "wide")


DEFAULT_WIDTHS: dict[str, tuple[int, ...]] = {
    "mlp": (512, 512), "cnn": (16, 32, 128), "resnet": (16, 32, 64), "embed": (100_000, 64, 64, 256),
    "deep": (64, 64), "wide": (1024, 4096),
}
# What each width means, for the models that take a fixed number of them (mlp and resnet take any number).
WIDTH_NAMES: dict[str, tuple[str, ...]] = {
    "cnn": ("conv1", "conv2", "dense"), "embed": ("vocabulary", "embedding size", "tokens", "hidden"),
    "deep": ("width", "layers"), "wide": ("input", "hidden"),
}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ModelSpec:
    """What to build: a zoo model name, the batch size and the model's widths.

    ``widths`` means, per model: ``mlp`` the hidden layer sizes; ``cnn`` the channels of its two conv layers
    then the size of its hidden dense layer; ``resnet`` the channels of its stages (two residual blocks each);
    ``embed`` vocabulary, embedding size, tokens per example and hidden size (an embedding table read sparsely:
    only the looked-up rows travel); ``deep`` layer width and number of layers (many small tensors); ``wide``
    input size and the one wide hidden layer's size (one large tensor). An empty tuple picks the defaults.
    """

    name: str
    batch_size: int = 32
    widths: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.name not in MODEL_NAMES:
            raise ConfigError(f"unknown model {self.name!r}; choose one of {', '.join(MODEL_NAMES)}")
        if self.batch_size < 1:
            raise ConfigError(f"'batch_size' must be >= 1 (got {self.batch_size})")
        if any(w < 1 for w in self.widths):
            raise ConfigError(f"'widths' must all be >= 1 (got {list(self.widths)})")
        names = WIDTH_NAMES.get(self.name)
        if self.widths and names is not None and len(self.widths) != len(names):  # else found in the TF process
            raise ConfigError(f"{self.name} takes {len(names)} widths ({', '.join(names)}) "
                              f"(got {list(self.widths)})")

    def resolved_widths(self) -> tuple[int, ...]:
        """The widths the model is built with: the given ones or the model's defaults."""
        if self.widths:
            return self.widths
        return DEFAULT_WIDTHS[self.name]


def build_loss(spec: ModelSpec) -> Any:
    """Build ``spec``'s model on synthetic data in the current default graph and return its loss tensor."""
    builders: dict[str, Callable[[Any, ModelSpec], Any]] = {"mlp": _mlp, "cnn": _cnn, "resnet": _resnet,
                                                            "embed": _embed, "deep": _deep, "wide": _wide}
    import tensorflow as tf

    return builders[spec.name](tf, spec)


# (full name, shape, initializer) -> variable; None: tf.compat.v1.get_variable (TF1 graphs)
VariableSource = Callable[[str, list[int], Any], Any]
_SOURCE: contextvars.ContextVar[VariableSource | None] = contextvars.ContextVar("zoo_variables", default=None)


@contextlib.contextmanager
def variables_from(source: VariableSource) -> Iterator[None]:
    """Builders called inside take their variables from ``source(full_name, shape, initializer)``."""
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def variable_specs(spec: ModelSpec) -> list[tuple[str, list[int], Any]]:
    """(full name, shape, initializer) of every variable ``spec``'s model asks for, in creation order; the model is
    built in a throwaway graph, nothing runs."""
    return _built(spec)[0]


def _built(spec: ModelSpec) -> tuple[list[tuple[str, list[int], Any]], tuple[str, list[int], int]]:
    """:func:`variable_specs`, and the largest tensor the model's graph computes (name, shape, bytes): the batch's
    own, which no variable's size shows."""
    import tensorflow as tf

    found: dict[str, tuple[str, list[int], Any]] = {}

    def record(name: str, shape: list[int], initializer: Any) -> Any:
        found.setdefault(name, (name, list(shape), initializer))
        return tf.zeros(shape)

    graph = tf.Graph()
    with graph.as_default(), variables_from(record):
        build_loss(spec)
    tensors = [(t.name, t.shape.as_list(), t.shape.num_elements() * t.dtype.size) for op in graph.get_operations()
               if op.type != "Fill"  # record's stand-ins for the variables, sized as those are
               for t in op.outputs if t.shape.is_fully_defined() and t.dtype.size]
    return list(found.values()), max(tensors, key=lambda t: t[2], default=("", [], 0))


MAX_TENSOR_BYTES = 2**31 - 1  # TensorFlow's gRPC moves a tensor in one protobuf message, which 2 GiB bounds
BYTES_PER_VALUE = 4  # the zoo's variables are float32
READ_SPARSELY = {"embed": ("embedding",)}  # gathered on the PS: only the looked-up rows travel, never the table


def check_sizes(spec: ModelSpec) -> None:
    """ConfigError, before any process starts, when ``spec``'s model cannot run here: a variable the worker pulls
    whole over 2 GiB (the worker failed at its first pull with 'Cannot parse tensor from proto', and the command
    quoted the last line of its stderr, a row of '='), variables that together exceed the memory this machine
    has free (the PS holds them all), or a tensor of the batch's larger than that memory. Builds the model in a
    throwaway graph (:func:`model_sizes`): a few seconds, TensorFlow's import."""
    specs, (tensor, tensor_shape, tensor_bytes) = model_sizes(spec)
    widths = f"{spec.name} with widths {','.join(map(str, spec.resolved_widths()))}"
    pulled = [s for s in specs if s[0] not in READ_SPARSELY.get(spec.name, ())]
    name, shape = max(pulled, key=lambda s: math.prod(s[1]), default=("", []))
    largest = BYTES_PER_VALUE * math.prod(shape)
    if largest > MAX_TENSOR_BYTES:
        raise ConfigError(f"{widths}: variable {name!r} of shape {shape} is {format_bytes(largest)}; TensorFlow "
                          f"moves no tensor over 2 GiB between PS and worker: choose smaller widths")
    total = BYTES_PER_VALUE * sum(math.prod(s[1]) for s in specs)
    free = available_memory_bytes()
    if free is not None and total > free:
        raise ConfigError(f"{widths}: its variables take {format_bytes(total)}, more than the "
                          f"{format_bytes(free)} of memory this machine has available: choose smaller widths")
    if free is not None and tensor_bytes > free:  # the job failed in TensorFlow, or was killed for memory
        raise ConfigError(f"{widths} and batch size {spec.batch_size}: its tensor {tensor!r} of shape {tensor_shape} "
                          f"is {format_bytes(tensor_bytes)}, more than the {format_bytes(free)} of memory this "
                          "machine has available: choose a smaller --batch-size")


def model_sizes(spec: ModelSpec) -> tuple[list[tuple[str, list[int]]], tuple[str, list[int], int]]:
    """(full name, shape) of every variable of ``spec``'s model (:func:`variable_specs`), and the largest tensor of
    its graph (name, shape, bytes; :func:`_built`), found in a child process: TensorFlow's import stays out of this
    one (its log lines on stderr, its threads, half a GB of memory)."""
    code = ("import json, sys\n"
            "from validation.zoo import ModelSpec, _built\n"
            "doc = json.loads(sys.argv[1])\n"
            "spec = ModelSpec(name=doc['name'], batch_size=doc['batch_size'], widths=tuple(doc['widths']))\n"
            "found, largest = _built(spec)\n"
            "print(json.dumps([[[n, list(s)] for n, s, _ in found], largest]))\n")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    argv = [sys.executable, "-c", code, json.dumps(dataclasses.asdict(spec))]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
    except subprocess.TimeoutExpired as exc:
        raise JobError(f"building {spec.name} to size its variables took over {exc.timeout:g} s") from None
    if done.returncode != 0:
        raise JobError(f"building {spec.name} to size its variables failed: {summarize_stderr(done.stderr)}")
    found, (name, shape, size) = json.loads(done.stdout.strip().splitlines()[-1])
    return [(str(n), [int(d) for d in s]) for n, s in found], (str(name), [int(d) for d in shape], int(size))


def available_memory_bytes() -> int | None:
    """MemAvailable from ``/proc/meminfo`` (None where there is none)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in pathlib.Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return None


def _get_variable(tf: Any, name: str, shape: list[int], initializer: Any) -> Any:
    """A builder's variable ``name`` (in the current variable scope): TF1's ``get_variable``, or the
    :func:`variables_from` source's."""
    v1 = tf.compat.v1
    source = _SOURCE.get()
    if source is None:
        return v1.get_variable(name, shape, initializer=initializer)
    scope = v1.get_variable_scope().name
    return source(f"{scope}/{name}" if scope else name, shape, initializer)


def _dense(tf: Any, x: Any, n_out: int, name: str, relu: bool = True) -> Any:
    n_in = int(x.shape[-1])
    v1 = tf.compat.v1
    with v1.variable_scope(name):
        w = _get_variable(tf, "kernel", [n_in, n_out], v1.glorot_uniform_initializer())
        b = _get_variable(tf, "bias", [n_out], v1.zeros_initializer())
    y = tf.nn.bias_add(tf.matmul(x, w), b)
    return tf.nn.relu(y) if relu else y


def _conv(tf: Any, x: Any, n_out: int, name: str, ksize: int = 3, stride: int = 1, bias: bool = True) -> Any:
    n_in = int(x.shape[-1])
    v1 = tf.compat.v1
    with v1.variable_scope(name):
        w = _get_variable(tf, "kernel", [ksize, ksize, n_in, n_out], v1.glorot_uniform_initializer())
        y = tf.nn.conv2d(x, w, strides=[1, stride, stride, 1], padding="SAME")
        if bias:
            b = _get_variable(tf, "bias", [n_out], v1.zeros_initializer())
            y = tf.nn.bias_add(y, b)
    return y


def _inputs(tf: Any, shape: list[int], seed: int) -> Any:
    """A synthetic batch, drawn anew each step on the worker (a stateful op, so never constant-folded
    into the graph: a folded batch would bloat every trace's partition graph by the batch's bytes)."""
    return tf.compat.v1.random.uniform(shape, seed=seed)


def _labels_loss(tf: Any, logits: Any, batch: int, n_classes: int) -> Any:
    labels = tf.compat.v1.random.uniform([batch], maxval=n_classes, dtype=tf.int32, seed=7)
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return tf.reduce_mean(xent)


def _mlp(tf: Any, spec: ModelSpec) -> Any:
    x = _inputs(tf, [spec.batch_size, 784], 1)
    for i, width in enumerate(spec.resolved_widths()):
        x = _dense(tf, x, width, f"fc{i + 1}")
    return _labels_loss(tf, _dense(tf, x, 10, "logits", relu=False), spec.batch_size, 10)


def _cnn(tf: Any, spec: ModelSpec) -> Any:
    widths = spec.resolved_widths()  # as many as WIDTH_NAMES says: ModelSpec checked
    x = _inputs(tf, [spec.batch_size, 32, 32, 3], 3)
    for i, channels in enumerate(widths[:2]):
        x = tf.nn.relu(_conv(tf, x, channels, f"conv{i + 1}", ksize=5))
        x = tf.nn.max_pool2d(x, ksize=2, strides=2, padding="SAME")
    x = tf.reshape(x, [spec.batch_size, -1])
    x = _dense(tf, x, widths[2], "fc1")
    return _labels_loss(tf, _dense(tf, x, 10, "logits", relu=False), spec.batch_size, 10)


def _norm(tf: Any, x: Any, name: str) -> Any:
    """A per-channel scale and shift (BatchNorm's parameters without its batch statistics)."""
    v1 = tf.compat.v1
    channels = int(x.shape[-1])
    with v1.variable_scope(name):
        gamma = _get_variable(tf, "gamma", [channels], v1.ones_initializer())
        beta = _get_variable(tf, "beta", [channels], v1.zeros_initializer())
    return x * gamma + beta


def _resnet(tf: Any, spec: ModelSpec) -> Any:
    x = _inputs(tf, [spec.batch_size, 32, 32, 3], 5)
    widths = spec.resolved_widths()
    x = tf.nn.relu(_norm(tf, _conv(tf, x, widths[0], "stem", bias=False), "stem_norm"))
    for s, channels in enumerate(widths):
        for blk in range(2):
            name = f"stage{s + 1}_block{blk + 1}"
            stride = 2 if (s > 0 and blk == 0) else 1
            shortcut = x
            if stride != 1 or int(x.shape[-1]) != channels:
                shortcut = _conv(tf, x, channels, f"{name}_proj", ksize=1, stride=stride, bias=False)
            y = _conv(tf, x, channels, f"{name}_conv1", stride=stride, bias=False)
            y = tf.nn.relu(_norm(tf, y, f"{name}_norm1"))
            y = _norm(tf, _conv(tf, y, channels, f"{name}_conv2", bias=False), f"{name}_norm2")
            x = tf.nn.relu(y + shortcut)
    x = tf.reduce_mean(x, axis=[1, 2])
    return _labels_loss(tf, _dense(tf, x, 10, "logits", relu=False), spec.batch_size, 10)


def _embed(tf: Any, spec: ModelSpec) -> Any:
    """Mean of looked-up embeddings, then a dense layer: the table stays on the PS (TensorFlow runs the gather
    there), so a step pulls only the looked-up rows and pushes their gradients as values and indices."""
    vocab, dim, tokens, hidden = spec.resolved_widths()  # as many as WIDTH_NAMES says: ModelSpec checked
    v1 = tf.compat.v1
    table = _get_variable(tf, "embedding", [vocab, dim], v1.random_uniform_initializer(-0.05, 0.05))
    ids = v1.random.uniform([spec.batch_size, tokens], maxval=vocab, dtype=tf.int64, seed=11)
    x = tf.reduce_mean(tf.nn.embedding_lookup(table, ids), axis=1)
    x = _dense(tf, x, hidden, "fc1")
    return _labels_loss(tf, _dense(tf, x, 10, "logits", relu=False), spec.batch_size, 10)


def _deep(tf: Any, spec: ModelSpec) -> Any:
    """A deep stack of narrow dense layers: two small tensors per layer (about 100 at the default depth)."""
    width, depth = spec.resolved_widths()  # as many as WIDTH_NAMES says: ModelSpec checked
    x = _inputs(tf, [spec.batch_size, width], 13)
    for i in range(depth):
        x = _dense(tf, x, width, f"layer{i + 1}")
    return _labels_loss(tf, _dense(tf, x, 10, "logits", relu=False), spec.batch_size, 10)


def _wide(tf: Any, spec: ModelSpec) -> Any:
    """One wide hidden layer: a single large kernel dominates the bytes a step moves."""
    n_in, hidden = spec.resolved_widths()  # as many as WIDTH_NAMES says: ModelSpec checked
    x = _inputs(tf, [spec.batch_size, n_in], 17)
    x = _dense(tf, x, hidden, "wide")
    return _labels_loss(tf, _dense(tf, x, 10, "logits", relu=False), spec.batch_size, 10)
