"""Code whose training calls do not make a program train.

A benchmark's `loss.backward()` and `optimizer.step()` (timm's `TrainBenchmarkRunner`, yolov5's
`profile()`, a step under `torch.profiler.profile`) measure speed: nothing it computes is kept. An
optimizer wrapper's own `step` method (timm's `Lookahead.step` calling `self._base_optimizer.step()`)
implements a step for whoever trains with it.
"""

from __future__ import annotations

import re

import libcst as cst

from repro_lint.facts.context import FileContext
from repro_lint.facts.names import dotted_name
from repro_lint.knowledge import load

_DATA = load("benchmarks.json")
_FUNCTION_WORDS = frozenset(_DATA["function_words"])
_CLASS_WORDS = frozenset(_DATA["class_words"])
_DECORATORS = frozenset(_DATA["decorators"])
_FILE_WORDS = frozenset(_DATA["file_words"])
_CONTEXTS = frozenset(_DATA["contexts"])


def _first_word(name: str) -> str:
    return name.lstrip("_").split("_")[0].lower()


def _marks_function(node: cst.FunctionDef) -> bool:
    if _first_word(node.name.value) in _FUNCTION_WORDS:
        return True
    decorators = (decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator for decorator in node.decorators)
    return any((dotted_name(decorator) or "").rpartition(".")[2] in _DECORATORS for decorator in decorators)


def _marks_class(node: cst.ClassDef) -> bool:
    return any(word in _CLASS_WORDS for word in re.findall(r"[A-Z][a-z]+", node.name.value))


def _profiles(context: FileContext, node: cst.With) -> bool:
    calls = (item.item for item in node.items if isinstance(item.item, cst.Call))
    return any(context.qualified_names(call.func) & _CONTEXTS for call in calls)


def _implements_step(context: FileContext) -> bool:
    """Inside a class's `step` method: an optimizer delegating to the one it wraps."""
    scopes = context.scopes
    return len(scopes) >= 2 and isinstance(scopes[-2], cst.ClassDef) and isinstance(scopes[-1], cst.FunctionDef) and scopes[-1].name.value == "step"


def does_not_train(context: FileContext, path: str) -> bool:
    """Whether a training call at the context's current node leaves the program not training: it sits
    in a benchmark or profiler (a file, function or class named for one, a function decorated as one,
    the body of a profiler context), or in an optimizer's own `step` method."""
    if _implements_step(context):
        return True
    stem = path.rpartition("/")[2].rpartition(".")[0]
    if _first_word(stem) in _FILE_WORDS:
        return True
    for ancestor in context.ancestors:
        if isinstance(ancestor, cst.FunctionDef) and _marks_function(ancestor):
            return True
        if isinstance(ancestor, cst.ClassDef) and _marks_class(ancestor):
            return True
        if isinstance(ancestor, cst.With) and _profiles(context, ancestor):
            return True
    return False
