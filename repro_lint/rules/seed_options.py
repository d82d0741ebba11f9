"""REP108 and REP109: a seed option the user sets, and whether setting it changes the run."""

from __future__ import annotations

from collections.abc import Iterator

from repro_lint.core.findings import Applicability, Finding, Fix, FixAvailability
from repro_lint.core.message_text import elide
from repro_lint.facts.events import TORCH
from repro_lint.facts.module_facts import SEED_OPTIONS, ModuleFacts, SeedOption
from repro_lint.facts.seed_reads import MAIN_BLOCK, option_attribute
from repro_lint.facts.seed_values import CONFIG_OBJECTS
from repro_lint.program.model import ProjectModel
from repro_lint.program.programs import Program
from repro_lint.rules.base import ProgramRule, register


@register
class OptionalSeedDefaultNone(ProgramRule):
    """Every seeding call is skipped when the seed option keeps its default, None."""

    code = "REP108"
    name = "optional-seed-default-none"
    sites = frozenset({SEED_OPTIONS})
    imported_sites = frozenset()
    fix_availability = FixAvailability.SOMETIMES
    fixes_first = True

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        reported = set()
        for program in project.programs:
            seeds = project.seeds_known_to_run(program, TORCH)
            if not seeds or not all(located.event.guard for located in seeds):
                continue
            guards = {located.event.guard.rpartition(".")[2].lstrip("-").replace("-", "_") for located in seeds}  # type: ignore[union-attr]
            for name in program.modules:
                module = project.modules[name]
                for option in module.seed_options:
                    if not option.default_is_none or option.name.lstrip("-").replace("-", "_") not in guards:
                        continue
                    if (module.path, option.start) in reported:
                        continue
                    reported.add((module.path, option.start))
                    fix = Fix(Applicability.UNSAFE, "Give the seed option a default of 0", (option.fix,)) if option.fix else None
                    yield Finding(
                        self.code,
                        self.name,
                        f"the seed option `{elide(option.name)}` defaults to None, which skips every seeding call "
                        f"({seeds[0].seen_from(module.path)})",
                        module.path,
                        option.start,
                        option.end,
                        fix,
                    )



@register
class SeedOptionUnused(ProgramRule):
    """A seed option whose value no seeding call receives: `--seed 3` gives the run `--seed 7` gives."""

    code = "REP109"
    name = "seed-option-unused"
    sites = frozenset({SEED_OPTIONS})
    imported_sites = frozenset()

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        # An option is reported when no program holding it uses it; the message names the first
        # program's seeding calls.
        unused: dict[tuple[str, int, int], tuple[ModuleFacts, SeedOption, str] | None] = {}
        for program in project.programs:
            options = list(_options(project, program))
            if not options:
                continue
            read = _read_names(project, program)
            for module, option in options:
                key = (module.path, option.start.line, option.start.column)
                if read is not None and option_attribute(option.name) not in read:
                    unused.setdefault(key, (module, option, _seeding(project, program, module.path)))
                else:
                    unused[key] = None
        for found in unused.values():
            if found is None:
                continue
            module, option, seeding = found
            yield Finding(
                self.code,
                self.name,
                f"the seed option `{elide(option.name)}` reaches no seeding call: {seeding}",
                module.path,
                option.start,
                option.end,
            )


def _options(project: ProjectModel, program: Program) -> Iterator[tuple[ModuleFacts, SeedOption]]:
    """The seed options and fields the program may define: at module level, or in a function it runs."""
    reachable = project.reachable_functions(program)
    for name in program.modules:
        module = project.modules[name]
        for option in module.seed_options:
            function = module.function_at(option.start.line)
            if function is None or function in reachable:
                yield module, option


def _read_names(project: ProjectModel, program: Program) -> frozenset[str] | None:
    """The seed-like names the program reads for their value in code it may run, or None where its
    options object goes whole to code the analysis cannot see (any of its values may be read there).
    The options object goes by the names the program binds a parse result to (`args`), else by the
    usual names (`args`, `cfg`, ...): a vendored library's own `config` objects are not the program's."""
    within = project.calls.module_set(program.modules)
    reachable = project.reachable_functions(program)
    facts = [(name, project.modules[name].seed_reads) for name in program.modules]
    holders = frozenset(holder for _, reads in facts for holder in reads.parsed) or frozenset(CONFIG_OBJECTS)

    def runs(function: str | None, module: str) -> bool:
        # An imported module's main block never runs in this program.
        return function is None or function in reachable or (function == MAIN_BLOCK and module == program.entry.module)

    read: set[str] = set()
    for name, reads in facts:
        if any(holder in holders and runs(function, name) for holder, function in reads.converting):
            return None
        for call, holder, function in reads.handed_over:
            if holder in holders and runs(function, name) and not project.calls.callees(call, name, within):
                return None
        read.update(seed for seed, function in reads.names if runs(function, name))
    return frozenset(read)


def _seeding(project: ProjectModel, program: Program, here: str) -> str:
    seeds = [located for located in project.events(program) if located.event.kind == "seed"]
    if not seeds:
        return "the program never seeds"
    return f"the program seeds at {seeds[0].seen_from(here)} without it"
