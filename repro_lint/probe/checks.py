"""Catalog of the probe's checks: id, severity under each profile, and the default fix.

Profiles (see docs/probe.md):
- ``strict``: bitwise run-to-run reproducibility on the same machine (the default);
- ``portable``: also the same numerics across GPUs and CPUs, so reduced precision fails;
- ``seeds-only``: only seeding is judged; kernel settings are reported as info.
"""

from __future__ import annotations

from dataclasses import dataclass

PROFILES = ("strict", "portable", "seeds-only")

# Row and finding statuses, mildest first.  "na" (not applicable) sits outside the order.
SEVERITY_RANK = {"pass": 0, "info": 1, "warn": 2, "fail": 3}


@dataclass(frozen=True)
class Check:
    id: str
    name: str
    strict: str
    portable: str
    seeds_only: str
    fix: str

    def severity(self, profile: str, strict_warnings: bool = False) -> str:
        sev = {"strict": self.strict, "portable": self.portable, "seeds-only": self.seeds_only}[profile]
        return "fail" if strict_warnings and sev == "warn" else sev


def _c(id_: str, name: str, strict: str, portable: str, seeds_only: str, fix: str) -> Check:
    return Check(id_, name, strict, portable, seeds_only, fix)


_ALL = [
    _c("RLP001", "deterministic-algorithms-off", "fail", "fail", "info",
       "call torch.use_deterministic_algorithms(True) at start-up"),
    _c("RLP002", "deterministic-warn-only", "fail", "fail", "info",
       "call torch.use_deterministic_algorithms(True) without warn_only=True "
       "(Lightning: Trainer(deterministic=True), not \"warn\")"),
    _c("RLP003", "cudnn-benchmark", "fail", "fail", "info",
       "torch.backends.cudnn.benchmark = False"),
    _c("RLP004", "cudnn-nondeterministic", "fail", "fail", "info",
       "torch.use_deterministic_algorithms(True) (or torch.backends.cudnn.deterministic = True)"),
    _c("RLP005", "sdpa-nondeterministic-backward", "fail", "fail", "info",
       "torch.use_deterministic_algorithms(True) without warn_only, or disable the backend with "
       "torch.backends.cuda.enable_flash_sdp(False) / enable_mem_efficient_sdp(False)"),
    _c("RLP006", "cublas-workspace-config", "fail", "fail", "info",
       "export CUBLAS_WORKSPACE_CONFIG=:4096:8 (or :16:8) before starting Python"),
    _c("RLP007", "torch-unseeded", "fail", "fail", "fail",
       "call torch.manual_seed(SEED) at start-up (it seeds CPU and CUDA)"),
    _c("RLP008", "pythonhashseed-not-fixed", "warn", "warn", "warn",
       "export PYTHONHASHSEED=0 (any integer) before starting Python; setting os.environ "
       "inside the script is too late"),
    _c("RLP009", "reduced-precision", "info", "fail", "info",
       "keep fp32 math in fp32 (see the row's fix)"),
    _c("RLP010", "inductor-autotune", "warn", "warn", "info",
       "torch.use_deterministic_algorithms(True) (sets torch._inductor.config.deterministic), "
       "or turn off max_autotune / coordinate_descent_tuning"),
    _c("RLP011", "cpu-numerics-not-pinned", "info", "warn", "info",
       "pin it in the launch environment (see the row's fix)"),
    _c("RLP012", "transformer-engine-nondeterministic", "fail", "fail", "info",
       "export NVTE_ALLOW_NONDETERMINISTIC_ALGO=0"),
    _c("RLP013", "nccl-algo", "warn", "warn", "info",
       "export NCCL_ALGO=Ring"),
    _c("RLP014", "dataloader-unseeded", "fail", "fail", "fail",
       "pass generator=torch.Generator().manual_seed(SEED) to the DataLoader, "
       "or seed torch before creating it"),
    _c("RLP015", "dataloader-worker-init-ddp", "warn", "warn", "warn",
       "give the DataLoader a worker_init_fn that mixes the rank into the seed "
       "(Lightning seed_everything(workers=True), HF seed_worker)"),
    _c("RLP016", "selftest-nondeterministic", "fail", "fail", "info",
       "this kernel is not reproducible here even in strict deterministic mode: avoid the op, "
       "and report it to PyTorch with the self-test output"),
    _c("RLP017", "selftest-canary-silent", "info", "info", "info",
       "rerun the self-test on a less busy machine; the canary needs its threads to overlap"),
    _c("RLP018", "setting-unreadable", "warn", "warn", "info",
       "use only the fp32_precision API (torch.backends.*.fp32_precision), not the legacy "
       "allow_tf32 / set_float32_matmul_precision next to it"),
    _c("RLP019", "fill-uninitialized-memory-off", "warn", "warn", "info",
       "torch.utils.deterministic.fill_uninitialized_memory = True"),
    _c("RLP020", "flash-attention-deterministic-env", "warn", "warn", "info",
       "export FLASH_ATTENTION_DETERMINISTIC=1 (transformers.enable_full_determinism sets it)"),
    _c("RLP021", "cublas-workspace-config-too-late", "warn", "warn", "info",
       "export CUBLAS_WORKSPACE_CONFIG before starting Python, not in os.environ after CUDA started"),
    _c("RLP022", "cublas-workspace-config-unset", "info", "info", "info",
       "optional on torch >= 2.10: export CUBLAS_WORKSPACE_CONFIG=:4096:8 to fix the workspace size"),
    _c("RLP023", "runs-diverge", "fail", "fail", "fail",
       "run `repro-lint probe run -- SCRIPT` to see which setting is off; a divergence at step 1 "
       "points at initialisation or data order, a later one at a nondeterministic kernel or an "
       "unseeded random draw"),
]

CHECKS: dict[str, Check] = {c.id: c for c in _ALL}
