"""Each program of a project model as a `ProgramOutline`, the plain data the audit reads."""

from __future__ import annotations

from repro_lint.core.program_outline import ProgramOutline
from repro_lint.program.checkpoints import project_checkpoints
from repro_lint.program.fixes import entry_position
from repro_lint.program.model import ProjectModel


def outline(model: ProjectModel) -> tuple[ProgramOutline, ...]:
    checkpoints = project_checkpoints(model)
    saving = {
        program.entry.module
        for checkpoint in checkpoints.checkpoints
        if checkpoint.is_training
        for program in checkpoints.programs_running(checkpoint.owner)
    }
    return tuple(
        ProgramOutline(
            program.entry.path,
            entry_position(program.entry).line,
            tuple(model.modules[module].path for module in program.modules),
            program.trains or any(worker.trains for worker in model.processes.workers(program)),
            program.entry.module in saving,
        )
        for program in model.programs
    )
