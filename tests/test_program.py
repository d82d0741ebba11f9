"""The project model: import graph, calls across modules, and entry-point detection."""

from __future__ import annotations

import textwrap

import pytest

from repro_lint.analysis.python import analyze
from repro_lint.api import lint_paths
from repro_lint.analysis.result import ModuleIdentity
from repro_lint.core.settings import Settings
from repro_lint.program.model import ProjectModel, is_inert
from repro_lint.program.quiet import UnseenCalls
from repro_lint.program.symbols import denotes_nothing


def model(files: dict[str, str], entry_points: tuple[str, ...] = ()) -> ProjectModel:
    facts = []
    for path, code in files.items():
        analysis = analyze(textwrap.dedent(code), path, ModuleIdentity.from_relative_path(path), [], Settings())
        facts.append(analysis.facts)
    return ProjectModel(facts, entry_points)


def entries(project: ProjectModel) -> list[str]:
    return [program.entry.module for program in project.programs]


def test_main_guard_is_an_entry_point():
    project = model({"train.py": "def main(): pass\nif __name__ == '__main__':\n    main()\n", "lib.py": "def f(): pass\n"})
    assert entries(project) == ["train"]
    assert project.modules["train"].main_guard_line == 2


def test_reversed_main_guard_comparison():
    assert entries(model({"run.py": 'if "__main__" == __name__:\n    pass\n'})) == ["run"]


def test_module_level_training_is_an_entry_point():
    code = "for epoch in range(3):\n    loss = model(x).sum()\n    loss.backward()\n    optimizer.step()\n"
    project = model({"script.py": code})
    assert entries(project) == ["script"] and project.programs[0].trains


def test_module_level_call_to_project_function_that_trains():
    project = model({
        "engine/loop.py": "def fit_one(model, opt):\n    model(x).sum().backward()\n",
        "engine/__init__.py": "from .loop import fit_one\n",
        "run.py": "from engine import fit_one\nfor epoch in range(2):\n    fit_one(model, opt)\n",
    })
    assert entries(project) == ["run"]
    assert project.programs[0].modules == ("engine", "engine.loop", "run")


def test_importing_a_module_that_trains_on_load_trains_on_load():
    # `side` trains when loaded, but `lib` imports it: the program is the module run, `lib`, and an
    # imported module is never an entry point of its own (catalog, "Reachability").
    project = model({
        "engine.py": "def fit_one(model, opt):\n    model(x).sum().backward()\n",
        "side.py": "from engine import fit_one\nfit_one(model, opt)\n",
        "lib.py": "import side\n",
        "quiet.py": "import engine\nLOG = engine.__name__\n",
    })
    assert entries(project) == ["lib"]


def test_a_library_module_is_not_an_entry_point_through_a_name_only_match():
    # Megatron-LM: `SETTINGS.update({...})` at the top of an imported module matched, by name, a
    # project method `update` that trains, and every module importing it became a program.
    project = model({
        "trainer.py": "class Trainer:\n    def update(self, batch):\n        self.loss(batch).backward()\n",
        "registry.py": "SETTINGS = {}\nSETTINGS.update({'a': 1})\n",
        "data.py": "import registry\nimport trainer\n",
        "models.py": "import data\n",
    })
    assert entries(project) == []


def test_what_an_imported_module_runs_on_load_follows_no_name_only_match_at_any_depth():
    # Megatron-LM: a helper that an imported module calls at load time builds a table with
    # `kwargs.update(...)`, which matched by name a project method `update` that trains: every test
    # module importing the library became a training program (REP302 at line 1).
    project = model({
        "trainer.py": "class Trainer:\n    def update(self, batch):\n        self.loss(batch).backward()\n",
        "options.py": "def table():\n    kwargs = {}\n    kwargs.update(a=1)\n    return kwargs\nTABLE = table()\n",
        "test_options.py": "import options\nimport trainer\ndef test_table():\n    assert options.TABLE\n",
    })
    assert entries(project) == []


def test_the_entry_modules_own_code_still_reaches_methods_by_name():
    project = model({
        "trainer.py": "class Trainer:\n    def update(self, batch):\n        self.loss(batch).backward()\n",
        "options.py": "def table():\n    kwargs = {}\n    kwargs.update(a=1)\n    return kwargs\nTABLE = table()\n",
        "run.py": "import options\nimport trainer\ndef fit(t, loader):\n    for batch in loader:\n        t.update(batch)\nfit(make(), loader)\n",
    })
    assert entries(project) == ["run"]
    assert [program.trains for program in project.programs] == [True]


