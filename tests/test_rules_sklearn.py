"""REP207 estimator-missing-random-state, and REP204's pandas `DataFrame.sample` form."""

import pytest
from conftest import assert_fix, codes, lint

from repro_lint.knowledge import load

# --- REP207 estimator-missing-random-state ---------------------------------------------------------

REP207_FIRES = [
    "from sklearn.ensemble import RandomForestClassifier\nclf = RandomForestClassifier(n_estimators=100)\n",
    "from sklearn.ensemble import RandomForestClassifier as RF\nclf = RF()\n",
    "import sklearn.cluster\nkm = sklearn.cluster.KMeans(n_clusters=8)\n",
    "from sklearn import cluster\nkm = cluster.MiniBatchKMeans(8, random_state=None)\n",
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression(solver='saga')\n",
    "from sklearn.svm import SVC\nclf = SVC(kernel='rbf', probability=True)\n",
    "from sklearn.linear_model import Lasso\nm = Lasso(alpha=0.1, selection='random')\n",
    "from sklearn.decomposition import PCA\np = PCA(n_components=10, svd_solver='randomized')\n",
    "from sklearn.manifold import TSNE\nemb = TSNE(n_components=2).fit_transform(x)\n",
    "from sklearn.neural_network import MLPClassifier\nm = MLPClassifier(hidden_layer_sizes=(64,))\n",
    "from sklearn.tree import DecisionTreeClassifier\nt = DecisionTreeClassifier(max_depth=3)\n",
    # liblinear's coordinate-descent solvers visit the coordinates in a random order
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression(solver='liblinear', penalty='l1')\n",
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression('l1', solver='liblinear')\n",
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression(solver='liblinear', dual=True)\n",
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression(solver='liblinear', l1_ratio=1)\n",
    # a penalty or formulation that cannot be read may be one of them
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression(solver='liblinear', penalty=args.penalty)\n",
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression(solver='liblinear', dual=n_features > n_samples)\n",
    # several components or clusters, or a number that cannot be read
    "from sklearn.mixture import GaussianMixture\ngmm = GaussianMixture(n_components=3)\n",
    "from sklearn.mixture import GaussianMixture\ngmm = GaussianMixture(k, covariance_type='full')\n",
    "from sklearn.cluster import KMeans\nkm = KMeans()\n",
    "from sklearn.cluster import KMeans\nkm = KMeans(2)\n",
]

REP207_SILENT = [
    "from sklearn.ensemble import RandomForestClassifier\nclf = RandomForestClassifier(random_state=0)\n",
    "from sklearn.ensemble import RandomForestClassifier\nclf = RandomForestClassifier(random_state=seed)\n",
    # deterministic in this configuration
    "from sklearn.svm import SVC\nclf = SVC(kernel='rbf')\n",
    "from sklearn.svm import SVC\nclf = SVC(probability=False)\n",
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression()\n",
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression(solver='lbfgs')\n",
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression(solver=args.solver)\n",
    "from sklearn.linear_model import Lasso\nm = Lasso(alpha=0.1)\n",
    "from sklearn.decomposition import PCA\np = PCA(n_components=10)\n",
    # liblinear's primal L2 solver (trust-region Newton) draws nothing
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression(solver='liblinear')\n",
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression(penalty='l2', dual=False, C=10.0, solver='liblinear')\n",
    "from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression('l2', solver='liblinear', l1_ratio=0)\n",
    # one component or cluster: every initialisation ends at the data's mean
    "from sklearn.mixture import GaussianMixture\ngmm = GaussianMixture(1, covariance_type='full')\n",
    "from sklearn.mixture import GaussianMixture\ngmm = GaussianMixture(n_components=1)\n",
    "from sklearn.mixture import GaussianMixture\ngmm = GaussianMixture()\n",
    "from sklearn.cluster import KMeans\nkm = KMeans(n_clusters=1)\n",
    # estimators that are not random, kwargs, and look-alikes
    "from sklearn.linear_model import LinearRegression\nm = LinearRegression()\n",
    "from sklearn.ensemble import RandomForestClassifier\nclf = RandomForestClassifier(**params)\n",
    "from cuml.ensemble import RandomForestClassifier\nclf = RandomForestClassifier()\n",
    "class KMeans:\n    pass\nkm = KMeans()\n",
]


