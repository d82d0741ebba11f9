from __future__ import annotations

from pathlib import Path

import pytest

from repro_lint.config import Settings
from repro_lint.discovery import MissingPath, discover, project_root


def _names(root: Path, settings: Settings = Settings(), paths: list[Path] | None = None) -> list[str]:
    return [source.path.relative_to(root).as_posix() for source in discover(paths or [root], settings)]


def test_walk_honours_gitignore_and_default_excludes(project):
    root = project({
        "train.py": "",
        "notes.txt": "",
        "generated/a.py": "",
        "src/keep.py": "",
        "src/skip_me.py": "",
        "src/data/raw.py": "",
        "logs/run.py": "",
        ".venv/lib/x.py": "",
        "build/lib/y.py": "",
    })
    (root / ".gitignore").write_text("generated/\n*skip*\n/logs\n# comment\n")
    (root / "src" / ".gitignore").write_text("data/\n!keep.py\n")
    assert _names(root) == ["src/keep.py", "train.py"]


def test_gitignore_negation_and_anchoring(project):
    root = project({"a/x.py": "", "a/y.py": "", "b/a/x.py": ""})
    (root / ".gitignore").write_text("*.py\n!a/y.py\n")
    assert _names(root) == ["a/y.py"]


def test_exclude_settings(project):
    root = project({"train.py": "", "exp/old.py": "", "exp/new.py": ""})
    assert _names(root, Settings(extend_exclude=("exp/old.py",), config_dir=root)) == ["exp/new.py", "train.py"]
    assert _names(root, Settings(exclude=("exp",), config_dir=root)) == ["train.py"]


def test_explicit_file_is_linted_even_if_excluded(project):
    root = project({"exp/old.py": ""})
    settings = Settings(extend_exclude=("exp",), config_dir=root)
    assert _names(root, settings, [root / "exp" / "old.py"]) == ["exp/old.py"]


def test_gitignore_of_parent_applies_when_a_subfolder_is_given(project):
    root = project({"pkg/gen/out.py": "", "pkg/real.py": ""})
    (root / ".gitignore").write_text("gen/\n")
    assert _names(root, paths=[root / "pkg"]) == ["pkg/real.py"]


def test_missing_path(tmp_path):
    with pytest.raises(MissingPath):
        discover([tmp_path / "absent.py"], Settings())


def test_project_root(project):
    root = project({"a/b/c.py": ""})
    assert project_root(root / "a" / "b") == root
