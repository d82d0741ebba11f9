"""REP208 completion-order-results: what fires, what must not, and the `imap_unordered` fix."""

import textwrap

import pytest
from conftest import assert_fix, codes, lint

from repro_lint.api import fix_source
from repro_lint.core.settings import Settings

_FUTURES = "from concurrent.futures import ThreadPoolExecutor, as_completed\n"
_GATHER = _FUTURES + (
    "def gather(paths):\n"
    "    out = []\n"
    "    with ThreadPoolExecutor() as pool:\n"
    "        futures = [pool.submit(load, p) for p in paths]\n"
    "        for future in as_completed(futures):\n"
    "            out.append(future.result())\n"
)

REP208_FIRES = [
    # appended in completion order, then indexed
    _GATHER + "    return out[0]\n",
    # ... split
    _GATHER + "    train, val = out[:900], out[900:]\n    return train, val\n",
    "from sklearn.model_selection import train_test_split\n" + _GATHER + "    return train_test_split(out, random_state=0)\n",
    # ... turned into a dataset or a tensor
    _GATHER + "    return ImageDataset(out)\n",
    "import torch\n" + _GATHER + "    images = torch.stack(out)\n    return images\n",
    # ... saved, or written to a manifest
    "import json\n" + _GATHER + "    with open('manifest.json', 'w') as f:\n        json.dump(out, f)\n",
    "import numpy as np\n" + _GATHER + "    np.save('features.npy', np.array(out))\n",
    # written one by one into a manifest
    "from multiprocessing import Pool\n"
    "with Pool(8) as pool, open('train.tsv', 'w') as manifest:\n"
    "    for line in pool.imap_unordered(process, files):\n"
    "        manifest.write(line)\n",
    "import csv\nfrom multiprocessing import Pool\n"
    "with Pool(8) as pool, open('meta.csv', 'w') as f:\n"
    "    writer = csv.writer(f)\n"
    "    for row in pool.imap_unordered(describe, files):\n"
    "        writer.writerow(row)\n",
    # imap_unordered listed, through tqdm, then numbered
    "from multiprocessing import Pool\nfrom tqdm import tqdm\n"
    "with Pool(8) as pool:\n"
    "    samples = list(tqdm(pool.imap_unordered(encode, texts), total=len(texts)))\n"
    "index = {sample: i for i, sample in enumerate(samples)}\n",
    # each result numbered in the order it comes
    "import multiprocessing as mp\n"
    "pool = mp.Pool(4)\n"
    "for i, features in enumerate(pool.imap_unordered(extract, clips)):\n"
    "    table[i] = features\n",
    # module-qualified as_completed, through tqdm
    "import concurrent.futures\nimport tqdm\n"
    "answers = []\n"
    "with concurrent.futures.ThreadPoolExecutor() as ex:\n"
    "    futures = [ex.submit(ask, q) for q in questions]\n"
    "    for future in tqdm.tqdm(concurrent.futures.as_completed(futures), total=len(futures)):\n"
    "        answers.append(future.result())\n"
    "save_jsonl(answers, 'answers.jsonl')\n",
    # asyncio
    "import asyncio\n"
    "async def run(prompts):\n"
    "    results = []\n"
    "    for next_done in asyncio.as_completed([generate(p) for p in prompts]):\n"
    "        text = await next_done\n"
    "        results.append(text)\n"
    "    return Dataset.from_list(results)\n",
    # ray.wait in a loop gathers refs as they finish
    "import ray\n"
    "pending = [embed.remote(batch) for batch in batches]\n"
    "embeddings = []\n"
    "while pending:\n"
    "    done, pending = ray.wait(pending)\n"
    "    embeddings.extend(ray.get(done))\n"
    "np.save('embeddings.npy', np.concatenate(embeddings))\n",
]

