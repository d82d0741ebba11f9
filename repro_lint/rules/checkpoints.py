"""REP4xx: checkpoints that a resumed run cannot continue from exactly.

Each rule reads the project's checkpoints (repro_lint/checkpoint_model.py): what a function saves,
what the programs running it build, and what the load paths restore. Checkpoint rules report once
per checkpoint at its first save call; REP405 at the saved key, REP406 at the lenient load.
"""

from __future__ import annotations

from collections.abc import Iterator

from repro_lint.core.findings import Applicability, Edit, Finding, Fix, FixAvailability
from repro_lint.core.message_text import elide, place
from repro_lint.core.source import Position
from repro_lint.facts.checkpoints import MODULE_CODE, TRAINING_STATE, RestorePoint, hinted_kind, knowledge
from repro_lint.facts.module_facts import CHECKPOINTS
from repro_lint.program.checkpoints import Checkpoint, Context, Located, ProjectCheckpoints, project_checkpoints
from repro_lint.program.model import ProjectModel
from repro_lint.rules.base import ProgramRule, register

_STATE_NAMES = {"optimizer": "optimizer", "scheduler": "LR scheduler", "scaler": "gradient scaler", "rng": "RNG"}
_DEFAULT_NAMES = {"torch": "torch", "numpy": "np", "random": "random"}
_RNG_STATE_KEY = "rng_state"


def _is_reference(name: str) -> bool:
    """`g` or `loader.generator`: code a fix can write to reach an object."""
    return bool(name) and all(part.isidentifier() for part in name.split("."))


def _finding(rule: ProgramRule, checkpoint: Checkpoint, message: str, fix: Fix | None = None) -> Finding:
    save = checkpoint.first
    return Finding(rule.code, rule.name, message, checkpoint.owner.module.path, save.start, save.end, fix)


def _where(located: Located, line: int, what: str, checkpoint: Checkpoint) -> str:
    """Where an object is built, as the checkpoint's finding names it."""
    return f"{place(located.module.path, line, checkpoint.owner.module.path)} ({elide(what.rpartition('.')[2])})"


def _name_in_scope(model: ProjectCheckpoints, checkpoint: Checkpoint, kind: str) -> str | None:
    """A plain name that holds the program's object of `kind` where the checkpoint is saved: built
    in that function, a parameter named for it, or built at module level."""
    function = checkpoint.owner.function
    built = sorted(creation.name for creation in function.creations if creation.kind == kind and creation.name.isidentifier())
    if built:
        return built[0]
    named = sorted(name for name in function.parameters if hinted_kind(name) == kind)
    if named:
        return named[0]
    module_code = model.function(f"{checkpoint.owner.module.module}.{MODULE_CODE}")
    if module_code is not None:
        built = sorted(creation.name for creation in module_code.function.creations if creation.kind == kind and creation.name.isidentifier())
        if built:
            return built[0]
    return None


def _entry_edits(checkpoint: Checkpoint, key: str, value: str) -> tuple[Edit, ...] | None:
    save = checkpoint.extendable
    if save is None or save.insertion is None or key in save.keys:
        return None
    insertion = save.insertion
    edits = [Edit(insertion.at, insertion.at, insertion.entry(key, value))]
    if insertion.comma_at is not None:
        edits.append(Edit(insertion.comma_at, insertion.comma_at, ","))
    return tuple(edits)


def _left_unrestored(model: ProjectCheckpoints, key: str) -> bool:
    """Whether a state saved under `key` would be reported by REP405, which has no fix: the project
    resumes from a checkpoint and no load path restores `key`. A fix that saves it must restore it too."""
    return bool(model.resume_paths) and not model.any_key_may_be_restored and key not in model.restored_keys


