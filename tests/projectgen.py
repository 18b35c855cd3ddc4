"""A deterministic, seeded generator of "typical projects" for the benchmark and equivalence tests.

A generated project looks like a training repository: most files are plain library code (models,
utilities, configuration) that no DataLoader rule cares about, and a few hold what the linter must
see, spread across files the way real projects spread them:

- ``<pkg>/data/base.py``: project Dataset bases (``class BaseDataset(Dataset)``), imported under
  several spellings (``from torch.utils.data import Dataset``, ``import torch.utils.data as tud``);
- ``<pkg>/data/sets_<i>.py``: subclasses of the *project* bases. Some of these files never mention
  ``Dataset``/``DataLoader`` at all (``class Images3(Base)`` with ``Base`` imported under an alias), so
  only the project index can tell they matter: the pre-filter must widen to them;
- duck-typed datasets (``__getitem__``/``__len__``, no base) in a module only the loader call names;
- ``<pkg>/config.py`` constants (``NUM_WORKERS = 4``) read by loaders in other files, and
  collate/worker-init functions in ``<pkg>/utils/collate_<i>.py``;
- ``train_<i>.py`` scripts building loaders (``DataLoader``, ``DL`` alias, ``tud.DataLoader``,
  positional ``num_workers``, a project DataLoader subclass), some with ``set_start_method`` /
  ``set_sharing_strategy``, some inside ``if __name__ == "__main__":`` and some not;
- hazards for the rules to find: lambdas, open file handles, locks, RNGs, CUDA tensors and big
  Python lists stored on a dataset; and filler modules with words that only look relevant
  (``open``, ``lambda``, ``Generator``) in code unrelated to data loading.

``generate(dest, seed, files)`` writes the project (a ``.git`` directory marks its root) and returns
the list of relative paths written. The same seed always writes the same bytes.
"""

from __future__ import annotations

import os
import random
import textwrap

HAZARDS = ("lambda", "open", "lock", "rng", "cuda", "list", "none")


def _w(root: str, rel: str, text: str, written: list[str]) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(textwrap.dedent(text).lstrip("\n"))
    written.append(rel)


def _hazard(kind: str, rng: random.Random) -> tuple[str, str, str]:
    """(imports, __init__ lines, __getitem__ expression) for one hazard kind."""
    if kind == "lambda":
        return "", "        self.transform = lambda x: x * 2\n", "self.transform(self.items[i])"
    if kind == "open":
        return "", "        self.handle = open(path, 'rb')\n", "self.handle.read(8) + bytes([i % 256])"
    if kind == "lock":
        return "import threading\n", "        self.lock = threading.Lock()\n", "self.items[i]"
    if kind == "rng":
        return "import numpy as np\n", f"        self.rng = np.random.default_rng({rng.randint(0, 99)})\n", "self.items[i] + self.rng.random()"
    if kind == "cuda":
        return "", "        self.mean = torch.zeros(3).cuda()\n", "self.items[i]"
    if kind == "list":
        return "", "        self.samples = [str(k) for k in range(100000)]\n", "self.samples[i]"
    return "", "", "self.items[i]"


