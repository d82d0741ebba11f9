from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from repro_lint.api import lint_paths
from repro_lint.cli import main
from repro_lint.core.settings import ConfigError, Settings
from repro_lint.engine.config import find_config_file, load_config_file, load_settings
from repro_lint.rules.registry import REGISTRY

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
        ('select = [""]', "empty rule code in .*`select`"),
        ('ignore = ["REP1", ""]', "empty rule code in .*`ignore`"),
        ('[tool.repro-lint.per-file-ignores]\n"a.py" = [""]', "empty rule code in .*`per-file-ignores.a.py`"),
        ("select = [1, 2]", "`select` must be a list of strings"),
        ('seed-helpers = [["a"]]', "`seed-helpers` must be a list of strings"),
        ("exclude = true", "`exclude` must be a list of strings"),
        ('per-file-ignores = ["a.py"]', "`per-file-ignores` must be a table"),
        ('[tool.repro-lint.per-file-ignores]\n"a.py" = "REP1"', "`a.py` must be a list of strings"),
        ('[tool.repro-lint.per-file-ignores.tests]\nx = ["REP1"]', "`tests` must be a list of strings"),
        ("target-torch-version = 2.1", "`target-torch-version` must be a version string"),
        ('target-torch-version = "two"', "`target-torch-version` must be a version string"),
    ],
)
def test_bad_config_names_the_key(project, table, message):
    root = project({"train.py": BENCH}, f"[tool.repro-lint]\n{table}\n")
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(").replace(".a.py", r"\.a\.py")):
        load_config_file(root / "pyproject.toml")


def test_invalid_toml_is_a_config_error(project):
    root = project({"train.py": BENCH}, "[tool.repro-lint\nselect = [")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config_file(root / "pyproject.toml")


@pytest.mark.parametrize(
    "document, message",
    [
        ("tool = 1\n", "pyproject.toml: `tool` must be a table"),
        ('[tool]\nrepro-lint = ["REP2"]\n', r"pyproject.toml: \[tool.repro-lint\] must be a table"),
        ('[tool.repro-lint]\nselect = ' + "[" * 5_000 + "]" * 5_000 + "\n", "nested too deeply"),
        ("[tool.repro-lint]\nx = " + "{a = " * 5_000 + "1" + "}" * 5_000 + "\n", "nested too deeply"),
    ],
)
def test_config_file_of_the_wrong_shape(project, document, message):
    root = project({"train.py": BENCH}, document)
    with pytest.raises(ConfigError, match=message):
        load_config_file(root / "pyproject.toml")
    result = CliRunner().invoke(main, ["check", "--config", str(root / "pyproject.toml"), str(root)])
    assert result.exit_code == 2 and result.stderr.startswith("repro-lint: error: ") and "Traceback" not in result.stderr


def test_pyproject_not_utf8_is_a_config_error_not_ignored(project):
    # One Latin-1 byte in a comment: the settings below it must not silently stop applying.
    root = project({"train.py": BENCH})
    (root / "pyproject.toml").write_bytes(b'# caf\xe9\n[tool.repro-lint]\nignore = ["REP301"]\n')
    assert find_config_file(root) == root / "pyproject.toml"
    message = f"{root / 'pyproject.toml'}: invalid TOML: not valid UTF-8 (byte 0xe9 on line 1)"
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_settings(None, root)
    result = CliRunner().invoke(main, ["check", str(root)])
    assert (result.exit_code, result.stderr) == (2, f"repro-lint: error: {message}\n")


def test_pyproject_not_utf8_without_a_table_is_skipped(project):
    root = project({"pkg/train.py": BENCH}, "[tool.repro-lint]\n")
    (root / "pkg" / "pyproject.toml").write_bytes(b"# caf\xe9\n[project]\nname = 'x'\n")
    assert find_config_file(root / "pkg") == root / "pyproject.toml"


def test_unreadable_pyproject_is_a_config_error(project, monkeypatch):
    root = project({"train.py": BENCH}, '[tool.repro-lint]\nselect = ["REP2"]\n')
    real = Path.read_bytes

    def read_bytes(path: Path) -> bytes:
        if path.name == "pyproject.toml":
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(ConfigError, match="cannot read config file .*pyproject.toml: Permission denied"):
        load_settings(None, root)


@pytest.mark.parametrize("option", ["--select=", "--select=REP3,", "--extend-select= ", "--ignore=,REP2"])
def test_empty_code_on_the_command_line(project, option):
    root = project({"train.py": BENCH})
    result = CliRunner().invoke(main, ["check", option, str(root)])
    assert result.exit_code == 2
    assert result.stderr == f"repro-lint: error: empty rule code in {option.split('=')[0]}; `repro-lint rules` lists the codes\n"


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


@pytest.mark.parametrize(
    "document, found",
    [
        ('[ tool."repro-lint" ]\nignore = ["REP301"]\n', True),  # valid TOML, however spelt
        ("[tool.'repro-lint']\n", True),
        ("[tool.repro-lint\nselect = []\n", True),  # broken: loading must say so, not drop it
        ("[tool.ruff\nselect = []\n", False),  # broken, but not ours
        ("tool = {repro-lint = {select = [}}\n", True),
        ("[tool.ruff]\nselect = []\n", False),
        ('[project]\ndescription = "see [tool.repro-lint] below"\n', False),
    ],
)
def test_pyproject_configures_repro_lint(project, document, found):
    root = project({"pkg/train.py": BENCH}, document)
    (root / "pkg" / "pyproject.toml").write_text(document)
    assert (find_config_file(root / "pkg") == root / "pkg" / "pyproject.toml") is found


def test_docs_url_is_read_and_leaves_the_cache_key_alone(project):
    root = project({"train.py": BENCH}, '[tool.repro-lint]\ndocs-url = "https://docs.example.org/rl/rules/"\n')
    settings = load_settings(None, root)
    assert settings.docs_url == "https://docs.example.org/rl/rules/"
    # The cache is keyed by the settings' repr: a link changes no finding, so it must not empty the cache.
    assert repr(settings) == repr(load_settings(None, project({"train.py": BENCH}, "[tool.repro-lint]\n")))


@pytest.mark.parametrize(
    "value",
    ['"docs.example.org/rules"', '"rules/"', '"ftp://example.org/rules"', '"https://"', '["https://example.org"]', "1", '""'],
)
def test_bad_docs_url_is_a_config_error_naming_the_key(project, value):
    root = project({"train.py": BENCH}, f"[tool.repro-lint]\ndocs-url = {value}\n")
    with pytest.raises(ConfigError, match=r"`docs-url` must be an absolute http\(s\) URL"):
        load_config_file(root / "pyproject.toml")
    result = CliRunner().invoke(main, ["check", str(root)])
    assert result.exit_code == 2 and "`docs-url` must be an absolute http(s) URL" in result.stderr


@pytest.mark.parametrize(
    "document",
    [
        'tool = {repro-lint = {ignore = ["REP301"]}}\n',
        'tool.repro-lint.ignore = ["REP301"]\n',
        '[tool]\n"repro-lint" = {ignore = ["REP301"]}\n',
        '[tool."repro-lint"]\nignore = ["REP301"]\n',
    ],
)
def test_every_spelling_of_the_table_applies(project, document):
    root = project({"train.py": BENCH}, document)
    assert load_settings(None, root).ignore == ("REP301",)
    assert CliRunner().invoke(main, ["check", "--no-cache", "--select", "REP301", str(root)]).exit_code == 0


@pytest.mark.parametrize(
    "document",
    [
        'tool = {repro-lint = {ignore = ["REP301"]}\n',  # an inline table left open
        'tool.repro-lint.ignore = ["REP301"\n',
        '[tool]\n"repro-lint" = {ignore = ["REP301"],}\n',  # a trailing comma, invalid in an inline table
    ],
)
def test_a_broken_table_of_any_spelling_is_an_error_not_dropped(project, document):
    root = project({"train.py": BENCH}, document)
    result = CliRunner().invoke(main, ["check", "--no-cache", str(root)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"repro-lint: error: {root / 'pyproject.toml'}: invalid TOML: ") and "Traceback" not in result.stderr
