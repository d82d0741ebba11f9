"""REP305-REP309 in Python code: what fires, what must not, and the fixes (output, idempotence, re-lint)."""

import importlib
import textwrap

import pytest
from conftest import assert_fix, codes, lint

from repro_lint.api import fix_source, lint_paths, lint_source
from repro_lint.core.settings import Settings
from repro_lint.knowledge import load

# A training program on CUDA that never enables deterministic algorithms; `{body}` runs in its loop.
PROGRAM = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np

def train(model, batches, optimizer):
    model.cuda()
    for x, y in batches:
{body}
        loss = model(x).mean()
        loss.backward()
        optimizer.step()

if __name__ == "__main__":
    train(model, batches, optimizer)
"""


def program(body: str, **replacements: str) -> str:
    text = PROGRAM.format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8))
    for old, new in replacements.items():
        text = text.replace(old, new)
    return text


def found(code: str, rule: str) -> list[str]:
    return [finding.code for finding in lint_source(code, "train.py", Settings(select=(rule,)))]


# --- REP305 flash-attention-enabled ----------------------------------------------------------------

REP305_FIRES = [
    "model = Model(use_flash_attn=True)\n",
    "cfg = {'use_flash_attn': True}\n",
    "config.use_flash_attention = True\n",
    "cfg['flash_attention'] = True\n",
    "cfg = dict(use_flash_attention_2=True)\n",
    "model = AutoModelForCausalLM.from_pretrained('m', attn_implementation='flash_attention_2')\n",
    "config._attn_implementation = 'flash_attention_3'\n",
    "settings = {'attn_implementation': 'flash_attention_2'}\n",
    "from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, causal=True)\n",
    "from flash_attn import flash_attn_func as faf\nout = faf(q, k, v)\n",
    "import flash_attn\nout = flash_attn.flash_attn_varlen_func(q, k, v, cu, cu, n, n)\n",
    "from flash_attn.flash_attn_interface import flash_attn_qkvpacked_func\nout = flash_attn_qkvpacked_func(qkv, deterministic=False)\n",
    "from flash_attn_interface import flash_attn_func\nout = flash_attn_func(q, k, v, causal=True)\n",
    # A flash-attn module loaded at run time, named as the module (Hugging Face `kernels`).
    "flash_attn_interface = get_kernel('kernels-community/flash-attn3').flash_attn_interface\ny = flash_attn_interface.flash_attn_varlen_func(q, k, v, cu, cu, n, n)\n",
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--use-flash-attn', action='store_true', default=True)\n",
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--no-flash-attn', dest='use_flash_attn', action='store_false')\n",
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--attn_implementation', type=str, default='flash_attention_2')\n",
]

REP305_SILENT = [
    "model = Model(use_flash_attn=False)\n",
    # Values that cannot be known.
    "model = Model(use_flash_attn=cfg.flash)\n",
    "cfg = {'use_flash_attn': args.flash}\n",
    "model = AutoModel.from_pretrained('m', attn_implementation=args.attn)\n",
    "model = AutoModel.from_pretrained('m', attn_implementation='sdpa')\n",
    # Other settings that merely mention flash.
    "model = Model(flash=True)\nself_flash = hasattr(F, 'scaled_dot_product_attention')\n",
    # deterministic=True, or a value / **kwargs that may carry it.
    "from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, deterministic=True)\n",
    "from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, deterministic=self.deterministic)\n",
    "from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, **kwargs)\n",
    "from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, 0.0, None, True, (-1, -1), 0.0, None, True)\n",
    # No backward pass: the kv-cache function, and code under no_grad / inference_mode.
    "from flash_attn import flash_attn_with_kvcache\nout = flash_attn_with_kvcache(q, kc, vc)\n",
    "import torch\nfrom flash_attn import flash_attn_func\nwith torch.no_grad():\n    out = flash_attn_func(q, k, v)\n",
    "import torch\n@torch.inference_mode()\ndef generate():\n    return Model(use_flash_attn=True)\n",
    "import torch\n@torch.no_grad\ndef generate():\n    return flash_attn_func(q, k, v)\nfrom flash_attn import flash_attn_func\n",
    "from torch import no_grad\nwith no_grad():\n    model = AutoModel.from_pretrained('m', attn_implementation='flash_attention_2')\n",
    "from flash_attn import flash_attn_varlen_func\nclass A:\n    def decode(self, q, k, v):\n        assert not self.training\n        return flash_attn_varlen_func(q, k, v, cu, cu, n, n)\n",
    # A user's own function, or another library's, of the same name.
    "def flash_attn_func(q, k, v):\n    return q\nout = flash_attn_func(q, k, v)\n",
    "from mylib.attention import flash_attn_func\nout = flash_attn_func(q, k, v)\n",
    "import mylib as flash_attn\nout = flash_attn.flash_attn_func(q, k, v)\n",
    "out = self.attention.flash_attn_func(q, k, v)\n",
    # Hugging Face runs flash-attn's deterministic backward when FLASH_ATTENTION_DETERMINISTIC=1.
    "import os\nos.environ['FLASH_ATTENTION_DETERMINISTIC'] = '1'\nm = AutoModel.from_pretrained('m', attn_implementation='flash_attention_2')\n",
    "import transformers\ntransformers.enable_full_determinism(0)\nm = AutoModel.from_pretrained('m', attn_implementation='flash_attention_2')\n",
    # A setting that passes on a flash choice made elsewhere (one config converted into another).
    "if config._attn_implementation == 'flash_attention_2':\n    model_config.flash_attention = True\n",
    "if args.use_flash_attn:\n    kwargs['attn_implementation'] = 'flash_attention_2'\n",
    # argparse options whose default is off.
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--use-flash-attn', action='store_true')\n",
    "import argparse\np = argparse.ArgumentParser()\np.add_argument('--attn_implementation', default='sdpa')\n",
]


@pytest.mark.parametrize("code", REP305_FIRES)
def test_rep305_fires(code):
    assert codes(code, "REP305") == ["REP305"]


@pytest.mark.parametrize("code", REP305_SILENT)
def test_rep305_silent(code):
    assert codes(code, "REP305") == []


SDPA_FIRES = [
    "torch.backends.cuda.enable_flash_sdp(True)",
    "import torch.backends.cuda as tbc\ntbc.enable_flash_sdp(enabled=True)",
    "from torch.nn.attention import sdpa_kernel, SDPBackend\nwith sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    pass",
    "from torch.nn.attention import sdpa_kernel, SDPBackend\nwith sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):\n    pass",
    "with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False):\n    pass",
]
SDPA_SILENT = [
    "torch.backends.cuda.enable_flash_sdp(False)",
    "torch.backends.cuda.enable_flash_sdp(flag)",
    "from torch.nn.attention import sdpa_kernel, SDPBackend\nwith sdpa_kernel(SDPBackend.MATH):\n    pass",
    "with torch.backends.cuda.sdp_kernel(enable_flash=False):\n    pass",
    "class SDPBackend:\n    FLASH_ATTENTION = 1\nwith sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    pass",
]


@pytest.mark.parametrize("setting", SDPA_FIRES)
def test_rep305_sdpa_fires_in_program_without_determinism(setting):
    code = setting + "\n" + program("pass")
    assert found(code, "REP305") == ["REP305"]


@pytest.mark.parametrize("setting", SDPA_FIRES)
def test_rep305_sdpa_silent_under_deterministic_algorithms(setting):
    # PyTorch's flash kernel runs a deterministic backward under use_deterministic_algorithms(True).
    code = setting + "\n" + program("pass").replace("    train(", "    torch.use_deterministic_algorithms(True)\n    train(")
    assert found(code, "REP305") == []


@pytest.mark.parametrize("setting", SDPA_SILENT)
def test_rep305_sdpa_silent(setting):
    assert found(setting + "\n" + program("pass"), "REP305") == []


def test_rep305_sdpa_determinism_enabled_in_another_module(project):
    root = project({
        "model.py": """
            import torch
            torch.backends.cuda.enable_flash_sdp(True)
            class Net(torch.nn.Module):
                pass
        """,
        "train.py": """
            import torch
            from model import Net
            def main():
                torch.use_deterministic_algorithms(True)
                net = Net().cuda()
                net(x).sum().backward()
            if __name__ == "__main__":
                main()
        """,
    })
    assert lint_paths([root], Settings(select=("REP305",))).findings == []
    (root / "train.py").write_text((root / "train.py").read_text().replace("torch.use_deterministic_algorithms(True)", "pass"))
    assert [(f.path.rpartition("/")[2], f.start.line) for f in lint_paths([root], Settings(select=("REP305",))).findings] == [("model.py", 3)]


def test_rep305_silent_in_module_only_inference_programs_reach(project):
    root = project({
        "model.py": "def build():\n    return Model(use_flash_attn=True)\n",
        "generate.py": """
            from model import build
            if __name__ == "__main__":
                print(build().generate())
        """,
    })
    assert lint_paths([root], Settings(select=("REP305",))).findings == []
    (root / "train.py").write_text("from model import build\nif __name__ == '__main__':\n    build()(x).sum().backward()\n")
    assert [f.path.rpartition("/")[2] for f in lint_paths([root], Settings(select=("REP305",))).findings] == ["model.py"]


def test_rep305_silent_in_pytest_modules():
    code = "from flash_attn import flash_attn_func\ndef test_grad():\n    flash_attn_func(q, k, v).sum().backward()\n"
    for name in ("test_attention.py", "attention_test.py", "conftest.py"):
        assert lint_source(code, name, Settings(select=("REP305",))) == []
    assert [f.code for f in lint_source(code, "attention.py", Settings(select=("REP305",)))] == ["REP305"]


def test_rep305_reports_at_the_setting():
    finding = lint("model = Model(layers=2, use_flash_attn=True)\n", "REP305")[0]
    assert (finding.start.line, finding.start.column) == (1, 24)
    assert "use_flash_attn=True" in finding.message


def test_rep305_fix_adds_deterministic():
    assert_fix(
        "from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, causal=True)  # attention\n",
        "from flash_attn import flash_attn_func\nout = flash_attn_func(q, k, v, causal=True, deterministic=True)  # attention\n",
        "REP305",
    )


def test_rep305_fix_turns_deterministic_false_on():
    assert_fix(
        "from flash_attn import flash_attn_varlen_func\nout = flash_attn_varlen_func(\n    q, k, v,\n    deterministic=False,\n)\n",
        "from flash_attn import flash_attn_varlen_func\nout = flash_attn_varlen_func(\n    q, k, v,\n    deterministic=True,\n)\n",
        "REP305",
    )


def test_rep305_fix_keeps_one_argument_per_line():
    assert_fix(
        "from flash_attn import flash_attn_func\nout = flash_attn_func(\n    q,\n    k,\n    v,\n)\n",
        "from flash_attn import flash_attn_func\nout = flash_attn_func(\n    q,\n    k,\n    v,\n    deterministic=True,\n)\n",
        "REP305",
    )


def test_rep305_fix_keeps_continuation_lines_inside_indented_blocks():
    assert_fix(
        """\
        from flash_attn import flash_attn_varlen_func
        class Attention:
            def forward(self, q, k, v):
                if self.flash:
                    y = flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu,
                                               causal=True)
                return y
        """,
        """\
        from flash_attn import flash_attn_varlen_func
        class Attention:
            def forward(self, q, k, v):
                if self.flash:
                    y = flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu,
                                               causal=True, deterministic=True)
                return y
        """,
        "REP305",
    )


def test_rep305_flash_attn_fix_is_safe_and_sdpa_fix_unsafe():
    code = "torch.backends.cuda.enable_flash_sdp(True)\n" + program("pass")
    settings = Settings(select=("REP305",))
    assert fix_source(code, "train.py", settings, unsafe=False) == code
    assert_fix(code, code.replace("enable_flash_sdp(True)", "enable_flash_sdp(False)"), "REP305", unsafe=True)


def test_rep305_no_fix_for_configuration_forms():
    finding = lint("model = Model(use_flash_attn=True)\n", "REP305")[0]
    assert finding.fix is None


# --- REP306 nondeterministic-cuda-op ---------------------------------------------------------------

REP306_FIRES = [
    "x.index_add_(0, idx, src)",
    "torch.index_add(x, 0, idx, src)",
    "x.scatter_add_(0, idx, src)",
    "torch.scatter_add(x, 0, idx, src)",
    "x.scatter_reduce_(0, idx, src, 'sum')",
    "x.scatter_reduce(0, idx, src, reduce='mean')",
    "x.index_put_((i,), v, accumulate=True)",
    "x.index_put_((i,), v, True)",
    "x.put_(i, v, accumulate=True)",
    "torch.bincount(x, w)",
    "counts = x.bincount(weights=w)",
    "torch.histc(x, bins=10)",
    "torch.kthvalue(x, 2)",
    "torch.median(x, dim=0)",
    "z = F.interpolate(x, scale_factor=2, mode='bilinear')",
    "up = nn.Upsample(scale_factor=2, mode='bicubic')",
    "up = nn.UpsamplingBilinear2d(scale_factor=2)",
    "pool = nn.AdaptiveAvgPool2d(1)",
    "pool = nn.AdaptiveMaxPool1d(4)",
    "pool = torch.nn.modules.pooling.AdaptiveAvgPool3d(1)",
    "pad = nn.ReflectionPad2d(1)",
    "pad = nn.ReplicationPad1d(2)",
    "z = F.pad(x, (1, 1), mode='reflect')",
    "criterion = nn.NLLLoss()",
    "l = F.nll_loss(out, y)",
    "z = F.grid_sample(x, grid)",
    "bag = nn.EmbeddingBag(10, 3, mode='max')",
    "ctc = nn.CTCLoss()",
    "unpool = nn.MaxUnpool2d(2)",
    # Float values; the other branch of a determinism check.
    "counts.scatter_add_(0, idx, torch.ones(n, dtype=torch.float32))",
    "if torch.are_deterministic_algorithms_enabled():\n    pass\nelse:\n    x.scatter_add_(0, idx, src)",
]

REP306_SILENT = [
    # Other libraries' functions of the same name, and ordinary methods that share a word.
    "counts = np.bincount(x, w)",
    "queue.put(item, True)",
    "m = frame.median()",
    # Arguments that make the op deterministic, or cannot be known.
    "counts = x.bincount()",
    "torch.bincount(x)",
    "x.scatter_reduce_(0, idx, src, 'amax')",
    "x.scatter_reduce_(0, idx, src, how)",
    "x.index_put_((i,), v)",
    "x.index_put_((i,), v, accumulate=False)",
    "x.put_(i, v)",
    "torch.median(x)",
    "z = F.interpolate(x, scale_factor=2)",
    "z = F.interpolate(x, scale_factor=2, mode=mode)",
    "up = nn.Upsample(scale_factor=2)",
    "z = F.pad(x, (1, 1))",
    "bag = nn.EmbeddingBag(10, 3)",
    "l = F.cross_entropy(out, y)",
    "v, i = torch.topk(x, 2)",
    # Integer sums are exact in any order.
    "counts.scatter_add_(0, idx, torch.ones(n, dtype=torch.int64))",
    "counts.index_add_(0, idx, torch.full((n,), -1, dtype=torch.long))",
    "torch.index_add(counts, 0, idx, hits.long())",
    # The branch that runs only with deterministic algorithms on.
    "if torch.are_deterministic_algorithms_enabled():\n    x.index_add_(0, idx, src)",
    "if not torch.are_deterministic_algorithms_enabled():\n    pass\nelse:\n    x.index_add_(0, idx, src)",
]


@pytest.mark.parametrize("body", REP306_FIRES)
def test_rep306_fires(body):
    assert found(program(body), "REP306") == ["REP306"]


@pytest.mark.parametrize("body", REP306_SILENT)
def test_rep306_silent(body):
    assert found(program(body), "REP306") == []


def test_rep306_user_class_of_the_same_name_is_not_torch():
    code = "class AdaptiveAvgPool2d:\n    pass\n" + program("pool = AdaptiveAvgPool2d(1)")
    assert found(code, "REP306") == []
    aliased = program("pool = AMP(1)").replace("import numpy as np", "from torch.nn import AdaptiveMaxPool2d as AMP")
    assert found(aliased, "REP306") == ["REP306"]


def test_rep306_is_off_by_default():
    assert "REP306" not in codes(program("x.index_add_(0, idx, src)"))


def test_rep306_silent_when_deterministic_algorithms_are_enabled():
    code = program("x.index_add_(0, idx, src)").replace("    train(", "    torch.use_deterministic_algorithms(True)\n    train(")
    assert found(code, "REP306") == []


def test_rep306_silent_when_the_program_does_not_run_on_cuda():
    assert found(program("x.index_add_(0, idx, src)").replace("    model.cuda()\n", ""), "REP306") == []


def test_rep306_backward_ops_need_a_training_program():
    inference = program("{op}").replace("        loss.backward()\n        optimizer.step()\n", "")
    assert found(inference.replace("{op}", "pool = nn.AdaptiveAvgPool2d(1)"), "REP306") == []
    # A forward-nondeterministic op changes results in inference too.
    assert found(inference.replace("{op}", "x.index_add_(0, idx, src)"), "REP306") == ["REP306"]


def test_rep306_silent_in_a_library_module_no_program_reaches():
    assert found("import torch\ndef scatter(x, idx, src):\n    return x.index_add_(0, idx, src)\n", "REP306") == []


def test_rep306_program_condition_follows_imports(project):
    root = project({
        "layers.py": "import torch\ndef pool(x):\n    return torch.nn.functional.adaptive_avg_pool2d(x, 1)\n",
        "train.py": """
            import torch
            from layers import pool
            def main():
                model = Net().cuda()
                pool(model(x)).sum().backward()
            if __name__ == "__main__":
                main()
        """,
    })
    findings = lint_paths([root], Settings(select=("REP306",))).findings
    assert [(f.path.rpartition("/")[2], f.start.line) for f in findings] == [("layers.py", 3)]
    assert "adaptive_avg_pool2d" in findings[0].message


# --- REP307 autotuned-kernel-selection -------------------------------------------------------------

REP307_FIRES = [
    "compiled = torch.compile(model, mode='max-autotune')",
    "compiled = torch.compile(model, mode='max-autotune-no-cudagraphs')",
    "compiled = torch.compile(model, options={'max_autotune': True})",
    "torch._inductor.config.max_autotune = True",
    "torch._inductor.config.coordinate_descent_tuning = True",
    "with torch._inductor.config.patch(max_autotune_gemm=True):\n    pass",
]

REP307_SILENT = [
    "compiled = torch.compile(model)",
    "compiled = torch.compile(model, mode='reduce-overhead')",
    "compiled = torch.compile(model, mode=args.compile_mode)",
    "compiled = torch.compile(model, options={'max_autotune': False})",
    "torch._inductor.config.max_autotune = False",
    "torch._inductor.config.max_autotune = args.autotune",
    "settings.max_autotune = True",
]


@pytest.mark.parametrize("body", REP307_FIRES)
def test_rep307_fires_in_training_program(body):
    assert found(program(body), "REP307") == ["REP307"]


@pytest.mark.parametrize("body", REP307_SILENT)
def test_rep307_silent(body):
    assert found(program(body), "REP307") == []


@pytest.mark.parametrize(
    "header",
    [
        "import torch._inductor.config as inductor_config\ninductor_config.coordinate_descent_tuning = True\n",
        "from torch._inductor import config\nconfig.max_autotune_pointwise = True\n",
        "import triton\n@triton.autotune(configs=[triton.Config({'B': 32}), triton.Config({'B': 64})], key=['n'])\n@triton.jit\ndef kernel(x):\n    pass\n",
        "import torch\n@torch.compile(mode='max-autotune')\ndef step(x):\n    return x\n",
    ],
)
def test_rep307_module_level_forms(header):
    assert found(header + program("pass"), "REP307") == ["REP307"]


@pytest.mark.parametrize(
    "configs",
    [
        "[triton.Config({'B': 32})]",
        # A function that may pin one config (Megatron's autotune_configs does in deterministic mode).
        "autotune_configs([triton.Config({'B': 32}), triton.Config({'B': 64})])",
    ],
)
def test_rep307_triton_without_a_known_choice(configs):
    header = f"import triton\n@triton.autotune(configs={configs}, key=['n'])\n@triton.jit\ndef kernel(x):\n    pass\n"
    assert found(header + program("pass"), "REP307") == []


def test_rep307_triton_config_list_built_in_place():
    header = "import triton\n@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (1, 2, 4)], key=['n'])\n@triton.jit\ndef kernel(x):\n    pass\n"
    assert found(header + program("pass"), "REP307") == ["REP307"]


def test_rep307_silent_outside_training_programs():
    inference = program("compiled = torch.compile(model, mode='max-autotune')").replace("        loss.backward()\n", "")
    inference = inference.replace("        optimizer.step()\n", "")
    assert found(inference, "REP307") == []
    assert found("import torch\ncompiled = torch.compile(model, mode='max-autotune')\n", "REP307") == []


def test_rep307_is_off_by_default():
    assert "REP307" not in codes(program("compiled = torch.compile(model, mode='max-autotune')"))


# --- REP308 nondeterministic-distributed-env (Python forms) -----------------------------------------

REP308_FIRES = [
    "import os\nos.environ['NVTE_ALLOW_NONDETERMINISTIC_ALGO'] = '1'\n",
    "import os\nos.environ.setdefault('NVTE_ALLOW_NONDETERMINISTIC_ALGO', '1')\n",
    "import os\nos.putenv('NVTE_ALLOW_NONDETERMINISTIC_ALGO', '1')\n",
    "env = {'PATH': p, 'NVTE_ALLOW_NONDETERMINISTIC_ALGO': 1}\n",
    "import os, subprocess\nsubprocess.run(cmd, env=dict(os.environ, NVTE_ALLOW_NONDETERMINISTIC_ALGO='1'))\n",
]

REP308_SILENT = [
    "import os\nos.environ['NVTE_ALLOW_NONDETERMINISTIC_ALGO'] = '0'\n",
    "env = {'NVTE_ALLOW_NONDETERMINISTIC_ALGO': 0}\n",
    "import os\nos.environ['NVTE_ALLOW_NONDETERMINISTIC_ALGO'] = args.allow\n",
    "import os\nallowed = os.environ.get('NVTE_ALLOW_NONDETERMINISTIC_ALGO', '1')\n",
    "import os\nos.environ['NVTE_FLASH_ATTN'] = '1'\n",
]


@pytest.mark.parametrize("code", REP308_FIRES)
def test_rep308_fires(code):
    assert codes(code, "REP308") == ["REP308"]


@pytest.mark.parametrize("code", REP308_SILENT)
def test_rep308_silent(code):
    assert codes(code, "REP308") == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("os.environ['NVTE_ALLOW_NONDETERMINISTIC_ALGO'] = '1'  # TE speed\n", "os.environ['NVTE_ALLOW_NONDETERMINISTIC_ALGO'] = '0'  # TE speed\n"),
        ('os.environ.setdefault("NVTE_ALLOW_NONDETERMINISTIC_ALGO", "1")\n', 'os.environ.setdefault("NVTE_ALLOW_NONDETERMINISTIC_ALGO", "0")\n'),
        ("env = {'NVTE_ALLOW_NONDETERMINISTIC_ALGO': 1}\n", "env = {'NVTE_ALLOW_NONDETERMINISTIC_ALGO': 0}\n"),
    ],
)
def test_rep308_fix_sets_zero(before, after):
    assert_fix("import os\n" + before, "import os\n" + after, "REP308", unsafe=True)
    assert fix_source("import os\n" + before, "train.py", Settings(select=("REP308",))) == "import os\n" + before


# --- REP309 unknown-backend-flag -------------------------------------------------------------------

REP309_FIRES = [
    "import torch\ntorch.backends.cudnn.benchmarks = False\n",
    "import torch.backends.cudnn as cudnn\ncudnn.determinstic = True\n",
    "from torch.backends import cudnn\ncudnn.fastest = True\n",
    "import torch\ntorch.backends.cuda.allow_tf32 = True\n",
    "import torch\ntorch.backends.mkldnn.enable = False\n",
    "import torch\ntorch.backends.mps.enabled = True\n",
    "import torch as th\nth.backends.cudnn.deterministic = True\nth.backends.cudnn.benchmark_limits = 4\n",
]

REP309_SILENT = [
    "import torch\ntorch.backends.cudnn.benchmark = True\n",
    "import torch.backends.cudnn as cudnn\ncudnn.deterministic = True\ncudnn.allow_tf32 = False\ncudnn.enabled = True\n",
    "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n",
    "import torch\ntorch.backends.cudnn.conv.fp32_precision = 'tf32'\n",
    "import torch\ntorch.backends.opt_einsum.enabled = True\n",
    "import torch\nvalue = torch.backends.cudnn.benchmarks\n",
    "class Settings:\n    pass\ncudnn = Settings()\ncudnn.fastest = True\n",
    "import torch.backends.cudnn as cudnn\ndef configure(cudnn):\n    cudnn.fastest = True\n",
]


@pytest.mark.parametrize("code", REP309_FIRES)
def test_rep309_fires(code):
    assert codes(code, "REP309") == ["REP309"]


@pytest.mark.parametrize("code", REP309_SILENT)
def test_rep309_silent(code):
    assert codes(code, "REP309") == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("import torch\ntorch.backends.cudnn.benchmarks = False\n", "import torch\ntorch.backends.cudnn.benchmark = False\n"),
        ("import torch.backends.cudnn as cudnn\ncudnn.determinstic = True  # repro\n", "import torch.backends.cudnn as cudnn\ncudnn.deterministic = True  # repro\n"),
        ("import torch\ntorch.backends.cuda.allow_tf32 = False\n", "import torch\ntorch.backends.cuda.matmul.allow_tf32 = False\n"),
    ],
)
def test_rep309_fix_renames_to_closest(before, after):
    assert_fix(before, after, "REP309", unsafe=True)


def test_rep309_without_close_match_has_no_fix():
    finding = lint("from torch.backends import cudnn\ncudnn.fastest = True\n", "REP309")[0]
    assert finding.fix is None
    assert "no attribute `fastest`" in finding.message


def test_rep309_attribute_list_covers_installed_torch():
    """Every public attribute of the installed torch's backend modules is in the data, so no real
    setting is ever reported."""
    pytest.importorskip("torch")
    listed = load("backend_flags.json")["modules"]
    for name, attributes in listed.items():
        module = importlib.import_module(name)
        names = set(dir(module))
        if type(module).__name__ != "module":  # torch's PropModule wrappers (cudnn, mkldnn)
            names |= set(dir(type(module))) | set(dir(module.m)) | {"m"}
        missing = sorted(attribute for attribute in names if not attribute.startswith("_") and attribute not in attributes)
        assert missing == [], f"{name}: add {missing} to repro_lint/knowledge/backend_flags.json"


def test_rep309_moved_settings_exist_where_the_fix_puts_them():
    pytest.importorskip("torch")
    for owner, moved in load("backend_flags.json")["moved"].items():
        module = importlib.import_module(owner)
        for target in moved.values():
            holder, _, attribute = target.rpartition(".")
            assert hasattr(getattr(module, holder), attribute), target


# --- the program condition of local rules (ProjectModel.program_satisfies, Engine._keep_local) ------


def test_program_conditions_of_the_project_model():
    from repro_lint.analysis.python import analyze
    from repro_lint.analysis.result import ModuleIdentity
    from repro_lint.program.model import ProjectModel

    def facts(path: str, text: str):
        return analyze(textwrap.dedent(text), path, ModuleIdentity.from_relative_path(path), [], Settings()).facts

    model = ProjectModel([
        facts("layers.py", "def pool(x):\n    return x\n"),
        facts("train.py", """
            from layers import pool
            def main():
                net = Net().cuda()
                pool(net(x)).sum().backward()
            if __name__ == "__main__":
                main()
        """),
        facts("export.py", """
            import torch
            from layers import pool
            if __name__ == "__main__":
                torch.use_deterministic_algorithms(True)
                torch.cuda.set_device(0)
                pool(x)
        """),
        facts("library.py", "def helper():\n    return 1\n"),
    ])
    programs = {program.entry.path: program for program in model.programs}
    assert model.program_satisfies(programs["train.py"], ("trains", "cuda", "nondeterministic"))
    assert model.program_satisfies(programs["export.py"], ("cuda",))
    assert not model.program_satisfies(programs["export.py"], ("trains",))
    assert not model.program_satisfies(programs["export.py"], ("nondeterministic",))
    # Some program reaching the module must meet every requirement at once.
    assert model.reached_by_program_where("layers", ("trains", "cuda", "nondeterministic"))
    assert not model.reached_by_program_where("export", ("trains",))
    assert not model.reached_by_program_where("library", ())
    # The conditions read a cheaper summary of the program's events; it must not drift from them.
    for program in model.programs:
        kinds = {located.event.kind for located in model.events(program) if located.event.what != "cudnn.deterministic = True"}
        assert model._event_kinds(program) & {"cuda", "deterministic"} == kinds & {"cuda", "deterministic"}