def generate(dest: str, seed: int = 0, files: int = 300) -> list[str]:
    """Write a project of about ``files`` Python files under ``dest``; returns the relative paths."""
    rng = random.Random(seed)
    written: list[str] = []
    os.makedirs(os.path.join(dest, ".git"), exist_ok=True)
    pkg = f"proj{seed}"
    n_sets = max(2, files // 25)
    n_train = max(2, files // 40)
    n_collate = max(1, files // 60)
    n_filler = max(0, files - (n_sets + n_train + n_collate + 8))

    _w(dest, f"{pkg}/__init__.py", '"""A generated project."""\n', written)
    _w(dest, f"{pkg}/data/__init__.py", "from .base import BaseDataset, BaseIterable, FastLoader\n", written)
    _w(dest, f"{pkg}/utils/__init__.py", "", written)
    _w(dest, f"{pkg}/models/__init__.py", "", written)
    _w(dest, f"{pkg}/config.py", f"""
        NUM_WORKERS = {rng.choice([0, 2, 4, 8])}
        NO_WORKERS = 0
        BATCH = {rng.choice([8, 16, 32])}
        """, written)
    _w(dest, f"{pkg}/data/base.py", """
        import torch.utils.data as tud
        from torch.utils.data import DataLoader, Dataset


        class BaseDataset(Dataset):
            def __init__(self, root):
                self.root = root
                self.items = list(range(16))

            def __len__(self):
                return len(self.items)

            def load(self, i):
                return self.items[i]

            def __getitem__(self, i):
                return self.load(i)


        class BaseIterable(tud.IterableDataset):
            def __iter__(self):
                yield from range(4)


        class FastLoader(DataLoader):
            pass
        """, written)
    _w(dest, f"{pkg}/data/plain.py", """
        class Table:
            # a duck-typed dataset: no base class; only the loader that uses it says it is one
            def __init__(self, path):
                self.path = path
                self.rows = [line for line in range(1000)]
                self.fn = lambda r: r + 1

            def __len__(self):
                return len(self.rows)

            def __getitem__(self, i):
                return self.fn(self.rows[i])
        """, written)

    set_classes: list[tuple[str, str]] = []  # (module, class)
    for i in range(n_sets):
        kind = HAZARDS[(i + seed) % len(HAZARDS)]
        imports, init, item = _hazard(kind, rng)
        spelling = i % 3
        if spelling == 0:
            head = f"from {pkg}.data.base import BaseDataset as Base\n"
            base = "Base"  # no trigger word in this file: found through the index
        elif spelling == 1:
            head = "from .base import BaseDataset\n"
            base = "BaseDataset"
        else:
            head = f"from {pkg}.data import BaseIterable\n"
            base = "BaseIterable"
        cls = f"Images{i}"
        needs_torch = "torch." in init
        body = f"""\
{imports}{'import torch' + chr(10) if needs_torch else ''}{head}

class {cls}({base}):
    def __init__(self, path="data/{i}.bin"):
        self.root = path
        self.items = list(range({rng.randint(8, 64)}))
{init}
"""
        if base == "BaseIterable":
            body += f"""\
    def __iter__(self):
        for i in range(len(self.items)):
            yield {item}
"""
        else:
            body += f"""\
    def load(self, i):
        return {item}
"""
        _w(dest, f"{pkg}/data/sets_{i}.py", body, written)
        set_classes.append((f"{pkg}.data.sets_{i}", cls))

    for i in range(n_collate):
        _w(dest, f"{pkg}/utils/collate_{i}.py", f"""
            import random


            def collate_{i}(batch):
                return list(batch)


            def seed_workers_{i}(worker_id):
                random.seed({rng.randint(0, 9)})
            """, written)

    loaders = [
        ("from torch.utils.data import DataLoader", "DataLoader({ds}, batch_size=BATCH, num_workers=NUM_WORKERS{extra})"),
        ("from torch.utils.data import DataLoader as DL", "DL({ds}, batch_size=4, num_workers={nw}{extra})"),
        ("import torch.utils.data as tud", "tud.DataLoader({ds}, 4, True, None, None, {nw}{extra})"),
        (f"from {pkg}.data import FastLoader", "FastLoader({ds}, num_workers={nw}{extra})"),
    ]
    for i in range(n_train):
        imp, call = loaders[i % len(loaders)]
        module, cls = set_classes[rng.randrange(len(set_classes))]
        ds = f"{cls}()"
        ds_import = f"from {module} import {cls}\n"
        if i % 5 == 4:
            ds, ds_import = "Table('t.csv')", f"from {pkg}.data.plain import Table\n"
        c = rng.randrange(n_collate)
        extra = ""
        if i % 2:
            extra += f", collate_fn=collate_{c}"
        if i % 3 == 0:
            extra += f", worker_init_fn=seed_workers_{c}"
        if i % 7 == 6:
            extra += ", multiprocessing_context='spawn'"
        nw = rng.choice(["0", "2", "NUM_WORKERS", "NO_WORKERS", "args_workers"])
        pre = ""
        if i % 4 == 1:
            pre = "import multiprocessing as mp\n"
        if i % 11 == 10:
            pre += "import torch.multiprocessing as tmp\ntmp.set_sharing_strategy('file_system')\n"
        guarded = i % 3 != 2
        start = "    mp.set_start_method('spawn')\n" if i % 4 == 1 else ""
        main_body = f"""\
def main(args_workers=2):
    loader = {call.format(ds=ds, nw=nw, extra=extra)}
    for batch in loader:
        print(batch)
"""
        tail = f'\n\nif __name__ == "__main__":\n{start}    main()\n' if guarded else f"\n\n{start.strip()}\nmain()\n"
        _w(dest, f"train_{i}.py", f"""\
{pre}{imp}

from {pkg}.config import BATCH, NO_WORKERS, NUM_WORKERS
from {pkg}.utils.collate_{c} import collate_{c}, seed_workers_{c}
{ds_import}

{main_body}{tail}""", written)

    fillers = [
        # words that only look relevant: the pre-filter may open these, no rule may flag them
        lambda j: f"""
            import os


            def read_config_{j}(path):
                with open(path) as fh:
                    return sorted(fh.read().split(), key=lambda s: s.lower())
            """,
        lambda j: f"""
            import torch


            class Block{j}(torch.nn.Module):
                def __init__(self, width={rng.randint(8, 256)}):
                    super().__init__()
                    self.fc = torch.nn.Linear(width, width)
                    self.g = torch.Generator().manual_seed({j})

                def forward(self, x):
                    return self.fc(x).relu()
            """,
        lambda j: f"""
            def fib_{j}(n):
                a, b = 0, 1
                for _ in range(n):
                    a, b = b, a + b
                return a


            def table_{j}():
                return {{k: fib_{j}(k) for k in range({rng.randint(5, 30)})}}


            class Counter{j}:
                def __init__(self):
                    self.n = 0

                def __iter__(self):
                    return iter(range(self.n))
            """,
        lambda j: "\n".join(f"CONST_{j}_{k} = {rng.randint(0, 10**6)}" for k in range(rng.randint(20, 80))) + "\n",
    ]
    for j in range(n_filler):
        where = rng.choice(["models", "utils"])
        _w(dest, f"{pkg}/{where}/mod_{j}.py", fillers[j % len(fillers)](j), written)
    return written


def count_lines(root: str, rels: list[str]) -> int:
    total = 0
    for rel in rels:
        with open(os.path.join(root, rel), "rb") as fh:
            total += fh.read().count(b"\n")
    return total


if __name__ == "__main__":  # python tests/projectgen.py DEST [SEED] [FILES]
    import sys

    out = generate(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0, int(sys.argv[3]) if len(sys.argv) > 3 else 300)
    print(f"{len(out)} files, {count_lines(sys.argv[1], out)} lines under {sys.argv[1]}")
