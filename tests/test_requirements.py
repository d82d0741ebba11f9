"""The target torch version read from requirement files with `packaging`: the lowest version any
declaration admits, each file read as its own tool reads it."""

from __future__ import annotations

import pytest

from repro_lint.program.requirements import lowest_admitted, lowest_torch_version


@pytest.mark.parametrize(
    "requirement, lowest",
    [
        ("torch>=1.8", (1, 8)),
        ("torch==2.1.0", (2, 1, 0)),
        ("torch ~= 1.9.0", (1, 9, 0)),
        ("torch==1.8.*", (1, 8)),
        ("torch===1.7.1", (1, 7, 1)),
        ("torch===custom-build", None),  # arbitrary equality compares strings, not versions
        ("torch>1.8", (1, 8)),
        ("torch>=1.8,!=1.9.0,<3", (1, 8)),
        ("torch>=1.8,>=1.10", (1, 10)),  # every clause holds: the highest lower bound
        ("torch!=1.9.0", None),
        ("torch<2", None),
        ("torch==1.8.0+cu111", (1, 8, 0)),  # a local version's release
        ("torch>=2.1.0rc1", (2, 1, 0)),
        ("torch[opt-einsum]>=2.0", (2, 0)),  # extras
        ('torch>=1.13; python_version >= "3.8" and sys_platform != "darwin"', (1, 13)),  # markers are not evaluated
        ("Torch>=1.6", (1, 6)),  # names compare canonicalised
        ("pytorch>=1.4", (1, 4)),
        ("torchvision>=0.9", None),
        ("torch", None),
        ("torch @ https://download.pytorch.org/whl/cu118/torch-2.0.0.whl", None),
        ("not a requirement ==", None),
    ],
)
def test_lowest_admitted(requirement, lowest):
    assert lowest_admitted(requirement) == lowest


@pytest.mark.parametrize(
    "files, lowest",
    [
        pytest.param(
            {"requirements.txt": "# pinned\nnumpy\ntorch==1.8.1 \\\n    --hash=sha256:abc  # cu111\n-f https://download.pytorch.org/whl/torch\n"},
            (1, 8, 1),
            id="requirements-txt",
        ),
        pytest.param(
            {"requirements.txt": "-r requirements/base.txt\n", "requirements/base.txt": "--requirement=gpu.txt\n", "requirements/gpu.txt": "torch>=1.7\n-r ../requirements.txt\n"},
            (1, 7),
            id="requirements-txt-includes",
        ),
        pytest.param({"requirements-dev.txt": "torch>=2.0\n", "requirements.txt": "torch>=1.9\n"}, (1, 9), id="lowest-of-all-files"),
        pytest.param({"requirements.txt": "torch#>=1.8\n"}, None, id="a-comment-is-not-a-pin"),
        pytest.param(
            {"pyproject.toml": '[project]\nname = "x"\ndependencies = ["numpy"]\n[project.optional-dependencies]\ngpu = ["torch[cuda]>=1.12; extra == \'gpu\'"]\n'},
            (1, 12),
            id="pyproject-extras",
        ),
        pytest.param({"pyproject.toml": "[project\n"}, None, id="pyproject-broken"),
        pytest.param(
            {"setup.cfg": "[options]\ninstall_requires =\n    numpy\n    torch>=1.10; python_version>'3.6'\n[options.extras_require]\nold = torch==1.6.0\n"},
            (1, 6, 0),
            id="setup-cfg",
        ),
        pytest.param(
            {"setup.py": "from setuptools import setup\nprint 'building'\nREQUIRES = ['torch>=1.5.1', 'tqdm']\nsetup(name='x', install_requires=REQUIRES)\n"},
            (1, 5, 1),
            id="setup-py-in-python-2",
        ),
        pytest.param(
            {"environment.yml": "name: x\nchannels: [pytorch]\ndependencies:\n  - python=3.8\n  - pytorch=1.8\n  - pip:\n    - torch-fidelity\n"},
            (1, 8),
            id="conda-fuzzy-pin",
        ),
        pytest.param({"environment.yml": "dependencies:\n  - pytorch::pytorch=1.8.1=py3.8_cuda11.1_cudnn8.0.5_0\n"}, (1, 8, 1), id="conda-channel-and-build"),
        pytest.param({"environment.yml": "dependencies:\n  - pytorch 1.10.0 py3.9_0\n"}, (1, 10, 0), id="conda-spaced"),
        pytest.param({"environment.yml": "dependencies:\n  - python >= 3.8\n  - pytorch >= 1.13\n"}, (1, 13), id="conda-spaced-operator"),
        pytest.param({"environment.yml": "dependencies:\n  - pytorch==1.12.1=py3.9_cuda11.3\n"}, (1, 12, 1), id="conda-exact-with-build"),
        pytest.param({"environment.yaml": "dependencies:\n  - pytorch>=1.9,<2|==1.7.1\n"}, (1, 7, 1), id="conda-alternatives"),
        pytest.param({"environment.yml": "dependencies:\n  - pytorch\n  - pip:\n    - torch==1.13.1 --hash=sha256:abc\n"}, (1, 13, 1), id="conda-pip-section"),
        pytest.param({"environment.yml": "dependencies:\n  - pytorch\n  - cudatoolkit=11.1\n"}, None, id="conda-unpinned"),
        pytest.param({"environment.yml": "dependencies: [pytorch=1.8\n"}, None, id="conda-broken"),
        pytest.param({"requirements.txt": "numpy>=1.20\n"}, None, id="no-torch"),
    ],
)
def test_lowest_torch_version_of_a_folder(tmp_path, files, lowest):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert lowest_torch_version(tmp_path, set()) == lowest


def test_the_files_a_folder_declares_in_are_those_read_or_looked_for(tmp_path):
    """Where an added file or a changed one may change the version: those read and included (also
    those included but missing), and where one could be added."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "app").mkdir()
    (tmp_path / "shared" / "base.txt").write_text("torch>=1.9\n", encoding="utf-8")
    (tmp_path / "app" / "requirements-dev.txt").write_text("-r ../shared/base.txt\n-r missing.txt\npytest\n", encoding="utf-8")
    read: set = set()
    assert lowest_torch_version(tmp_path / "app", read) == (1, 9)
    app = tmp_path / "app"
    assert {path.resolve() for path in read} == {
        app,
        *(app / name for name in ("pyproject.toml", "setup.cfg", "setup.py", "environment.yml", "environment.yaml")),
        app / "requirements-dev.txt",
        app / "missing.txt",
        tmp_path / "shared" / "base.txt",
    }
