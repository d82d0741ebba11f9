"""REP106 hash-order-dependence and REP107 unsorted-file-listing: what fires, what must not, fixes."""

import os
import subprocess
import sys
import textwrap

import pytest
from conftest import assert_fix, codes, lint

# --- REP106, first form: orders built by iterating a set -------------------------------------------

REP106_FIRES = [
    # list(set(x)) used by position
    "classes = list(set(labels))\nfirst = classes[0]\n",
    # enumerate over a set: an index mapping
    "index = {c: i for i, c in enumerate(set(labels))}\n",
    # set operators give sets
    "names = list(set(a) - b)\nmapping = dict(zip(names, range(len(names))))\n",
    # a set literal of strings, iterated by a loop that builds a list
    "order = []\nfor name in {'train', 'val', 'test'}:\n    order.append(name)\nprint(order[0])\n",
    # a set comprehension turned into a tensor
    "import torch\nids = torch.tensor([vocab[w] for w in {w.lower() for w in words}])\n",
    # a loop numbering the elements with a counter
    "vocab = {}\nn = 0\nfor w in set(words):\n    vocab[w] = n\n    n += 1\n",
    # `index[x] = len(index)`
    "stoi = {}\nfor ch in set(text):\n    stoi[ch] = len(stoi)\n",
    # a set held in a variable, then listed and indexed
    "seen = set()\nfor w in words:\n    seen.add(w)\nitems = list(seen)\npick = items[3]\n",
    # `.keys()` of a dict built from a set
    "counts = dict.fromkeys(set(tags), 0)\nkeys = list(counts.keys())\nprint(keys[0])\n",
    # stored on self and indexed in another method
    "class D:\n    def __init__(self, labels):\n        self.classes = list(set(labels))\n"
    "    def name(self, i):\n        return self.classes[i]\n",
    # annotated as strings
    "from typing import List\ndef mix(rows: List[str]):\n    names = list(set(rows))\n    return {n: i for i, n in enumerate(names)}\n",
    # frozenset, and a seeded choice that still depends on the order
    "import random\nrandom.seed(0)\npick = random.choice(list(frozenset(names)))\n",
    # rebound to what its own last read builds: the read comes first
    "import numpy as np\nids = list(set(ids))\nids = np.array(ids)\n",
    # a string joined in set order, then used: a regex's alternatives
    "import re\npattern = re.compile('|'.join(set(names)))\n",
]

