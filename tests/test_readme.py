"""The README's rule table is generated from the registry, and its install and pre-commit instructions
work as written; this keeps them so."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from repro_lint.rules.registry import REGISTRY

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

README = Path(__file__).resolve().parent.parent / "README.md"


def expected_table() -> str:
    rows = ["| Code | Name | Default | Fix |", "|---|---|---|---|"]
    for code, rule in sorted(REGISTRY.items()):
        default = "on" if rule.default_enabled else "off"
        rows.append(f"| [{code}](rules/{code}.md) | {rule.name} | {default} | {rule.fix_availability.value} |")
    return "\n".join(rows)


def test_rules_table_matches_registry():
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- rules-table:.*?-->\n(.*?)\n<!-- end rules-table -->", text, re.DOTALL)
    assert match, "README has no rules-table markers"
    assert match.group(1) == expected_table(), "README rules table is stale; replace it with:\n" + expected_table()


def test_readme_commands_match_ci():
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    test_command = re.search(r"```bash\n(python3 -m venv .venv && .venv/bin/pip install torch.*?)\n```", README.read_text()).group(1)
    assert test_command in ci


# --- the README's install and pre-commit instructions work as written ---------------------------------

ROOT = README.parent
PIP_INSTALL = re.compile(r"\bpip install (?P<arguments>[^\n]*?)\s*(?:&&|;|#|$)", re.MULTILINE)
PATH_TARGET = re.compile(r"(?P<path>[^\[]+)(?:\[(?P<extras>[^\]]*)\])?")
# Text files of what is shipped or read first: none may name a repository that does not exist.
SHIPPED = ("README.md", "pyproject.toml", ".pre-commit-hooks.yaml", "repro_lint", "rules", "docs", "examples")


def fenced_blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)


def declared() -> tuple[dict[str, list[str]], set[str]]:
    """The pyproject's extras, and every package name it declares (dependencies and extras)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    requirements = [*project["dependencies"], *(item for items in extras.values() for item in items)]
    return extras, {canonicalize_name(Requirement(requirement).name) for requirement in requirements}


def pip_targets() -> list[str]:
    """What every `pip install` in the README's shell and YAML blocks installs (options left out)."""
    blocks = [*fenced_blocks("bash"), *fenced_blocks("yaml")]
    commands = [match.group("arguments") for block in blocks for match in PIP_INSTALL.finditer(block)]
    return [argument for command in commands for argument in shlex.split(command) if not argument.startswith("-")]


def test_every_pip_install_names_something_that_exists():
    extras, names = declared()
    targets = pip_targets()
    assert "." in targets and ".[probe]" in targets  # the install instructions are still there
    for target in targets:
        if target.startswith((".", "/")):  # this repository (or a copy of it), with extras it declares
            match = PATH_TARGET.fullmatch(target)
            assert (ROOT / match.group("path") / "pyproject.toml").is_file(), f"`pip install {target}`: no project there"
            for extra in filter(None, (match.group("extras") or "").split(",")):
                assert extra.strip() in extras, f"`pip install {target}`: no extra {extra!r} in pyproject.toml"
        else:  # from the package index: only what repro-lint itself depends on, never repro-lint
            name = canonicalize_name(Requirement(target).name)
            assert name != "repro-lint", f"`pip install {target}`: repro-lint is not on the package index"
            assert name in names, f"`pip install {target}`: not a dependency pyproject.toml declares"


def test_nothing_shipped_names_a_placeholder_repository_or_installs_repro_lint_by_name():
    files = [path for name in SHIPPED for path in ([ROOT / name] if (ROOT / name).is_file() else sorted((ROOT / name).rglob("*")))]
    shipped = [path for path in files if path.is_file() and not any(part.startswith((".", "__pycache__")) for part in path.relative_to(ROOT).parts[1:])]
    texts = {path: path.read_text(encoding="utf-8", errors="replace") for path in shipped}  # caches left out
    assert len(texts) > 50  # the package, its pages and the examples were read
    assert [str(path.relative_to(ROOT)) for path, text in texts.items() if "your-org" in text] == []
    by_name = re.compile(r"pip install ['\"]?repro-lint\b")  # not on the package index
    assert [str(path.relative_to(ROOT)) for path, text in texts.items() if by_name.search(text)] == []


def pre_commit_configs() -> list[dict]:
    return [config for block in fenced_blocks("yaml") if isinstance(config := yaml.safe_load(block), dict) and "repos" in config]


def test_pre_commit_snippet_runs_the_shipped_hooks():
    shipped = {hook["id"]: hook for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}
    (config,) = pre_commit_configs()
    hooks = [(repo, hook) for repo in config["repos"] for hook in repo["hooks"]]
    assert hooks
    for repo, hook in hooks:
        assert hook["id"] in shipped, f"hook {hook['id']!r} is not in .pre-commit-hooks.yaml"
        if repo["repo"] == "local":  # a local hook spells the shipped one out: it must say the same
            for key in ("entry", "types_or", "require_serial"):
                assert hook[key] == shipped[hook["id"]][key], f"README's local hook `{key}` differs from .pre-commit-hooks.yaml"
        else:  # a remote one needs a `rev:` that exists: a commit, or one of this repository's tags
            tags = subprocess.run(["git", "tag", "--list"], cwd=ROOT, capture_output=True, text=True).stdout.split()
            assert re.fullmatch(r"[0-9a-f]{40}", str(repo.get("rev"))) or repo.get("rev") in tags, f"rev {repo.get('rev')!r}"


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_pre_commit_snippet_works_as_written(tmp_path):
    """The README's `.pre-commit-config.yaml`, through the real pre-commit, in a fresh repository: the
    hook fails on a planted bug and names it."""
    (config,) = [block for block in fenced_blocks("yaml") if block.startswith("repos:")]
    (tmp_path / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    (tmp_path / "train.py").write_text("import torch\ntorch.backends.cudnn.benchmark = True\n", encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    # `language: system` runs the `repro-lint` of the environment the commit is made from: this one's.
    environment = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
    }
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.py:2:1: REP301" in result.stdout
