"""REP401-REP407: checkpoints a resumed run cannot continue from exactly."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings
from tests.conftest import assert_fix, lint


def _codes(code: str, select: str = "REP4") -> list[str]:
    return sorted(finding.code for finding in lint(code, select))


def _program(body: str, header: str = "import torch\n") -> str:
    """A training script whose `main` runs `body` (indented by four spaces)."""
    return header + "\n\ndef main(resume=None):\n" + textwrap.indent(textwrap.dedent(body), "    ") + '\n\nif __name__ == "__main__":\n    main()\n'


TRAINING = """\
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.AdamW(model.parameters())
"""
STEP = """\
for epoch in range(10):
    model(torch.randn(8, 4)).sum().backward()
    optimizer.step()
"""
SCHEDULER = "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)\n"
RNG = '"rng": torch.get_rng_state()'


# --- what a checkpoint is -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "save",
    [
        # a dict literal
        'torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "c.pt")',
        # built up over several statements
        'ckpt = {}\nckpt["model"] = model.state_dict()\nckpt["optimizer"] = optimizer.state_dict()\ntorch.save(ckpt, "c.pt")',
        # dict(...) and update(...)
        'ckpt = dict(model=model.state_dict())\nckpt.update({"optimizer": optimizer.state_dict()})\ntorch.save(ckpt, "c.pt")',
        # {**a, ...} and a local variable holding a state
        'base = {"model": model.state_dict()}\nopt_state = optimizer.state_dict()\ntorch.save({**base, "optimizer": opt_state}, "c.pt")',
        # several files saved by the same function
        'torch.save(model.state_dict(), "model.pt")\ntorch.save(optimizer.state_dict(), "optimizer.pt")',
    ],
)
def test_training_checkpoint_shapes(save):
    code = _program(TRAINING + SCHEDULER + STEP + textwrap.indent(save, "    ") + "\n")
    assert _codes(code) == ["REP401", "REP402"]


@pytest.mark.parametrize(
    "save",
    [
        # an inference export: no optimizer
        'torch.save(model.state_dict(), "model.pt")',
        # a placeholder where the optimizer would be
        'torch.save({"model": model.state_dict(), "optimizer": None}, "c.pt")',
        # frameworks that save the whole training state
        "trainer.save_checkpoint(\"c.ckpt\")",
        "accelerator.save_state(\"out\")",
        # a file that is not a checkpoint
        'json.dump({"optimizer": optimizer.state_dict()}, f)',
    ],
)
def test_not_a_training_checkpoint(save):
    code = _program(TRAINING + SCHEDULER + STEP + textwrap.indent(save, "    ") + "\n", "import json\nimport torch\n")
    assert _codes(code) == []


def test_reported_once_at_the_first_save_call():
    code = _program(TRAINING + SCHEDULER + STEP + '    ckpt = {"optimizer": optimizer.state_dict()}\n    torch.save(ckpt, "last.pt")\n    torch.save(ckpt, "best.pt")\n')
    findings = lint(code, "REP401")
    assert [(finding.code, finding.start.line, finding.start.column) for finding in findings] == [("REP401", 12, 8)]
    assert findings[0].message == "this checkpoint holds the optimizer but not the LR scheduler built at line 7 (StepLR)"


def test_accelerator_and_fabric_save_count():
    # Each saver takes the object at its own place: `accelerator.save(obj, f)`, `fabric.save(path, state)`.
    for save in ('accelerator.save({"optimizer": optimizer.state_dict()}, "c.pt")', 'fabric.save("c.pt", {"optimizer": optimizer.state_dict()})'):
        code = _program(TRAINING + SCHEDULER + STEP + f"    {save}\n")
        assert _codes(code, "REP401") == ["REP401"]


@pytest.mark.parametrize("saver", ["fabric.save(path, state)", "fabric.save(state=state, path=path)", "torch.save(state, path)"])
def test_an_optimizer_object_in_the_saved_dict_is_its_state(saver):
    # litgpt: Fabric calls `state_dict()` on each object it saves; `torch.save` pickles the optimizer whole.
    save = f'state = {{"model": model, "optimizer": optimizer, "iter_num": 0}}\npath = "c.pt"\n{saver}\n'
    assert _codes(_program(TRAINING + STEP + save), "REP402") == ["REP402"]


def test_fabric_save_of_weights_only_is_no_training_checkpoint():
    assert _codes(_program(TRAINING + STEP + 'fabric.save("c.pt", {"model": model})\n'), "REP402") == []


def test_test_modules_are_not_checked(project):
    root = project({"tests/test_resume.py": _program(TRAINING + SCHEDULER + STEP + '    torch.save({"optimizer": optimizer.state_dict()}, "c.pt")\n').replace('if __name__ == "__main__":\n    main()\n', "")})
    assert lint_paths([root], Settings(select=("REP4",))).findings == []


# --- REP401 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "builder, header",
    [
        ("scheduler = StepLR(optimizer, 10)", "import torch\nfrom torch.optim.lr_scheduler import StepLR\n"),
        ("scheduler = sched.CosineAnnealingLR(optimizer, 10)", "import torch\nimport torch.optim.lr_scheduler as sched\n"),
        ("scheduler = get_cosine_schedule_with_warmup(optimizer, 10, 100)", "import torch\nfrom transformers import get_cosine_schedule_with_warmup\n"),
        ("scheduler, _ = create_scheduler_v2(optimizer, 'cosine')", "import torch\nfrom timm.scheduler import create_scheduler_v2\n"),
    ],
)
def test_rep401_fires_for_scheduler_builders(builder, header):
    code = _program(TRAINING + builder + "\n" + STEP + f'    torch.save({{"optimizer": optimizer.state_dict(), {RNG}}}, "c.pt")\n', header)
    assert _codes(code) == ["REP401"]


@pytest.mark.parametrize(
    "extra",
    [
        # the scheduler's state under any key
        ', "sched_state": scheduler.state_dict()',
        ', "lrs": scheduler.state_dict()',
    ],
)
def test_rep401_scheduler_saved_under_any_key(extra):
    code = _program(TRAINING + SCHEDULER + STEP + f'    torch.save({{"optimizer": optimizer.state_dict(){extra}}}, "c.pt")\n')
    assert _codes(code, "REP401") == []


def test_rep401_silent_without_a_scheduler_or_with_a_look_alike():
    code = _program(TRAINING + STEP + '    torch.save({"optimizer": optimizer.state_dict()}, "c.pt")\n')
    assert _codes(code, "REP401") == []
    look_alike = "import torch\n\n\nclass StepLR:\n    pass\n"
    code = _program(TRAINING + "scheduler = StepLR()\n" + STEP + '    torch.save({"optimizer": optimizer.state_dict()}, "c.pt")\n', look_alike)
    assert _codes(code, "REP401") == []


@pytest.mark.parametrize("restore", ["scheduler.last_epoch = start_epoch - 1", "scheduler.step(start_epoch)"])
def test_rep401_position_restored_from_the_epoch(restore):
    body = TRAINING + SCHEDULER + f'if resume:\n    start_epoch = torch.load(resume)["epoch"] + 1\n    {restore}\n' + STEP
    code = _program(body + '    torch.save({"optimizer": optimizer.state_dict(), "epoch": epoch}, "c.pt")\n')
    assert _codes(code, "REP401") == []
    # A scheduler with more state than its position still needs its state_dict.
    plateau = body.replace("StepLR(optimizer, step_size=10)", "ReduceLROnPlateau(optimizer)")
    code = _program(plateau + '    torch.save({"optimizer": optimizer.state_dict(), "epoch": epoch}, "c.pt")\n')
    assert _codes(code, "REP401") == ["REP401"]


@pytest.mark.parametrize("last_epoch, expected", [("last_epoch", []), ("-1", ["REP401"]), ("args.warmup", ["REP401"])])
def test_rep401_scheduler_built_at_the_loaded_epoch(last_epoch, expected):
    # hifi-gan: `ExponentialLR(optim_g, gamma=h.lr_decay, last_epoch=last_epoch)` after reading the epoch back.
    scheduler = f"scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.99, last_epoch={last_epoch})\n"
    body = TRAINING + 'last_epoch = -1\nif resume:\n    last_epoch = torch.load(resume)["epoch"]\n' + scheduler + STEP
    code = _program(body + '    torch.save({"optimizer": optimizer.state_dict(), "epoch": epoch}, "c.pt")\n')
    assert _codes(code, "REP401") == expected


def test_rep401_fix_multi_line_dict():
    before = _program(TRAINING + SCHEDULER + STEP + '    ckpt = {\n        "model": model.state_dict(),  # weights\n        "optimizer": optimizer.state_dict()\n    }\n    torch.save(ckpt, "c.pt")\n')
    after = before.replace('"optimizer": optimizer.state_dict()\n', '"optimizer": optimizer.state_dict(),\n            "lr_scheduler": scheduler.state_dict(),\n')
    assert_fix(before, after, "REP401")


def test_rep401_fix_one_line_dict_and_single_quotes():
    before = _program(TRAINING + SCHEDULER + STEP + "    torch.save({'optimizer': optimizer.state_dict()}, 'c.pt')\n")
    after = before.replace("{'optimizer': optimizer.state_dict()}", "{'optimizer': optimizer.state_dict(), 'lr_scheduler': scheduler.state_dict()}")
    assert_fix(before, after, "REP401")


def test_rep401_fix_uses_a_parameter_named_for_the_scheduler(project):
    helper = 'import torch\n\ndef save_checkpoint(model, optimizer, lr_scheduler, epoch):\n    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, "c.pt")\n'
    entry = _program(TRAINING + SCHEDULER + STEP + "    save_checkpoint(model, optimizer, scheduler, epoch)\n", "import torch\nfrom utils import save_checkpoint\n")
    root = project({"train.py": entry, "utils.py": helper})
    result = lint_paths([root], Settings(select=("REP401",)), fix=True)
    assert result.fixed == 1
    assert '"epoch": epoch, "lr_scheduler": lr_scheduler.state_dict()}' in (root / "utils.py").read_text()
    assert lint_paths([root], Settings(select=("REP401",))).findings == []


def test_rep401_no_fix_without_a_name_in_scope():
    code = _program(TRAINING + STEP + '    torch.save({"optimizer": optimizer.state_dict()}, "c.pt")\n') + "\nscheduler_factory = None\n"
    code = code.replace("optimizer = torch.optim.AdamW(model.parameters())\n", "optimizer = torch.optim.AdamW(model.parameters())\n    build(torch.optim.lr_scheduler.StepLR(optimizer, 1))\n")
    [finding] = lint(code, "REP401")
    assert finding.fix is None and "LR scheduler built at" in finding.message


# --- the program model: savers, wrappers and modules ------------------------------------------------


SAVE_ON_MASTER = """
import torch
import torch.distributed as dist

