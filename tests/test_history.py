"""benchmarks/history.py: a repository's commits replayed, each cached run against an uncached one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HISTORY = Path(__file__).resolve().parent.parent / "benchmarks" / "history.py"
TRAIN = "import torch\n\n\ndef main():\n    torch.randn(2)\n\n\nif __name__ == '__main__':\n    main()\n"


def _commit(repo: Path, files: dict[str, str | None], message: str) -> None:
    for name, text in files.items():
        if text is None:
            (repo / name).unlink()
        else:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message], cwd=repo, check=True)


def test_each_commit_is_replayed_and_the_record_answers_those_the_pass_cannot_see(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    _commit(repo, {"train.py": TRAIN, "README.md": "a\n"}, "first")
    _commit(repo, {"train.py": TRAIN.replace("    main()", "    main()  # run"), "README.md": "b\n"}, "a comment")
    _commit(repo, {"README.md": "c\n"}, "no Python: not replayed")
    _commit(repo, {"train.py": TRAIN.replace("def main():\n", "def main():\n    torch.manual_seed(0)\n")}, "seeds")
    result = subprocess.run([sys.executable, str(HISTORY), str(repo), "--commits", "5", "--jobs", "1"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [[cell.strip() for cell in line.split("|")[2:-1]] for line in result.stdout.splitlines()[2:]]
    # The first commit is the audited tree; the others changing Python are replayed, oldest first.
    assert rows == [["2", "1", "yes", "no"], ["1", "1", "yes", "yes"], ["", "", "2", "1 (answered from the record: 1)"]]
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == ""