REP106_SILENT = [
    # sorted before any order-dependent use
    "classes = sorted(set(labels))\nfirst = classes[0]\n",
    "classes = list(set(labels))\nclasses.sort()\nfirst = classes[0]\n",
    "classes = list(set(labels))\nclasses = sorted(classes)\nfirst = classes[0]\n",
    "index = {c: i for i, c in enumerate(sorted(set(labels)))}\n",
    # only membership, len, min/max/sum, or another set
    "known = set(labels)\nif 'cat' in known:\n    print(len(known))\n",
    "n = len(list(set(labels)))\n",
    "top = max(set(scores))\nlow = min(list(set(scores)))\n",
    "both = set(a) & set(b)\nextra = set(b) - both\n",
    "total = 0\nfor w in set(words):\n    total += counts[w]\n",
    # numpy's reductions, like sum and max (qlora's per-subject scores averaged with np.mean)
    "import numpy as np\nscores = []\nfor s in set(subjects):\n    scores.append(score(s))\nmean = np.mean(scores)\n",
    "import numpy as np\nspread = np.std([weight(w) for w in set(words)])\n",
    # numbers hash to themselves: their sets iterate the same way in every run
    "ids = list(set(range(10)))\nfirst = ids[0]\n",
    "ids = list({1, 2, 3})\nfirst = ids[0]\n",
    "ids = list(set(map(int, raw)))\nfirst = ids[0]\n",
    "from typing import List\ndef mix(rows: List[int], cols: list[int]):\n    seeds = list(set(rows + cols))\n    return seeds[0]\n",
    "visited: set[int] = set()\nfor n in nodes:\n    visited.add(n)\norder = list(visited)\nprint(order[0])\n",
    # a user's own `set`
    "def set(values):\n    return list(values)\nitems = list(set(names))\nprint(items[0])\n",
    # a list made from a set, or a string joined from one, handed back to the caller: the caller decides
    "def keys(stores):\n    return list(set(stores))\n",
    "def literal_text(literals):\n    return '\\0'.join({str(x) for x in literals})\n",
    # `next(iter(s))` takes the one element of a single-element set
    "only = next(iter(set(names)))\n",
    # only asks whether the folder is empty (Megatron-LM's checkpoint saver)
    "from pathlib import Path\nif next(Path(d).iterdir(), None) is not None:\n    warn()\n",
    "import os\nif not next(os.scandir(d), None):\n    warn()\n",
    # indexing guarded by a uniqueness check
    "missing = {p for p in packages if not installed(p)}\nif len(missing) == 1:\n    print(list(missing)[0])\n",
    # only an error message shows the order
    "unknown = list(set(kwargs) - known)\nif unknown:\n    raise ValueError('unknown option', unknown[0])\n",
    # a string joined in set order that only a log message or f-string shows
    "import logging\nlog = logging.getLogger(__name__)\nlog.info('ignored: ' + ', '.join(set(columns) - known))\n",
    "import logging\nlog = logging.getLogger(__name__)\nwhere = ' and '.join([d for d in set(devices) if d != 'gpu'])\n"
    "if len(where) > 0:\n    log.warning(f'offloaded to the {where}')\n",
    "print(', '.join(set(names)))\n",
    # a dict keyed in set order but only looked up
    "lookup = {w: embed(w) for w in set(words)}\nvector = lookup['cat']\n",
]


@pytest.mark.parametrize("code", REP106_FIRES)
def test_rep106_set_order_fires(code):
    assert codes(code, "REP106") == ["REP106"]


@pytest.mark.parametrize("code", REP106_SILENT)
def test_rep106_set_order_silent(code):
    assert codes(code, "REP106") == []


def test_rep106_reports_at_the_iterated_set():
    (finding,) = lint("x = 1\nclasses = list(set(labels))\nprint(classes[0])\n", "REP106")
    assert (finding.start.line, finding.start.column) == (2, 15)
    assert "per-run order" in finding.message and "indexed" in finding.message


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "classes = list(set(labels))  # unique\nfirst = classes[0]\n",
            "classes = sorted(set(labels))  # unique\nfirst = classes[0]\n",
        ),
        (
            "index = {c: i for i, c in enumerate(set(labels))}\n",
            "index = {c: i for i, c in enumerate(sorted(set(labels)))}\n",
        ),
        (
            "names = set(a)\nout = []\nfor n in names:\n    out.append(n)\nprint(out[0])\n",
            "names = set(a)\nout = []\nfor n in sorted(names):\n    out.append(n)\nprint(out[0])\n",
        ),
        (
            "vocab = list(\n    set(words)  # every word once\n)\nprint(vocab[0])\n",
            "vocab = sorted(\n    set(words)  # every word once\n)\nprint(vocab[0])\n",
        ),
    ],
)
def test_rep106_set_fix(before, after):
    assert_fix(before, after, "REP106")


def test_rep106_set_fix_is_safe():
    (finding,) = lint("index = {c: i for i, c in enumerate(set(labels))}\n", "REP106")
    assert finding.fix is not None and finding.fix.applicability.value == "safe"


# --- REP106, second form: hash() of strings deciding membership, order or a seed --------------------