# An ensemble that seeds each copy of its estimator (BaseEnsemble._make_estimator) leaves the estimator
# nothing to draw: only the ensemble itself needs `random_state`.
REP207_SEEDED_BY_AN_ENSEMBLE = [
    "from sklearn.ensemble import BaggingClassifier\nfrom sklearn.tree import DecisionTreeClassifier\n"
    "bag = BaggingClassifier(DecisionTreeClassifier(), n_estimators=500, random_state=42)\n",
    "from sklearn.ensemble import AdaBoostClassifier\nfrom sklearn.tree import DecisionTreeClassifier\n"
    "ada = AdaBoostClassifier(\n    DecisionTreeClassifier(max_depth=1), n_estimators=30,\n    learning_rate=0.5, random_state=42)\n",
    "from sklearn.ensemble import BaggingRegressor\nfrom sklearn.tree import DecisionTreeRegressor\n"
    "bag = BaggingRegressor(estimator=DecisionTreeRegressor(), random_state=0)\n",
    "from sklearn.ensemble import BaggingClassifier\nfrom sklearn.tree import DecisionTreeClassifier\n"
    "tree = DecisionTreeClassifier()\nbag = BaggingClassifier(tree, n_estimators=100, random_state=1)\nbag.fit(X, y)\n",
]
# The estimator is also used on its own, or by a meta-estimator that does not seed it.
REP207_NOT_SEEDED_BY_AN_ENSEMBLE = [
    "from sklearn.ensemble import BaggingClassifier\nfrom sklearn.tree import DecisionTreeClassifier\n"
    "tree = DecisionTreeClassifier()\ntree.fit(X, y)\nbag = BaggingClassifier(tree, random_state=1)\n",
    "from sklearn.ensemble import VotingClassifier\nfrom sklearn.tree import DecisionTreeClassifier\n"
    "vote = VotingClassifier([('tree', DecisionTreeClassifier())])\n",
    "from sklearn.model_selection import GridSearchCV\nfrom sklearn.tree import DecisionTreeClassifier\n"
    "search = GridSearchCV(DecisionTreeClassifier(), {'max_depth': [1, 2]})\n",
    "from sklearn.ensemble import BaggingClassifier\nfrom sklearn.tree import DecisionTreeClassifier\n"
    "bag = BaggingClassifier(n_estimators=3, estimator=None, random_state=0)\ntree = DecisionTreeClassifier()\n",
]


@pytest.mark.parametrize("code", REP207_SEEDED_BY_AN_ENSEMBLE)
def test_rep207_silent_on_an_estimator_an_ensemble_seeds(code):
    assert codes(code, "REP207") == []


@pytest.mark.parametrize("code", REP207_NOT_SEEDED_BY_AN_ENSEMBLE)
def test_rep207_fires_on_an_estimator_no_ensemble_seeds(code):
    assert codes(code, "REP207") == ["REP207"]


def test_rep207_an_unseeded_ensemble_is_reported_and_not_its_estimator():
    code = "from sklearn.ensemble import BaggingClassifier\nfrom sklearn.tree import DecisionTreeClassifier\nbag = BaggingClassifier(DecisionTreeClassifier())\n"
    (finding,) = lint(code, "REP207")
    assert finding.message.startswith("`BaggingClassifier`")


def test_rep207_seeding_ensembles_seed_their_estimator():
    """The table's ensembles give the estimator they are built on a random_state of their own."""
    sklearn = pytest.importorskip("sklearn")
    import importlib

    from sklearn.tree import DecisionTreeClassifier

    x, y = [[0], [1], [2], [3]] * 5, [0, 1, 0, 1] * 5
    for module, names in load("sklearn_estimators.json")["seeding_ensembles"].items():
        for name in names:
            ensemble = getattr(importlib.import_module(module), name)(DecisionTreeClassifier(), n_estimators=2, random_state=0)
            ensemble.fit(x, y)
            assert all(isinstance(fitted.random_state, int) for fitted in ensemble.estimators_), (sklearn.__version__, name)


@pytest.mark.parametrize("code", REP207_FIRES)
def test_rep207_fires(code):
    assert codes(code, "REP207") == ["REP207"]


@pytest.mark.parametrize("code", REP207_SILENT)
def test_rep207_silent(code):
    assert codes(code, "REP207") == []


def test_rep207_message_names_the_configuration():
    (finding,) = lint("from sklearn.linear_model import LogisticRegression\nclf = LogisticRegression(solver='saga')\n", "REP207")
    assert "solver='saga'" in finding.message and "random_state" in finding.message


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "from sklearn.ensemble import RandomForestClassifier\nclf = RandomForestClassifier(n_estimators=10)  # forest\n",
            "from sklearn.ensemble import RandomForestClassifier\n\nSEED = 0\nclf = RandomForestClassifier(n_estimators=10, random_state=SEED)  # forest\n",
        ),
        (
            "from sklearn.cluster import KMeans\ndef cluster(x, seed):\n    return KMeans(\n        n_clusters=4,\n        random_state=None,\n    ).fit(x)\n",
            "from sklearn.cluster import KMeans\ndef cluster(x, seed):\n    return KMeans(\n        n_clusters=4,\n        random_state=seed,\n    ).fit(x)\n",
        ),
        (
            "from sklearn.cluster import KMeans\ndef cluster(x):\n    return KMeans(\n        n_clusters=4,\n    ).fit(x)\n",
            "from sklearn.cluster import KMeans\n\nSEED = 0\ndef cluster(x):\n    return KMeans(\n        n_clusters=4,\n        random_state=SEED,\n    ).fit(x)\n",
        ),
    ],
)
def test_rep207_fix(before, after):
    assert_fix(before, after, "REP207")