def test_load_time_calls_that_cannot_reach_training_do_not_make_an_entry_point():
    project = model({
        "engine.py": "def fit_one(model, opt):\n    model(x).sum().backward()\ndef configure():\n    return setup()\ndef setup():\n    return 1\n",
        "lib.py": "from engine import configure\nCONFIG = configure()\n",
        "run.py": "import lib\nfrom engine import fit_one\nfit_one(model, opt)\n",
    })
    assert entries(project) == ["run"]


def test_training_through_two_levels_of_functions():
    project = model({
        "loop.py": "def step(model, opt):\n    model(x).sum().backward()\ndef fit(model, opt):\n    for epoch in range(2):\n        step(model, opt)\n",
        "main.py": "from loop import fit\ndef main():\n    fit(model, opt)\nif __name__ == '__main__':\n    main()\n",
    })
    assert [(program.entry.module, program.trains) for program in project.programs] == [("main", True)]


def test_training_through_two_levels_and_a_method():
    project = model({
        "trainer.py": """
            class Trainer:
                def step_batch(self, batch):
                    self.optimizer.step()
                def run_epoch(self):
                    for batch in self.loader:
                        self.step_batch(batch)
        """,
        "main.py": """
            from trainer import Trainer
            def main():
                t = Trainer()
                t.run_epoch()
            if __name__ == "__main__":
                main()
        """,
        "infer.py": """
            import torch
            def main():
                with torch.no_grad():
                    model(x)
            if __name__ == "__main__":
                main()
        """,
    })
    trains = {program.entry.module: program.trains for program in project.programs}
    assert trains == {"infer": False, "main": True}


def test_library_module_is_not_an_entry_point():
    project = model({"models/net.py": "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n"})
    assert entries(project) == []
    assert not project.only_reached_by_non_training_programs("models.net")


def test_entry_points_setting():
    project = model({"scripts/launch.py": "import torch\nrun()\n", "lib.py": ""}, entry_points=("scripts/*.py",))
    assert entries(project) == ["scripts.launch"]


def test_relative_and_star_imports_resolve_calls():
    project = model({
        "pkg/__init__.py": "",
        "pkg/seeding.py": "def fix_seed():\n    pass\n",
        "pkg/helpers.py": "from .seeding import *\n",
        "pkg/train.py": "from .helpers import fix_seed\nfix_seed()\n",
    })
    call = project.modules["pkg.train"].module_calls[0]
    assert project.calls.callees(call, "pkg.train") == ("pkg.seeding.fix_seed",)


def test_a_name_from_a_star_import_in_the_calling_module_resolves():
    project = model({
        "models/__init__.py": "from .dla import *\n",
        "models/dla.py": "import torch.nn as nn\nclass SimpleDLA(nn.Module):\n    def __init__(self):\n        super().__init__()\n",
        "main.py": "from models import *\nnet = SimpleDLA()\n",
    })
    call = project.modules["main"].module_calls[0]
    assert project.calls.callees(call, "main") == ("models.dla.SimpleDLA.__init__",)


# One call per line of `main`, and whether the project pass can see it.
CALLS = {
    "pkg/__init__.py": "",
    "pkg/utils.py": "import torch\n\n\ndef seed_all():\n    torch.manual_seed(0)\n",
    "pkg/models.py": "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n",
    "train.py": """\
        import os

        import torch
        import pkg.utils as utils
        from pkg import models
        from pkg.utils import seed_all


        def main(loader, logger, sampler):
            os.makedirs("out")
            torch.cat([])
            print("start")
            logger.info("epoch")
            seed_all()
            utils.seed_all()
            models.Net()
            loader.forward()
            sampler.set_epoch(0)
            torch.multiprocessing.spawn(seed_all, nprocs=2)
            torch.multiprocessing.spawn(os.getpid, nprocs=2)
    """,
}
# A library's functions, a method no project function is named, and `spawn` itself (not what it
# starts in other processes, also a call on its line: even a library's function started so decides
# how the program's own process is walked). A builtin's call (`print`, line 12) is not among the
# facts at all (`test_calls_no_project_follows_are_left_out_of_the_facts`).
INERT_LINES = [10, 11, 13, 19, 20]


def test_calls_the_pass_cannot_see_are_inert():
    project = model(CALLS)
    calls = project.functions["train.main"].calls
    inert = [call for call in calls if is_inert(call, "train", project.names, project.function_names)]
    assert [call.line for call in inert] == INERT_LINES
    assert [call.line for call in calls if call not in inert] == [14, 15, 16, 17, 18, 19, 20]
    everywhere = frozenset(project.modules)
    for call in inert:  # what the model itself makes of them: nothing
        assert project.calls.callees(call, "train", everywhere) == () and project.calls.callees_run_now(call, "train") == ()


