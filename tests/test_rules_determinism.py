import pytest
from conftest import assert_fix, codes

# --- REP301 cudnn-benchmark-enabled --------------------------------------------------------------

REP301_FIRES = [
    "import torch\ntorch.backends.cudnn.benchmark = True\n",
    "import torch.backends.cudnn as cudnn\ncudnn.benchmark = True\n",
    "from torch.backends import cudnn\ncudnn.benchmark = True\n",
    "import torch\ntorch.backends.cudnn.benchmark = args.benchmark\n",
    "import torch\ndef setup():\n    torch.backends.cudnn.benchmark = 1\n",
    "import torch as th\nth.backends.cudnn.benchmark = True\n",
    "import torch.backends.cudnn\ncudnn = torch.backends.cudnn\ncudnn.benchmark = True\n",
    "def setup():\n    import torch.backends.cudnn as cudnn\n    cudnn.benchmark = True\n",
]

REP301_SILENT = [
    "import torch\ntorch.backends.cudnn.benchmark = False\n",
    "import torch.backends.cudnn as cudnn\ncudnn.benchmark = 0\n",
    "import torch\nprint(torch.backends.cudnn.benchmark)\n",
    # A user's own object that happens to have a `benchmark` attribute.
    "class Cfg: pass\ncudnn = Cfg()\ncudnn.benchmark = True\n",
    "settings.benchmark = True\n",
    # `cudnn` is a parameter here, not the torch module.
    "import torch.backends.cudnn as cudnn\ndef configure(cudnn):\n    cudnn.benchmark = True\n",
]


@pytest.mark.parametrize("code", REP301_FIRES)
def test_rep301_fires(code):
    assert codes(code, "REP301") == ["REP301"]


@pytest.mark.parametrize("code", REP301_SILENT)
def test_rep301_silent(code):
    assert codes(code, "REP301") == []


def test_rep301_fix_keeps_comment():
    assert_fix(
        "import torch\ntorch.backends.cudnn.benchmark = True  # faster convs\n",
        "import torch\ntorch.backends.cudnn.benchmark = False  # faster convs\n",
        "REP301",
        unsafe=True,
    )


def test_rep301_fix_title_says_the_value_changed():
    # The fix keeps the line's comment, which may praise the old value (`# speed!`): the title says
    # what the value was, so the reader of the fix knows to look at the comment.
    from repro_lint.api import lint_source
    from repro_lint.core.settings import Settings

    code = "import torch\ntorch.backends.cudnn.benchmark = args.fast  # speed!\n"
    [finding] = lint_source(code, "train.py", Settings(select=("REP301",)))
    assert finding.fix is not None
    assert finding.fix.message == "Change `cudnn.benchmark` from `args.fast` to `False`"


def test_rep301_fix_is_unsafe():
    from repro_lint.api import fix_source
    from repro_lint.core.settings import Settings

    code = "import torch\ntorch.backends.cudnn.benchmark = True\n"
    assert fix_source(code, settings=Settings(select=("REP301",)), unsafe=False) == code


def test_rep301_silent_in_inference_program(project):
    from repro_lint.api import lint_paths
    from repro_lint.core.settings import Settings

    root = project({
        "detect.py": """
            import torch
            def run():
                torch.backends.cudnn.benchmark = True
                with torch.no_grad():
                    model(x)
            if __name__ == "__main__":
                run()
        """,
        "train.py": """
            import torch
            def train():
                torch.backends.cudnn.benchmark = True
                loss.backward()
            if __name__ == "__main__":
                train()
        """,
    })
    found = lint_paths([root], Settings(select=("REP301",))).findings
    assert [(finding.path.rsplit("/", 1)[-1], finding.start.line) for finding in found] == [("train.py", 4)]