def _state_entry_fix(model: ProjectCheckpoints, checkpoint: Checkpoint, kind: str, key: str) -> tuple[Fix | None, str]:
    name = _name_in_scope(model, checkpoint, kind)
    edits = _entry_edits(checkpoint, key, f"{name}.state_dict()") if name and not _left_unrestored(model, key) else None
    shown = name or f"<{kind}>"
    fix = Fix(Applicability.SAFE, f'Add "{key}": {shown}.state_dict() to the checkpoint', edits) if edits else None
    return fix, f'`"{key}": {shown}.state_dict()`'


def _stateful_missing(project: ProjectModel, kind: str) -> Iterator[tuple[ProjectCheckpoints, Checkpoint, Context, str]]:
    """Training checkpoints whose programs build an object of `kind` the checkpoint does not hold."""
    model = project_checkpoints(project)
    for checkpoint in model.checkpoints:
        if not checkpoint.is_training or kind in checkpoint.kinds:
            continue
        context = model.context(checkpoint)
        built = context.built(kind)
        if built:
            located, creation = built[0]
            yield model, checkpoint, context, _where(located, creation.line, creation.what, checkpoint)


@register
class CheckpointMissingScheduler(ProgramRule):
    """A training checkpoint without the state of the program's LR scheduler."""

    code = "REP401"
    name = "checkpoint-missing-scheduler"
    sites = frozenset({CHECKPOINTS})
    imported_sites = frozenset()
    fix_availability = FixAvailability.SOMETIMES

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for model, checkpoint, context, where in _stateful_missing(project, "scheduler"):
            if self._position_restored(context):
                continue
            fix, _ = _state_entry_fix(model, checkpoint, "scheduler", "lr_scheduler")
            yield _finding(
                self,
                checkpoint,
                f"this checkpoint holds the optimizer but not the LR scheduler built at {where}",
                fix,
            )

    @staticmethod
    def _position_restored(context: Context) -> bool:
        """The load path sets the scheduler's position from the saved epoch and the schedulers have
        no other state."""
        stateful = knowledge().stateful_schedulers
        return context.may_build("scheduler_position") and not any(creation.what in stateful for _, creation in context.built("scheduler"))


@register
class CheckpointMissingGradScaler(ProgramRule):
    """A training checkpoint without the state of the program's GradScaler."""

    code = "REP403"
    name = "checkpoint-missing-grad-scaler"
    sites = frozenset({CHECKPOINTS})
    imported_sites = frozenset()
    fix_availability = FixAvailability.SOMETIMES

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for model, checkpoint, _, where in _stateful_missing(project, "scaler"):
            fix, _ = _state_entry_fix(model, checkpoint, "scaler", "scaler")
            yield _finding(
                self,
                checkpoint,
                f"this checkpoint holds the optimizer but not the GradScaler built at {where}",
                fix,
            )


