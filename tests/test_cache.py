"""The analysis cache: same findings with and without it, survives damaged entries, follows edits."""

from __future__ import annotations

from repro_lint.api import lint_paths
from repro_lint.cache import CACHE_FOLDER
from repro_lint.config import Settings

TRAIN = "import torch\nfrom torch.utils.data import random_split\nif __name__ == '__main__':\n    random_split(ds, [1, 1])\n    torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()\n"


def _lint(root, use_cache=True):
    return [(f.path, f.start.line, f.code, f.message) for f in lint_paths([root], Settings(), use_cache=use_cache).findings]


def test_cached_run_gives_the_same_findings(project):
    root = project({"train.py": TRAIN, "models/net.py": "import torch\ndef build():\n    return torch.nn.Linear(2, 2)\n"})
    fresh = _lint(root, use_cache=False)
    assert not (root / CACHE_FOLDER).exists()
    assert _lint(root) == fresh
    entries = list((root / CACHE_FOLDER).rglob("*.pickle"))
    assert len(entries) == 2
    assert (root / CACHE_FOLDER / ".gitignore").read_text().strip().endswith("*")
    assert _lint(root) == fresh  # from the cache


def test_edited_file_is_analysed_again(project):
    root = project({"train.py": TRAIN})
    assert "REP203" in [code for _, _, code, _ in _lint(root)]
    (root / "train.py").write_text(TRAIN.replace("[1, 1])", "[1, 1], generator=g)"))
    assert "REP203" not in [code for _, _, code, _ in _lint(root)]


def test_damaged_entries_are_ignored_and_rebuilt(project):
    root = project({"train.py": TRAIN})
    fresh = _lint(root)
    for entry in (root / CACHE_FOLDER).rglob("*.pickle"):
        entry.write_bytes(entry.read_bytes()[:10])
    assert _lint(root) == fresh
    for entry in (root / CACHE_FOLDER).rglob("*.pickle"):
        entry.write_bytes(b"not a pickle at all")
    assert _lint(root) == fresh