REP106_HASH_FIRES = [
    "bucket = hash(name) % 10\n",
    "import pickle\nshard = hash(pickle.dumps(record)) % n_shards\n",
    "is_val = hash(path) % 100 < 10\n",
    "is_val = abs(hash(f'{user}-{item}')) % 5 == 0\n",
    "order = sorted(files, key=lambda name: hash(name))\n",
    "import random\nrng = random.Random(hash(str(run_id)))\n",
    "key = line.strip()\nif hash(key) & 1:\n    train.append(line)\n",
]

REP106_HASH_SILENT = [
    # an int or a tuple of ints hashes to the same value in every run
    "bucket = hash(index) % 10\n",
    "bucket = hash(len(words)) % 10\n",
    "bucket = hash((1, 2)) % 10\n",
    # stable hashes
    "import zlib\nbucket = zlib.crc32(name.encode()) % 10\n",
    "import hashlib\nbucket = int(hashlib.sha256(name.encode()).hexdigest(), 16) % 10\n",
    # hash not deciding anything
    "class K:\n    def __hash__(self):\n        return hash(self.name)\n",
    "cache_key = hash(name)\n",
    # a user's own hash
    "def hash(x):\n    return 0\nbucket = hash(name) % 10\n",
]


@pytest.mark.parametrize("code", REP106_HASH_FIRES)
def test_rep106_hash_fires(code):
    assert codes(code, "REP106") == ["REP106"]


@pytest.mark.parametrize("code", REP106_HASH_SILENT)
def test_rep106_hash_silent(code):
    assert codes(code, "REP106") == []


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "import os\nbucket = hash(os.path.basename(p)) % 10\n",
            "import os\nimport zlib\nbucket = zlib.crc32(os.path.basename(p).encode()) % 10\n",
        ),
        (
            "import pickle\nimport zlib as z\nshard = hash(pickle.dumps(r)) % 8\n",
            "import pickle\nimport zlib as z\nshard = z.crc32(pickle.dumps(r)) % 8\n",
        ),
        (
            "import os\nis_val = hash(path) % 100 < 10  # 10% validation\n",
            "import os\nimport zlib\nis_val = zlib.crc32(str(path).encode()) % 100 < 10  # 10% validation\n",
        ),
    ],
)
def test_rep106_hash_fix(before, after):
    assert_fix(before, after, "REP106", unsafe=True)


def test_rep106_hash_fix_is_unsafe():
    from repro_lint.api import fix_source
    from repro_lint.core.settings import Settings

    code = "bucket = hash(name) % 10\n"
    assert fix_source(code, settings=Settings(select=("REP106",))) == code


def test_rep106_hash_order_really_changes_with_pythonhashseed():
    """The hazard itself: the same program orders a set of strings differently under two hash seeds."""
    program = "print(list({'cat', 'dog', 'bird', 'fish', 'horse', 'mouse', 'snake', 'zebra'}))"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", program], env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True, check=True
        ).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(outputs) > 1


# --- REP107 unsorted-file-listing ----------------------------------------------------------------

