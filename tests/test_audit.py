"""`repro-lint audit`: one verdict per program and area, in every format, from the same run `check`
makes."""

from __future__ import annotations

import json
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from repro_lint.cli import main
from repro_lint.core.catalog import CATALOG
from repro_lint.engine.scorecard import areas

CAREFUL = textwrap.dedent(
    """\
    import os
    import random

    import numpy as np
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    SEED = 0


    def main():
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        random.seed(SEED)
        np.random.seed(SEED)
        torch.manual_seed(SEED)
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.benchmark = False
        device = torch.device("cuda")
        model = torch.nn.Linear(4, 2).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        data = TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
        loader = DataLoader(data, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(SEED))
        start = 0
        if os.path.exists("ckpt.pt"):
            state = torch.load("ckpt.pt")
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            torch.set_rng_state(state["rng"])
            torch.cuda.set_rng_state(state["cuda_rng"])
            random.setstate(state["random"])
            np.random.set_state(state["numpy"])
            start = state["epoch"] + 1
        for epoch in range(start, 3):
            for x, y in loader:
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
                loss.backward()
                optimizer.step()
            torch.save(
                {
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "epoch": epoch,
                    "rng": torch.get_rng_state(),
                    "cuda_rng": torch.cuda.get_rng_state(),
                    "random": random.getstate(),
                    "numpy": np.random.get_state(),
                },
                "ckpt.pt",
            )


    if __name__ == "__main__":
        main()
    """
)

CARELESS = textwrap.dedent(
    """\
    import torch
    from torch.utils.data import DataLoader, TensorDataset, random_split


    def main():
        torch.backends.cudnn.benchmark = True
        device = torch.device("cuda")
        model = torch.nn.Linear(4, 2).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1)
        data = TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
        train, _ = random_split(data, [48, 16])
        loader = DataLoader(train, batch_size=8, shuffle=True)
        for epoch in range(3):
            for x, y in loader:
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x.to(device)), y.to(device))
                loss.backward()
                optimizer.step()
            scheduler.step()
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "ckpt.pt")


    if __name__ == "__main__":
        main()
    """
)

AREAS = ("seeding", "determinism", "data_order", "checkpoints", "configs")
FAILING = {
    "seeding": ["REP101"],
    "determinism": ["REP301", "REP302"],
    "data_order": ["REP203", "REP202"],
    "checkpoints": ["REP401", "REP402"],
    "configs": ["REP305"],
}


def _project(root: Path, train: str, launch: str) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (root / "train.py").write_text(train)
    (root / "run.sh").write_text(f"#!/bin/bash\n{launch}\n")
    return root


@pytest.fixture
def careful(tmp_path: Path) -> Path:
    return _project(tmp_path / "careful", CAREFUL, "torchrun --nproc_per_node 2 train.py --lr 0.1")


@pytest.fixture
def careless(tmp_path: Path) -> Path:
    return _project(tmp_path / "careless", CARELESS, "python train.py --use-flash-attn")


