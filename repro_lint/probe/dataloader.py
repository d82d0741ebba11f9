"""What a DataLoader handed to ``check(loader=...)`` does about worker seeds."""

from __future__ import annotations

from typing import Any

from .evaluate import Context, Verdict, bad, note, ok


def describe_loader(loader: Any) -> dict[str, Any]:
    generator = getattr(loader, "generator", None)
    init_fn = getattr(loader, "worker_init_fn", None)
    context = getattr(loader, "multiprocessing_context", None)
    return {
        "generator": None if generator is None else generator.initial_seed(),
        "worker_init_fn": None if init_fn is None else getattr(init_fn, "__qualname__", repr(init_fn)),
        "num_workers": getattr(loader, "num_workers", 0),
        "persistent_workers": bool(getattr(loader, "persistent_workers", False)),
        "multiprocessing_context": None if context is None else str(getattr(context, "_name", context)),
    }


def judge_generator(info: dict[str, Any], seeded: bool) -> Verdict:
    # Without a generator, each epoch's worker base_seed is drawn from the global torch RNG.
    if info["generator"] is not None:
        return ok()
    if info["num_workers"] > 0 and not seeded:
        return bad("RLP014", "no generator and torch is unseeded: worker base seeds (and the shuffle "
                             "order) are drawn from an unseeded global RNG")
    return note("no generator: base seeds come from the global torch RNG")


def judge_worker_init(info: dict[str, Any], ctx: Context) -> Verdict:
    ddp = (ctx.distributed.get("world_size") or 0) > 1
    if info["worker_init_fn"] is not None or info["num_workers"] == 0 or not ddp:
        return ok()
    return bad("RLP015", "no worker_init_fn under multi-rank training: every rank's workers get the same "
                         "seeds, so augmentations repeat across ranks")
