"""REP3xx: settings that decide whether GPU kernels are deterministic."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

import libcst as cst

from repro_lint.core.findings import Applicability, Edit, Finding, Fix, FixAvailability
from repro_lint.core.message_text import elide, place
from repro_lint.core.source import Position
from repro_lint.facts.context import FileContext, NodeEdit, PendingFix, replace_node
from repro_lint.facts.edits import argument, is_literally_false, keyword, literal, off_unless_passed, without_argument
from repro_lint.facts.module_facts import ModuleFacts, events_of_kind
from repro_lint.program.declared import CUBLAS_REQUIRED_BEFORE
from repro_lint.program.fixes import insert_in_worker, insert_on_main_path, program_finding
from repro_lint.program.model import ProjectModel
from repro_lint.program.programs import Located, Program
from repro_lint.rules.base import ProgramRule, Rule, register

LIGHTNING_TRAINERS = frozenset({
    "lightning.Trainer",
    "lightning.pytorch.Trainer",
    "lightning.pytorch.trainer.Trainer",
    "lightning.pytorch.trainer.trainer.Trainer",
    "pytorch_lightning.Trainer",
    "pytorch_lightning.trainer.Trainer",
    "pytorch_lightning.trainer.trainer.Trainer",
})  # fmt: skip
_WARN_CAPABLE = LIGHTNING_TRAINERS | {"torch.use_deterministic_algorithms", "torch.set_deterministic_debug_mode"}
_WARN_CAPABLE_SHORT = frozenset(name.rpartition(".")[2] for name in _WARN_CAPABLE)
# `saved = torch.backends.cudnn.benchmark` (or `saved: bool = ...`): what follows the holder's name.
_SAVING = r"\s*(?::[^=\n]+)?=\s*[\w.]*\bbenchmark\b(?!\s*\()"
_DOTTED = re.compile(r"[\w.]+")
# Every dotted name followed by it, overlapping ones too (the lookahead consumes nothing).
_SAVED_IN = re.compile(rf"(?=(?<![\w.])([\w.]+){_SAVING})")


@register
class CudnnBenchmarkEnabled(Rule):
    """`torch.backends.cudnn.benchmark` set to anything but False: cuDNN then times several
    convolution algorithms and keeps the fastest, which can differ between runs and machines."""

    code = "REP301"
    name = "cudnn-benchmark-enabled"
    fix_availability = FixAvailability.ALWAYS
    required_text = ("benchmark",)
    training_only = True

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        # By region: its code and the names it saves the flag in, worked out once. A module that
        # sets the flag in many places would otherwise have its whole code generated and searched
        # again for each, in time quadratic in its length.
        self._regions: dict[int, tuple[str, frozenset[str]]] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._check(node, target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._check(node, node.target, node.value)

    def _check(self, node: cst.Assign | cst.AnnAssign, setting: cst.BaseExpression, value_node: cst.BaseExpression) -> None:
        if not (isinstance(setting, cst.Attribute) and setting.attr.value == "benchmark"):
            return
        if not self.context.matches(setting, {"torch.backends.cudnn.benchmark"}) or is_literally_false(value_node):
            return
        if self._restores_saved_value(value_node) or self._passes_callers_choice(value_node):
            return
        value = self.context.code_for(value_node)
        why = "is enabled" if literal(value_node) is not ... else f"may be enabled (`{elide(value)}`)"
        self.report(
            node,
            f"`cudnn.benchmark` {why}: cuDNN picks kernels by timing them, so runs can differ",
            # The line's comment stays and may praise the old value: the title names it.
            PendingFix(Applicability.UNSAFE, f"Change `cudnn.benchmark` from `{value}` to `False`", (NodeEdit(value_node, "False"),)),
        )

    def _restores_saved_value(self, value: cst.BaseExpression) -> bool:
        """`cudnn.benchmark = saved` where `saved` was read from the flag itself: a save-and-restore
        that cannot turn benchmarking on."""
        if not isinstance(value, (cst.Name, cst.Attribute)):
            return False
        name = self.context.code_for(value)
        # `self.saved` may be set in another method: look at the whole class then.
        scopes = [scope for scope in self.context.scopes if isinstance(scope, (cst.FunctionDef, cst.ClassDef))]
        owner = next((scope for scope in reversed(scopes) if isinstance(scope, cst.ClassDef)), None) if name.startswith("self.") else None
        region = owner or (scopes[-1] if scopes else self.context.module)
        if id(region) not in self._regions:
            code = self.context.code_for(region)
            self._regions[id(region)] = code, frozenset(match[1] for match in _SAVED_IN.finditer(code))
        code, saved = self._regions[id(region)]
        if _DOTTED.fullmatch(name):
            return name in saved
        # A holder written otherwise (`state[0].saved`, rare) is searched for as written.
        return re.search(rf"(?<![\w.]){re.escape(name)}{_SAVING}", code) is not None

    def _passes_callers_choice(self, value: cst.BaseExpression) -> bool:
        """`cudnn.benchmark = benchmark` with `benchmark` a parameter that is not on by default: library
        code applying its caller's choice, which is where a finding belongs."""
        function = self.context.scopes[-1] if self.context.scopes else None
        if not isinstance(value, cst.Name) or not isinstance(function, cst.FunctionDef):
            return False
        return off_unless_passed(function, value.value)