def audit(folder: Path, *args: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(main, ["audit", "--no-cache", "--jobs", "1", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# The careful program --------------------------------------------------------------------------------


def test_careful_program_passes_every_area_as_json(careful, monkeypatch):
    code, out, _ = audit(careful, "--output-format", "json", monkeypatch=monkeypatch)
    assert code == 0
    report = json.loads(out)
    [program] = report["programs"]
    assert (program["path"], program["entry_line"], program["modules"]) == ("train.py", 53, ["train.py"])
    assert program["reproducible"] is True and program["trains"] is True and program["saves_checkpoint"] is True
    assert program["launchers"] == ["run.sh"]
    assert {area: verdict["status"] for area, verdict in program["areas"].items()} == dict.fromkeys(AREAS, "pass")
    assert all(verdict["findings"] == [] for verdict in program["areas"].values())
    assert report["totals"]["reproducible"] == 1 and report["totals"]["findings"] == 0


def test_careful_program_passes_every_area_as_text(careful, monkeypatch):
    code, out, _ = audit(careful, monkeypatch=monkeypatch)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["program", "seeding", "determinism", "data", "order", "checkpoints", "configs", "findings"]
    assert lines[1].split() == ["train.py", "pass", "pass", "pass", "pass", "pass", "0"]
    assert lines[-1] == "1 program: 1 reproducible, 0 not. 0 findings."
    assert "\x1b[" not in out  # no colours off a terminal


def test_careful_program_passes_every_area_as_markdown(careful, monkeypatch):
    code, out, _ = audit(careful, "--output-format", "markdown", monkeypatch=monkeypatch)
    assert code == 0
    assert "| `train.py` | ✅ pass | ✅ pass | ✅ pass | ✅ pass | ✅ pass | 0 |" in out.splitlines()
    assert "<details>" not in out  # nothing to unfold


def test_careful_program_passes_every_area_as_html(careful, monkeypatch):
    code, out, _ = audit(careful, "--output-format", "html", monkeypatch=monkeypatch)
    assert code == 0
    page = _Page.read(out)
    assert page.cells[0] == ["train.py", "pass", "pass", "pass", "pass", "pass", "0"]
    assert page.cell_classes[0][1:6] == ["pass"] * 5


# The careless program -------------------------------------------------------------------------------


def test_careless_program_fails_each_area_with_its_findings_as_json(careless, monkeypatch):
    code, out, _ = audit(careless, "--output-format", "json", monkeypatch=monkeypatch)
    assert code == 1
    report = json.loads(out)
    [program] = report["programs"]
    assert program["reproducible"] is False
    statuses = {area: verdict["status"] for area, verdict in program["areas"].items()}
    assert statuses == dict.fromkeys(AREAS, "fail")
    assert {area: [finding["code"] for finding in verdict["findings"]] for area, verdict in program["areas"].items()} == {
        "seeding": ["REP101"],
        "determinism": ["REP301", "REP302"],
        "data_order": ["REP203", "REP202"],
        "checkpoints": ["REP401", "REP402"],
        "configs": ["REP305"],
    }
    assert report["totals"]["failing"] == dict.fromkeys(AREAS, 1)
    # The findings are those of `check --output-format json`, in its shape.
    checked = CliRunner().invoke(main, ["check", "--no-cache", "--jobs", "1", "--output-format", "json"]).stdout
    listed = [finding for verdict in program["areas"].values() for finding in verdict["findings"]]
    assert sorted(listed, key=json.dumps) == sorted(json.loads(checked), key=json.dumps)


def test_careless_program_fails_each_area_as_text(careless, monkeypatch):
    code, out, _ = audit(careless, monkeypatch=monkeypatch)
    assert code == 1
    lines = out.splitlines()
    assert lines[1].split() == ["train.py", "FAIL", "1", "FAIL", "2", "FAIL", "2", "FAIL", "2", "FAIL", "1", "8"]
    assert "train.py:24: not reproducible" in lines
    assert "  seeding: fail" in lines and "  configs: fail" in lines
    assert any(line.startswith("    run.sh:2:17: REP305 `--use-flash-attn`") for line in lines)
    assert any(line.startswith("    train.py:12:16: REP203 ") and line.endswith("[safe fix]") for line in lines)
    assert lines[-1].startswith("1 program: 0 reproducible, 1 not (failing: seeding 1, determinism 1, data order 1, checkpoints 1, configs 1). 8 findings")


def test_careless_program_fails_each_area_as_markdown(careless, monkeypatch):
    code, out, _ = audit(careless, "--output-format", "markdown", monkeypatch=monkeypatch)
    assert code == 1
    assert "| `train.py` | ❌ FAIL 1 | ❌ FAIL 2 | ❌ FAIL 2 | ❌ FAIL 2 | ❌ FAIL 1 | 8 |" in out.splitlines()
    assert "<details><summary><code>train.py</code>: not reproducible</summary>" in out
    assert "- `train.py:6:5` REP301 `cudnn.benchmark` is enabled" in out
    assert "**Configs** (fail)" in out


def test_careless_program_fails_each_area_as_html(careless, monkeypatch):
    code, out, _ = audit(careless, "--output-format", "html", monkeypatch=monkeypatch)
    assert code == 1
    page = _Page.read(out)
    assert page.cells[0] == ["train.py", "FAIL 1", "FAIL 2", "FAIL 2", "FAIL 2", "FAIL 1", "8"]
    assert page.cell_classes[0][1:6] == ["fail"] * 5
    # Without a docs-url the rule links land on the pages included at the end.
    assert "#rule-REP101" in page.links and "rule-REP101" in page.ids


def test_html_links_rules_to_the_published_pages(careless, monkeypatch):
    (careless / "pyproject.toml").write_text('[tool.repro-lint]\ndocs-url = "https://example.org/rules/"\n')
    _, out, _ = audit(careless, "--output-format", "html", monkeypatch=monkeypatch)
    page = _Page.read(out)
    assert "https://example.org/rules/REP101.md" in page.links and "rule-REP101" not in page.ids
    assert f"{careless / 'pyproject.toml'}" in out  # the settings used


@pytest.mark.parametrize("program", ["careful", "careless"])
def test_html_page_loads_no_external_resource(program, request, monkeypatch):
    folder = request.getfixturevalue(program)
    _, out, _ = audit(folder, "--output-format", "html", monkeypatch=monkeypatch)
    page = _Page.read(out)
    assert page.loads == []
    assert "@import" not in out and "url(" not in out
    assert page.tags["style"] == 1 and "script" not in page.tags


# Areas, attribution and what is not applicable -----------------------------------------------------


def test_areas_cover_every_rule_of_the_catalog():
    data = json.loads((Path(__file__).parents[1] / "repro_lint" / "core" / "areas.json").read_text())
    placed = {code for area in areas() for code in area.codes | area.warn} | set(data["outside"])
    assert placed == set(CATALOG)
    python = [code for area in areas() if area.files == "python" for code in area.codes | area.warn]
    assert len(python) == len(set(python))  # a code fails one area of a program's Python code


def test_not_applicable_without_a_checkpoint_or_a_launch_script(tmp_path, monkeypatch):
    root = tmp_path / "p"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "train.py").write_text(CAREFUL.replace('torch.save(', 'print(').replace('"optimizer": optimizer.state_dict(),', ""))
    code, out, _ = audit(root, "--output-format", "json", monkeypatch=monkeypatch)
    areas_ = json.loads(out)["programs"][0]["areas"]
    assert code == 0
    assert areas_["checkpoints"] == {"status": "n/a", "findings": [], "warnings": [], "note": "saves no training checkpoint"}
    assert areas_["configs"]["status"] == "n/a" and areas_["configs"]["note"] == "no launch script or config found that starts it"


def test_an_area_none_of_whose_rules_runs_is_not_applicable(careless, monkeypatch):
    code, out, _ = audit(careless, "--output-format", "json", "--ignore", "REP4", monkeypatch=monkeypatch)
    checkpoints = json.loads(out)["programs"][0]["areas"]["checkpoints"]
    assert (checkpoints["status"], checkpoints["note"]) == ("n/a", "none of its rules is selected")


def test_opt_in_rules_warn_without_failing(careful, monkeypatch):
    (careful / "train.py").write_text(CAREFUL.replace("shuffle=True,", "shuffle=True, num_workers=2,"))
    code, out, _ = audit(careful, "--output-format", "json", "--extend-select", "REP206", monkeypatch=monkeypatch)
    program = json.loads(out)["programs"][0]
    assert code == 0 and program["reproducible"] is True
    data_order = program["areas"]["data_order"]
    assert data_order["status"] == "warn" and [finding["code"] for finding in data_order["warnings"]] == ["REP206"]


HELPER = "import torch\n\ndef build(data):\n    return torch.utils.data.random_split(data, [8, 2])\n"
SCRIPT = textwrap.dedent(
    """\
    import torch
    from {helper} import build


    def main():
        model = torch.nn.Linear(2, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        build(None)
        model(torch.randn(2)).sum().backward()
        opt.step()


    if __name__ == "__main__":
        main()
    """
)


def test_findings_belong_to_the_programs_that_run_them(tmp_path, monkeypatch):
    root = tmp_path / "p"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "helper.py").write_text(HELPER)
    (root / "a.py").write_text(SCRIPT.format(helper="helper"))
    # b imports a (for nothing): a's REP101 is about a's program, not b's.
    (root / "b.py").write_text("import a\n" + SCRIPT.format(helper="helper"))
    (root / "lib.py").write_text("from sklearn.model_selection import train_test_split\n\ndef split(x):\n    return train_test_split(x)\n")
    code, out, _ = audit(root, "--output-format", "json", monkeypatch=monkeypatch)
    report = json.loads(out)
    by_path = {program["path"]: program for program in report["programs"]}
    assert set(by_path) == {"a.py", "b.py"}
    for path, program in by_path.items():
        seeding = program["areas"]["seeding"]["findings"]
        assert [(finding["code"], finding["path"]) for finding in seeding] == [("REP101", path)]
        assert [finding["path"] for finding in program["areas"]["data_order"]["findings"]] == ["helper.py"]
    assert [finding["path"] for finding in report["outside_programs"]] == ["lib.py"]
    assert report["totals"]["outside_programs"] == 1
    assert code == 1


def test_a_launch_script_starts_the_program_it_names(tmp_path, monkeypatch):
    root = tmp_path / "p"
    (root / "scripts").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "train.py").write_text(CARELESS)
    (root / "eval.py").write_text(CARELESS)
    (root / "scripts" / "train.sh").write_text('#!/bin/bash\ncd "$(dirname "$0")/.."\ntorchrun ${ROOT}/train.py --use-flash-attn\n')
    _, out, _ = audit(root, "--output-format", "json", monkeypatch=monkeypatch)
    by_path = {program["path"]: program for program in json.loads(out)["programs"]}
    assert by_path["train.py"]["launchers"] == ["scripts/train.sh"] and by_path["train.py"]["areas"]["configs"]["status"] == "fail"
    assert by_path["eval.py"]["launchers"] == [] and by_path["eval.py"]["areas"]["configs"]["status"] == "n/a"