def save_on_master(*args, **kwargs):
    if not dist.is_initialized() or dist.get_rank() == 0:
        torch.save(*args, **kwargs)
"""


def _findings(root: Path, select: str) -> list[tuple[str, int, str]]:
    result = lint_paths([root], Settings(select=(select,)))
    return [(Path(finding.path).name, finding.start.line, finding.code) for finding in result.findings]


def test_wrapper_in_another_module_is_a_saver(project):
    entry = _program(TRAINING + SCHEDULER + STEP + '    utils.save_on_master({"optimizer": optimizer.state_dict()}, "c.pt")\n', "import torch\nimport utils\n")
    root = project({"train.py": entry, "utils.py": SAVE_ON_MASTER})
    assert _findings(root, "REP4") == [("train.py", 12, "REP401"), ("train.py", 12, "REP402")]


def test_wrapper_taking_the_object_after_the_path(project):
    # hifi-gan: `save_checkpoint(path, obj)` calls `torch.save(obj, path)`; the generator and the
    # optimizers go to two files from one function.
    helper = "import torch\n\ndef save_checkpoint(filepath, obj):\n    torch.save(obj, filepath)\n"
    saves = '    save_checkpoint("g.pt", {"generator": model.state_dict()})\n    save_checkpoint("do.pt", {"optim_g": optimizer.state_dict(), "steps": epoch})\n'
    entry = _program(TRAINING + STEP + saves, "import torch\nfrom utils import save_checkpoint\n")
    root = project({"train.py": entry, "utils.py": helper})
    assert _findings(root, "REP402") == [("train.py", 11, "REP402")]


def test_wrapper_handing_its_state_to_fabric(project):
    # litgpt: `save_checkpoint(fabric, state, tokenizer_dir, file)` calls `fabric.save(file, state)`.
    helper = "def save_checkpoint(fabric, state, tokenizer_dir, checkpoint_file):\n    fabric.save(checkpoint_file, state)\n"
    body = TRAINING + STEP + 'state = {"model": model, "optimizer": optimizer, "iter_num": 0}\nsave_checkpoint(fabric, state, None, "c.pth")\n'
    root = project({"train.py": _program(body, "import torch\nfrom utils import save_checkpoint\n"), "utils.py": helper})
    assert _findings(root, "REP402") == [("train.py", 12, "REP402")]


def test_a_dict_given_to_a_wrapper_parameter_it_does_not_save_is_no_checkpoint(project):
    helper = "import torch\n\ndef save_log(path, stats, tag):\n    torch.save(stats, path)\n    print(tag)\n"
    entry = _program(TRAINING + STEP + '    save_log("log.pt", {"loss": 0.1}, {"optimizer": optimizer.state_dict()})\n', "import torch\nfrom utils import save_log\n")
    root = project({"train.py": entry, "utils.py": helper})
    assert _findings(root, "REP4") == []


UNCALLED_HELPER = "import torch\n\ndef create_exp_dir(path):\n    print(path)\n\ndef save_checkpoint(model, optimizer, path):\n    torch.save(model, path + '/model.pt')\n    torch.save(optimizer.state_dict(), path + '/optimizer.pt')\n"


@pytest.mark.parametrize(
    "use, expected",
    [
        # LoRA's NLG example imports only `create_exp_dir`; another tree's `self.save_checkpoint()` matches by name alone.
        ("    create_exp_dir('out')\n", []),
        # called, or handed on as a callback: it runs
        ("    create_exp_dir('out')\n    save_checkpoint(model, optimizer, 'out')\n", [("exp_utils.py", 8, "REP402")]),
        ("    create_exp_dir('out')\n    run_later(save_checkpoint)\n", [("exp_utils.py", 8, "REP402")]),
    ],
)
def test_a_helper_function_nothing_calls_is_dead_code(project, use, expected):
    entry = _program(TRAINING + STEP + use, "import torch\nfrom exp_utils import create_exp_dir, save_checkpoint\n")
    other = "class Distiller:\n    def train(self):\n        self.save_checkpoint('out')\n"
    root = project({"train.py": entry, "exp_utils.py": UNCALLED_HELPER, "other/distiller.py": other})
    assert _findings(root, "REP402") == expected


LIBRARY_TRAINER = """import torch