@register
class DeterministicWarnOnly(Rule):
    """Determinism requested in its warn-only form: nondeterministic ops still run, with a warning."""

    code = "REP303"
    name = "deterministic-warn-only"
    fix_availability = FixAvailability.ALWAYS
    required_text = ("warn", "set_deterministic_debug_mode")

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.context.callee(node, _WARN_CAPABLE, _WARN_CAPABLE_SHORT)
        if callee is None or self._implements_callers_warn_choice():
            return
        if callee == "torch.use_deterministic_algorithms":
            self._use_deterministic_algorithms(node)
        elif callee == "torch.set_deterministic_debug_mode":
            self._debug_mode(node)
        elif callee in LIGHTNING_TRAINERS:
            self._lightning_trainer(node)

    def _implements_callers_warn_choice(self) -> bool:
        """Under `if deterministic == "warn":` a library carries out its caller's choice (Lightning's
        Trainer does); the finding belongs at the caller's `deterministic="warn"`."""
        for ancestor in self.context.ancestors:
            if isinstance(ancestor, cst.If) and isinstance(ancestor.test, cst.Comparison):
                sides = [ancestor.test.left, *(target.comparator for target in ancestor.test.comparisons)]
                if any(literal(side) == "warn" for side in sides):
                    return True
        return False

    def _use_deterministic_algorithms(self, node: cst.Call) -> None:
        warn_only = keyword(node, "warn_only")
        mode = argument(node, "mode", 0)
        if warn_only is None or literal(warn_only.value) is not True or (mode is not None and is_literally_false(mode.value)):
            return
        self.report(
            node,
            "`use_deterministic_algorithms(True, warn_only=True)` only warns: nondeterministic kernels still run",
            PendingFix(
                Applicability.UNSAFE,
                "Remove `warn_only=True`",
                (replace_node(node, without_argument(node, warn_only), self.context),),
            ),
        )

    def _debug_mode(self, node: cst.Call) -> None:
        mode = argument(node, "debug_mode", 0)
        if mode is None or literal(mode.value) not in ("warn", 1):
            return
        strict = _same_kind_literal(mode.value, "error", 2)
        self.report(
            node,
            f"`set_deterministic_debug_mode({elide(self.context.code_for(mode.value))})` only warns: nondeterministic kernels "
            "still run",
            PendingFix(Applicability.UNSAFE, f"Use `{strict}`", (NodeEdit(mode.value, strict),)),
        )

    def _lightning_trainer(self, node: cst.Call) -> None:
        deterministic = keyword(node, "deterministic")
        if deterministic is None or literal(deterministic.value) != "warn":
            return
        self.report(
            node,
            '`Trainer(deterministic="warn")` only warns: nondeterministic kernels still run',
            PendingFix(Applicability.UNSAFE, "Use `deterministic=True`", (NodeEdit(deterministic.value, "True"),)),
        )