def test_rep301_reported_in_helper_reached_by_training_program(project):
    from repro_lint.api import lint_paths
    from repro_lint.core.settings import Settings

    root = project({
        "utils/setup.py": """
            import torch
            def speed_up():
                torch.backends.cudnn.benchmark = True
        """,
        "train.py": """
            from utils.setup import speed_up
            def train():
                speed_up()
                loss.backward()
            if __name__ == "__main__":
                train()
        """,
        "export.py": """
            from utils.setup import speed_up
            if __name__ == "__main__":
                speed_up()
        """,
    })
    found = lint_paths([root / "utils" / "setup.py"], Settings(select=("REP301",))).findings
    assert [finding.code for finding in found] == ["REP301"]


# --- REP303 deterministic-warn-only --------------------------------------------------------------

REP303_FIRES = [
    "import torch\ntorch.use_deterministic_algorithms(True, warn_only=True)\n",
    "import torch\ntorch.use_deterministic_algorithms(mode=True, warn_only=True)\n",
    "from torch import use_deterministic_algorithms as uda\nuda(True, warn_only=True)\n",
    'import torch\ntorch.set_deterministic_debug_mode("warn")\n',
    "import torch\ntorch.set_deterministic_debug_mode(1)\n",
    'import lightning as L\ntrainer = L.Trainer(deterministic="warn")\n',
    'from pytorch_lightning import Trainer\nTrainer(max_epochs=3, deterministic="warn")\n',
]

REP303_SILENT = [
    "import torch\ntorch.use_deterministic_algorithms(True)\n",
    "import torch\ntorch.use_deterministic_algorithms(True, warn_only=False)\n",
    "import torch\ntorch.use_deterministic_algorithms(False, warn_only=True)\n",
    "import torch\ntorch.use_deterministic_algorithms(True, warn_only=args.lenient)\n",
    'import torch\ntorch.set_deterministic_debug_mode("error")\n',
    "import torch\ntorch.set_deterministic_debug_mode(2)\n",
    'from transformers import Trainer\nTrainer(deterministic="warn")\n',
    # A user's own function of the same name.
    "def use_deterministic_algorithms(mode, warn_only):\n    pass\nuse_deterministic_algorithms(True, warn_only=True)\n",
]


@pytest.mark.parametrize("code", REP303_FIRES)
def test_rep303_fires(code):
    assert codes(code, "REP303") == ["REP303"]


@pytest.mark.parametrize("code", REP303_SILENT)
def test_rep303_silent(code):
    assert codes(code, "REP303") == []


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "import torch\ntorch.use_deterministic_algorithms(True, warn_only=True)  # keep\n",
            "import torch\ntorch.use_deterministic_algorithms(True)  # keep\n",
        ),
        (
            "import torch\ntorch.use_deterministic_algorithms(\n    True,\n    warn_only=True,\n)\n",
            "import torch\ntorch.use_deterministic_algorithms(\n    True,\n)\n",
        ),
        (
            "import torch\ntorch.use_deterministic_algorithms(warn_only=True, mode=True)\n",
            "import torch\ntorch.use_deterministic_algorithms(mode=True)\n",
        ),
        ("import torch\ntorch.set_deterministic_debug_mode('warn')\n", "import torch\ntorch.set_deterministic_debug_mode('error')\n"),
        ("import torch\ntorch.set_deterministic_debug_mode(1)\n", "import torch\ntorch.set_deterministic_debug_mode(2)\n"),
        (
            'import lightning as L\nL.Trainer(deterministic="warn", max_epochs=1)\n',
            "import lightning as L\nL.Trainer(deterministic=True, max_epochs=1)\n",
        ),
    ],
)
def test_rep303_fix(before, after):
    assert_fix(before, after, "REP303", unsafe=True)


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "import torch\n\n\ndef setup():\n    torch.use_deterministic_algorithms(\n        True,  # strict\n"
            "        warn_only=True,  # for now\n    )\n",
            "import torch\n\n\ndef setup():\n    torch.use_deterministic_algorithms(\n        True,  # strict\n    )\n",
        ),
        (
            "import torch\n\n\ndef setup():\n    torch.use_deterministic_algorithms(\n        True, warn_only=True\n    )\n",
            "import torch\n\n\ndef setup():\n    torch.use_deterministic_algorithms(\n        True\n    )\n",
        ),
    ],
)
def test_rep303_fix_keeps_multiline_layout(before, after):
    assert_fix(before, after, "REP303", unsafe=True)