# Project files named as the builtins module, which Python finds before any file on its path.
BUILTIN_CALLS = {
    "builtins.py": "def print(*args):\n    return 0\n",
    "pkg/__init__.py": "",
    "pkg/builtins.py": "def len(x):\n    return 0\n",
    "train.py": """\
        import builtins

        HANDLERS = {}


        def main(items):
            print(len(items))
            builtins.print("x")
            HANDLERS["a"](items)
            sorted(items, key=len)
            dict.fromkeys(items)
            items.sort()
            main(items)
    """,
}


def test_calls_no_project_follows_are_left_out_of_the_facts():
    """A call naming only builtins (`print`, `key=len` handed over), or nothing (`HANDLERS["a"](x)`),
    and calling no method, is inert in every project: the facts leave it out, and no project module
    named `builtins` is what such a name denotes. A call of a method stays, as the pass reads some
    by their name whatever they resolve to (`set_epoch`)."""
    project = model(BUILTIN_CALLS)
    calls = project.functions["train.main"].calls
    assert [(call.line, call.targets, call.method) for call in calls] == [
        (8, ("builtins.print",), "print"),
        (11, ("builtins.dict.fromkeys",), "fromkeys"),
        (12, (), "sort"),
        (13, ("train.main",), None),
    ]
    for importer in (None, "train", "pkg.other"):
        assert project.names.resolve("builtins", importer) is None
        assert project.names.split("builtins.len", importer) is None
    assert "builtins" not in project.program_modules("train")


# Names a project module may or may not give: its variables, definitions, submodules, names it binds
# inside and outside the project, re-exports and star imports, under the same and other names.
SYMBOLS = {
    "pkg/__init__.py": "from .core import Trainer\nfrom .log import *\nimport logging\n",
    "pkg/core.py": "import numpy as np\nfrom logging import getLogger\nfrom pkg import log as journal\n\nLOGGER = getLogger()\n\n\nclass Trainer:\n    def fit(self):\n        return 1\n",
    "pkg/log.py": "import logging\n\nLOGGER = logging.getLogger()\n\n\ndef info(message):\n    return message\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/deep.py": "def run():\n    return 1\n",
    "vendor/numpy/random.py": "def seed(n):\n    return n\n",
    "main.py": "import pkg\n",
}


def test_what_denotes_nothing_by_the_facts_of_the_modules_it_names_resolves_to_nothing():
    """`denotes_nothing` stands in for the resolver where only a few modules' facts are at hand: it
    must never say so of a name the resolver resolves, and it tells most names the resolver finds
    nothing for."""
    project = model(SYMBOLS)
    heads = ["pkg", "pkg.core", "pkg.log", "pkg.sub", "pkg.sub.deep", "core", "log", "np", "numpy", "vendor.numpy"]
    members = ["LOGGER", "Trainer", "info", "getLogger", "journal", "np", "logging", "deep", "run", "random", "seed", "fit", "missing"]
    names = [f"{head}.{member}" for head in heads for member in members]
    names += [f"{name}.{last}" for name in names for last in ("info", "fit", "seed", "run")]
    nothing = []
    for importer in ("main", "pkg.core", "pkg.sub.deep"):
        for name in names:
            if project.names.split(name, importer) is not None and denotes_nothing(name, importer, project.names, project.modules.get):
                assert project.calls.resolve_symbol(name, importer) is None, (name, importer)
                nothing.append(name)
    assert {"pkg.core.LOGGER.info", "pkg.log.LOGGER.info", "pkg.core.getLogger.info", "pkg.core.missing"} <= set(nothing)
    assert "pkg.LOGGER.info" not in nothing  # `pkg` star-imports a project module: not told