def _same_kind_literal(node: cst.BaseExpression, text: str, number: int) -> str:
    """The strict mode written as the user wrote the lenient one: a string in their quotes, or a number."""
    if isinstance(node, cst.SimpleString):
        return f"{node.prefix}{node.quote}{text}{node.quote}"
    return str(number)


def _cuda_place(cuda: Located, here: str) -> str:
    """Where the program goes to CUDA: with the call's name in this file; another file's path (often
    long) takes the room of the name."""
    return cuda.seen_from(here) if cuda.module.path == here else place(cuda.module.path, cuda.event.line, here)


def _on_cuda(events: list[Located]) -> Located | None:
    return next((located for located in events if located.event.kind == "cuda"), None)


@register
class DeterministicAlgorithmsNotEnabled(ProgramRule):
    """A training program on CUDA that never switches deterministic algorithms on, or switches them off."""

    code = "REP302"
    name = "deterministic-algorithms-not-enabled"
    sites = frozenset({events_of_kind("nondeterministic")})
    imported_sites = frozenset()
    fix_availability = FixAvailability.SOMETIMES

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        reported: set[tuple[str, int]] = set()
        for entry in project.programs:
            launcher = list(self._check_program(project, entry, entry, reported))
            workers = [finding for worker in project.processes.workers(entry) for finding in self._check_program(project, worker, entry, reported)]
            # One finding per problem: a launcher that both spawns its worker and calls it (`mp.spawn(
            # train)` on several GPUs, `train(0)` on one) is reported once, for the worker, whose fix
            # at the start of the worker function runs on both paths.
            placed = {(finding.path, finding.start) for finding in workers}
            yield from (finding for finding in launcher if (finding.path, finding.start) not in placed)
            yield from workers

    def _check_program(self, project: ProjectModel, program: Program, launcher: Program, reported: set[tuple[str, int]]) -> Iterator[Finding]:
        # Kernels run where the training runs: a launcher whose workers train is judged by them.
        if not project.processes.trains_in_process(program):
            return
        events = project.events(program)
        # A worker handed the device its launcher chose (`device = "cuda" if is_available() ...`) runs there.
        cuda = _on_cuda(events) or (_on_cuda(project.events(launcher)) if program.worker is not None else None)
        if cuda is None:
            return
        enabled = [located for located in events if located.event.kind == "deterministic"]
        # A helper's switch (`if fast: torch.use_deterministic_algorithms(False)`) may stay off.
        disabled = [located for located in events if located.event.kind == "nondeterministic" and located.event.switch is None]
        globally_on = any(located.event.what != "cudnn.deterministic = True" for located in enabled)
        # cudnn.deterministic = False is harmless under use_deterministic_algorithms(True): cuDNN
        # takes the deterministic path when either flag is set.
        harmful = [located for located in disabled if not (globally_on and located.event.what.startswith("cudnn."))]
        if harmful:
            for located in harmful:
                key = (located.module.path, located.event.line)
                if key not in reported:
                    reported.add(key)
                    at = Position(located.event.line, located.event.column)
                    yield Finding(
                        self.code,
                        self.name,
                        f"`{elide(located.event.what)}` switches deterministic kernels off in a program on CUDA "
                        f"({cuda.seen_from(located.module.path)})",
                        located.module.path,
                        at,
                        at,
                    )
            return
        if enabled:
            return
        worker = program.worker
        here = program.entry.path
        if worker is None:
            fix = insert_on_main_path(program.entry, ["torch"], _enabling_statements, "Enable deterministic algorithms", uses_seed=False)
            message = f"this program runs on CUDA ({_cuda_place(cuda, here)}) without deterministic algorithms"
        else:
            fix = insert_in_worker(
                program.entry, worker, ["torch"], _enabling_statements, f"Enable deterministic algorithms in `{worker.name}`", uses_seed=False
            )
            # The worker and its place take the room of the CUDA call's name.
            message = f"{worker.started(here)} runs on CUDA ({place(cuda.module.path, cuda.event.line, here)}) without deterministic algorithms"
        # Deterministic mode raises on cuBLAS before torch 2.10 without the variable: unless the
        # project targets a newer torch, the fix sets it too.
        version = project.declared.torch_version(program.entry.path)
        cublas = _cublas_edits(program.entry)
        sets_cublas = project.declared.cublas_in_configs or any(located.event.kind == "cublas" for located in events)
        if fix is not None and cublas is not None and not sets_cublas and (version is None or version < CUBLAS_REQUIRED_BEFORE):
            fix = replace(fix, edits=(*cublas, *fix.edits))
        yield program_finding(self, program.entry, message, fix)


