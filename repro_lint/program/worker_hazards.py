"""REP201 across modules: which random generator objects every DataLoader worker gets a copy of.

Joins the modules' dataset facts (dataset_facts.py) through the program model: a DataLoader's dataset
is resolved to project classes through imports, re-exports and factory functions; a class's facts are
joined with its bases' (in any module); objects a dataset holds and calls (a transform built with its
own generator) are followed into their classes. Whatever cannot be resolved to project code counts as
harmless: torch, numpy and `random` global RNGs are reseeded in each worker since torch 1.9.
"""

from __future__ import annotations

from dataclasses import dataclass

from repro_lint.facts.dataloader_calls import CALL_METHODS, ITEM_METHODS
from repro_lint.facts.dataset_records import MAIN_BLOCK, MODULE_LEVEL, DatasetRef, LoaderSite, Member, MethodUse, RandomClass, RngAttribute
from repro_lint.facts.module_facts import ModuleFacts
from repro_lint.program.declared import OLD_TORCH_BEFORE
from repro_lint.program.model import ProjectModel
from repro_lint.program.programs import Program


@dataclass(frozen=True, order=True)
class CopiedGenerator:
    """A generator every worker copies: `path` from the dataset object (`rng`, `transform.rng`), or a
    module global's name (`where == "module"`, defined in `module`). Ordered by path first: two
    modules of a class's lineage may each hold a global of one name."""

    path: str
    where: str
    constructor: str
    module: str

    def owner(self, class_name: str) -> str:
        return self.path if self.where == "module" else f"{class_name}.{self.path}"


@dataclass(frozen=True)
class Hazard:
    cls: str  # qualname of the dataset class
    module: str  # the module defining it
    generators: tuple[CopiedGenerator, ...]
    numpy_global: str | None  # a numpy.random function drawn from in a worker (torch < 1.9 only)

    @property
    def class_name(self) -> str:
        return self.cls.rpartition(".")[2]