# One call per line of `main` (lines 6 to 18), of project functions the pass may or may not see run.
QUIET = {
    "lib.py": """\
        import argparse
        import random

        import torch


        def helper():
            return tail() + undefined_here()


        def tail():
            return 1


        def seeds():
            torch.manual_seed(0)


        def calls_seeds():
            return seeds()


        def options():
            parser = argparse.ArgumentParser()
            parser.add_argument("--seed", type=int)
            return parser


        def hands_over():
            return register(tail)


        class Model:
            def info(self):
                return tail()

            def forward(self, x):
                return x


        class Sampler:
            def draw(self):
                return random.random()


        def builds():
            return Model()


        def loop():
            return again()


        def again():
            return loop()
    """,
    "train.py": """\
        import lib
        import torch


        def main(model):
            lib.helper()
            lib.tail()
            lib.seeds()
            lib.calls_seeds()
            lib.options()
            lib.hands_over()
            lib.Model.info(model)
            lib.builds()
            lib.Model()
            lib.Model.forward(model, 1)
            lib.loop()
            model.info()
            model.draw()
            torch.ones(1).sum().backward()


        if __name__ == "__main__":
            main(None)
    """,
}
# helper (calling tail and a name nothing defines), tail, Model.info, two functions calling each
# other, and `model.info()`, which the pass takes for any project method named `info`.
QUIET_LINES = [6, 7, 12, 16, 17]


def _unseen_calls(project: ProjectModel, asked: tuple[str, ...] = ()) -> UnseenCalls:
    methods = project.method_modules
    return UnseenCalls(project.names, project.function_names, project.modules.get, asked, lambda name: methods.get(name, frozenset()))


def test_calls_of_project_functions_that_run_nothing_the_pass_sees_are_unseen():
    project = model(QUIET)
    calls = [call for call in project.functions["train.main"].calls if call.line < 19]
    unseen = _unseen_calls(project)
    assert [call.line for call in calls if unseen(call, "train")] == QUIET_LINES
    # A local finding in `tail` asking which programs reach it: reaching it from more places may change
    # the answer.
    asked = _unseen_calls(project, ("lib.tail",))
    assert [call.line for call in calls if asked(call, "train")] == [16]


@pytest.mark.parametrize("line", [*QUIET_LINES, 10, 18])
def test_a_call_judged_unseen_changes_no_finding(project, line):
    """What the pass reports is the same with the call or without it (the line emptied, so none moves);
    not so without the call of line 10, whose function defines a seed option, nor without line 18's
    `model.draw()`, which may run a method drawing from Python's RNG, which nothing seeds."""
    assert _same_findings_without(project, QUIET, line) == (line in QUIET_LINES)


def _same_findings_without(project, sources: dict[str, str], line: int) -> bool:
    """Whether the pass reports the same with train.py's `line` emptied (so that none moves)."""
    files = {name: textwrap.dedent(text) for name, text in sources.items()}
    root = project(files)
    before = [(f.path, f.start.line, f.code, f.message) for f in lint_paths([root], Settings(), use_cache=False).findings]
    lines = files["train.py"].splitlines(keepends=True)
    lines[line - 1] = "    pass\n"
    (root / "train.py").write_text("".join(lines))
    return [(f.path, f.start.line, f.code, f.message) for f in lint_paths([root], Settings(), use_cache=False).findings] == before


# Functions called through packages re-exporting them: once, twice, under another name; and where the
# pass's resolution takes another step (a star import, a name bound twice).
REEXPORTS = {
    "pkg/__init__.py": """\
        from pkg.impl import quiet, seeds
        from pkg.impl import quiet as renamed
        from pkg.stars import *

        try:
            from pkg.impl import quiet as either
        except ImportError:
            from pkg.other import either
    """,
    "pkg/impl.py": "import torch\n\n\ndef quiet():\n    return 1\n\n\ndef seeds():\n    torch.manual_seed(0)\n",
    "pkg/stars.py": "def starred():\n    return 1\n",
    "pkg/other.py": "def either():\n    return 2\n",
    "top/__init__.py": "from pkg import quiet, seeds\n",
    "train.py": """\
        import pkg
        import top
        from pkg import renamed
        import torch


        def main():
            pkg.quiet()
            top.quiet()
            renamed()
            top.seeds()
            pkg.starred()
            pkg.either()
            torch.rand(1).sum().backward()


        if __name__ == "__main__":
            main()
    """,
}
REEXPORTED_QUIET_LINES = [8, 9, 10]


def test_calls_through_re_exports_of_quiet_functions_are_unseen():
    project = model(REEXPORTS)
    calls = [call for call in project.functions["train.main"].calls if call.line < 14]
    unseen = _unseen_calls(project)
    assert [call.line for call in calls if unseen(call, "train")] == REEXPORTED_QUIET_LINES
    # Each followed where the pass's own resolution leads.
    assert [project.calls.resolve_symbol(target, "train") for call in calls[:3] for target in call.targets] == ["pkg.impl.quiet"] * 3


@pytest.mark.parametrize("line", [*REEXPORTED_QUIET_LINES, 11])
def test_a_call_through_a_re_export_judged_unseen_changes_no_finding(project, line):
    """As for direct calls; line 11's `top.seeds()` is the program's only seeding."""
    assert _same_findings_without(project, REEXPORTS, line) == (line in REEXPORTED_QUIET_LINES)