@register
class CublasWorkspaceUnset(ProgramRule):
    """Deterministic algorithms on CUDA with torch < 2.10 and no CUBLAS_WORKSPACE_CONFIG: torch raises."""

    code = "REP304"
    name = "cublas-workspace-unset"
    sites = frozenset()
    imported_sites = frozenset()
    fix_availability = FixAvailability.SOMETIMES

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        if project.declared.cublas_in_configs:
            return
        for program in project.programs:
            version = project.declared.torch_version(program.entry.path)
            if version is None or version >= CUBLAS_REQUIRED_BEFORE:
                continue
            events = project.events(program)
            cuda = _on_cuda(events)
            # A helper's switch (`set_seed(seed, deterministic=False)`) may stay off.
            flag = next(
                (
                    located
                    for located in events
                    if located.event.kind == "deterministic" and located.event.what != "cudnn.deterministic = True" and located.event.switch is None
                ),
                None,
            )
            if cuda is None or flag is None or any(located.event.kind == "cublas" for located in events):
                continue
            shown = ".".join(str(part) for part in version)
            yield program_finding(
                self,
                program.entry,
                f"torch {shown} raises at the first cuBLAS call in deterministic mode "
                f"({place(flag.module.path, flag.event.line, program.entry.path)}) without CUBLAS_WORKSPACE_CONFIG",
                _cublas_fix(program.entry),
            )


def _enabling_statements(names: dict[str, str], seed: str) -> list[str]:
    return [f"{names['torch']}.use_deterministic_algorithms(True)", f"{names['torch']}.backends.cudnn.deterministic = True"]


def _cublas_edits(entry: ModuleFacts) -> tuple[Edit, ...] | None:
    """Set CUBLAS_WORKSPACE_CONFIG before torch is imported, reusing an `import os` that comes first
    (else adding one at its sorted place when that is before torch). The setting splits the import
    block in two, each followed by a blank line as isort lays out a block."""
    facts = entry.fix
    if facts is None or facts.torch_import_line is None:
        return None
    newline = facts.newline
    at = facts.torch_import_line
    setting = 'environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")' + newline
    added: dict[int, str] = {}
    os_name = facts.alias("os")
    if os_name is None or facts.os_import_line is None or facts.os_import_line > at:
        os_name = "os"
        [(line, text)] = facts.missing_imports(["os"]).items() if facts.alias("os") is None else [(at, "")]
        if line > at or not text:
            line, text = at, f"import os{newline}"
        added[line] = text
    # A blank line ends the imports above it (an added `import os` among them), unless there are
    # none or one is there.
    ends_blank = added[at].endswith(newline + newline) if at in added else at == 1 or facts.after_blank
    separator = "" if ends_blank else newline
    added[at] = added.get(at, "") + separator + os_name + "." + setting
    return tuple(Edit(Position(line, 0), Position(line, 0), text) for line, text in sorted(added.items()))


def _cublas_fix(entry: ModuleFacts) -> Fix | None:
    edits = _cublas_edits(entry)
    return Fix(Applicability.UNSAFE, "Set CUBLAS_WORKSPACE_CONFIG before importing torch", edits) if edits else None