def test_rep207_table_names_real_estimators():
    """Every estimator in the table exists in scikit-learn's public modules and takes `random_state`
    (and the parameter its condition reads), when scikit-learn is installed."""
    pytest.importorskip("sklearn")
    import importlib
    import inspect

    for module, entries in load("sklearn_estimators.json")["estimators"].items():
        imported = importlib.import_module(module)
        for name, condition in entries.items():
            parameters = inspect.signature(getattr(imported, name)).parameters
            assert "random_state" in parameters, f"{module}.{name}"
            if condition is None:
                continue
            named = {condition.get("parameter"), *condition.get("defaults", {})} - {None}
            named.update(parameter for configuration in condition.get("deterministic_when", ()) for parameter in configuration)
            assert named <= set(parameters), f"{module}.{name}"
            for parameter, position in condition.get("positions", {}).items():
                assert list(parameters).index(parameter) == position, f"{module}.{name}"


def test_rep207_deterministic_configurations_draw_nothing():
    """Each configuration the table calls deterministic fits the same model whatever its random_state,
    when scikit-learn is installed."""
    pytest.importorskip("sklearn")
    import importlib
    import warnings

    import numpy as np
    from sklearn.datasets import make_classification

    x, y = make_classification(n_samples=200, n_features=10, random_state=0)
    for module, entries in load("sklearn_estimators.json")["estimators"].items():
        for name, condition in entries.items():
            for configuration in (condition or {}).get("deterministic_when", ()):
                kwargs = {parameter: values[0] for parameter, values in configuration.items()}
                fitted = []
                for seed in range(4):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # deprecated `penalty`, liblinear's convergence
                        model = getattr(importlib.import_module(module), name)(**kwargs, random_state=seed).fit(x, y)
                    fitted.append({key: value for key, value in vars(model).items() if key.endswith("_") and isinstance(value, np.ndarray)})
                assert fitted[0], f"{module}.{name}"
                for other in fitted[1:]:
                    assert all(np.array_equal(fitted[0][key], other[key]) for key in fitted[0]), f"{module}.{name} {kwargs}"


# --- REP204: pandas DataFrame.sample -----------------------------------------------------------------

REP204_PANDAS_FIRES = [
    "import pandas as pd\ndf = pd.read_csv('x.csv')\ntrain = df.sample(frac=0.8)\n",
    "import pandas as pd\nsmall = df.sample(n=100)\n",
    "from pandas import read_csv\nsmall = read_csv('x').sample(n=100, random_state=None)\n",
    "shuffled = frame.sample(frac=1.0).reset_index(drop=True)\n",  # frac= identifies pandas anywhere
    "import pandas as pd\nrows = df.groupby('label').sample(n=5, replace=True)\n",
]

REP204_PANDAS_SILENT = [
    "import pandas as pd\ntrain = df.sample(frac=0.8, random_state=0)\n",
    "import pandas as pd\ntrain = df.sample(frac=0.8, random_state=rng)\n",
    "import pandas as pd\ntrain = df.sample(10, None, False, None, 42)\n",  # random_state at position 4
    "import pandas as pd\ntrain = df.sample(frac=0.8, **opts)\n",
    "small = df.sample(n=100)\n",  # n= alone is pandas only in a module that imports it
    "import random\nimport pandas as pd\npick = random.sample(items, 3)\n",
    "import numpy as np\nimport pandas as pd\nx = np.random.sample(n=3)\n",
    "import pandas as pd\nz = dist.sample((4,))\n",
]


@pytest.mark.parametrize("code", REP204_PANDAS_FIRES)
def test_rep204_pandas_fires(code):
    assert codes(code, "REP204") == ["REP204"]


@pytest.mark.parametrize("code", REP204_PANDAS_SILENT)
def test_rep204_pandas_silent(code):
    assert codes(code, "REP204") == []


def test_rep204_pandas_fix():
    assert_fix(
        "import pandas as pd\nSEED = 3\ntrain = df.sample(frac=0.8)  # 80%\n",
        "import pandas as pd\nSEED = 3\ntrain = df.sample(frac=0.8, random_state=SEED)  # 80%\n",
        "REP204",
    )