REP301_MORE_SILENT = [
    # Save and restore around a block: the restored value was read from the flag itself.
    "import torch\ndef run():\n    saved = torch.backends.cudnn.benchmark\n    torch.backends.cudnn.benchmark = False\n"
    "    work()\n    torch.backends.cudnn.benchmark = saved\n",
    "import torch\nclass Launcher:\n    def __init__(self):\n        self.cudnn_benchmark = torch.backends.cudnn.benchmark\n"
    "    def restore(self):\n        torch.backends.cudnn.benchmark = self.cudnn_benchmark\n",
    # Saved in a holder that is no plain name, or in the annotated second of two names on a line.
    "import torch\nstate = [S()]\nstate[0].saved = torch.backends.cudnn.benchmark\ntorch.backends.cudnn.benchmark = state[0].saved\n",
    "import torch\na: b = torch.backends.cudnn.benchmark\nb = torch.backends.cudnn.benchmark\ntorch.backends.cudnn.benchmark = b\n",
    # A library applying its caller's choice; the caller's True is where the problem is.
    "import torch\ndef configure(benchmark=None):\n    if benchmark is not None:\n        torch.backends.cudnn.benchmark = benchmark\n",
]
REP301_MORE_FIRES = [
    "import torch\ndef configure(benchmark=True):\n    torch.backends.cudnn.benchmark = benchmark\n",
    "import torch\ntorch.backends.cudnn.benchmark: bool = True\n",
    # A value read from a look-alike flag is no saved copy of this one.
    "import torch\ndef run():\n    saved = torch.backends.cudnn.benchmark_limit\n    torch.backends.cudnn.benchmark = saved\n",
]


def test_rep301_generates_a_region_s_code_once(monkeypatch):
    # One module setting the flag in many places: each assignment looks for a saved copy in the
    # same region, whose code is generated (and searched) once, not once per assignment.
    from repro_lint.facts.context import FileContext

    generated = []
    code_for = FileContext.code_for
    monkeypatch.setattr(FileContext, "code_for", lambda self, node: generated.append(node) or code_for(self, node))
    code = "import torch\n" + "".join(f"torch.backends.cudnn.benchmark = flag_{n}\n" for n in range(50))
    assert codes(code, "REP301") == ["REP301"] * 50
    modules = [node for node in generated if type(node).__name__ == "Module"]
    assert len(modules) == 1


@pytest.mark.parametrize("code", REP301_MORE_SILENT)
def test_rep301_silent_for_restores_and_passed_choices(code):
    assert codes(code, "REP301") == []


@pytest.mark.parametrize("code", REP301_MORE_FIRES)
def test_rep301_fires_for_default_on_and_annotated(code):
    assert codes(code, "REP301") == ["REP301"]


def test_rep303_silent_where_a_library_implements_warn():
    code = 'import torch\ndef apply(deterministic):\n    if deterministic == "warn":\n        torch.use_deterministic_algorithms(True, warn_only=True)\n'
    assert codes(code, "REP303") == []


def test_rep301_judged_per_function_and_in_test_modules(project):
    from repro_lint.api import lint_paths
    from repro_lint.core.settings import Settings

    root = project({
        "utils/loaders.py": """
            import torch
            class Streams:
                def __init__(self):
                    torch.backends.cudnn.benchmark = True  # inference only
            def train_loader():
                torch.backends.cudnn.benchmark = True
        """,
        "detect.py": "from utils.loaders import Streams\nif __name__ == '__main__':\n    Streams()\n",
        "train.py": "from utils.loaders import train_loader\nif __name__ == '__main__':\n    train_loader()\n    loss.backward()\n",
        "tests/test_speed.py": "import torch\ndef test_speed():\n    torch.backends.cudnn.benchmark = True\n",
    })
    found = lint_paths([root], Settings(select=("REP301",))).findings
    assert [(finding.path.rsplit("/", 1)[-1], finding.start.line) for finding in found] == [("loaders.py", 7)]