# Probe reports, output file, cache, errors ---------------------------------------------------------


def _probe(path: Path, status: str, script: str | None) -> Path:
    report = {
        "schema": "repro-lint.probe/1",
        "tool": {"name": "repro-lint", "version": "0.1.0"},
        "mode": "wrapper" if script else "env",
        "status": status,
        "exit_code": 1 if status == "fail" else 0,
        "findings": [
            {"id": "RLP001", "severity": "fail", "setting": "deterministic_algorithms", "message": "off", "fix": "torch.use_deterministic_algorithms(True)"}
        ],
    }
    if script:
        report["script"] = {"path": script, "args": [], "exit_code": 0, "snapshot_at": "step"}
    path.write_text(json.dumps(report))
    return path


def test_probe_report_sits_beside_the_program_it_ran(careful, monkeypatch):
    probe = _probe(careful / "probe.json", "fail", "train.py")
    code, out, _ = audit(careful, "--probe-report", str(probe), monkeypatch=monkeypatch)
    lines = out.splitlines()
    assert lines[0].split()[-2:] == ["probe", "findings"] and lines[1].split() == ["train.py", *["pass"] * 5, "fail", "0"]
    assert "  probe (" + str(probe) + ", wrapper): fail" in lines and "    RLP001 deterministic_algorithms: off" in lines
    assert code == 0  # the static verdict decides the exit code
    _, out, _ = audit(careful, "--probe-report", str(probe), "--output-format", "json", monkeypatch=monkeypatch)
    [probe_json] = json.loads(out)["programs"][0]["probe"]
    assert (probe_json["status"], probe_json["script"], probe_json["findings"][0]["id"]) == ("fail", "train.py", "RLP001")