REP107_FIRES = [
    # not a build script: a look-alike `setup`, or setuptools imported but never called
    "import glob\ndef setup(**parts):\n    return Data(parts['files'])\nsetup(files=glob.glob('*.png'))\n",
    "import glob\nimport setuptools\nfiles = glob.glob('*.png')\nds = Data(files)\n",
    # a unittest assertion that compares the list itself
    "import os\nclass T(TestCase):\n    def test_wrote(self):\n        self.assertEqual(os.listdir(d), ['a.txt', 'b.txt'])\n",
    # stored and indexed
    "import os\nfiles = os.listdir(root)\nfirst = files[0]\n",
    # alias, enumerated into an index mapping
    "from os import listdir as ls\nclass_to_idx = {c: i for i, c in enumerate(ls(root))}\n",
    # glob turned into a dataset
    "import glob\nds = ImageDataset(glob.glob('data/*.png'))\n",
    "from glob import glob\nfiles = [f for f in glob(pattern) if f.endswith('.jpg')]\nds = Data(files)\n",
    # Path methods
    "from pathlib import Path\nimages = list(Path(root).rglob('*.jpg'))\nfirst = images[0]\n",
    "from pathlib import Path\nfor i, p in enumerate(Path(root).iterdir()):\n    index[p.name] = i\n",
    # stored on self, indexed in __getitem__
    "import glob\nclass D:\n    def __init__(self, root):\n        self.files = glob.glob(root + '/*.png')\n"
    "    def __getitem__(self, i):\n        return self.files[i]\n",
    # os.walk appending to a list that is used in order
    "import os\nsamples = []\nfor root, dirs, names in os.walk(top):\n    for n in names:\n        samples.append(os.path.join(root, n))\n"
    "loader = make_loader(samples)\n",
    # os.scandir and glob.iglob
    "import os\nnames = [e.name for e in os.scandir(root)]\nprint(names[0])\n",
    "import glob\nfor path in glob.iglob('*.txt'):\n    lines.append(path)\ntrain = lines[:100]\n",
    # extended in a loop, returned as the dataset's file list
    "import glob\ndef files(root):\n    out = []\n    for ext in ('png', 'jpg'):\n        out.extend(glob.glob(f'{root}/*.{ext}'))\n    return out\n",
    # the list of subfolders of the top folder
    "import os\nclasses = next(os.walk(root))[1]\nindex = {c: i for i, c in enumerate(classes)}\n",
    # joined into one string that a search scans in listing order: the first match wins
    "import os, re\nfiles = os.listdir(d)\nfound = re.search(r'model.*\\.bin', '\\n'.join(files))\n",
    # enumerated: the elements are numbered in directory order, whatever the loop does with the numbers
    "import os\nfiles = os.listdir(d)\nfor i, f in enumerate(files):\n    convert(f)\n",
    "import os\nimages = os.listdir(d)\nfor i, image in enumerate(images):\n    resize(image)\n    if i % 100 == 0:\n        print(i)\n",
    # stored under a key of a dict that is written out, handed over, read back or returned
    "import glob, json\ndata = {'type': 'x', 'checkpoints': glob.glob('*.bin')}\njson.dump(data, f)\n",
    "import os\nmeta = {'files': os.listdir(d)}\nfirst = meta['files'][0]\n",
    "import os\nmeta = dict(files=os.listdir(d))\nds = Data(**meta)\n",
    "import glob\nby_split = {s: glob.glob(f'{s}/*.png') for s in splits}\nds = Data(by_split)\n",
    "import glob\ndef index(root):\n    return {'images': glob.glob(root + '/*.png')}\n",
    # the first entry in directory order (the catalog's Order edge case)
    "from pathlib import Path\nxml = next(Path(d).glob('*.xml'))\n",
    "import os\nfirst = next(iter(os.listdir(d)))\n",
    # leaving when there are none (or too few) leaves several in directory order
    "import glob\nfor d in dirs:\n    found = glob.glob(d + '/*.yml')\n    if len(found) < 1:\n        continue\n    load(found[0])\n",
    "import glob\nckpts = glob.glob('*.ckpt')\nassertEqual(2, len(ckpts))\nload(ckpts[0])\n",
]