def fit(model, optimizer):
    for step in range(10):
        model(torch.randn(8, 4)).sum().backward()
        optimizer.step()
    save_state(optimizer)


def save_state(optimizer):
    torch.save({"optimizer": optimizer.state_dict()}, "c.pt")


def run(model):
    optimizer = torch.optim.AdamW(model.parameters())
    SCHEDULER_LINE
    fit(model, optimizer)
"""


@pytest.mark.parametrize(
    "scheduler_here, expected",
    [
        # litgpt: the CLI picks a sub-command at run time; another sub-command's scheduler is not this one's.
        ("pass", []),
        # the scheduler built by the function that runs the save's caller
        ("scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)", [("pretrain.py", 12, "REP401")]),
    ],
)
def test_code_no_program_runs_takes_what_the_code_running_with_it_builds(project, scheduler_here, expected):
    other = "import torch\n\ndef finetune(model):\n    optimizer = torch.optim.AdamW(model.parameters())\n    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)\n    return scheduler\n"
    root = project({"lib/pretrain.py": LIBRARY_TRAINER.replace("SCHEDULER_LINE", scheduler_here), "lib/finetune.py": other})
    assert _findings(root, "REP401") == expected


def test_helper_that_is_not_a_saver_is_not_a_checkpoint(project):
    helper = "def save_metrics(stats, path):\n    print(stats, path)\n"
    entry = _program(TRAINING + SCHEDULER + STEP + '    utils.save_metrics({"optimizer": optimizer.state_dict()}, "c.pt")\n', "import torch\nimport utils\n")
    root = project({"train.py": entry, "utils.py": helper})
    assert _findings(root, "REP4") == []


def test_checkpoint_in_helper_module_uses_the_programs_scheduler(project):
    helper = 'import torch\n\ndef save_model(model, optimizer, epoch):\n    to_save = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}\n    torch.save(to_save, "c.pt")\n'
    entry = _program(TRAINING + SCHEDULER + STEP + "    misc.save_model(model, optimizer, epoch)\n", "import torch\nfrom util import misc\n")
    root = project({"train.py": entry, "util/__init__.py": "", "util/misc.py": helper})
    assert _findings(root, "REP401") == [("misc.py", 5, "REP401")]
    # Without a scheduler in the program that runs it, the same helper is fine.
    root = project({"train.py": entry.replace("    " + SCHEDULER, ""), "util/__init__.py": "", "util/misc.py": helper})
    assert _findings(root, "REP401") == []


# --- REP402 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "state",
    [
        '"rng": torch.get_rng_state()',
        '"cuda_rng": torch.cuda.get_rng_state_all()',
        '"np_rng": np.random.get_state()',
        '"py_rng": random.getstate()',
        '"states": {"torch": torch.random.get_rng_state()}',
        '"g": g.get_state()',
    ],
)
def test_rep402_any_rng_state_is_enough(state):
    header = "import random\nimport numpy as np\nimport torch\n"
    code = _program(TRAINING + "g = torch.Generator()\n" + STEP + f'    torch.save({{"optimizer": optimizer.state_dict(), {state}}}, "c.pt")\n', header)
    assert _codes(code, "REP402") == []


def test_rep402_rng_state_saved_alongside_in_the_same_function():
    code = _program(TRAINING + STEP + '    torch.save({"optimizer": optimizer.state_dict()}, "c.pt")\n    torch.save(torch.get_rng_state(), "rng.pt")\n')
    assert _codes(code, "REP402") == []


# A checkpoint folder written part by part, as Hugging Face's Trainer does: one method saves the
# optimizer, a sibling the RNG states, and the method that runs both makes the checkpoint.
TRAINER = """\
import os
import random