def test_probe_report_of_another_script_is_said(careful, monkeypatch):
    probe = _probe(careful / "probe.json", "pass", "other.py")
    code, out, err = audit(careful, "--probe-report", str(probe), monkeypatch=monkeypatch)
    assert code == 0 and "probe" not in out.splitlines()[0]
    assert f"warning: probe report {probe} ran other.py, which is none of the programs audited" in err


def test_probe_report_that_is_not_one_is_an_error(careful, monkeypatch):
    (careful / "x.json").write_text('{"a": 1}')
    code, _, err = audit(careful, "--probe-report", "x.json", monkeypatch=monkeypatch)
    assert code == 2 and "x.json is not a probe report" in err


def test_output_file_gets_the_report_and_the_terminal_the_totals(careless, monkeypatch):
    code, out, _ = audit(careless, "--output-format", "markdown", "--output-file", "audit.md", monkeypatch=monkeypatch)
    assert code == 1
    assert out.startswith("1 program: 0 reproducible, 1 not") and out.count("\n") == 1
    assert (careless / "audit.md").read_text().startswith("## repro-lint audit\n")


def test_exit_zero_and_errors(careless, monkeypatch):
    assert audit(careless, "--exit-zero", monkeypatch=monkeypatch)[0] == 0
    code, _, err = audit(careless, "missing.py", monkeypatch=monkeypatch)
    assert code == 2 and "missing.py" in err
    code, _, err = audit(careless, "--output-format", "sarif", monkeypatch=monkeypatch)
    assert code == 2 and "sarif" in err


