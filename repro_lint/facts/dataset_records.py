"""The records of a module's dataset facts, for REP201 across modules.

Whether a DataLoader's workers share a random stream depends on the dataset class, which often lives
in another module (`data/datasets.py`) and is built by a factory elsewhere (`build_dataset(args)`).
So each module records, while it is parsed: its classes' random generator objects and what their
methods read (a class's facts join its bases' at project time), the project classes its functions
return, its DataLoaders with worker processes and no `worker_init_fn` (with everything the fix needs
to edit that module), and where Lightning's `seed_everything(..., workers=True)` is called.
`datasets.py` reads them from the tree; `worker_hazards.py` joins them through the program model.
"""

from __future__ import annotations

from dataclasses import dataclass

from repro_lint.core.findings import Edit
from repro_lint.core.records import pickled_by_constructor
from repro_lint.core.source import Line, Position

# Stands for the worker function's name in the call edit until the project pass chooses the name.
WORKER_NAME = "__repro_lint_worker_init__"
# Scopes of module-level code and of the `if __name__ == "__main__":` block in `worker_seeding`.
MODULE_LEVEL = "<module>"
MAIN_BLOCK = "<main>"


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class RngAttribute:
    """A random generator object: `self.name` (created in `__init__`), a class attribute, or a module
    global, and the constructor that built it."""

    name: str
    where: str  # "instance", "class" or "module"
    constructor: str


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class MethodUse:
    """What one method reads and rebinds: `self.x` attributes and the module's generator globals."""

    name: str
    calls: tuple[str, ...]  # x of self.x(...)
    reads: tuple[str, ...]
    binds: tuple[str, ...]
    numpy_global: str | None  # a numpy.random global function it draws from


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Member:
    """`self.attribute = Callee(...)` in `__init__`: an object the class holds (a transform), and the
    generators handed to it as (keyword, position, constructor)."""

    attribute: str
    targets: tuple[str, ...]
    generators: tuple[tuple[str, int, str], ...]


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class RandomClass:
    qualname: str
    bases: tuple[str, ...]
    generators: tuple[RngAttribute, ...]
    # `self.attribute = parameter` in `__init__`: (attribute, parameter, its position after self)
    parameters: tuple[tuple[str, str, int], ...]
    members: tuple[Member, ...]
    methods: tuple[MethodUse, ...]
    handles_workers: bool  # reads `get_worker_info`: the class gives each worker its own state


@dataclass(frozen=True, order=True)
class DatasetRef:
    """What a dataset expression is built by: the qualified names of the callee; `fixable` is False
    behind a ConcatDataset, whose parts a worker function cannot reach by unwrapping `.dataset`.
    Ordered: a function defined twice under one name (a notebook's cells) is two factories."""

    targets: tuple[str, ...]
    fixable: bool


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Insertion:
    """Where inserted text goes: before line `line` (column 0), or appended at the end of the file."""

    line: Line
    at_end: bool = False


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class WorkerFunctionPoint:
    """Where the REP201 fix puts a module-level worker function: the names that denote torch and
    numpy there and the imports to add, the insertion point, and the module-level names the
    function must not clash with."""

    imports: tuple[tuple[str, str, Insertion | None, str], ...]  # module, name, where, import line
    at: Insertion
    after_anchor: bool
    end: Position
    newline: str
    indent: str
    existing: tuple[tuple[str, str], ...]  # module-level functions named seed_*: (name, code)
    bound: tuple[str, ...]


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class WorkerFixPoint:
    """The REP201 fix of one DataLoader: the call edit (naming `WORKER_NAME`) and its module's point."""

    call: Edit
    function: WorkerFunctionPoint


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class LoaderSite:
    """A torch DataLoader with worker processes, no `worker_init_fn` and no `**kwargs`."""

    start: Position
    end: Position
    datasets: tuple[DatasetRef, ...]
    fix: WorkerFixPoint | None


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class DatasetFacts:
    module_generators: tuple[RngAttribute, ...] = ()
    classes: tuple[RandomClass, ...] = ()
    factories: tuple[tuple[str, tuple[DatasetRef, ...]], ...] = ()
    loaders: tuple[LoaderSite, ...] = ()
    worker_seeding: tuple[str, ...] = ()  # function qualnames, MODULE_LEVEL or MAIN_BLOCK