REP107_SILENT = [
    # sorted, by any route, before use
    "import os\nfiles = sorted(os.listdir(root))\nfirst = files[0]\n",
    "import os\nfiles = os.listdir(root)\nfiles.sort()\nfirst = files[0]\n",
    "import os\nfiles = os.listdir(root)\nfiles = sorted(f for f in files if f.endswith('.png'))\nfirst = files[0]\n",
    "import glob\nfiles = [f for f in glob.glob(p) if ok(f)]\nfiles.sort(key=len)\nds = Data(files)\n",
    "from natsort import natsorted\nimport glob\nframes = natsorted(glob.glob('*.png'))\nfirst = frames[0]\n",
    # a sort on a conditional path counts
    "import os\ndef listing(root, sort=True):\n    files = os.listdir(root)\n    if sort:\n        files.sort()\n    return files\n",
    # order-independent uses
    "import os\nif 'model.pt' in os.listdir(ckpt_dir):\n    load()\n",
    "import os\nn_images = len(os.listdir(root))\n",
    "import glob, os\nlatest = max(glob.glob('ckpt/*.pt'), key=os.path.getmtime)\n",
    "import os\nextensions = {os.path.splitext(f)[1] for f in os.listdir(root)}\n",
    "import os\nfor f in os.listdir(tmp):\n    os.remove(os.path.join(tmp, f))\n",
    "import os\nfor f in os.listdir(d):\n    print(f)\n",
    "import os\nprint(os.listdir(d))\n",
    # os.walk with the folders sorted in place and the files sorted
    "import os\nout = []\nfor root, dirs, files in os.walk(top):\n    dirs.sort()\n    for f in sorted(files):\n        out.append(os.path.join(root, f))\nds = Data(out)\n",
    # indexing guarded by a uniqueness check
    "import glob\nfiles = glob.glob('*.yaml')\nif len(files) > 1:\n    raise ValueError('several configs')\ncfg = files[0]\n",
    "import glob\nfound = glob.glob(pattern)\nassert len(found) == 1\nload(found[0])\n",
    "import glob\nfor d in dirs:\n    found = glob.glob(d + '/*.yml')\n    if len(found) != 1:\n        continue\n    load(found[0])\n",
    "import glob\nclass T(TestCase):\n    def test_one(self):\n        ckpts = glob.glob('*.ckpt')\n        self.assertEqual(1, len(ckpts))\n        load(ckpts[0])\n",
    # not the standard library's listings
    "import tensorflow as tf\nfiles = tf.io.gfile.glob('*.tfrecord')\nds = Data(files)\n",
    "def listdir(d):\n    return ['a', 'b']\nfiles = listdir(root)\nprint(files[0])\n",
    "files = fs.glob('bucket/*.parquet')\nds = Data(files)\n",
    # a comprehension's own variable is not the listing
    "import os\nf = os.listdir(d)\nprint(len(f))\nrows = [g(f) for f in other]\n",
    # only an error message shows the order
    "import os\nfiles = os.listdir(d)\nif len(files) > 3:\n    raise RuntimeError(f'unexpected {files[0]}')\n",
    # joined only for a message
    "import os, logging\nlogging.info('found: ' + ', '.join(os.listdir(d)))\n",
    # only passed to another program
    "import glob, subprocess\nsubprocess.run(['zip', 'out.zip', *glob.glob('*.txt')])\n",
    # a build script: the order of compiler inputs and packaged files changes no result
    "import glob\nfrom setuptools import setup, Extension\nsources = glob.glob('csrc/*.cpp')\nsetup(name='ops', ext_modules=[Extension('ops._C', sources)])\n",
    "import glob\nimport setuptools\ndef data_files():\n    return glob.glob('configs/*.yaml')\nif __name__ == '__main__':\n    setuptools.setup(name='ops', package_data={'ops': data_files()})\n",
    "import os\nfrom distutils.core import setup\nsetup(name='ops', scripts=os.listdir('bin'))\n",
    # unittest's assertions of truthiness, membership and content regardless of order
    "import os\nclass T(TestCase):\n    def test_wrote(self):\n        self.assertTrue(os.listdir(d))\n        self.assertFalse(os.listdir(empty))\n",
    "import os\nclass T(TestCase):\n    def test_wrote(self):\n        self.assertIn('a.txt', os.listdir(d))\n",
    "import glob\nclass T(TestCase):\n    def test_wrote(self):\n        self.assertCountEqual(glob.glob('*.txt'), ['a.txt', 'b.txt'])\n",
    # enumerated after sorting
    "import os\nfor i, f in enumerate(sorted(os.listdir(d))):\n    convert(i, f)\n",
    "import os\nfiles = os.listdir(d)\nfiles.sort()\nfor i, f in enumerate(files):\n    convert(i, f)\n",
    # a plain loop over each file, or a comprehension that only builds a message
    "import os\nfiles = os.listdir(d)\nfor f in files:\n    convert(f)\n",
    "from pathlib import Path\navailable = list(Path('ckpt').glob('*/*'))\nif available:\n    options = '\\n'.join([repr(str(p)) for p in available])\n    print(f'found:{options}')\n",
    # a dict holding a listing: sorted when read, only counted, shown, or only its keys used
    "import glob\nmeta = {'files': glob.glob('*.png')}\nds = Data(sorted(meta['files']))\n",
    "import os\nmeta = {'files': os.listdir(d)}\nprint(len(meta['files']))\n",
    "import glob, logging\nlogging.info({'found': glob.glob('*.txt')})\n",
    "import glob\ngroups = {s: glob.glob(s) for s in splits}\nfor name in groups:\n    print(name)\nnames = list(groups)\n",
]