import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def train(self):
        for epoch in range(10):
            self.model(torch.randn(8, 4)).sum().backward()
            self.optimizer.step()
            self._save_checkpoint("out")

    def _save_checkpoint(self, output_dir):
        self._save_optimizer(output_dir)
{rng_call}
    def _save_rng_state(self, output_dir):
        torch.save({{"python": random.getstate(), "cpu": torch.get_rng_state()}}, os.path.join(output_dir, "rng.pth"))

    def _save_optimizer(self, output_dir):
        torch.save({{"optimizer": self.optimizer.state_dict()}}, os.path.join(output_dir, "optimizer.pt"))


if __name__ == "__main__":
    model = torch.nn.Linear(4, 2)
    Trainer(model, torch.optim.AdamW(model.parameters())).train()
"""


@pytest.mark.parametrize(
    "rng_call",
    [
        "        self._save_rng_state(output_dir)\n",
        # the caller saves the RNG state itself
        '        torch.save(torch.get_rng_state(), os.path.join(output_dir, "rng.pth"))\n',
    ],
)
def test_rep402_rng_state_saved_by_a_sibling_of_the_checkpoints_function(rng_call):
    assert _codes(TRAINER.format(rng_call=rng_call), "REP402") == []


def test_rep402_rng_state_saved_by_a_sibling_module_function(project):
    helpers = """\
import torch


def save_optimizer(optimizer):
    torch.save({"optimizer": optimizer.state_dict()}, "out/optimizer.pt")


def save_rng_state():
    torch.save(torch.get_rng_state(), "out/rng.pt")
"""
    entry = _program(TRAINING + STEP + "    save_checkpoint(optimizer)\n", "import torch\nfrom helpers import save_optimizer, save_rng_state\n")
    entry += "\n\ndef save_checkpoint(optimizer):\n    save_optimizer(optimizer)\n    save_rng_state()\n"
    root = project({"train.py": entry, "helpers.py": helpers})
    assert _findings(root, "REP402") == []
    # Without the sibling call the optimizer's checkpoint holds no RNG state.
    root = project({"train.py": entry.replace("    save_rng_state()\n", ""), "helpers.py": helpers})
    assert _findings(root, "REP402") == [("helpers.py", 5, "REP402")]


@pytest.mark.parametrize(
    "rng_call",
    [
        # nothing saves the RNG state where the optimizer is saved
        "",
        # the RNG state is saved, but not by the function that saves the optimizer's checkpoint
        "\n    def export(self):\n        self._save_rng_state('export')\n",
    ],
)
def test_rep402_rng_state_saved_elsewhere_is_not_alongside(rng_call):
    assert _codes(TRAINER.format(rng_call=rng_call), "REP402") == ["REP402"]


def test_rep402_same_named_method_of_another_class_is_no_sibling():
    other = """
class Exporter:
    def _save_checkpoint(self, output_dir):
        self._save_optimizer(output_dir)
        self._save_rng_state(output_dir)

    def _save_optimizer(self, output_dir):
        pass

    def _save_rng_state(self, output_dir):
        torch.save(torch.get_rng_state(), "rng.pt")
"""
    code = TRAINER.format(rng_call="").replace('\n\nif __name__', other + '\n\nif __name__')
    assert _codes(code, "REP402") == ["REP402"]


RESUMABLE = """\
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.1))
optimizer = torch.optim.AdamW(model.parameters())
if resume:
    checkpoint = torch.load(resume)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
for epoch in range(10):
    model(torch.randn(8, 4)).sum().backward()
    optimizer.step()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "c.pt")
