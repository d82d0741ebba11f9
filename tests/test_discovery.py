from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from repro_lint.cli import main
from repro_lint.core.settings import Settings
from repro_lint.engine.discovery import MissingPath, discover, project_root, relative_posix


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


def test_symlink_loops_in_the_tree_are_passed_over(project):
    root = project({"a.py": "", "pkg/b.py": ""})
    (root / "self.py").symlink_to("self.py")
    (root / "pkg" / "c.yaml").symlink_to("d.yaml")
    (root / "pkg" / "d.yaml").symlink_to("c.yaml")
    (root / "pkg" / "up").symlink_to("..")
    (root / "link.py").symlink_to("a.py")  # a link to a file is linted, as before
    assert _names(root) == ["a.py", "link.py", "pkg/b.py"]


@pytest.mark.parametrize("link", ["self.py", "self.py/x.py"])
def test_symlink_loop_given_explicitly_is_a_clear_error(project, link):
    root = project({"a.py": ""})
    (root / "self.py").symlink_to("self.py")
    with pytest.raises(MissingPath, match="symlink loop"):
        discover([root / link], Settings())
    result = CliRunner().invoke(main, ["check", str(root / link)])
    assert result.exit_code == 2
    assert result.stderr == f"repro-lint: error: {root / link}: symlink loop\n"


def test_tree_deeper_than_the_recursion_limit(project):
    root = project({})
    folders = [root]
    for _ in range(1200):  # one level at a time: Path.mkdir(parents=True) and shutil.rmtree recurse
        folders.append(folders[-1] / "d")
        folders[-1].mkdir()
    (folders[-1] / "train.py").write_text("")
    try:
        deep = "/".join(["d"] * 1200)
        assert _names(root) == [f"{deep}/train.py"]
        assert project_root(folders[-1]) == root
    finally:
        (folders[-1] / "train.py").unlink()
        for folder in reversed(folders[1:]):
            folder.rmdir()


TRAINER_SETUP = '''\
"""Houses the methods used to set up the Trainer."""
from lightning.pytorch.utilities import rank_zero_info


def _init_profiler(trainer, profiler):
    trainer.profiler = profiler or setup(trainer)
'''


@pytest.mark.parametrize(
    "files, marks_root",
    [
        ({"setup.py": TRAINER_SETUP}, False),  # pytorch-lightning's trainer/setup.py, a module
        ({"setup.py": "# setup(name='x') from setuptools\nimport os\n"}, False),
        ({"setup.py": "from setuptools import setup, find_packages\nsetup(name='x', packages=find_packages())\n"}, True),
        ({"setup.py": "import setuptools as st\n\ndef do_setup():\n    st.setup(name='x')\n\nif __name__ == '__main__':\n    do_setup()\n"}, True),
        ({"setup.py": "from distutils.core import setup as build\nbuild(name='x')\n"}, True),
        ({"setup.py": "import distutils.core\ndistutils.core.setup(name='x')\n"}, True),
        ({"setup.py": "from setuptools import setup\nprint 'building'\nsetup(name='x')\n"}, True),  # Python 2
        ({"setup.cfg": "[metadata]\nname = x\n"}, True),
        ({"pyproject.toml": ""}, True),
    ],
)
def test_project_root_markers(project, files, marks_root):
    root = project({**{f"sub/{name}": text for name, text in files.items()}, "sub/call.py": ""})
    assert project_root(root / "sub") == (root / "sub" if marks_root else root)