# `helpers` binds names to library modules; one of those names is also a folder of the project
# (`vendor/numpy/`), through which a name under it reaches project code.
IMPORTS = {
    "helpers.py": """\
        import math
        import numpy as np
        from collections import OrderedDict as Ordered
        from typing import *
        from vendor.numpy import random as vendored


        def ready():
            return True
    """,
    "vendor/numpy/random.py": "def seed(value):\n    pass\n",
    "train.py": "from helpers import math, np, Ordered, vendored, ready\n",
}


def test_imports_of_modules_outside_the_project_name_nothing_the_model_can_reach():
    project = model(IMPORTS)
    helpers = project.modules["helpers"]
    outside = [name for name, targets in helpers.bindings if all(map(project.names.outside, targets))]
    assert outside == ["Ordered", "math"]
    assert [name for name in helpers.imports if project.names.outside(name)] == ["collections", "collections.OrderedDict", "math", "typing"]
    assert [name for name in helpers.star_imports if project.names.outside(name)] == ["typing"]
    for name in outside:  # what the model itself makes of names under them: nothing
        for under in ("", ".x", ".random.seed", ".x.y.z"):
            assert project.calls.resolve_symbol(f"helpers.{name}{under}", "train") is None
    # A module outside the project by its import alone, but a name under it may be the project's.
    assert not project.names.outside("numpy")
    assert project.calls.resolve_symbol("helpers.np.random.seed", "train") == "vendor.numpy.random.seed"
    assert project.imported_modules("helpers") == ("vendor.numpy.random",)


def test_a_methods_callers_include_the_methods_of_its_class_calling_its_name_on_any_object():
    project = model(
        {
            "lib.py": """
                class Saver:
                    def save(self):
                        self._state()

                    def _state(self):
                        pass

                    class Inner:
                        def flush(self):
                            self._state()

                class Other:
                    def run(self):
                        self._state()

                    def _state(self):
                        pass

                def helper(obj):
                    obj._state()
            """,
        }
    )
    # Only a method of the same class counts: not one of a nested class, of another class, or a function.
    assert project.calls.callers("lib.Saver._state") == {"lib.Saver.save"}
    assert project.calls.callers("lib.Other._state") == {"lib.Other.run"}
    assert project.calls.callers("lib.Saver.Inner.flush") == frozenset()


def test_methods_an_unknown_objects_call_may_run_are_those_of_the_programs_modules():
    project = model(
        {
            "a.py": "class A:\n    def step(self):\n        pass\n",
            "b.py": "class B:\n    def step(self):\n        pass\n\n    def other(self):\n        pass\n",
        }
    )
    calls = project.calls
    assert calls.methods_within("step", frozenset({"a", "b"})) == ("a.A.step", "b.B.step")
    assert calls.methods_within("step", frozenset({"b"})) == ("b.B.step",)
    assert calls.methods_within("step", frozenset({"a", "b", "c"})) == ("a.A.step", "b.B.step")
    assert calls.methods_within("missing", frozenset({"a"})) == ()


def test_the_functions_linking_to_others_by_a_resolved_call_or_a_methods_name():
    project = model(
        {
            "lib.py": """
                def seed():
                    pass

                def setup():
                    seed()

                def run(trainer):
                    trainer.fit()

                def other():
                    pass
            """,
        }
    )
    assert project.calls.linking_to({"lib.seed"}, ()) == {"lib.setup"}
    assert project.calls.linking_to((), {"fit"}) == {"lib.run"}
    assert project.calls.linking_to({"lib.other"}, {"missing"}) == set()


def test_the_functions_reaching_others_follow_resolved_calls_and_any_method_of_a_name():
    project = model(
        {
            "lib.py": """
                class Loop:
                    def fit(self):
                        train()

                def train():
                    pass

                def fit():
                    pass

                def by_method(loop):
                    loop.fit()

                def outer(loop):
                    by_method(loop)

                def by_function_name():
                    fit()

                def unrelated(obj):
                    obj.other()
            """,
        }
    )
    # `loop.fit()` may be `Loop.fit`, which calls `train`; the module-level `fit` is no method, and
    # calling it reaches nothing.
    assert project.calls.reaching({"lib.train"}) == {"lib.train", "lib.Loop.fit", "lib.by_method", "lib.outer"}
    assert project.calls.reaching({"lib.fit"}) == {"lib.fit", "lib.by_function_name"}