"""


def test_rep402_fix_saves_and_restores_the_torch_state():
    before = _program(RESUMABLE)
    after = before.replace(
        '        optimizer.load_state_dict(checkpoint["optimizer"])\n',
        '        optimizer.load_state_dict(checkpoint["optimizer"])\n'
        '        if "rng_state" in checkpoint:\n'
        '            torch.set_rng_state(checkpoint["rng_state"]["torch"].cpu())\n',
    ).replace(
        '"optimizer": optimizer.state_dict()}, "c.pt")',
        '"optimizer": optimizer.state_dict(), "rng_state": {"torch": torch.get_rng_state()}}, "c.pt")',
    )
    assert_fix(before, after, "REP402", unsafe=True)


def test_rep402_fix_is_unsafe():
    [finding] = lint(_program(RESUMABLE), "REP402")
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"


def test_rep402_fix_adds_exactly_the_rngs_the_program_uses_with_imports():
    body = RESUMABLE.replace("model = torch.nn", "g = torch.Generator()\nmodel = torch.nn").replace(
        "    model(torch.randn(8, 4))", "    noise = rand() + random.random()\n    model(torch.randn(8, 4).cuda())"
    )
    before = _program(body, "import random\nimport torch\nfrom numpy.random import rand\n")
    fixed = _fixed(before, "REP402")
    assert fixed.startswith("import random\nimport numpy as np\nimport torch\nfrom numpy.random import rand\n\n")
    assert '"rng_state": {"torch": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state_all(), "numpy": np.random.get_state(), "random": random.getstate(), "g": g.get_state()}' in fixed
    restores = [
        'if "rng_state" in checkpoint:',
        '    torch.set_rng_state(checkpoint["rng_state"]["torch"].cpu())',
        # Wrapped as Black would: at this depth the line is longer than 88 characters.
        "    torch.cuda.set_rng_state_all(",
        '        [device.cpu() for device in checkpoint["rng_state"]["cuda"]]',
        "    )",
        '    np.random.set_state(checkpoint["rng_state"]["numpy"])',
        '    random.setstate(checkpoint["rng_state"]["random"])',
        '    g.set_state(checkpoint["rng_state"]["g"].cpu())',
    ]
    assert "\n".join("        " + line for line in restores) in fixed


def test_rep402_fix_without_numpy_or_cuda_adds_neither():
    fixed = _fixed(_program(RESUMABLE, "import numpy as np\nimport torch\n"), "REP402")
    assert "numpy" not in fixed.split("rng_state", 1)[1] and "cuda" not in fixed


def test_rep402_fix_reaches_a_loaders_unnamed_generator():
    body = RESUMABLE.replace("model = torch.nn", "loader = DataLoader(data, shuffle=True, generator=torch.Generator().manual_seed(0))\nmodel = torch.nn")
    fixed = _fixed(_program(body, "import torch\nfrom torch.utils.data import DataLoader\n"), "REP402")
    assert '"loader.generator": loader.generator.get_state()' in fixed
    assert 'loader.generator.set_state(\n                checkpoint["rng_state"]["loader.generator"].cpu()\n            )' in fixed


LOADER = 'import torch\n\ndef resume_from(path, model, optimizer):\n    ckpt = torch.load(path)\n    model.load_state_dict(ckpt["model"])\n    optimizer.load_state_dict(ckpt["optimizer"])\n'
RESUMED_ELSEWHERE = RESUMABLE.replace(
    '    checkpoint = torch.load(resume)\n    model.load_state_dict(checkpoint["model"])\n    optimizer.load_state_dict(checkpoint["optimizer"])\n',
    "    resume_from(resume, model, optimizer)\n",
)


@pytest.mark.parametrize(
    ("rule", "body"),
    [
        ("REP402", RESUMED_ELSEWHERE),
        ("REP403", RESUMED_ELSEWHERE.replace("optimizer = torch.optim.AdamW(model.parameters())\n", "optimizer = torch.optim.AdamW(model.parameters())\nscaler = torch.amp.GradScaler()\n")),
    ],
)
def test_no_fix_saves_a_state_that_the_load_path_in_another_module_would_leave_unrestored(project, rule, body):
    # A fix edits only its own file; what it saved would turn into REP405 findings, which have no fix
    # (yolov5: 3 findings became 7).
    entry = _program(body, "import torch\nfrom checkpointing import resume_from\n")
    root = project({"train.py": entry, "checkpointing.py": LOADER})
    [finding] = lint_paths([root], Settings(select=(rule,))).findings
    assert finding.fix is None
    before = _findings(root, "REP4")
    lint_paths([root], Settings(select=("REP4",)), fix=True, unsafe_fixes=True)
    assert (root / "train.py").read_text() == entry and (root / "checkpointing.py").read_text() == LOADER
    assert _findings(root, "REP4") == before


def test_rep402_fix_saves_the_state_where_nothing_loads_the_checkpoint(project):
    # No load path: nothing can be left unrestored, and a resume path written later finds the state.
    root = project({"train.py": _program(TRAINING + STEP + '    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "c.pt")\n')})
    lint_paths([root], Settings(select=("REP4",)), fix=True, unsafe_fixes=True)
    assert '"rng_state": {"torch": torch.get_rng_state()}}' in (root / "train.py").read_text()
    assert _findings(root, "REP4") == []


def _fixed(code: str, rule: str) -> str:
    from repro_lint.api import fix_source

    settings = Settings(select=(rule,))
    fixed = fix_source(code, "train.py", settings, unsafe=True)
    assert fix_source(fixed, "train.py", settings, unsafe=True) == fixed
    assert rule not in [finding.code for finding in lint(fixed, rule)]
    return fixed


# --- REP403 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("builder", ["torch.amp.GradScaler('cuda')", "torch.cuda.amp.GradScaler()", "GradScaler()"])
def test_rep403_fires_for_grad_scalers(builder):
    header = "import torch\nfrom torch.amp import GradScaler\n"
    code = _program(TRAINING + f"scaler = {builder}\n" + STEP + f'    torch.save({{"optimizer": optimizer.state_dict(), {RNG}}}, "c.pt")\n', header)
    assert _codes(code) == ["REP403"]


def test_rep403_silent_when_saved_or_absent():
    saved = _program(TRAINING + "scaler = torch.amp.GradScaler()\n" + STEP + '    torch.save({"optimizer": optimizer.state_dict(), "amp": scaler.state_dict()}, "c.pt")\n')
    assert _codes(saved, "REP403") == []
    # a project-local scaler class wrapping GradScaler, saved under a computed key
    computed = _program(TRAINING + "scaler = torch.amp.GradScaler()\n" + STEP + '    ckpt = {"optimizer": optimizer.state_dict()}\n    ckpt[scaler.state_dict_key] = scaler.state_dict()\n    torch.save(ckpt, "c.pt")\n')
    assert _codes(computed, "REP403") == []
    absent = _program(TRAINING + STEP + '    torch.save({"optimizer": optimizer.state_dict()}, "c.pt")\n')
    assert _codes(absent, "REP403") == []


def test_rep403_fix():
    before = _program(TRAINING + "scaler = torch.amp.GradScaler()\n" + STEP + '    torch.save({"optimizer": optimizer.state_dict(),}, "c.pt")\n')
    after = before.replace('{"optimizer": optimizer.state_dict(),}', '{"optimizer": optimizer.state_dict(), "scaler": scaler.state_dict(),}')
    assert_fix(before, after, "REP403")



# A vendored library's Trainer builds its own GradScaler; its reporting callback builds a Trainer to
# save the model (LoRA's transformers: WandbCallback.on_train_end).
VENDORED_TRAINER = """import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self._setup_amp()

    def _setup_amp(self):
        self.scaler = torch.cuda.amp.GradScaler()

    def enable_amp(self):
        self.scaler = torch.cuda.amp.GradScaler()

    def train(self):
        for step in range(10):
            self.model(torch.randn(8, 4)).sum().backward()
            self.optimizer.step()
        self.callback.on_train_end(self)

    def save(self):
        torch.save({"optimizer": self.optimizer.state_dict(), "rng": torch.get_rng_state()}, "c.pt")


