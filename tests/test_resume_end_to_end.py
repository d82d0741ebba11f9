"""Resuming from a checkpoint: the code REP402 flags resumes into a different run, the same code after
`--fix --unsafe-fixes` resumes into the uninterrupted run bit for bit.

A small CPU model with dropout, a shuffled DataLoader, noise from `random` and numpy, and a StepLR
scheduler trains for four epochs; another run stops after two, and a fresh process resumes it from
its checkpoint. Each process reseeds at start, so only what the checkpoint holds can carry the
random streams over the interruption.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from repro_lint.cli import main

torch = pytest.importorskip("torch")

TRAIN = textwrap.dedent(
    """\
    import argparse
    import random

    import numpy as np
    import torch
    from torch.optim.lr_scheduler import StepLR
    from torch.utils.data import DataLoader, TensorDataset


    def main(argv=None):
        parser = argparse.ArgumentParser()
        parser.add_argument("--epochs", type=int, default=4)
        parser.add_argument("--stop-after", type=int, default=None)
        parser.add_argument("--resume", default=None)
        parser.add_argument("--checkpoint", default="checkpoint.pt")
        parser.add_argument("--out", default="weights.pt")
        parser.add_argument("--map-location", default=None)
        args = parser.parse_args(argv)

        torch.manual_seed(0)
        random.seed(0)
        np.random.seed(0)
        data = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
        shuffling = torch.Generator()
        shuffling.manual_seed(0)
        loader = DataLoader(data, batch_size=8, shuffle=True, generator=shuffling)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(16, 2))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scheduler = StepLR(optimizer, step_size=1, gamma=0.5)
        start_epoch = 0
        if args.resume:
            checkpoint = torch.load(args.resume, weights_only=False, map_location=args.map_location)
            model.load_state_dict(checkpoint["model"])
            optimizer.load_state_dict(checkpoint["optimizer"])
            scheduler.load_state_dict(checkpoint["scheduler"])
            start_epoch = checkpoint["epoch"] + 1

        for epoch in range(start_epoch, args.epochs):
            model.train()
            for inputs, targets in loader:
                noise = random.gauss(0, 0.1) + float(np.random.normal(0, 0.1))
                loss = torch.nn.functional.cross_entropy(model(inputs + noise), targets)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            scheduler.step()
            torch.save(
                {
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(),
                    "epoch": epoch,
                },
                args.checkpoint,
            )
            if args.stop_after is not None and epoch + 1 == args.stop_after:
                break
        torch.save(model.state_dict(), args.out)


    if __name__ == "__main__":
        main()
    """
)

# Each argument is `script arguments...`: the training runs of one process, in order (each reseeds).
DRIVER = """\
import runpy, sys
for run in sys.argv[1:]:
    script, *argv = run.split()
    runpy.run_path(script)["main"](argv)
"""


def _lint(folder: Path, *options: str) -> Result:
    return CliRunner().invoke(main, ["check", "--no-cache", *options, str(folder / "train.py")])


def _train(root: Path, *runs: str) -> None:
    subprocess.run([sys.executable, "driver.py", *runs], cwd=root, check=True, capture_output=True)


def _same(first: Path, second: Path) -> bool:
    a, b = torch.load(first), torch.load(second)
    return a.keys() == b.keys() and all(torch.equal(a[key], b[key]) for key in a)


def _flagged_and_fixed(root: Path) -> None:
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    (root / "driver.py").write_text(DRIVER, encoding="utf-8")
    for folder in ("flagged", "fixed"):
        (root / folder).mkdir()
        (root / folder / "train.py").write_text(TRAIN, encoding="utf-8")


def test_fixed_checkpoint_resumes_bitwise_and_flagged_one_does_not(tmp_path):
    _flagged_and_fixed(tmp_path)
    report = _lint(tmp_path / "fixed")
    assert report.exit_code == 1
    assert [line.split()[1] for line in report.output.splitlines() if " REP" in line] == ["REP402"]
    assert _lint(tmp_path / "fixed", "--fix", "--unsafe-fixes").exit_code == 0
    fixed = (tmp_path / "fixed" / "train.py").read_text(encoding="utf-8")
    assert '"rng_state": {' in fixed and 'shuffling.set_state(checkpoint["rng_state"]["shuffling"].cpu())' in fixed

    # The uninterrupted run and both interrupted ones; then both resumes, in a new process.
    _train(
        tmp_path,
        "flagged/train.py --checkpoint full_checkpoint.pt --out full.pt",
        "flagged/train.py --stop-after 2 --checkpoint flagged.pt --out flagged_partial.pt",
        "fixed/train.py --stop-after 2 --checkpoint fixed.pt --out fixed_partial.pt",
    )
    _train(
        tmp_path,
        "flagged/train.py --resume flagged.pt --checkpoint flagged_resumed.pt --out flagged_final.pt",
        "fixed/train.py --resume fixed.pt --checkpoint fixed_resumed.pt --out fixed_final.pt",
    )

    assert not _same(tmp_path / "full.pt", tmp_path / "flagged_final.pt")
    assert _same(tmp_path / "full.pt", tmp_path / "fixed_final.pt")


def _fixed_and_old_checkpoints(root: Path) -> None:
    """A checkpoint written by the code before the fix (`old.pt`, without RNG states) and one by the
    fixed code (`new.pt`)."""
    _flagged_and_fixed(root)
    assert _lint(root / "fixed", "--fix", "--unsafe-fixes").exit_code == 0
    _train(
        root,
        "flagged/train.py --stop-after 2 --checkpoint old.pt --out old_partial.pt",
        "fixed/train.py --stop-after 2 --checkpoint new.pt --out new_partial.pt",
    )


def test_fixed_code_resumes_from_a_checkpoint_saved_before_the_fix(tmp_path):
    # Restoring states the checkpoint does not hold would raise KeyError.
    _fixed_and_old_checkpoints(tmp_path)
    assert "rng_state" not in torch.load(tmp_path / "old.pt", weights_only=False)
    _train(
        tmp_path,
        "fixed/train.py --resume old.pt --checkpoint old_resumed.pt --out old_final.pt",
        "fixed/train.py --resume new.pt --checkpoint new_resumed.pt --out new_final.pt",
    )


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU to load a checkpoint onto")
def test_fixed_code_resumes_from_a_checkpoint_loaded_onto_the_gpu(tmp_path):
    # `map_location="cuda"` moves the saved states to the GPU; torch restores only a CPU state.
    _fixed_and_old_checkpoints(tmp_path)
    _train(
        tmp_path,
        "fixed/train.py --resume new.pt --checkpoint cpu_resumed.pt --out cpu_final.pt",
        "fixed/train.py --resume new.pt --map-location cuda --checkpoint gpu_resumed.pt --out gpu_final.pt",
    )
    assert _same(tmp_path / "cpu_final.pt", tmp_path / "gpu_final.pt")