def test_cached_audit_gives_the_same_report(careless, monkeypatch):
    monkeypatch.chdir(careless)
    runner = CliRunner()
    cold = runner.invoke(main, ["audit", "--jobs", "1", "--output-format", "json"]).stdout
    runner.invoke(main, ["check", "--jobs", "1"])  # the record `check` leaves answers the audit too
    (careless / "train.py").write_text("\n\n" + CARELESS)  # lines moved: the pass is not run again
    warm = json.loads(runner.invoke(main, ["audit", "--jobs", "1", "--output-format", "json"]).stdout)
    moved = json.loads(cold)
    assert warm["programs"][0]["entry_line"] == moved["programs"][0]["entry_line"] + 2
    assert warm["programs"][0]["areas"]["seeding"]["findings"][0]["line"] == warm["programs"][0]["entry_line"]
    assert {key: area["status"] for key, area in warm["programs"][0]["areas"].items()} == dict.fromkeys(AREAS, "fail")


class _Page(HTMLParser):
    """What a browser would fetch (`loads`), and the table's cells."""

    _LOADING = {"img": "src", "script": "src", "link": "href", "iframe": "src", "embed": "src", "object": "data", "source": "src", "audio": "src", "video": "src"}

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []
        self.links: list[str] = []
        self.ids: list[str] = []
        self.tags: dict[str, int] = {}
        self.cells: list[list[str]] = []
        self.cell_classes: list[list[str]] = []
        self._in_cell = False

    @classmethod
    def read(cls, text: str) -> _Page:
        page = cls()
        page.feed(text)
        return page

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag in self._LOADING and found.get(self._LOADING[tag]):
            self.loads.append(f"{tag} {found[self._LOADING[tag]]}")
        if "style" in found and "url(" in (found["style"] or ""):
            self.loads.append(f"{tag} style")
        if tag == "a" and found.get("href"):
            self.links.append(found["href"] or "")
        if found.get("id"):
            self.ids.append(found["id"] or "")
        if tag == "tr":
            self.cells.append([])
            self.cell_classes.append([])
        if tag == "td":
            self._in_cell = True
            self.cells[-1].append("")
            self.cell_classes[-1].append(found.get("class") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_cell = False
        if tag == "tr" and not self.cells[-1]:
            self.cells.pop()
            self.cell_classes.pop()

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.cells[-1][-1] += data


def test_every_format_the_command_line_offers_has_a_renderer():
    """The formats are named apart from their renderers, which the command line loads for audits only."""
    from repro_lint.output.audit import AUDIT_FORMATS
    from repro_lint.output.audit.report import RENDERERS

    assert tuple(RENDERERS) == AUDIT_FORMATS