class ReportCallback:
    def on_train_end(self, trainer):
        Trainer(trainer.model, None)


TRAINERS = {"default": Trainer}


def set_seed(seed):
    torch.manual_seed(seed)
"""
SAVE_WITH_RNG = f'torch.save({{"optimizer": optimizer.state_dict(), {RNG}}}, "c.pt")\n'


def test_rep403_a_scaler_of_a_class_the_program_never_builds_is_not_its_own(project):
    # LoRA's apex-only scripts: `model.train()` may be any `train` method by its name, and the
    # vendored Trainer's `train` runs a callback that builds a Trainer, whose GradScaler the scripts
    # never have.
    body = TRAINING + "set_seed(0)\nmodel.train()\n" + STEP + SAVE_WITH_RNG
    entry = _program(body, "import torch\nfrom lib.trainer import set_seed\n")
    root = project({"train.py": entry, "lib/__init__.py": "", "lib/trainer.py": VENDORED_TRAINER})
    assert _findings(root, "REP403") == []


@pytest.mark.parametrize(
    "use",
    [
        # built by a call the graph resolves: its constructor runs, and `self._setup_amp()` in it
        "trainer = Trainer(model, optimizer)\ntrainer.train()\n",
        # a method called by name on an object of a class the program builds
        "trainer = Trainer(model, optimizer)\ntrainer.enable_amp()\n",
    ],
)
def test_rep403_a_scaler_of_a_class_the_program_builds(project, use):
    entry = _program(TRAINING + use + STEP + SAVE_WITH_RNG, "import torch\nfrom lib.trainer import Trainer\n")
    root = project({"train.py": entry, "lib/__init__.py": "", "lib/trainer.py": VENDORED_TRAINER})
    assert _findings(root, "REP403") == [("train.py", 13, "REP403")]


def test_rep403_a_method_saving_runs_with_its_objects_constructor(project):
    # Built from a registry, which the graph cannot follow: the checkpoint's own method still works
    # on an object its constructor built.
    entry = _program(TRAINING + 'trainer = TRAINERS["default"](model, optimizer)\ntrainer.train()\ntrainer.save()\n', "import torch\nfrom lib.trainer import TRAINERS\n")
    root = project({"train.py": entry, "lib/__init__.py": "", "lib/trainer.py": VENDORED_TRAINER})
    assert _findings(root, "REP403") == [("trainer.py", 23, "REP403")]


# --- REP404 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["copy.deepcopy(model).half()", "model.bfloat16().state_dict()", "copy.deepcopy(model).to(torch.float16)", "copy.deepcopy(model).to(dtype=torch.bfloat16)"])
def test_rep404_fires_for_casts(value):
    code = _program(TRAINING + STEP + f'    torch.save({{"model": {value}, "optimizer": optimizer.state_dict()}}, "c.pt")\n', "import copy\nimport torch\n")
    [finding] = lint(code, "REP404")
    assert '"model"' in finding.message and finding.fix is None


@pytest.mark.parametrize(
    "code",
    [
        # the model trains in half precision throughout
        _program(TRAINING + "model = model.half()\n" + STEP + '    torch.save({"model": model.half(), "optimizer": optimizer.state_dict()}, "c.pt")\n'),
        _program(TRAINING + "model.half()\n" + STEP + '    torch.save({"model": model.half(), "optimizer": optimizer.state_dict()}, "c.pt")\n'),
        # an inference export
        _program(TRAINING + STEP + '    torch.save(model.half(), "export.pt")\n'),
        # a cast of something that is not the model
        _program(TRAINING + STEP + '    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "mask": mask.to(torch.float32)}, "c.pt")\n'),
    ],
)
def test_rep404_silent(code):
    assert _codes(code, "REP404") == []


# --- REP405 -------------------------------------------------------------------------------------------


def _resumable(restores: str, saved: str) -> str:
    body = TRAINING + SCHEDULER + "if resume:\n    checkpoint = torch.load(resume)\n" + textwrap.indent(restores, "    ") + STEP
    return _program(body + f"    torch.save({{{saved}}}, 'c.pt')\n")


SAVED = '"model": model.state_dict(), "optimizer": optimizer.state_dict(), "sched": scheduler.state_dict(), "rng": torch.get_rng_state()'


def test_rep405_reports_each_saved_state_never_restored():
    code = _resumable('model.load_state_dict(checkpoint["model"])\noptimizer.load_state_dict(checkpoint["optimizer"])\n', SAVED)
    findings = lint(code, "REP405")
    assert [(finding.start.line, finding.start.column) for finding in findings] == [(15, 86), (15, 119)]
    assert '"sched"' in findings[0].message and '"rng"' in findings[1].message


def test_rep405_silent_when_every_key_is_restored():
    restores = (
        'model.load_state_dict(checkpoint["model"])\noptimizer.load_state_dict(checkpoint["optimizer"])\n'
        'sched_state = checkpoint["sched"]\nscheduler.load_state_dict(sched_state)\ntorch.set_rng_state(checkpoint.get("rng"))\n'
    )
    assert _codes(_resumable(restores, SAVED), "REP405") == []


def test_rep405_a_state_saved_whole_from_a_variable_has_no_key():
    # One file per object: `state` names a variable, not a key of the checkpoint.
    saves = 'state = scheduler.state_dict()\ntorch.save(state, "sched.pt")\n'
    restores = 'model.load_state_dict(checkpoint["model"])\noptimizer.load_state_dict(checkpoint["optimizer"])\n'
    body = TRAINING + SCHEDULER + "if resume:\n    checkpoint = torch.load(resume)\n" + textwrap.indent(restores, "    ") + STEP
    code = _program(body + textwrap.indent(saves, "    ") + f"    torch.save({{{SAVED}}}, 'c.pt')\n")
    assert ['"sched"' in finding.message or '"rng"' in finding.message for finding in lint(code, "REP405")] == [True, True]
    # Held in a dict first, the same state is under its key.
    saves = 'state = {"lr_sched": scheduler.state_dict()}\ntorch.save(state, "sched.pt")\n'
    code = _program(body + textwrap.indent(saves, "    ") + f"    torch.save({{{SAVED}}}, 'c.pt')\n")
    assert sum('"lr_sched"' in finding.message for finding in lint(code, "REP405")) == 1


def test_rep405_silent_when_only_loaded_for_evaluation():
    assert _codes(_resumable('model.load_state_dict(checkpoint["model"])\n', SAVED), "REP405") == []


def test_rep405_silent_when_the_load_path_restores_keys_it_cannot_name():
    restores = 'for key, value in {"optimizer": optimizer, "sched": scheduler}.items():\n    value.load_state_dict(checkpoint[key])\noptimizer.load_state_dict(checkpoint["optimizer"])\n'
    assert _codes(_resumable(restores, SAVED), "REP405") == []


def test_rep405_silent_when_the_loaded_dict_is_handed_to_a_helper():
    # transformers' `set_rng_state_for_device("CUDA", torch.cuda, checkpoint_rng_state, ...)` reads
    # its key inside the helper.
    restores = 'model.load_state_dict(checkpoint["model"])\noptimizer.load_state_dict(checkpoint["optimizer"])\nrestore_states("sched", scheduler, checkpoint)\n'
    assert _codes(_resumable(restores, SAVED), "REP405") == []
    # Handing it one restored value is not handing it the dict.
    restores = 'model.load_state_dict(checkpoint["model"])\noptimizer.load_state_dict(checkpoint["optimizer"])\nlog(checkpoint["model"])\n'
    assert _codes(_resumable(restores, SAVED), "REP405") == ["REP405", "REP405"]


def test_rep405_save_and_load_in_different_modules(project):
    loader = 'import torch\n\ndef resume_from(path, model, optimizer, scheduler):\n    ckpt = torch.load(path)\n    model.load_state_dict(ckpt["model"])\n    optimizer.load_state_dict(ckpt["optimizer"])\n'
    entry = _program(TRAINING + SCHEDULER + "if resume:\n    resume_from(resume, model, optimizer, scheduler)\n" + STEP + f"    torch.save({{{SAVED}}}, 'c.pt')\n", "import torch\nfrom checkpointing import resume_from\n")
    root = project({"train.py": entry, "checkpointing.py": loader})
    assert _findings(root, "REP405") == [("train.py", 14, "REP405"), ("train.py", 14, "REP405")]
    restored = loader + '    scheduler.load_state_dict(ckpt["sched"])\n    torch.set_rng_state(ckpt["rng"])\n'
    root = project({"train.py": entry, "checkpointing.py": restored})
    assert _findings(root, "REP405") == []


# --- REP406 -------------------------------------------------------------------------------------------


def test_rep406_fires_on_a_resume_path():
    code = _resumable('model.load_state_dict(checkpoint["model"], strict=False)\noptimizer.load_state_dict(checkpoint["optimizer"])\n', SAVED)
    [finding] = lint(code, "REP406")
    assert (finding.start.line, finding.start.column) == (10, 8)


@pytest.mark.parametrize(
    "restores",
    [
        # fine-tuning a pretrained backbone: no optimizer restored
        'model.load_state_dict(checkpoint["model"], strict=False)\n',
        # strict loading
        'model.load_state_dict(checkpoint["model"], strict=True)\noptimizer.load_state_dict(checkpoint["optimizer"])\n',
        'model.load_state_dict(checkpoint["model"])\noptimizer.load_state_dict(checkpoint["optimizer"])\n',
    ],
)
def test_rep406_silent(restores):
    assert _codes(_resumable(restores, SAVED), "REP406") == []


def test_rep406_fine_tuning_in_another_function_is_not_a_resume_path():
    code = _resumable('optimizer.load_state_dict(checkpoint["optimizer"])\n', SAVED) + '\n\ndef finetune(model, path):\n    model.load_state_dict(torch.load(path), strict=False)\n'
    assert _codes(code, "REP406") == []


# --- REP407 -------------------------------------------------------------------------------------------


def _progress_only(optimizer: str, restores: str = 'model.load_state_dict(checkpoint["model"])\nstart = checkpoint["epoch"] + 1\n') -> str:
    body = f"model = torch.nn.Linear(4, 2)\noptimizer = {optimizer}\nif resume:\n    checkpoint = torch.load(resume)\n" + textwrap.indent(restores, "    ") + STEP
    return _program(body + '    torch.save({"model": model.state_dict(), "epoch": epoch}, "c.pt")\n')


@pytest.mark.parametrize("optimizer", ["torch.optim.AdamW(model.parameters())", "torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)"])
def test_rep407_fires_for_stateful_optimizers(optimizer):
    [finding] = lint(_progress_only(optimizer), "REP407")
    assert (finding.start.line, finding.code) == (14, "REP407") and "epoch" in finding.message


@pytest.mark.parametrize(
    "code",
    [
        # stateless SGD
        _progress_only("torch.optim.SGD(model.parameters(), lr=0.1)"),
        _progress_only("torch.optim.SGD(model.parameters(), lr=0.1, momentum=0)"),
        # never resumed from: the epoch is not read back
        _progress_only("torch.optim.AdamW(model.parameters())", 'model.load_state_dict(checkpoint["model"])\n'),
        # the optimizer is saved
        _progress_only("torch.optim.AdamW(model.parameters())").replace('"epoch": epoch}', '"epoch": epoch, "optimizer": optimizer.state_dict()}'),
    ],
)
def test_rep407_silent(code):
    assert _codes(code, "REP407") == []


# PyTorch-GAN: each epoch's weights go to a file named by the epoch, `--epoch N` reloads that file and
# the loop starts at N, while the Adam state starts over.
GAN = """\
import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--epoch", type=int, default=0)
opt = parser.parse_args()
generator = torch.nn.Linear(4, 2)
optimizer_G = torch.optim.Adam(generator.parameters())
if opt.epoch != 0:
    generator.load_state_dict(torch.load("saved_models/G_%d.pth" % LOADED))
