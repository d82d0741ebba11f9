"""Walks over the program model and the data flow end in time and memory roughly linear in the
project, whatever shape its imports, re-exports, calls and assignments take; sort keys are total."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from repro_lint.analysis.python import analyze
from repro_lint.analysis.result import ModuleIdentity
from repro_lint.core.settings import Settings
from repro_lint.program.checkpoints import ProjectCheckpoints
from repro_lint.program.model import ProjectModel
from repro_lint.program.worker_hazards import WorkerHazards

ROOT = Path(__file__).resolve().parent.parent


def model(files: dict[str, str]) -> ProjectModel:
    facts = []
    for path, code in files.items():
        analysis = analyze(textwrap.dedent(code), path, ModuleIdentity.from_relative_path(path), [], Settings())
        facts.append(analysis.facts)
    return ProjectModel(facts)


def timed(action):
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


# Symbol resolution through re-exports --------------------------------------------------------------


def test_star_imports_of_missing_modules_resolve_in_linear_time():
    # fairseq's mmpt/processors/__init__.py: 13 star imports of modules the project lacks, in a try.
    missing = "".join(f"    from .missing{k} import *\n" for k in range(13))
    project = model({
        "pkg/__init__.py": f"try:\n{missing}except ImportError:\n    pass\nfrom .real import *\n",
        "pkg/real.py": "class Foo:\n    def __init__(self):\n        pass\n",
        "train.py": "from pkg import Foo, Bar\nFoo()\nBar()\n",
    })
    (foo, bar), seconds = timed(lambda: (project.calls.resolve_symbol("pkg.Foo", "train"), project.calls.resolve_symbol("pkg.Bar", "train")))
    assert foo == "pkg.real.Foo"
    assert bar is None
    assert seconds < 1


def test_a_long_chain_of_re_exports_resolves_without_recursion():
    length = 2000
    files = {"m0.py": "def fit():\n    pass\n"}
    files.update({f"m{k}.py": f"from m{k - 1} import fit\n" for k in range(1, length)})
    project = model(files)
    assert project.calls.resolve_symbol(f"m{length - 1}.fit", "train") == "m0.fit"
    assert project.calls.resolve_symbol(f"m{length - 1}.other", "train") is None


def test_rings_of_re_exports_end_and_answer_the_same_whichever_name_comes_first():
    # r0 star-imports r1, ..., r11 star-imports r0 and then c, which defines `fit`.
    ring = 12
    files = {f"r{k}.py": f"from r{(k + 1) % ring} import *\n" for k in range(ring)}
    files[f"r{ring - 1}.py"] += "from c import *\n"
    files["c.py"] = "def fit():\n    pass\n"
    files["d.py"] = "from d import *\nfrom e import loop\n"
    files["e.py"] = "from d import loop\n"
    for first in (0, 5):
        project = model(files)
        order = [first, *(k for k in range(ring) if k != first)]
        assert [project.calls.resolve_symbol(f"r{k}.fit", "train") for k in order] == ["c.fit"] * ring
        assert project.calls.resolve_symbol(f"r{first}.missing", "train") is None
    assert project.calls.resolve_symbol("d.loop", "train") is None
    assert project.calls.resolve_symbol("e.loop.x", "train") is None
    assert project.calls.resolve_symbol("d.missing", "train") is None


# Checkpoint entries ----------------------------------------------------------------------------------


def saved_kinds(code: str) -> list[tuple[str | None, str]]:
    facts = analyze(textwrap.dedent(code), "convert.py", ModuleIdentity.from_relative_path("convert.py"), [], Settings()).facts
    (function,) = facts.checkpoints.functions
    return [(entry.key, entry.kind) for save in function.saves for entry in save.entries]


def test_a_dict_rebinding_its_own_name_holds_what_the_name_held_before():
    # diffusers' scripts/convert_diffusers_to_original_sdxl.py: a RecursionError ended the whole run.
    rebinding = """\
        import torch
        def convert(unet):
            state_dict = unet.state_dict()
            state_dict = {"state_dict": state_dict}
            torch.save(state_dict, "model.ckpt")
    """
    plain = rebinding.replace('state_dict = {"state_dict": state_dict}', 'wrapped = {"state_dict": state_dict}').replace("save(state_dict", "save(wrapped")
    assert saved_kinds(rebinding) == saved_kinds(plain) == [("state_dict", "model")]


def test_a_dict_holding_itself_and_long_chains_of_dicts_end():
    holding_itself = """\
        import torch
        def save(opt, path):
            ckpt = {}
            ckpt["state"] = ckpt
            ckpt.update(saved_state=ckpt)
            ckpt["optimizer"] = opt.state_dict()
            torch.save(ckpt, path)
    """
    assert saved_kinds(holding_itself) == [("state", "optimizer"), ("saved_state", "optimizer"), ("optimizer", "optimizer")]
    chain = "".join(f"    d{k} = {{'inner': d{k - 1}}}\n" for k in range(1, 2000))
    code = f"import torch\ndef save(opt, path):\n    d0 = {{'optimizer': opt.state_dict()}}\n{chain}    torch.save(d1999, path)\n"
    assert saved_kinds(code) == [("inner", "optimizer")]


# Total sort keys -------------------------------------------------------------------------------------


def test_a_dataset_factory_defined_twice_under_one_name_is_kept_in_a_total_order():
    # handson-ml2's notebook 13 defines one factory in several cells: sorting the factories compared
    # their dataset references, which had no order (TypeError).
    code = """\
        import tensorflow as tf
        def make_dataset(x):
            return tf.data.Dataset.range(x)
        def make_dataset(x):
            return tf.data.Dataset.from_tensor_slices(x)
    """
    facts = analyze(textwrap.dedent(code), "data.py", ModuleIdentity.from_relative_path("data.py"), [], Settings()).facts
    assert [(name, [ref.targets for ref in refs]) for name, refs in facts.datasets.factories] == [
        ("data.make_dataset", [("tensorflow.data.Dataset.from_tensor_slices",)]),
        ("data.make_dataset", [("tensorflow.data.Dataset.range",)]),
    ]


# Data flow within a module -----------------------------------------------------------------------


def loader_datasets(code: str) -> list[tuple[tuple[str, ...], bool]]:
    facts = analyze(code, "train.py", ModuleIdentity.from_relative_path("train.py"), [], Settings()).facts
    return [(ref.targets, ref.fixable) for site in facts.datasets.loaders for ref in site.datasets]


LOADER = "import torch\nfrom torch.utils.data import DataLoader, Subset\nfrom data import Images\ndef main(c, idx):\n{body}    loader = DataLoader({name}, num_workers=2)\n"


def test_names_through_two_thousand_aliases_resolve():
    aliases = "".join(f"    a{k} = a{k - 1}\n" for k in range(1, 2000))
    code = LOADER.format(body=f"    load = Images\n    a0 = load\n{aliases}    data = a1999()\n", name="data")
    assert loader_datasets(code) == [(("data.Images",), True)]


def test_a_dataset_reached_through_two_thousand_assignments_and_wrappers_is_found():
    chain = "".join(f"    a{k} = a{k - 1}\n" for k in range(1, 2000))
    assert loader_datasets(LOADER.format(body=f"    a0 = Images()\n{chain}", name="a1999")) == [(("data.Images",), True)]
    wrapped = "".join(f"    s{k} = Subset(s{k - 1}, idx)\n" for k in range(1, 2000))
    assert loader_datasets(LOADER.format(body=f"    s0 = Images()\n{wrapped}", name="s1999")) == [(("data.Images",), True)]
    itself = "    ds = Images()\n    ds = Subset(ds, idx)\n    ds = Subset(ds, idx)\n"
    assert loader_datasets(LOADER.format(body=itself, name="ds")) == [(("data.Images",), True)]


def test_a_name_rebound_from_itself_many_times_is_followed_once_per_assignment():
    rebinding = "    x = Images()\n" + "    x = x if c else x\n" * 40
    found, seconds = timed(lambda: loader_datasets(LOADER.format(body=rebinding, name="x")))
    assert found == [(("data.Images",), True)]
    assert seconds < 2


def test_a_global_statement_at_module_level_leaves_names_to_the_module():
    code = "global Images, load\nfrom torch.utils.data import DataLoader\nfrom data import Images\nload = Images\nloader = DataLoader(load(), num_workers=2)\n"
    assert loader_datasets(code) == [(("data.Images",), True)]


def test_a_programs_events_come_in_one_order_whatever_the_hash_seed():
    # Events on one line differing only in column tied under the old key and came in set order.
    script = textwrap.dedent("""\
        import json
        from tests.test_bounded_analysis import model
        project = model({"train.py": "import torch\\ndef main():\\n    torch.randn(1); torch.randn(2); torch.randn(3); torch.randn(4); torch.randn(5)\\nif __name__ == '__main__':\\n    main()\\n"})
        print(json.dumps([located.event.column for located in project.events(project.programs[0])]))
    """)
    outputs = set()
    for seed in range(8):
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": str(seed)}, cwd=ROOT, check=True)
        outputs.add(run.stdout)
    assert len(outputs) == 1
    columns = json.loads(outputs.pop())
    assert len(columns) == 5 and columns == sorted(columns)


# Walks over the project ------------------------------------------------------------------------------


MAIN = "\nif __name__ == '__main__':\n    main()\n"


def test_a_framework_base_twelve_classes_up_is_found():
    files = {"k0.py": "from transformers import Trainer\nclass K0(Trainer):\n    pass\n"}
    files.update({f"k{k}.py": f"from k{k - 1} import K{k - 1}\nclass K{k}(K{k - 1}):\n    pass\n" for k in range(1, 12)})
    files["loop.py"] = "from loop import Loop\nclass Loop(Loop):\n    pass\n"  # a class its own base
    files["train.py"] = "from k11 import K11\nfrom loop import Loop\ndef main():\n    Loop()\n    K11().train()\n" + MAIN
    project = model(files)
    (program,) = [program for program in project.programs if program.entry.module == "train"]
    assert [located.event.what for located in project.events(program) if located.event.kind == "seed"] == ["transformers.Trainer"] * 3


def test_a_dataset_built_ten_factories_away_is_found():
    files = {"ds0.py": (
        "import numpy as np\nfrom torch.utils.data import Dataset\nclass DS(Dataset):\n"
        "    def __init__(self):\n        self.rng = np.random.default_rng(0)\n"
        "    def __getitem__(self, i):\n        return self.rng.random()\n"
        "def build_dataset0():\n    return DS()\n"
    )}
    files.update({f"ds{k}.py": f"import ds{k - 1}\ndef build_dataset{k}():\n    return ds{k - 1}.build_dataset{k - 1}()\n" for k in range(1, 10)})
    files["loop.py"] = "def loop_dataset():\n    return loop_dataset()\n"  # a factory returning itself
    files["train.py"] = (
        "import ds9, loop\nfrom torch.utils.data import DataLoader\ndef main():\n"
        "    DataLoader(loop.loop_dataset(), num_workers=2)\n    DataLoader(ds9.build_dataset9(), num_workers=2)\n" + MAIN
    )
    project = model(files)
    hazards = WorkerHazards(project)
    sites = project.modules["train"].datasets.loaders
    assert [list(hazards.hazards(site, "train", False)) for site in sites] == [[], ["ds0.DS"]]


def test_saver_wrappers_written_in_reverse_order_are_found_in_one_pass():
    length = 2000
    files = {f"w{length - 1:05d}.py": "import torch\ndef save_checkpoint0(obj, path):\n    torch.save(obj, path)\n"}
    files.update({
        f"w{length - 1 - k:05d}.py": f"from w{length - k:05d} import save_checkpoint{k - 1}\ndef save_checkpoint{k}(obj, path):\n    save_checkpoint{k - 1}(obj, path)\n"
        for k in range(1, length)
    })
    project = model(files)
    wrappers, seconds = timed(lambda: ProjectCheckpoints(project).wrappers)
    assert len(wrappers) == length and f"w00000.save_checkpoint{length - 1}" in wrappers
    assert seconds < 2


def test_one_event_written_alike_in_two_thousand_modules_is_gathered_in_linear_time():
    length = 2000
    files = {f"c{k}.py": f"import torch\ndef g{k}(x):\n    import c{(k + 1) % length}\n    torch.rand(1)\n    return c{(k + 1) % length}.g{(k + 1) % length}(x)\n" for k in range(length)}
    files["train.py"] = "import c0\ndef main():\n    c0.g0(1)\n" + MAIN
    project = model(files)
    (program,) = [program for program in project.programs if program.entry.module == "train"]
    events, seconds = timed(lambda: project.events(program))
    assert len([located for located in events if located.event.what == "torch.rand"]) == length
    assert seconds < 1


# One module doing one thing many times ------------------------------------------------------------
# Each case below took time quadratic in the number of repeats (a module of 1,000 DataLoaders took
# minutes to fix). What the analysis asks of the whole module, at each repeat, is now worked out once.


def _calls(monkeypatch, owner: object, name: str) -> list[object]:
    """Record each call of `owner.name`, which keeps working."""
    calls: list[object] = []
    original = getattr(owner, name)

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_reads_of_a_name_find_its_bindings_without_reading_every_occurrence(monkeypatch):
    from repro_lint.facts.module_index import ModuleIndex

    roles = _calls(monkeypatch, ModuleIndex, "role")
    repeats = 300
    code = "from torch.utils.data import DataLoader\n" + "loader = DataLoader(ds, shuffle=True, num_workers=4)\n" * repeats
    analysis = analyze(code, "train.py", ModuleIdentity.from_relative_path("train.py"), [], Settings())
    assert analysis.facts is not None
    # Each occurrence's role is asked a few times at most (600 occurrences of `ds` and `loader`),
    # not once per occurrence for each read of the name.
    assert len(roles) < 10 * repeats


def test_each_occurrence_s_role_is_worked_out_once(monkeypatch):
    from conftest import lint

    from repro_lint.facts.module_index import ModuleIndex

    worked_out = _calls(monkeypatch, ModuleIndex, "_role")
    repeats = 300
    # REP106 asks, for each `hash(name)`, what `name` is bound to in its scope.
    assert lint("import torch\n" + "h = hash(name)\n" * repeats, "REP106") == []
    assert len(worked_out) <= 2 * repeats  # the occurrences of `h` and `name`


def test_a_module_seeding_many_generators_from_one_name_walks_its_assignments_once(monkeypatch):
    from conftest import lint

    import repro_lint.rules.seeding as seeding

    walks = _calls(monkeypatch, seeding, "_assignments")
    code = "import torch\nSEED = 0\n" + "generator = torch.Generator().manual_seed(SEED)\n" * 200
    assert [finding.code for finding in lint(code, "REP104")] == []
    assert len(walks) == 1


def test_fixes_of_a_long_module_read_its_indentation_and_top_level_bindings_once(monkeypatch):
    import repro_lint.engine.fixes as fixes
    import repro_lint.facts.seed_values as seed_values
    from conftest import lint

    from repro_lint.api import fix_source

    readings = _calls(monkeypatch, fixes, "_indent_unit")
    # Whether the module binds the seed constant a fix would add: asked by each fix, read once.
    binds = _calls(monkeypatch, seed_values, "binds")
    repeats = 200
    code = "from torch.utils.data import DataLoader\n" + "loader = DataLoader(ds, shuffle=True, num_workers=4)\n" * repeats
    fixed = fix_source(code, "train.py", Settings(select=("REP202",)))
    assert fixed.count("generator=") == repeats and [finding.code for finding in lint(fixed, "REP202")] == []
    # Once per round of fixes (the first adds the seed constant, the next the generators).
    assert 1 <= len(readings) <= 3
    # A few statements read per fix (to find the constant bound before it), not the whole module.
    assert len(binds) < 20 * repeats


def test_loaders_in_many_methods_follow_an_attribute_bound_many_times_once(monkeypatch):
    from repro_lint.facts.module_index import ModuleIndex

    asked = _calls(monkeypatch, ModuleIndex, "never_runs")
    repeats = 150
    code = (
        "from torch.utils.data import DataLoader\nfrom torchvision.datasets import MNIST\n"
        "class Trainer:\n    def __init__(self):\n"
        + "        self.ds = MNIST('data')\n" * repeats
        + "".join(f"    def loader_{n}(self):\n        return DataLoader(self.ds, shuffle=True, num_workers=2)\n" for n in range(repeats))
    )
    analysis = analyze(code, "train.py", ModuleIdentity.from_relative_path("train.py"), [], Settings())
    assert analysis.facts is not None and analysis.facts.datasets is not None
    assert len(analysis.facts.datasets.loaders) == repeats
    # Each binding of `self.ds` is looked at once, not once for each loader.
    assert len(asked) < 5 * repeats