REP208_SILENT = [
    # handed back to the caller, which decides (diffusers' shard loader returns its error messages)
    _GATHER + "    return out\n",
    # only reduced order-independently
    _GATHER + "    return sum(out)\n",
    _GATHER + "    return min(out), max(out), len(out)\n",
    _GATHER + "    return set(out)\n",
    "from collections import Counter\n" + _GATHER + "    return Counter(out)\n",
    "import numpy as np\n" + _GATHER + "    return np.mean(out)\n",
    _FUTURES + "total = 0\nfor future in as_completed(futures):\n    total += future.result()\nprint(total)\n",
    # a dict keyed by the input, or each result stored at its input's index
    _FUTURES + "results = {}\nfor future in as_completed(future_to_name):\n"
    "    results[future_to_name[future]] = future.result()\nprint(list(results))\n",
    _FUTURES + "out = [None] * len(paths)\nfutures = {pool.submit(load, p): i for i, p in enumerate(paths)}\n"
    "for future in as_completed(futures):\n    out[futures[future]] = future.result()\nprint(out[0])\n",
    "from multiprocessing import Pool\nwith Pool(4) as pool:\n    out = [None] * len(jobs)\n"
    "    for index, value in pool.imap_unordered(work, enumerate(jobs)):\n        out[index] = value\nprint(out[0])\n",
    # sorted before use
    _GATHER + "    out.sort()\n    return out[0]\n",
    _GATHER + "    out = sorted(out, key=lambda r: r.index)\n    return out\n",
    "from multiprocessing import Pool\nwith Pool(4) as pool:\n    rows = sorted(pool.imap_unordered(work, jobs))\nprint(rows[0])\n",
    # waiting for side effects only, or logging each result
    "from multiprocessing import Pool\nfrom tqdm import tqdm\nwith Pool(8) as pool:\n"
    "    for _ in tqdm(pool.imap_unordered(resize, files), total=len(files)):\n        pass\n",
    _FUTURES + "for future in as_completed(futures):\n    print(future.result())\n",
    _FUTURES + "import logging\nfor future in as_completed(futures):\n    logging.info('done %s', future.result())\n",
    # order-keeping APIs
    "from multiprocessing import Pool\nwith Pool(4) as pool:\n    rows = list(pool.imap(work, jobs))\nprint(rows[0])\n",
    "import ray\nvalues = ray.get([f.remote(x) for x in xs])\nprint(values[0])\n",
    # one ray.wait outside a loop: the finished refs keep their input order
    "import ray\ndone, pending = ray.wait(refs, num_returns=len(refs))\nvalues = ray.get(done)\nprint(values[0])\n",
    # a user's own as_completed
    "def as_completed(fs):\n    return list(fs)\nout = []\nfor f in as_completed(futures):\n    out.append(f)\nprint(out[0])\n",
    # code that never runs
    "from multiprocessing import Pool\nif False:\n    with Pool(4) as pool:\n        rows = list(pool.imap_unordered(work, jobs))\n    print(rows[0])\n",
]


@pytest.mark.parametrize("code", REP208_FIRES)
def test_rep208_fires(code):
    assert codes(code, "REP208") == ["REP208"]


@pytest.mark.parametrize("code", REP208_SILENT)
def test_rep208_silent(code):
    assert codes(code, "REP208") == []


def test_rep208_reported_at_the_source_and_says_how():
    (finding,) = lint(_GATHER + "    return out[0]\n", "REP208")
    assert (finding.start.line, finding.start.column) == (6, 22)
    assert "completion order" in finding.message and "indexed" in finding.message


_IMAP = """\
from multiprocessing import Pool

with Pool(8) as pool:
    # one row per file
    rows = list(pool.imap_unordered(describe,  files, chunksize=16))  # slow
table = build_table(rows)
"""


def test_rep208_imap_unordered_fix():
    assert_fix(_IMAP, _IMAP.replace("imap_unordered", "imap"), "REP208", unsafe=True)


def test_rep208_fix_is_unsafe_only():
    (finding,) = lint(_IMAP, "REP208")
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert fix_source(_IMAP, "train.py", Settings(select=("REP208",))) == _IMAP


def test_rep208_fixed_file_compiles_and_keeps_the_order():
    fixed = fix_source(_IMAP, "train.py", Settings(select=("REP208",)), unsafe=True)
    compile(fixed, "train.py", "exec")
    code = textwrap.dedent("""
        from multiprocessing.pool import ThreadPool as Pool
        import time

        def describe(n):
            time.sleep(0.01 * (5 - n))
            return n

        with Pool(5) as pool:
            rows = list(pool.imap_unordered(describe, range(5)))
        first = rows[0]
    """)
    fixed = fix_source(code, "train.py", Settings(select=("REP208",)), unsafe=True)
    assert "pool.imap(describe" in fixed
    namespace: dict[str, object] = {}
    exec(fixed, namespace)
    assert namespace["rows"] == [0, 1, 2, 3, 4]


def test_rep208_no_fix_for_as_completed():
    (finding,) = lint(_GATHER + "    return out[0]\n", "REP208")
    assert finding.fix is None


def test_numbered_store_reaches_rep107_too():
    """`table[i] = x` under `enumerate` stores each element at its position in the arbitrary order:
    the data flow counts it for directory listings as for completion order."""
    code = "import os\ntable = {}\nfor i, name in enumerate(os.listdir(root)):\n    table[i] = name\n"
    assert codes(code, "REP107") == ["REP107"]
    assert codes(code.replace("os.listdir(root)", "sorted(os.listdir(root))"), "REP107") == []