for epoch in range(opt.epoch, 200):
    generator(torch.randn(8, 4)).sum().backward()
    optimizer_G.step()
    torch.save(generator.state_dict(), f"saved_models/G_{SAVED}.pth")
"""


def _gan(loaded: str = "opt.epoch", saved: str = "epoch") -> str:
    return GAN.replace("LOADED", loaded).replace("SAVED", saved)


def test_rep407_progress_recorded_in_the_file_name():
    [finding] = lint(_gan(), "REP407")
    assert finding.start.line == 14 and "epoch in its file name" in finding.message and "line 8 (Adam)" in finding.message


@pytest.mark.parametrize(
    "code",
    [
        # the file loaded is not named by a progress counter: fine-tuning from fixed weights
        _gan(loaded="0"),
        # the file saved is not named by one: always the latest weights, no progress recorded
        _gan(saved="opt.dataset"),
        # only literal text says "epoch": words of a string are not a counter
        GAN.replace("G_%d.pth\" % LOADED", "G_epoch.pth\"").replace("G_{SAVED}.pth", "G_epoch.pth"),
        # the optimizer is saved too, in a file of its own
        _gan().replace("    torch.save(generator", '    torch.save(optimizer_G.state_dict(), f"O_{epoch}.pth")\n    torch.save(generator'),
    ],
)
def test_rep407_silent_without_progress_in_both_file_names(code):
    assert _codes(code, "REP407") == []


# --- shapes met on real training code ------------------------------------------------------------


def test_rep404_casting_an_input_does_not_mean_the_model_trains_in_half():
    # yolov5: `im = im.half()` in an inference helper, `deepcopy(model).half()` in the checkpoint.
    code = _program(TRAINING + "im = torch.ones(1).half()\nim = im.half()\n" + STEP + '    torch.save({"model": copy.deepcopy(model).half(), "optimizer": optimizer.state_dict()}, "c.pt")\n', "import copy\nimport torch\n")
    assert _codes(code, "REP404") == ["REP404"]


def test_a_framework_save_in_another_branch_does_not_exempt_the_function():
    # mae: `save_on_master(to_save, path)` when there is a loss scaler, DeepSpeed's `model.save_checkpoint` otherwise.
    save = '    if fp16:\n        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "c.pt")\n    else:\n        model.save_checkpoint(save_dir="out", client_state={"epoch": epoch})\n'
    assert _codes(_program(TRAINING + STEP + save), "REP402") == ["REP402"]


@pytest.mark.parametrize("saved, expected", [("model.state_dict()", ["REP407"]), ("train_loader.state_dict()", [])])
def test_rep407_a_loaders_state_is_a_data_position_not_weights(saved, expected):
    # accelerate saves each stateful loader's position beside the RNG states and the step.
    code = _progress_only("torch.optim.AdamW(model.parameters())").replace('{"model": model.state_dict(), ', f'{{"model": {saved}, ')
    code = code.replace("model = torch.nn.Linear(4, 2)\n", "model = torch.nn.Linear(4, 2)\n    train_loader = make_loader()\n")
    assert _codes(code, "REP407") == expected


def test_rep407_epoch_read_back_only_by_another_program(project):
    # yolov5: classify/train.py saves progress without optimizer; only train.py's own checkpoints are resumed.
    classify = _program('model = torch.nn.Linear(4, 2)\noptimizer = torch.optim.AdamW(model.parameters())\n' + STEP + '    torch.save({"model": model.state_dict(), "epoch": epoch}, "c.pt")\n')
    detect = _program(RESUMABLE.replace('    optimizer.load_state_dict(checkpoint["optimizer"])\n', '    optimizer.load_state_dict(checkpoint["optimizer"])\n    start = checkpoint["epoch"]\n'))
    root = project({"classify/train.py": classify, "train.py": detect})
    assert _findings(root, "REP407") == []


def test_rep406_fine_tuning_and_resuming_in_one_function_are_told_apart():
    # DeiT: `checkpoint` is the pretrained file when fine-tuning and the run's own checkpoint when resuming.
    body = TRAINING + (
        "if finetune:\n    checkpoint = torch.load(finetune)\n    backbone = checkpoint['model']\n    model.load_state_dict(backbone, strict=False)\n"
        "if resume:\n    checkpoint = torch.load(resume)\n    model.load_state_dict(checkpoint['model'])\n    optimizer.load_state_dict(checkpoint['optimizer'])\n"
    ) + STEP
    assert _codes(_program(body), "REP406") == []


def test_rep406_resume_helper_reading_its_parameter():
    helper = "import torch\n\ndef restore(ckpt, model, optimizer):\n    model.load_state_dict(ckpt['model'], strict=False)\n    optimizer.load_state_dict(ckpt['optimizer'])\n"
    assert [finding.start.line for finding in lint(helper + _program(TRAINING + STEP), "REP406")] == [4]


def test_training_step_hidden_in_a_library_still_checks_the_checkpoint():
    # The backward pass runs inside a library's loss scaler: the optimizer state says this is training.
    code = _program("model = torch.nn.Linear(4, 2)\noptimizer = torch.optim.AdamW(model.parameters())\nfor epoch in range(10):\n    loss_scaler(model(x).sum(), optimizer)\n    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()}, 'c.pt')\n")
    assert _codes(code, "REP402") == ["REP402"]


def test_rep401_fix_never_uses_a_local_that_only_sounds_like_a_scheduler(project):
    helper = 'import torch\n\ndef save_checkpoint(model, optimizer, cfg):\n    scheduler_name = cfg.sched\n    print(scheduler_name)\n    torch.save({"optimizer": optimizer.state_dict()}, "c.pt")\n'
    entry = _program(TRAINING + SCHEDULER + STEP + "    save_checkpoint(model, optimizer, cfg)\n", "import torch\nfrom utils import save_checkpoint\n")
    root = project({"train.py": entry, "utils.py": helper})
    [finding] = lint_paths([root], Settings(select=("REP401",))).findings
    assert finding.fix is None