@pytest.mark.parametrize("code", REP107_FIRES)
def test_rep107_fires(code):
    assert codes(code, "REP107") == ["REP107"]


@pytest.mark.parametrize("code", REP107_SILENT)
def test_rep107_silent(code):
    assert codes(code, "REP107") == []


def test_rep107_reports_at_the_listing_call():
    (finding,) = lint("import os\nfiles = os.listdir(root)\nprint(files[0])\n", "REP107")
    assert (finding.start.line, finding.start.column) == (2, 8)
    assert "indexed" in finding.message and "file-system order" in finding.message


def test_rep107_walk_has_no_fix_and_says_what_to_sort():
    code = "import os\nout = []\nfor r, d, f in os.walk(t):\n    for n in f:\n        out.append(n)\nuse(out)\n"
    (finding,) = lint(code, "REP107")
    assert finding.fix is None and "passed to `use`" in finding.message


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "import os\nfiles = os.listdir(root)  # all images\nfirst = files[0]\n",
            "import os\nfiles = sorted(os.listdir(root))  # all images\nfirst = files[0]\n",
        ),
        (
            "from pathlib import Path\nfor i, p in enumerate(Path(root).glob('*.png')):\n    index[p] = i\n",
            "from pathlib import Path\nfor i, p in enumerate(sorted(Path(root).glob('*.png'))):\n    index[p] = i\n",
        ),
        (
            "import os\nnames = [e.name for e in os.scandir(d)]\nprint(names[0])\n",
            "import os\nnames = [e.name for e in sorted(os.scandir(d), key=lambda entry: entry.name)]\nprint(names[0])\n",
        ),
        (
            "import glob\nds = Data(\n    glob.glob(\n        'data/*.png',  # images\n    )\n)\n",
            "import glob\nds = Data(\n    sorted(glob.glob(\n        'data/*.png',  # images\n    ))\n)\n",
        ),
    ],
)
def test_rep107_fix(before, after):
    assert_fix(before, after, "REP107")


def test_rep107_no_fix_inside_with():
    code = "import os\nwith os.scandir(d) as it:\n    names = [e.name for e in it]\nprint(names[0])\n"
    (finding,) = lint(code, "REP107")
    assert finding.fix is None


def test_rep107_scandir_fix_runs(tmp_path):
    """`sorted(os.scandir(...))` alone would raise (DirEntry objects do not compare); the fix's key works."""
    for name in ("b.txt", "a.txt", "c.txt"):
        (tmp_path / name).write_text("")
    namespace: dict[str, object] = {"d": str(tmp_path)}
    exec(textwrap.dedent("""
        import os
        names = [e.name for e in sorted(os.scandir(d), key=lambda entry: entry.name)]
    """), namespace)
    assert namespace["names"] == ["a.txt", "b.txt", "c.txt"]