# Git's ignore rules: each case's files kept are those `git ls-files --others --exclude-standard` lists.
@pytest.mark.parametrize(
    "ignore_files, kept",
    [
        pytest.param(  # a pattern with a slash is anchored to the folder of its own `.gitignore`
            {".gitignore": "/out.py\ndoc/*.py\n", "sub/.gitignore": "/gen.py\n"},
            ["doc/a/x.py", "gen.py", "sub/deep/gen.py", "sub/deep/out.py", "sub/out.py", "sub/tmp_keep.py", "tmp_keep.py"],
            id="anchoring",
        ),
        pytest.param(  # a deeper `.gitignore` overrides the one above it
            {".gitignore": "tmp_*.py\n", "sub/.gitignore": "!tmp_keep.py\n"},
            ["doc/a/x.py", "doc/x.py", "gen.py", "out.py", "sub/deep/gen.py", "sub/deep/out.py", "sub/gen.py", "sub/out.py", "sub/tmp_keep.py"],
            id="negation-in-a-nested-file",
        ),
        pytest.param(  # nothing re-includes a file of an ignored folder: git does not look inside it
            {".gitignore": "sub/\n!sub/out.py\ndoc/*\n!doc/a/\n"},
            ["doc/a/x.py", "gen.py", "out.py", "tmp_keep.py"],
            id="negation-under-an-ignored-folder",
        ),
        pytest.param(
            {".gitignore": "**/deep/*.py\ndoc/**\nsub/**/out.py\n"},
            ["gen.py", "out.py", "sub/gen.py", "sub/tmp_keep.py", "tmp_keep.py"],
            id="double-star",
        ),
        pytest.param(
            {".gitignore": "\\#gen.py\n*.py \n!*out.py\n"},  # escaped, and a trailing space is not part of the pattern
            ["out.py", "sub/deep/out.py", "sub/out.py"],
            id="escapes-and-trailing-spaces",
        ),
        pytest.param(  # info/exclude is read first: any `.gitignore` overrides it
            {".git/info/exclude": "gen.py\n*out.py\n", ".gitignore": "!sub/out.py\n"},
            ["doc/a/x.py", "doc/x.py", "sub/out.py", "sub/tmp_keep.py", "tmp_keep.py"],
            id="info-exclude",
        ),
    ],
)
def test_gitignore_rules_as_git_applies_them(project, ignore_files, kept):
    root = project({name: "" for name in ("out.py", "gen.py", "tmp_keep.py", "doc/x.py", "doc/a/x.py", "sub/out.py", "sub/gen.py", "sub/tmp_keep.py", "sub/deep/out.py", "sub/deep/gen.py")})
    (root / ".git").mkdir()
    for name, text in ignore_files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert _names(root) == kept
    in_sub = [name for name in kept if name.startswith("sub/")]
    if in_sub:  # linting the subfolder reads the ignore files above it too (a folder named is linted, as in Ruff)
        assert _names(root, paths=[root / "sub"]) == in_sub


def test_gitignore_above_a_subproject_in_the_same_repository(project):
    root = project({"pkg/pyproject.toml": "", "pkg/gen/out.py": "", "pkg/real.py": ""})
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("gen/\n")
    assert _names(root, paths=[root / "pkg"]) == ["pkg/real.py"]


def test_info_exclude_of_a_linked_work_tree(project):
    """A `git worktree add` checkout: its `.git` is a file naming its git folder, whose `commondir`
    holds the repository's shared `info/exclude`."""
    root = project({"wt/local.py": "", "wt/train.py": ""})
    private = root / "main" / ".git" / "worktrees" / "wt"
    private.mkdir(parents=True)
    (private / "commondir").write_text("../..\n")
    (root / "main" / ".git" / "info").mkdir()
    (root / "main" / ".git" / "info" / "exclude").write_text("local.py\n")
    (root / "wt" / ".git").write_text(f"gitdir: {private}\n")
    assert _names(root, paths=[root / "wt"]) == ["wt/train.py"]


@pytest.mark.parametrize("relative", ["train.py", "a/b/net.py", ".", "../elsewhere/x.py", "ab/x.py"])
def test_a_path_relative_to_a_folder_is_what_pathlib_gives(tmp_path, relative):
    folder = tmp_path / "a" if relative == "ab/x.py" else tmp_path  # a prefix of the text, not a parent
    path = Path(os.path.normpath(tmp_path / relative))
    try:
        expected = path.relative_to(folder).as_posix()
    except ValueError:
        with pytest.raises(ValueError):
            relative_posix(path, folder)
    else:
        assert relative_posix(path, folder) == expected
