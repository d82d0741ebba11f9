from __future__ import annotations

import pytest

from repro_lint.api import lint_paths
from repro_lint.registry import REGISTRY
from repro_lint.config import ConfigError, Settings, find_config_file, load_config_file, load_settings

BENCH = "import torch\ntorch.backends.cudnn.benchmark = True\n"


def test_pyproject_table_is_read(project):
    root = project(
        {"train.py": BENCH},
        '[tool.repro-lint]\nselect = ["REP2"]\nextend-select = ["REP301"]\nignore = ["REP204"]\n'
        'seed-helpers = ["mypkg.fix_seed"]\nentry-points = ["scripts/*.py"]\ntarget-torch-version = "2.1"\n'
        '[tool.repro-lint.per-file-ignores]\n"tests/*" = ["REP3"]\n',
    )
    settings = load_settings(None, root)
    assert settings.enabled_codes == {code for code in REGISTRY if code.startswith("REP2") and code != "REP204"} | {"REP301"}
    assert settings.seed_helpers == ("mypkg.fix_seed",)
    assert settings.entry_points == ("scripts/*.py",)
    assert settings.target_torch_version == "2.1"
    assert settings.ignored_for("tests/test_x.py") == {code for code in REGISTRY if code.startswith("REP3")}
    assert settings.ignored_for("train.py") == frozenset()


def test_repro_lint_toml_wins_and_has_top_level_keys(project):
    root = project({"train.py": BENCH}, '[tool.repro-lint]\nselect = ["REP2"]\n')
    (root / "repro-lint.toml").write_text('ignore = ["REP301"]\n')
    assert find_config_file(root) == root / "repro-lint.toml"
    assert "REP301" not in load_settings(None, root).enabled_codes


def test_pyproject_without_table_is_skipped(project, tmp_path):
    root = project({"train.py": BENCH}, "[project]\nname = 'x'\n")
    assert find_config_file(root) is None or find_config_file(root).parent != root


@pytest.mark.parametrize(
    "table, message",
    [
        ('selct = ["REP2"]', "unknown key `selct`"),
        ('select = ["REP999"]', "unknown rule code or prefix 'REP999'"),
        ('select = "REP2"', "`select` must be a list of strings"),
        ('target-torch-version = "two"', "`target-torch-version` must be a version string"),
        ('[tool.repro-lint.per-file-ignores]\n"a.py" = ["XYZ1"]', "unknown rule code or prefix 'XYZ1'"),
    ],
)
def test_bad_config_names_the_key(project, table, message):
    root = project({"train.py": BENCH}, f"[tool.repro-lint]\n{table}\n")
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_config_file(root / "pyproject.toml")


def test_invalid_toml_is_a_config_error(project):
    root = project({"train.py": BENCH}, "[tool.repro-lint\nselect = [")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config_file(root / "pyproject.toml")


def test_per_file_ignores_apply_to_findings(project):
    root = project(
        {"train.py": BENCH, "bench/speed.py": BENCH},
        '[tool.repro-lint]\n[tool.repro-lint.per-file-ignores]\n"bench/*" = ["REP301"]\n',
    )
    settings = load_settings(None, root)
    found = lint_paths([root], settings).findings
    assert [finding.path.rsplit("/", 1)[-1] for finding in found] == ["train.py"]


def test_cli_overrides():
    settings = Settings(select=("REP20",)).with_overrides(None, ["REP301"], ["REP204"])
    assert settings.enabled_codes == {code for code in REGISTRY if code.startswith("REP20") and code != "REP204"} | {"REP301"}
    assert Settings().with_overrides(["REP30"], ["REP104"], ["REP302"]).enabled_codes == {
        code for code in REGISTRY if code.startswith("REP30") and code != "REP302"
    } | {"REP104"}
    with pytest.raises(ConfigError, match="--ignore"):
        Settings().with_overrides(None, [], ["NOPE"])