class WorkerHazards:
    def __init__(self, project: ProjectModel) -> None:
        self.project = project
        self._classes: dict[str, tuple[str, RandomClass]] = {}
        self._factories: dict[str, tuple[str, tuple[DatasetRef, ...]]] = {}
        self._globals: dict[str, dict[str, RngAttribute]] = {}
        self._hazards: dict[tuple[str, bool], Hazard | None] = {}
        for module, facts in project.modules.items():
            datasets = facts.datasets
            if datasets is None:
                continue
            self._classes.update((cls.qualname, (module, cls)) for cls in datasets.classes)
            self._factories.update((name, (module, refs)) for name, refs in datasets.factories)
            self._globals[module] = {generator.name: generator for generator in datasets.module_generators}

    # the dataset behind a DataLoader

    def hazards(self, site: LoaderSite, module: str, old_torch: bool) -> dict[str, tuple[Hazard, bool]]:
        """Hazardous dataset classes the loader may get, by qualname, with whether the fix applies: a
        worker function written for one class would fail on a dataset of another class, so the fix
        needs the loader to get only that class."""
        classes = [found for ref in site.datasets for found in self._classes_of(ref, module)]
        only_one = len({cls for cls, _ in classes}) == 1
        found: dict[str, tuple[Hazard, bool]] = {}
        for cls, fixable in classes:
            hazard = self.hazard(cls, old_torch)
            if hazard is not None:
                previous = found.get(cls)
                found[cls] = (hazard, only_one and fixable and (previous is None or previous[1]))
        return found

    def _classes_of(self, ref: DatasetRef, importer: str) -> list[tuple[str, bool]]:
        """The project dataset classes `ref` may build, through factories calling factories (each
        factory once), in the order the code names them, with whether the fix applies to each."""
        found: list[tuple[str, bool]] = []
        followed: set[tuple[str, bool]] = set()
        # A stack, in reverse: classes found, and references a factory returns, left to follow.
        pending: list[tuple[str, bool] | tuple[DatasetRef, str, bool]] = [(ref, importer, True)]
        while pending:
            item = pending.pop()
            if len(item) == 2:
                found.append(item)  # type: ignore[arg-type]
                continue
            current, module, fixable = item  # type: ignore[misc]
            fixable = fixable and current.fixable
            steps: list[tuple[str, bool] | tuple[DatasetRef, str, bool]] = []
            for target in current.targets:
                symbol = self.project.calls.resolve_symbol(target, module)
                if symbol in self._classes:
                    steps.append((symbol, fixable))
                elif symbol in self._factories and (symbol, fixable) not in followed:
                    followed.add((symbol, fixable))
                    defined_in, refs = self._factories[symbol]
                    steps.extend((returned, defined_in, fixable) for returned in refs)
            pending.extend(reversed(steps))
        return found

    # what a class's workers copy

    def hazard(self, qualname: str, old_torch: bool) -> Hazard | None:
        key = (qualname, old_torch)
        if key not in self._hazards:
            self._hazards[key] = self._hazard(qualname, old_torch)
        return self._hazards[key]

    def _hazard(self, qualname: str, old_torch: bool) -> Hazard | None:
        lineage = self._lineage(qualname)
        if not lineage or any(cls.handles_workers for _, cls in lineage):
            return None
        generators = self._copied(lineage, ITEM_METHODS, "", 0)
        numpy_global = None
        if old_torch:
            methods = self._methods(lineage)
            drawing = sorted(methods[name].numpy_global or "" for name in self._reachable(methods, ITEM_METHODS))
            numpy_global = next((name for name in drawing if name), None)
        if not generators and numpy_global is None:
            return None
        return Hazard(qualname, lineage[0][0], tuple(sorted(set(generators))), numpy_global)

    def _lineage(self, qualname: str) -> list[tuple[str, RandomClass]]:
        """The class and its project bases with facts, nearest first."""
        lineage: list[tuple[str, RandomClass]] = []
        pending = [qualname]
        while pending and len(lineage) < 16:
            current = pending.pop(0)
            if current not in self._classes or any(cls.qualname == current for _, cls in lineage):
                continue
            module, cls = self._classes[current]
            lineage.append((module, cls))
            for base in cls.bases:
                resolved = self.project.calls.resolve_symbol(base, module)
                if resolved is not None:
                    pending.append(resolved)
        return lineage

    @staticmethod
    def _methods(lineage: list[tuple[str, RandomClass]]) -> dict[str, MethodUse]:
        methods: dict[str, MethodUse] = {}
        for _, cls in lineage:
            for method in cls.methods:
                methods.setdefault(method.name, method)
        return methods

    @staticmethod
    def _reachable(methods: dict[str, MethodUse], entry: tuple[str, ...]) -> list[str]:
        """The entry methods and the methods of the class they call through `self.`."""
        reached = [name for name in entry if name in methods]
        position = 0
        while position < len(reached):
            for name in methods[reached[position]].calls:
                if name in methods and name not in reached:
                    reached.append(name)
            position += 1
        return reached

    def _copied(self, lineage: list[tuple[str, RandomClass]], entry: tuple[str, ...], prefix: str, depth: int) -> list[CopiedGenerator]:
        methods = self._methods(lineage)
        reached = [methods[name] for name in self._reachable(methods, entry)]
        if not reached:
            return []
        reads = {name for method in reached for name in method.reads}
        binds = {name for method in reached for name in method.binds}
        calls = {name for method in reached for name in method.calls}

        def drawn(name: str) -> bool:
            # Rebound in a worker method: a generator built per item or lazily per worker is no copy.
            return name in reads and name not in binds

        found: list[CopiedGenerator] = []
        attributes: dict[str, RngAttribute] = {}
        for _, cls in reversed(lineage):  # the nearest class's definition wins
            attributes.update((generator.name, generator) for generator in cls.generators)
        for name, generator in sorted(attributes.items()):
            if drawn(name):
                found.append(CopiedGenerator(prefix + name, generator.where, generator.constructor, ""))
        if not prefix:  # a held object's module globals would be reseeded from its own module: not followed
            for module, _ in lineage:
                for name, generator in sorted(self._globals.get(module, {}).items()):
                    if drawn(name) and name not in attributes:
                        found.append(CopiedGenerator(name, "module", generator.constructor, module))
        if depth < 2:
            members = {member.attribute: (module, member) for module, cls in reversed(lineage) for member in cls.members}
            for attribute, (module, member) in sorted(members.items()):
                if attribute in calls and attribute not in binds:
                    found.extend(self._held(member, module, prefix, depth))
        return found

    def _held(self, member: Member, module: str, prefix: str, depth: int) -> list[CopiedGenerator]:
        """Generators of an object the class holds and calls (`self.transform(x)`): its own, and
        those handed to it when it was built (`RandomAugment(rng=np.random.default_rng(0))`)."""
        found: list[CopiedGenerator] = []
        for target in member.targets:
            symbol = self.project.calls.resolve_symbol(target, module)
            lineage = self._lineage(symbol) if symbol in self._classes else []
            if not lineage or any(cls.handles_workers for _, cls in lineage):
                continue
            path = f"{prefix}{member.attribute}."
            found.extend(self._copied(lineage, CALL_METHODS, path, depth + 1))
            methods = self._methods(lineage)
            reached = [methods[name] for name in self._reachable(methods, CALL_METHODS)]
            reads = {name for method in reached for name in method.reads}
            binds = {name for method in reached for name in method.binds}
            for attribute, parameter, position in lineage[0][1].parameters:
                if attribute not in reads or attribute in binds:
                    continue
                for keyword, given_at, constructor in member.generators:
                    if keyword == parameter or (not keyword and given_at == position):
                        found.append(CopiedGenerator(path + attribute, "instance", constructor, ""))
        return found

    # what the programs around a loader do

    def workers_seeded(self, module: str) -> bool:
        """Lightning's `seed_everything(..., workers=True)` runs on the path of every program that
        reaches `module` (or, where no program does, in the module itself)."""
        programs = list(self.project.programs_reaching(module))
        if not programs:
            datasets = self.project.modules[module].datasets
            return datasets is not None and bool(datasets.worker_seeding)
        return all(self._program_seeds_workers(program) for program in programs)

    def _program_seeds_workers(self, program: Program) -> bool:
        reachable = self.project.reachable_functions(program)
        for module in program.modules:
            datasets = self.project.modules[module].datasets
            for scope in datasets.worker_seeding if datasets is not None else ():
                if scope == MODULE_LEVEL or scope in reachable or (scope == MAIN_BLOCK and module == program.entry.module):
                    return True
        return False

    def old_torch(self, facts: ModuleFacts) -> bool:
        """Some program reaching the module (or the module itself) targets torch before 1.9."""
        paths = [program.entry.path for program in self.project.programs_reaching(facts.module)] or [facts.path]
        versions = [self.project.declared.torch_version(path) for path in paths]
        return any(version is not None and version < OLD_TORCH_BEFORE for version in versions)