@register
class CheckpointMissingRngState(ProgramRule):
    """A training checkpoint that holds no RNG state, so a resumed run draws other random numbers."""

    code = "REP402"
    name = "checkpoint-missing-rng-state"
    sites = frozenset({CHECKPOINTS})
    imported_sites = frozenset()
    fix_availability = FixAvailability.SOMETIMES

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        model = project_checkpoints(project)
        for checkpoint in model.checkpoints:
            if not checkpoint.is_training or "rng" in checkpoint.kinds or model.rng_saved_by_a_sibling(checkpoint):
                continue
            context = model.context(checkpoint)
            rngs = model.rngs_used(context.programs)
            generators = self._generators(model, checkpoint.owner)
            shown = ", ".join([*rngs, *(f"generator `{name}`" for name in generators)])
            yield _finding(
                self,
                checkpoint,
                f"this checkpoint holds no RNG state, but the program draws from {elide(shown, 48)}",
                self._fix(model, checkpoint, rngs, generators),
            )

    @staticmethod
    def _generators(model: ProjectCheckpoints, located: Located) -> list[str]:
        """Named torch.Generators in scope in `located`'s function: built there or at module level."""
        creations = list(located.function.creations)
        module_code = model.function(f"{located.module.module}.{MODULE_CODE}")
        if module_code is not None:
            creations += module_code.function.creations
        return sorted({creation.name for creation in creations if creation.kind == "generator" and _is_reference(creation.name)})

    def _fix(self, model: ProjectCheckpoints, checkpoint: Checkpoint, rngs: tuple[str, ...], generators: list[str]) -> Fix | None:
        module = checkpoint.owner.module
        save = checkpoint.extendable
        if module.fix is None or save is None or save.insertion is None:
            return None
        modules = [module_name for module_name in ("torch", "numpy", "random") if module_name in rngs or (module_name == "torch" and "cuda" in rngs)]
        names = {name: module.fix.alias(name) or _DEFAULT_NAMES[name] for name in modules}
        quote = save.insertion.quote
        getters = {
            "torch": f"{names.get('torch')}.get_rng_state()",
            "cuda": f"{names.get('torch')}.cuda.get_rng_state_all()",
            "numpy": f"{names.get('numpy')}.random.get_state()",
            "random": f"{names.get('random')}.getstate()",
        }
        states = [f"{quote}{rng}{quote}: {getters[rng]}" for rng in rngs]
        states += [f"{quote}{name}{quote}: {name}.get_state()" for name in generators]
        edits = _entry_edits(checkpoint, _RNG_STATE_KEY, "{" + ", ".join(states) + "}")
        if edits is None:
            return None
        newline = module.fix.newline
        all_edits = list(edits)
        missing = module.fix.missing_imports(modules)
        all_edits.extend(Edit(Position(line, 0), Position(line, 0), text) for line, text in sorted(missing.items()))
        restores = []
        for located in model.in_module(module.module):
            point = located.function.restore_point
            if point is None:
                continue
            in_scope = set(located.function.names) | {name.partition(".")[0] for name in self._generators(model, located)}
            in_reach = [name for name in generators if name.partition(".")[0] in in_scope]
            at = Position(point.line, 0)
            restores.append(Edit(at, at, _rng_restores(point, rngs, in_reach, names, quote, module.fix.indent, newline)))
        if not restores and _left_unrestored(model, _RNG_STATE_KEY):
            return None
        return Fix(
            Applicability.UNSAFE,
            f'Save the RNG states under "{_RNG_STATE_KEY}" and restore them on the load path',
            (*all_edits, *restores),
        )


def _rng_restores(
    point: RestorePoint, rngs: tuple[str, ...], generators: list[str], names: dict[str, str], quote: str, indent: str, newline: str
) -> str:
    """The statements restoring the RNG states on a load path. Checkpoints saved before the fix have
    no states, and one loaded with `map_location="cuda"` has its tensors on the GPU, where torch
    refuses a state: the states are restored when present, each tensor from a copy on the CPU."""
    state = f"{point.checkpoint}[{quote}{_RNG_STATE_KEY}{quote}]"
    torch = names.get("torch")
    setters = {
        "torch": f"{torch}.set_rng_state({state}[{quote}torch{quote}].cpu())",
        "cuda": f"{torch}.cuda.set_rng_state_all([device.cpu() for device in {state}[{quote}cuda{quote}]])",
        "numpy": f"{names.get('numpy')}.random.set_state({state}[{quote}numpy{quote}])",
        "random": f"{names.get('random')}.setstate({state}[{quote}random{quote}])",
    }
    lines = [setters[rng] for rng in rngs] + [f"{name}.set_state({state}[{quote}{name}{quote}].cpu())" for name in generators]
    guard = f"{point.indent}if {quote}{_RNG_STATE_KEY}{quote} in {point.checkpoint}:{newline}"
    return guard + "".join(point.indent + indent + line + newline for line in lines)


@register
class LossyCheckpointWeights(ProgramRule):
    """A training checkpoint that stores weights rounded to half precision while training in float32."""

    code = "REP404"
    name = "lossy-checkpoint-weights"
    sites = frozenset({CHECKPOINTS})
    imported_sites = frozenset()

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        model = project_checkpoints(project)
        for checkpoint in model.checkpoints:
            lossy = next((entry for entry in checkpoint.entries if entry.lossy), None)
            if not checkpoint.is_training or lossy is None or model.context(checkpoint).may_build("cast"):
                continue
            shown = f'"{elide(lossy.key)}"' if lossy.key else "the saved object"
            yield _finding(
                self,
                checkpoint,
                f"this training checkpoint stores {shown} cast with `{elide(lossy.lossy)}` while the model trains in float32",
            )


@register
class ResumeStateNotRestored(ProgramRule):
    """A training-state key that the checkpoint saves and no resume path restores."""

    code = "REP405"
    name = "resume-state-not-restored"
    sites = frozenset({CHECKPOINTS})
    imported_sites = frozenset()

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        model = project_checkpoints(project)
        if not model.resume_paths or model.any_key_may_be_restored:
            return
        restored = model.restored_keys
        reported = set()
        for checkpoint in model.checkpoints:
            for entry in checkpoint.entries:
                if entry.key is None or entry.kind not in TRAINING_STATE or entry.key in restored:
                    continue
                at = Position(entry.line, entry.column)
                if (checkpoint.owner.module.path, at) in reported:
                    continue
                reported.add((checkpoint.owner.module.path, at))
                resume = model.resume_paths[0]
                yield Finding(
                    self.code,
                    self.name,
                    f'the {_STATE_NAMES[entry.kind]} state saved under "{elide(entry.key)}" is never restored '
                    f"(resume path: {place(resume.module.path, resume.function.restores[0].start.line, checkpoint.owner.module.path)})",
                    checkpoint.owner.module.path,
                    at,
                    at,
                )


@register
class LenientStateDictLoad(ProgramRule):
    """`load_state_dict(..., strict=False)` on a resume path: missing or unexpected keys go unnoticed."""

    code = "REP406"
    name = "lenient-state-dict-load"
    sites = frozenset({CHECKPOINTS})
    imported_sites = frozenset()

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        model = project_checkpoints(project)
        for located in model.resume_paths:
            # Resuming: the lenient load reads the same loaded checkpoint as an optimizer restore.
            resumed = {restore.source for restore in located.function.restores if restore.kind == "optimizer" and restore.source is not None}
            for restore in located.function.restores:
                if restore.strict_false and restore.source in resumed:
                    yield Finding(
                        self.code,
                        self.name,
                        "`load_state_dict(..., strict=False)` while resuming: weights missing from the checkpoint stay random",
                        located.module.path,
                        restore.start,
                        restore.end,
                    )


@register
class CheckpointMissingOptimizer(ProgramRule):
    """A checkpoint that records progress and weights but not the optimizer, and is resumed from."""

    code = "REP407"
    name = "checkpoint-missing-optimizer"
    sites = frozenset({CHECKPOINTS})
    imported_sites = frozenset()

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        model = project_checkpoints(project)
        progress = knowledge().progress_keys
        for checkpoint in model.checkpoints:
            kinds = checkpoint.kinds
            keys = frozenset(entry.key for entry in checkpoint.entries if entry.key is not None and entry.key.lower() in progress)
            if "optimizer" in kinds or "model" not in kinds or not keys | checkpoint.named_progress:
                continue
            if not model.resumes_from(checkpoint, keys | checkpoint.named_progress):
                continue
            optimizers = model.context(checkpoint).built("optimizer")
            stateful = [(located, creation) for located, creation in optimizers if not creation.stateless]
            if not stateful:
                continue
            located, creation = stateful[0]
            yield _finding(
                self,
                checkpoint,
                f"this checkpoint records progress ({_recorded(keys, checkpoint.named_progress)}) and weights but not the optimizer "
                f"built at {_where(located, creation.line, creation.what, checkpoint)}",
            )


def _recorded(keys: frozenset[str], named: frozenset[str]) -> str:
    """The progress a checkpoint records: its keys, else the counters its file name holds."""
    if keys:
        return elide(", ".join(sorted(keys)))
    return f"{elide(', '.join(sorted(named)))} in its file name"
