"""DL101 copy-on-read-container: a query on the program model's values (dllint/program/values.py)
and sample uses (dllint/program/datasets.py).

An attribute of a Dataset is reported when, once the instance is built, it holds a Python container
of Python objects (list, dict, set, tuple, deque, an object array) whose length grows with the data:
its source is a directory listing, the lines or records of a file, a loop or comprehension over
those, or a value passed in that is (through every call site the project has); or, when its source
is not visible, ``__len__`` measures it, ``__getitem__`` indexes it with the sample index, or
``__iter__`` walks it.
"""

from __future__ import annotations

import dataclasses
import os
import re

from dllint.codegen.compact_list import NAME as COMPACT_NAME
from dllint.codegen.edits import line_edits
from dllint.facts.uses import table_key, table_lookup
from dllint.fixes.compact import convert_in_init, convertible_classes
from dllint.model import Diagnostic, Fix, Span, are_edits
from dllint.project import replayable
from dllint.program.refs import FuncRef
from dllint.program.values import BOUNDED, DATA, DEDUP, EMPTY, FRAME_ARRAY, LOAD, UNKNOWN_SIZE, Env, is_property, replaced
from dllint.rules.base import Rule
from dllint.textutil import display_path

PY_CONTAINERS = frozenset({"list", "dict", "set", "tuple", "deque", "frozenset", "ndarray-obj"})
# element kinds a pickle round-trip gives back equal and of the same type (floats are left out:
# a NaN is equal to itself only by identity, which a copy loses)
PLAIN = frozenset({"str", "bytes", "int", "bool", "none", "tuple", "list", "dict", "path"})
# what a container may be rebound to before the constructor returns: no longer a Python container
COMPACT = frozenset({"ndarray", "tensor", "memmap", "store", "tensordataset", "series"})
OPEN = frozenset({"unknown", "param", "records"})
# what a value is when nothing in sight says: a parameter no call site binds, an unknown result
OPAQUE = frozenset({"unknown", "param"})
# elements that stand for a whole file (a memmap, an open HDF5 / LMDB file, an Arrow table): a list
# of them has one entry per shard, not per sample
PER_FILE = frozenset({"memmap", "handle", "store", "h5dataset"})
KIND_WORDS = {
    "list": "list", "dict": "dict", "set": "set", "tuple": "tuple", "deque": "deque",
    "frozenset": "frozenset", "ndarray-obj": "object array", "records": "dict/list of records",
}
ELEM_WORDS = (
    ("tuple", "tuples"), ("dict", "dicts"), ("list", "lists"), ("str", "str"), ("path", "paths"),
    ("float", "floats"), ("int", "ints"), ("bytes", "bytes"), ("ndarray", "arrays"), ("tensor", "tensors"),
    ("instance", "objects"),
)


# attribute names that say the container is bounded by a schema, not by the data: class names,
# label maps, vocabularies, normalization constants, transforms, configuration
BOUNDED_WORDS = frozenset(
    {
        "class", "classes", "classnames", "category", "categories", "cat", "cats", "catid", "catids",
        "vocab", "vocabulary", "mean", "std", "transform", "transforms", "aug", "augs", "augmentation",
        "augmentations", "pipeline", "cfg", "config", "conf", "configs", "opt", "opts", "args", "hparams",
        "kwargs", "options", "settings", "param", "params", "palette", "colors", "colormap", "scales",
        # a capture rig's cameras (intrinsics, extrinsics per camera): as many as the rig has
        "cam", "cams", "camera", "cameras",
        # per shard file (offsets, sizes, readers): a handful of shards
        "shard", "shards",
    }
)
_MAP_NAME = re.compile(
    r"(^|_)(label|class|classname|cls|cat|word|token|char|tag|wnid|synset|ans|answer|spk|speaker|lang|language)s?(2|_to_)(id|idx|ix|index|wid|tid|aid|cid|lid|label|name|class|classid|cls|cat|category|ans|answer)s?$"
    r"|(^|_)(id|idx|ix|wid|tid|aid|cid|lid)(2|_to_)(label|class|classname|cls|cat|word|token|char|tag|wnid|synset|ans|answer|spk|speaker|lang|language)s?$"
    r"|^(label|class|cls|char|word|token|tag)s?_(map|mapping)$"  # labels_map, char_map: the whole name
)


# a map's key words that name one entry per sample: ``seq_to_class_map``, ``img2cls`` and
# ``video_to_label`` hold one class per sequence / image / video, however the values are named
PER_SAMPLE_KEYS = frozenset(
    {
        "seq", "seqs", "sequence", "sequences", "img", "imgs", "image", "images", "video", "videos",
        "vid", "vids", "file", "files", "fname", "filename", "path", "sample", "samples", "utt",
        "utterance", "frame", "frames", "clip", "clips", "track", "tracks", "item", "items",
    }
)
_MAP_KEY = re.compile(r"^(.+?)(?:2|_to_)[a-z]")


def bounded_by_name(attr: str) -> bool:
    """``self.class_names``, ``self.label2id``, ``self.idx_to_class``: a schema's size; not a
    map keyed by the samples (``self.seq_to_class_map``, ``self.img2cls``)."""
    name = attr.lower().strip("_")
    key = _MAP_KEY.match(name)
    if key is not None and set(key.group(1).split("_")) & PER_SAMPLE_KEYS:
        return False
    words = {w for w in name.split("_") if w}
    return bool(words & BOUNDED_WORDS) or _MAP_NAME.search(name) is not None


def _from_label_set(model, ref, attr: str) -> bool:
    """Every assignment of ``self.attr`` is another attribute named for a label set or built by
    walking one (``self._category2idx = {c: i for i, c in enumerate(self._classes)}``,
    ``self._idx2category = self._classes``, ``self.labels[v] = k`` in a loop over
    ``self.classes.items()``): a label set too."""
    sources = model.copied_from(ref, attr)
    return bool(sources) and all(bounded_by_name(source) for source in sources)


@replayable("dl101.convert_in_init")
def _compact_edits(project, path: str, qualparts: tuple, attr: str) -> tuple:
    """The edits storing ``self.<attr>`` packed at the end of the constructor ``qualparts``
    (Class.__init__) of ``path``; () when it cannot take them (dllint/fixes/compact.py)."""
    text = project.source(path)
    new = convert_in_init(text, list(qualparts), attr, _slices_memo(project))
    return line_edits(text, new) if new is not None else ()


def _slices_memo(project) -> dict:
    """Each file's parsed slices, kept for the run between its findings (fixes/compact.py)."""
    return project.__dict__.setdefault("_dl101_fix_slices", {})


def _constructor_assigns(model, cls, attr: str) -> bool:
    """The class's own ``__init__`` assigns ``self.<attr>``."""
    if cls is None or "__init__" not in cls.cls.methods:
        return False
    fn = cls.file.functions.get(cls.cls.methods["__init__"])
    return fn is not None and fn.flow is not None and any(w[0] == "=" for w in fn.flow.writes.get(attr, ()))



class CopyOnReadContainer(Rule):
    code = "DL101"
    name = "copy-on-read-container"
    severity = "warning"
    fix = "safe or unsafe"
    triggers = (b"DATASETS", b"DATASET_REGISTRY", b"register_dataset")  # registry-built classes
    summary = "A data-sized list/dict on a Dataset: every forked worker slowly copies what it reads (refcounts); store it compactly."
    docs = {
        "What it does": """
            Reports an attribute of a Dataset (one finding per attribute, at the assignment that
            creates it) that holds, once the instance is built, a Python container of Python
            objects -- list, dict, set, tuple, deque, a numpy array of `dtype=object` -- whose
            length grows with the data. dllint decides "grows with the data" from evidence:

            - where the value comes from (the program model's value flow): a directory listing
              (`os.listdir`, `glob`, `os.walk`, `Path.rglob/iterdir`, librosa's `find_files`,
              imutils' `list_images`, `tf.io.gfile.glob`, torchvision's `make_dataset`), the
              lines of a file (`readlines`, iterating a file, `read().splitlines()`, a `while`
              loop reading `f.readline()` until it is empty; `open` of a
              path manager such as iopath's; OpenMMLab's `list_from_file`, which reads class-name
              files as often as split lists, only with a per-sample use below), json / pickle / yaml /
              csv / parquet records (and a table's columns, `df["col"]` or `df.col`), the arrays of a
              loaded `.npz`, the rows of `np.loadtxt` / `np.genfromtxt` / `np.fromfile` (judged by
              their use, as records are), HDF5 and LMDB keys, a COCO-style annotation API (also a
              project subclass of pycocotools' `COCO`: its `dataset` and per-image indexes), the lines of a
              Kaldi index file (`kaldiio.load_scp`: wav.scp, feats.scp), the rows of a Hugging
              Face `datasets` table copied out with `to_pandas()`, a count a file states
              (`range(int(lines[0]))`, judged by its use as records are); a comprehension, `zip`,
              `enumerate`, `dict(zip(...))` or `.append`/`.extend`/`[k] = v` loop over any of
              those (loaded records walked whole beside an attribute used as the samples, in the
              same method: one entry per record too; loaded records a project helper looks up with
              a sample's identifier, `img_id2idx[q["image_id"]]`: one entry per sample); through helpers the constructor calls, base-class constructors in other
              files, project functions returning tuples, constructor parameters filled at the
              project's call sites (through subclasses that forward `*args, **kwargs` to
              `super().__init__`, and classes built through an attribute holding a class or a
              dict of classes: `self.dataset = DATASETS[name]; self.dataset(path, files)`),
              per-sample caches such as `[None] * len(self.files)` (or
              `[None] * n` with `n` the number of samples `__len__` returns); a set of the
              files a listing, a walk or an archive gives (each file once already); a dict of a
              few keys each holding such a list (`{split: [every image of the split]}`), or
              one entry per loaded record when worker code indexes the lists per sample
              (annotations kept column-wise: `self.anno["bbox"].append(r["bbox"])` per json
              record, read as `self.anno["bbox"][idx]`);
              `.glob(...)` / `.rglob(...)` / `.iterdir()` on a parameter the model cannot follow
              (a `Path`, an fsspec filesystem); values built by helpers in files without
              data-loading words, module variables a `global` statement lets `main()` assign, and
              classes called through a local (`dataset_cls = A if lazy else B`) are followed;
              `setattr(self, "name", value)` counts as an assignment;
            - how the Dataset uses it, when its source is not visible (a library call, an
              argument nobody in the project passes) but it is known to be a Python container
              (built with `list(...)`, a comprehension, a parameter annotated `List[...]` /
              `Dict[...]`): `__len__` returns its length, or `__getitem__` (or a helper it
              calls, a function defined inside it, a module-level function it hands the
              instance to, `load_image(self, index)`, the `get_data_info(index)` an OpenMMLab
              base's `__getitem__` calls, torchvision's `ImageFolder.__getitem__` reading
              `samples`, `CIFAR10` / `MNIST` reading `data` and `targets`, `SVHN` / `STL10`
              `data` and `labels`, `CocoDetection` `ids`, `VOCDetection` `images` and
              `annotations`, and the other torchvision datasets' per-sample lists, also when the
              class's own `__getitem__` serves through `super().__getitem__(idx)`) indexes it
              with the sample index (or a neighbour's position computed from it: `range(idx, idx + n)`,
              `idx + self.offsets`, `[idx] + others`), directly
              or through a `@property` / a getter that returns it, or `__iter__` walks it one
              sample per element (directly, a slice of it, or through an iterator it keeps first:
              `self.source = iter(self.data)`; not a walk with a loop in its body, which reads
              several items per element: a shard file's records);
              records loaded into one attribute and served through another
              (`self.data = self.db`) share these uses; or it holds a few Python tables that
              worker code indexes one by one with the sample index (`for src in self.sources:
              src[idx]`), however few (no automatic fix then: pack each table); or it is built
              with one entry (or more) per element of an attribute used so, or of one that grows
              with the data by the evidence above (`for ann in self.annotation:
              self.captions.append(...)`, a dict keyed by a running number), even when only the
              main process reads it, but not under a membership test (distinct values) nor keyed
              by anything else (a count per category); the samples grouped by label, a dict whose
              lists get one entry per element of what worker code indexes per sample
              (`self.label_to_indices[y].append(i)` over a wrapped Dataset or an array of
              labels), whatever the keys are named; or it is looked up with the sample index
              written as a string (`self.boxes[f"{idx:08d}"]`, `str(idx)`, `"%06d" % idx`), one
              key per sample, or with the sample's identifier read off its row or record
              (`self.features[row["video_id"]]`, `sample.uniq_id`, also in a helper it is handed
              to; not a label, a class or a speaker: those make a label map), which makes even
              records loaded with `torch.load` a mapping rather than a tensor; so does a
              per-sample item looked up by name (`self.items[idx]["file"]`). A parameter no
              call site in sight binds (the lists come from a script of another repository)
              counts when worker code indexes it with the sample index and uses the element as
              a string or a path (`Image.open(self.left[idx])`, `fname, pid = self.dataset[idx]`
              then `osp.join(root, fname)`, also through a method of the class, a function the
              instance keeps (`self.loader = default_loader`) or a project function it is handed
              to): one string per sample.

            A pandas DataFrame (read from a file, built with `pd.DataFrame(...)`, or derived by a
            mask, `query`, `sort_values`, `reset_index`) counts when it is data-sized as above
            (its rows come from a file, `__len__` measures it, or worker code takes the sample's
            row with `.iloc[idx]` / `.loc[idx]`) and either it is read from a file by pandas
            (`read_csv`, `read_parquet`, `read_json` ...: its text columns, paths, captions, ids,
            are one Python str per row) and nothing shows its rows are numbers (worker code
            converting the sample's row whole, `torch.tensor(row.values)`, or using its cells in
            arithmetic, `row["x"] - mean`, `row["x"] + 1.0` (a `+` beside anything but a number
            may join strings: `row["id"] + self.ext` is no sign), `float(...)`,
            `torch.tensor(...)`; the class taking its columns whole as
            one array, `self.data = self.df.iloc[:, 1:].to_numpy()`: a time series), or the code
            shows it has a string (object)
            column: a cell of the sample's row (`row["path"]`, `df.loc[idx, "file"]`,
            `df["question"].values[idx]`) is passed
            to a call that takes a path or a string (`open`, `sf.read`, `Image.open`,
            `os.path.join`, `re.search` ...), joined to or formatted into a string
            (`row["id"] + ".mp4"`, `"{}.mp4".format(row[1])`, `"%s.mp4" % row[1]`) or given a str method in worker
            code, also inside a method of the class the row or the cell is handed to
            (`self._get_video_path(row)`). Under pandas < 3
            (or pandas 3 without pyarrow) such a column holds one Python str per row. Numeric
            frames (numpy blocks) and frames read with `dtype_backend="pyarrow"` stay quiet. A
            frame's `.values` / `.to_numpy()` (or `np.asarray` of it or of a column) is an array of
            the frame's dtype, objects only with a string column: it needs a cell of
            `self.rows[idx]` used as a string.
            There is no automatic fix for a DataFrame: convert its string columns to
            `string[pyarrow]` or to numpy fixed-width arrays.

            A dataclass Dataset's fields are created at their lines by the generated `__init__`
            (the fields of dataclass bases in the same file first), with what its callers pass;
            so are those of a class a project decorator makes a dataclass (its fields are
            `dataclasses.field()` calls).

            Stays quiet for bounded containers (literals, class names, mean/std, per-split lists,
            the records of a json, yaml or pickle file that ships with the code (a path built from
            `__file__`: `os.path.join(os.path.dirname(__file__), "synsets.json")`; the lines of a
            text file shipped so are often a split list, one sample per line: those count),
            a container the code asserts to be small (`assert len(self.paths) == 1`, `<=` or `<`
            a literal), a listing filtered down to the names a bounded container holds, each once
            (`{s for s in os.listdir(root) if s in self.synset_dict}`, and the tables built by
            walking it; not a list of lines filtered so: lines repeat), maps named for a label
            set (`label2id`, `class_to_idx`, `wnid_to_idx`, `labels_map`, `spk2idx`, and a
            container built by walking one of those, however named: `for k, v in
            self.classes.items(): self.labels[v] = k`; not a map keyed by the samples:
            `seq_to_class_map`, `img2cls`, `utt2spk`, nor one built from data-sized records keyed by each record's own id:
            `{d["id"]: d["answer"] for d in records}`), named tables only looked up with a
            record's group field or a literal (`self.answers_by_type["yes_no"][q["answer"]]`), a
            capture rig's camera tables (`cams`, `cameras`) and per-shard tables (`shard_offset`) unless worker code indexes them with the sample index,
            a vocabulary deduplicated with `set`/`sorted(set(...))`/`np.unique` (unless `__len__`
            counts it: then the distinct values are the samples), a list the code writes out and
            filters by reading it back (`self.names = [n for n in self.names if ...]`, also when
            `__len__` measures it) and what is built by walking it, one memmap / HDF5
            file per shard file (or one reader object per file, each keeping it open), a list of
            shard files whose records the class gathers several at a time, what is kept per
            list file of a configuration (`for ds, path in cfg["train"].items(): self.files[ds] =
            open(path).readlines()`: the lists are data-sized, one count or offset per file is not),
            loaded records looked up in a helper only by a key that names no sample (a chord, an
            answer: a label map),
            (`self.data.extend(read(path))` per file), records read only at fixed positions,
            a container the code builds with a fixed size in one method that another
            reads back from a cache), a list of Dataset objects (one per source: each is judged on
            its own class), `multiprocessing.Manager()` proxies (their items live in the
            manager's process), a PyG `InMemoryDataset`'s collated `data` / `slices`, what an
            overridden base method would store (when the override does not call `super()`),
            caches the constructor leaves empty (each worker fills its
            own), attributes the constructor (or a helper it calls) removes with `del` (statistics
            gathered per sample, then dropped), an object whose only source is unseen and whose kind is not known (it may be an
            array or a tensor), records loaded from a pickle, a torch or a .mat file that the
            class uses as an array (`self.labels.shape`, `self.data.astype(...)`, `.dtype`,
            `.numpy()`) or rebinds with numpy (`np.transpose`, `np.squeeze`) before its
            constructor returns, what a torch file holds (or a part of the tuple it holds: `data,
            targets = torch.load(path)`) with no sign of records (a tensor as often; a part named
            by a key, `saved["names"]`, is what a saved dict keeps: counted), pandas DataFrames without a string column in sight, numpy
            arrays that are not `dtype=object`, tensors, memmaps, Arrow / HF `datasets` tables, attributes rebound to
            one of those before the constructor returns, and Datasets whose every loader has
            `num_workers=0` or starts its workers only with spawn/forkserver (explicit
            `multiprocessing_context` or `set_start_method`; one set only under a condition,
            `if num_gpus > 1: mp.set_start_method("spawn")`, leaves fork on the other runs):
            copy-on-read needs fork. A worker
            count read from a command-line option (`num_workers=args.workers`) may be more than 0
            whatever its default: `--workers` defaulting to 0 is raised on the command line to
            train, and the copies grow then. A test suite's loader without workers (in `tests/`,
            `test_*.py`) does not decide for a class defined outside the tests, nor does a package
            module's `__main__` self-test. A loader given an instance of a
            class looked up by name at run time (a registry's entry, `dataset.__dict__[cfg.type]`,
            `getattr(module, name)`, also returned by a project function) may be given any
            project Dataset: a class whose other loaders have no workers is judged with it too. A loader given a `Subset` or
            `ConcatDataset`, or a part of `random_split(ds, ...)`, runs the datasets it wraps; a Dataset class handed to a function that
            constructs it (`self.load_dataset(GraphDataset)`) reaches that function's loaders, and
            a class built by an alternative constructor (a classmethod returning `cls(...)`,
            `MusicDataset.from_meta(path)`, inherited or not) is the class it is called on. A
            loader is a DataLoader class (torch's, a library's, a project subclass, the default of
            a helper's class parameter: `def loader(ds, klass=DataLoader)`) or a library function
            named as a loader given `num_workers` and a dataset (`flashy.distrib.loader(ds,
            num_workers=8)`). A loader helper (`def make_loader(ds, workers): return
            DataLoader(ds, num_workers=workers)`, or one forwarding `**kwargs`) starts for each
            Dataset the workers its calls passing that Dataset ask for (a parameter's default where
            they leave it out), unless a decorator rewrites its calls (`@configurable`); so does a
            trainer whose methods build loaders from what its constructor stored
            (`DataLoader(self.train_set, num_workers=self.num_worker)`). A dataset assigned in the other arm of the same `if` test
            as the loader (`if SHARDS: ds = ... else: ds = Folder(...)`, then `if SHARDS:
            WebLoader(ds, num_workers=4)`) does not reach it. Dataset
            classes with no loader in sight (built by configuration or defined in a library) are
            judged as used by a loader with workers under fork, the common case; classes put in a
            dataset registry (`@DATASETS.register_module()`) that serve samples count as Datasets
            even without a Dataset base, and so do all the subclasses of a project class that
            serves a loader's samples without being a torch Dataset (a duck-typed
            `_AbstractDataset` with `__getitem__`, whose subclasses the training script builds by
            name: `datasets.__dict__[name](...)`). A class defined in an entry script (one with
            `if __name__ == "__main__":`) that no project file imports and no loader uses is indexed
            by that script in its own process: quiet, unless the script hands an instance on
            (passes it to a library call such as a Hugging Face `Trainer`, returns it, stores it
            in a dict or an attribute): then it is judged as the common case. So is a class no loader
            uses whose every instance the project builds outside its tests stays in the function
            building it, indexed, measured or walked there (`ds = EvalDataset(opt)`, then
            `ds[i]`), never returned, stored or handed to a library (not in a distributable
            package: a `setup.py`, `setup.cfg` or a `[project]` / `[build-system]` table, whose
            users build its classes too; not a class registered by a decorator or built through
            a classmethod; not in a project that imports classes by name or whose loader builds
            a class computed at run time: `Feeder = import_class(cfg.feeder)`, then
            `DataLoader(dataset=Feeder(...))`); a package module that no file imports
            (`python -m pkg.eval.run`) decides with the loaders of its own `__main__` code. So is a Dataset in a project that never
            starts workers: its loaders all keep `num_workers` at the default 0 and no file's code
            names workers at all (no `num_workers`, `--workers` option or `workers_per_gpu` key),
            even when the class reaches them unseen (unpickled). Records loaded
            from json / pickle / yaml (which may be a configuration) count only with the structural
            evidence above.
            """,
        "Why is this bad?": """
            Forked workers share the parent's pages copy-on-write, but CPython writes the reference
            count of every object it reads (and the cyclic GC writes the headers of containers), so
            each worker slowly gets a private copy of every list element it touches: memory grows
            through the epoch, once per worker ("DataLoader worker (pid N) is killed by signal:
            Killed"). Measured: 2M paths in a list cost 184 MB per worker after one pass; as a numpy
            `<U37` array 0.1 MB.
            """,
        "Example": """
            ```python
            class Images(Dataset):
                def __init__(self, root):
                    self.paths = sorted(glob.glob(os.path.join(root, "*.jpg")))

                def __getitem__(self, i):
                    return load(self.paths[i])
            ```
            """,
        "Use instead": """
            ```python
            self.paths = np.array(sorted(glob.glob(os.path.join(root, "*.jpg"))), dtype=np.str_)
            ```
            Numbers: `np.int64` / `np.float64` arrays. (path, label) pairs: two arrays or a
            structured array. Dicts and nested records: pickle each item into one uint8 buffer with
            int64 offsets (a serialized list), or a pyarrow / HF `datasets` table.
            """,
        "Fix safety": """
            The fix keeps the list and converts it once, as the last statement of the constructor
            that builds it: `self.x = _CompactList(self.x)`, with the small class `_CompactList`
            added to the module (standard library only). It stores the items in one bytes buffer
            with end offsets (strings in the narrowest fixed width that holds them, other plain
            values pickled), so a forked worker reads an item without touching one Python object
            per item. Every item comes back equal and of the same type (`str` is `str`, a tuple a
            tuple); slices come back as lists; `len`, iteration, `in`, `index`, `count`, truth
            value and `repr` are the list's. Memory: `_CompactList(items)` returns the list itself
            when packing would not take less memory than the list and its distinct items
            (measured with `sys.getsizeof`), so the fixed program never holds more than the
            original, whatever the data (one very long path among millions, strings shared many
            times); on typical data (a million ~40-character paths) it removes over 95% of each
            worker's growth (measured in the test suite through `/proc/<pid>/smaps_rollup`).

            Safe only when all of these hold, checked over the whole project (also its files
            that no run analyses: those whose code names `.attr` are read for it): the attribute is
            always a list, built in one class's `__init__` (and the helpers it calls) with no
            `return` in it, and written nowhere else (no subclass, no later method); every use of
            the attribute, in the class hierarchy and through any object elsewhere with an
            attribute of that name, is indexing, slicing, `len`, iteration, `in` or a truth test
            (no method call such as `.append`/`.sort`, no item assignment, no element changed in
            place, not passed on, returned, compared, combined with an operator, bound to another
            name or JSON-encoded); and its elements are str / int / bool / None / paths or tuples,
            lists and dicts of those (known from the code); and no library base reads it out of
            sight (torchvision's `ImageFolder` and `samples`). Otherwise the fix is unsafe
            (`--unsafe-fixes`), with the reason in the fix's message; when the list is not always
            a list, is built outside its class's constructor or changed after it, there is no fix,
            and the JSON output's `details.fix` names the representation to use.
            """,
        "References": """
            - https://pytorch.org/docs/stable/data.html#multi-process-data-loading
            - pytorch/pytorch#13246
            - https://ppwwyyxx.com/blog/2022/Demystify-RAM-Usage-in-Multiprocess-DataLoader/
            """,
    }

    def extract(self, ctx):
        """The classes of the file whose constructor can take the fix (``convertible_classes``):
        the `[*]` mark of a run without edits is read from here, not from a second parse."""
        return convertible_classes(ctx.text, ctx.tree.body) or None

    def check(self, project):
        model = project.index
        seen: set = set()
        targets = project.targets
        for ref in model.dataset_classes():
            if not any(m.file.path in targets for m in model.mro(ref)):
                continue  # its findings are at its hierarchy's assignments: none reported here
            if self._quiet(model, ref):
                continue
            uses = model.sample_uses(ref)
            attrs = set()
            for fn in model.hierarchy_methods(ref):
                attrs.update(fn.fn.flow.writes)
            attrs -= model.constructor_deletes(ref)  # gone before any worker starts
            for attr in sorted(attrs):
                accessor = model.find_method(ref, attr)
                if accessor is not None and is_property(accessor.fn):
                    continue  # ``self.samples = x`` runs the property's setter: what it stores counts
                finding = self._judge(model, ref, attr, uses.get(attr, ()))
                if finding is None:
                    continue
                text, evidence = finding
                plan = self._fix_plan(project, model, ref, attr, any(u[0] == "elements" for u in uses.get(attr, ())))
                # one finding per class that assigns the attribute, at its first assignment
                for anchor_fn, write in self._anchors(model, ref, attr):
                    path = anchor_fn.file.path
                    key = (path, write[2], attr)
                    if key in seen:
                        continue
                    seen.add(key)
                    owner = model.class_of(anchor_fn) or ref
                    advice = plan[1]
                    fix = None
                    if plan[0] != "none" and plan[2].file.path == path:
                        fix = self._fix(project, plan, attr)
                    elif plan[0] != "none":
                        # a fix's edits are in its finding's file: this one's constructor is in
                        # another, where the finding at the class's own assignment carries it
                        init = plan[2]
                        advice = f"store it packed at the end of `{init.fn.qualname.rsplit('.', 2)[-2]}.__init__` ({display_path(init.file.path)}:{init.fn.span.row}), where it is complete"
                    details = (
                        ("class", owner.cls.qualname),
                        ("attribute", attr),
                        ("evidence", tuple(evidence)),
                        ("why", "it grows with the data, and forked workers copy every object they read (refcounts)"),
                    )
                    if fix is None:
                        details += (("fix", advice),)
                    yield Diagnostic(
                        self.code,
                        f"`self.{attr}` holds {text}",
                        path,
                        Span(write[2], write[3], write[5], write[6]),
                        fix=fix,
                        severity=self.severity,
                        details=details,
                    )

    # ----------------------------------------------------------------- the fix

    def _fix_plan(self, project, model, ref, attr: str, tables: bool = False):
        """(applicability "safe" | "unsafe" | "none", reason or advice, the __init__ to convert in).

        Safe only when the whole project uses the attribute as a read-only sequence (index,
        slice, len, iteration, ``in``, truth value), the list is built in one class's constructor
        (and helpers it calls) and changed nowhere else, and its elements are plain values a copy
        gives back equal and of the same type. The whole project: the files analysed and the
        others (``Project.uses_elsewhere``), so that a file named alone gets the fix the whole
        project's run gives it, and neither depends on which files the pre-filter took in."""
        value = model.attr_value(ref, attr)
        advice = "store it packed: one bytes buffer and offsets (a serialized list), or a numpy/pyarrow array"
        if value.has("dataframe") and not value.kinds & PY_CONTAINERS:
            return "none", "convert its string columns to `string[pyarrow]` or numpy fixed-width arrays", None
        if value.kinds != frozenset({"list"}):
            return "none", f"not always a list; {advice}", None
        if (tables or _nested_data(value, True)) and value.elem is not None and value.elem.kinds & (PY_CONTAINERS | {"records"}):
            # packing the outer list would unpickle a whole table on every read
            return "none", "each element is a table read per sample: pack each one (a serialized list or an array)", None
        writes = model.attr_writes(ref, attr, include_workers=True)
        library = model.library_reader(ref, attr)
        owners = {model.class_of(fn).key for fn, _ in writes if model.class_of(fn) is not None}
        by_key = {r.key: r for r in model.mro(ref)}
        # the class whose constructor builds it: the most derived class among the writers
        order = [r.key for r in model.mro(ref)]
        builder = next((by_key[k] for k in order if k in owners), None)
        if builder is None:
            return "none", advice, None
        init = model.find_method(builder, "__init__")
        if init is None or model.class_of(init).key != builder.key:
            return "none", f"built outside a constructor of its own class; {advice}", None
        setup = {f.key for f, _ in model.reachable([init], builder).values()}
        if any(fn.key not in setup for fn, _ in writes):
            return "none", f"changed after the constructor; {advice}", None
        for sub in model.subclasses_of(builder):
            for qual in sub.cls.methods.values():
                fn = sub.file.functions.get(qual)
                if fn is not None and fn.flow is not None and attr in fn.flow.writes:
                    return "none", f"changed by subclass `{sub.cls.name}`; {advice}", None
        elem = value.elem
        if elem is None or elem.is_bottom or not _plain(elem, 0):
            return "unsafe", "its elements may not come back identical from a copy", init
        hierarchy = {r.key for r in (*model.mro(builder), *model.subclasses_of(builder))}
        risky = []  # (path, row, what)
        for facts in model.files.values():
            for kind, detail, row, on_self, scope in facts.signals.get("attr_uses", {}).get(attr, ()):
                fn = facts.functions.get(scope)
                fnref = FuncRef(facts, fn) if fn is not None else None
                if on_self:
                    cls = model.class_of(fnref) if fnref is not None else None
                    if cls is None or cls.key not in hierarchy:
                        continue  # another class's attribute of that name
                    if fnref.key in setup and kind != "alias":
                        continue  # while the list is built, before the conversion
                risky.append((facts.path, row, detail))
        if not risky:
            # the files outside the analysis (asked only now: for a common name such as `data`,
            # hundreds of files); there a use on ``self`` is another class's: planning takes in
            # the files of a Dataset's subclasses (they name it)
            risky.extend((path, use[2], use[1]) for path, use in project.uses_elsewhere(attr) if not use[3])
        if risky:
            path, row, detail = min(risky)
            return "unsafe", f"the project uses it as more than a read-only list: {detail} ({display_path(path)}:{row})", init
        if library is not None:
            return "unsafe", f"`{library.rsplit('.', 1)[-1]}` (a library base) reads it too, out of sight", init
        return "safe", "", init

    def _fix(self, project, plan, attr: str) -> Fix | None:
        applicability, reason, init = plan
        qualparts = tuple(init.fn.qualname.split(".")[len(init.file.module.split(".")):])
        try:
            if project.edits:
                edits = project.remember("dl101.convert_in_init", init.file.path, (qualparts, attr), are_edits)
            else:  # only whether a fix exists (the `[*]` mark): from the file's facts, no tree built
                edits = () if qualparts[-1:] == ("__init__",) and qualparts[:-1] in (project.payload(self.code, init.file.path) or ()) else None
        except (OSError, ValueError):  # the file's text cannot be read
            return None
        if edits is None or (project.edits and not edits):
            return None
        message = f"Store `self.{attr}` packed (`{COMPACT_NAME}`, added to the module)"
        if applicability == "unsafe":
            message += f": unsafe, {reason}"
        return Fix(applicability, message, edits)

    @staticmethod
    def _quiet(model, ref) -> bool:
        """Every loader using the class has no workers, or starts them only with spawn/forkserver.
        A worker count read from a command-line option may be more than 0, whatever its default
        (``--workers`` defaulting to 0 is set on the command line to train)."""
        loaders = model.deciding_loaders(ref)
        if not loaders:
            # no loader in sight: judged as the common case (workers, fork), unless an entry script
            # that nothing imports keeps the class to itself, the project keeps every instance it
            # builds in the function building it, or the project never starts workers
            return model.script_only(ref) or model.kept_in_main_process(ref) or model.never_starts_workers
        active = [ld for ld in loaders if ld.may_start_workers]
        if not active:
            return True
        return all("fork" not in ld.start_methods and "unknown" not in ld.start_methods for ld in active)

    def _judge(self, model, ref, attr: str, uses, depth: int = 0):
        writes = model.attr_writes(ref, attr)
        if not writes:
            return None
        value = model.attr_value(ref, attr)
        if value.has("dataframe") and not (value.kinds & PY_CONTAINERS) and not value.has("records"):
            return self._judge_frame(model, ref, attr, value, writes, uses)
        if value.detail == FRAME_ARRAY and value.kinds & PY_CONTAINERS == {"ndarray-obj"} and not value.has("records"):
            # a frame's ``.values``: objects only with a string column, the evidence a frame needs
            return self._judge_frame(model, ref, attr, value, writes, uses, "an object array of str cells")
        if not value.kinds & PY_CONTAINERS and model.array_used(ref, attr):
            return None  # loaded records (a pickle, a torch file) the class uses as an array
        if value.kinds and value.kinds <= OPAQUE:
            return self._judge_opaque(model, ref, attr, writes, uses)
        if not (value.kinds & PY_CONTAINERS) and not value.has("records"):
            return None
        if value.has("records") and value.kinds & COMPACT:
            hows = {how for how, _f, _r in uses}
            if hows & {"str-key", "id-key"}:
                # loaded records (``torch.load``) looked up with the sample index written as a
                # string (``self.boxes[f"{idx:08d}"]``) or with the sample's identifier
                # (``self.features[row["video_id"]]``): a mapping, not an array or a tensor
                value = dataclasses.replace(value, kinds=(value.kinds - COMPACT) | {"dict"})
            elif "record-rows" in hows and "index" in hows:
                # its per-sample items looked up by name (``self.items[idx]["file"]``): records
                value = dataclasses.replace(value, kinds=(value.kinds - COMPACT) | {"list"})
        if value.kinds & COMPACT and not (value.kinds & PY_CONTAINERS):
            return None  # records that are an array or a tensor on some path: not a Python container
        if self._rebound(model, ref, attr, writes):
            return None
        elem = value.elem
        if elem is not None and elem.has("instance") and elem.cls is not None and model.is_dataset(elem.cls):
            return None  # the datasets a wrapper combines: one per source, each judged on its own class
        kinds = value.kinds & PY_CONTAINERS
        evidence = [f"{w[0]} ({display_path(w[1])}:{w[2]})" for w in value.why if len(w) >= 3]
        # each element indexed per sample: a container of per-sample tables, when its elements
        # are Python containers (a tuple of tensors indexed so is TensorDataset's compact form)
        tables = elem is not None and bool(elem.kinds & (PY_CONTAINERS | {"records"})) and not elem.kinds & (COMPACT | {"ndarray"})
        raw_uses = uses
        # (a lookup by the sample's identifier is one per sample too: ``self.feats[row["video_id"]]``)
        uses = [("index", fn, row) if how in ("elements", "id-key") else (how, fn, row) for how, fn, row in uses if how in ("len", "index", "iter", "id-key") or (how == "elements" and tables)]
        structural = [f"{how} in `{fn}`" for how, fn, _row in uses]
        follows = [f"one entry per element of `self.{src}`, the samples" for how, src, _row in raw_uses if how == "follows"]
        size = value.size
        # {split: [every file]}; [per-scale file lists] whose elements worker code indexes per sample
        element_indexed = any(how == "element-index" for how, _f, _r in raw_uses)
        nested = (size == BOUNDED or (size == UNKNOWN_SIZE and element_indexed)) and _nested_data(value, element_indexed)
        if size == DATA:
            grows = True
        elif size == LOAD:
            # records loaded from json / pickle / yaml: a table when used as one (looked up with a
            # computed key, walked, measured), a configuration when only read by literal keys; or
            # built by walking an attribute that is used as the samples
            grows = bool(uses) or follows or self._table_use(model, ref, attr)
        elif size == UNKNOWN_SIZE:
            grows = nested or (bool(uses) or follows or any(how == "feeds" for how, _f, _r in raw_uses)) and not self._bounded_path(model, ref, attr)
        elif size == DEDUP and any(how == "len" for how, _f, _r in uses):
            grows = True  # the distinct values are the samples (``__len__`` counts them): no vocabulary
        elif size != EMPTY and any(how == "elements" and tables for how, _f, _r in raw_uses):
            grows = True  # a few tables (one per source, per stem), each as long as the data
        elif nested:
            grows = True  # a few keys, each holding the data
        else:
            grows = False  # EMPTY, BOUNDED, DEDUP
        if not grows and size in (LOAD, UNKNOWN_SIZE) and not uses and not follows and depth < 2:
            # one entry per element of another attribute that grows with the data
            # (``for ex in self.codebase: self.code.append(ex.code)``): it grows too
            every = model.sample_uses(ref)
            for src, _fn, row in model.walked_sources(ref).get(attr, ()):
                # the walk of what worker code indexes per sample (or ``__len__`` measures) is
                # one step per sample, whatever it holds (a wrapped Dataset, an array of labels)
                samples = any(how in ("len", "index") for how, _f, _r in every.get(src, ()))
                # (or in a project base that creates it and serves it as the samples, when a
                # subclass serves others: ``self.numels = [len(p) for p in self.data_paths]``)
                if samples or any(
                    self._judge(model, r, src, model.sample_uses(r).get(src, ()), depth + 1) is not None
                    for r in model.mro(ref)
                ):
                    grows = True
                    follows = [f"one entry per element of `self.{src}`"]
                    raw_uses = [*raw_uses, ("follows", src, row)]
                    break
            if not grows and size == LOAD:
                # built by walking the same loaded records as another attribute that is used as
                # the samples: one entry per record too
                for other in sorted(model.co_walked(ref).get(attr, ())):
                    if any(how in ("len", "index") for how, _f, _r in every.get(other, ())) and self._judge(
                        model, ref, other, every.get(other, ()), depth + 1
                    ) is not None:
                        grows = True
                        follows = [f"one entry per record, as `self.{other}`"]
                        break
        # the samples grouped by class (``self.class_to_indices[y].append(i)`` per sample): the
        # name tells the keys, the lists hold the data
        # (or each list is built by walking the data: ``seq_per_class[c].append(i)`` over the lines
        # of a sequence list)
        grouped = value.has("dict") and value.elem is not None and value.elem.has("list", "set") and (
            bool(follows) or value.elem.size in (DATA, LOAD)
        )
        if (
            grows and (bounded_by_name(attr) or _from_label_set(model, ref, attr))
            and not grouped and not any(how == "index" for how, _f, _r in uses)
            # (unless it is built from the data, keyed by each record's id: ``id2answer``)
            and not (size == DATA and model.keyed_by_identifier(ref, attr))
        ):
            grows = False  # class names, label maps, configuration: bounded by a schema
        if grows and model.length_asserted(ref, attr):
            grows = False  # ``assert len(self.paths) == 1``: the code fixes its size
        if grows and value.elem is not None and value.elem.kinds and value.elem.kinds <= PER_FILE:
            grows = False  # one memmap / open file / table per shard file: a few dozen entries
        if grows and value.elem is not None and value.elem.kinds == frozenset({"instance"}) and value.elem.cls is not None and model.holds_open_file(value.elem.cls):
            grows = False  # one reader object per file, each keeping it open: a few dozen entries
        if grows and size == DATA and not uses and value.why and value.why[0][0].startswith("a directory") and model.shard_listing(ref, attr):
            grows = False  # the shard files whose records another attribute gathers: a few dozen
        if not grows:
            return None
        if not kinds:
            kinds = frozenset({"records"})
        ctype = KIND_WORDS[sorted(kinds, key=lambda k: ("list", "dict", "tuple", "set", "deque", "frozenset", "ndarray-obj", "records").index(k))[0]]
        elem = _elem_words(value)
        article = "an" if ctype[0] in "aeiou" else "a"
        what = f"{article} {ctype} of {elem}" if elem and ctype not in ("dict", "dict/list of records") else f"{article} {ctype}"
        if nested:
            inner = "lists" if value.elem.has("list") else "dicts" if value.elem.has("dict") else "containers"
            what = f"{article} {ctype} of {inner}"
            evidence = [f"{w[0]} ({display_path(w[1])}:{w[2]})" for w in value.elem.why if len(w) >= 3]
        if nested or (value.why and (size == DATA or (size == LOAD and all(how == "iter" for how, _f, _r in uses)))):
            why = value.elem.why[0] if nested else value.why[0]
            named = re.match(r"a directory (listing|walk) \(`([^`]+)`\)$", why[0])  # "... (`os.listdir`)"
            source = f"`{named.group(2)}`" if named else re.sub(r" \(`[^`]+`\)$", "", why[0])
            if ctype == KIND_WORDS["records"] and source.startswith("records of "):
                # "holds the records of a json file (data.py:14)"
                text = f"the {source} ({os.path.basename(why[1])}:{why[2]})"
            else:
                text = f"{what} from {source} ({os.path.basename(why[1])}:{why[2]})"
        elif uses:
            how, fn, _ = uses[0]
            text = f"{what} {'measured by' if how == 'len' else 'indexed per sample in' if how == 'index' else 'walked by'} `{fn}`"
        elif any(how == "feeds" for how, _f, _r in raw_uses):
            fn = next(f for how, f, _r in raw_uses if how == "feeds")
            text = f"{what}, each element feeding a per-sample list in `{fn}`"
            structural.append(f"each element appended to a per-sample list in `{fn}`")
        elif follows:
            src = next(src for how, src, _r in raw_uses if how == "follows")
            text = f"{what}, one entry per element of `self.{src}`"
        else:
            text = what
        return text, evidence + structural + follows

    def _judge_opaque(self, model, ref, attr: str, writes, uses):
        """Nothing in sight fills it (a parameter no call site binds, a library's result), but
        worker code takes the sample's element and uses it as a string or a path
        (``Image.open(self.left[idx])``, ``fname, pid = self.dataset[idx]`` then
        ``osp.join(root, fname)``): one string (or one record holding one) per sample. An
        array or a tensor has no string elements; a numpy array of fixed-width strings would,
        but paths handed over are lists far more often, and the samples' count is what grows."""
        text_uses = [u for u in uses if u[0] == "text"]
        index_uses = [u for u in uses if u[0] == "index"]
        if not text_uses or not index_uses:
            return None
        if self._rebound(model, ref, attr, writes) or model.length_asserted(ref, attr):
            return None
        evidence = [f"{how} in `{fn}`" for how, fn, _row in uses if how in ("len", "index")]
        evidence.append(f"the sample's element used as a string or a path in `{text_uses[0][1]}`")
        return f"one string (a path, a name) per sample, read in `{index_uses[0][1]}`", evidence

    def _judge_frame(self, model, ref, attr: str, value, writes, uses, what: str = "a DataFrame with str columns"):
        """A pandas DataFrame: data-sized like a list (its rows come from a file, or ``__len__``
        measures it, or worker code takes the sample's row with ``.iloc[idx]``), and a Python
        container only through its object (string) columns: reported with the evidence that it
        has one, a cell of the sample's row used as a string or a path in worker code
        (``sf.read(row["path"])``), or when pandas read it from a file (text columns are str
        objects) and nothing shows it is numbers: worker code converting rows or cells to
        numbers, or the class taking its columns whole as one array (a time series). Numeric
        frames are numpy blocks: quiet."""
        text_uses = [u for u in uses if u[0] == "text"]
        if value.kinds & (COMPACT - {"series"}):
            return None
        read = _file_table(value)
        if not text_uses and (
            read is None
            or value.detail == FRAME_ARRAY  # (an array of the frame: objects only with a str column in sight)
            or any(u[0] == "numeric" for u in uses)
            or model.frame_taken_whole(ref, attr)
        ):
            return None
        if self._rebound(model, ref, attr, writes):
            return None
        uses = [u for u in uses if u[0] in ("len", "index")]
        if value.size not in (DATA, LOAD) and not uses:
            return None
        if bounded_by_name(attr) and not any(how == "index" for how, _f, _r in uses):
            return None
        evidence = [f"{w[0]} ({display_path(w[1])}:{w[2]})" for w in value.why if len(w) >= 3]
        evidence += [f"{how} in `{fn}`" for how, fn, _row in uses]
        if text_uses:
            evidence.append(f"a cell of the sample's row used as a string in `{text_uses[0][1]}`")
        else:
            # a table read from a file, its rows never converted to numbers: its text columns
            # (paths, captions, ids) are one Python str per row
            evidence.append(f"read from a file by `{read}`, no row of it converted to numbers")
            what = "a DataFrame"
        if value.size in (DATA, LOAD) and value.why:
            why = value.why[0]
            named = re.search(r"[(]`([^`]+)`[)]$", why[0])
            source = f"`{named.group(1)}`" if named else why[0]
            text = f"{what} from {source} ({os.path.basename(why[1])}:{why[2]})"
        elif uses:
            how, fn, _ = uses[0]
            text = f"{what} {'measured by' if how == 'len' else 'indexed per sample in'} `{fn}`"
        else:
            text = what
        return text, evidence

    @staticmethod
    def _bounded_path(model, ref, attr: str) -> bool:
        """One method builds the container with a size the code fixes (a loop over
        ``range(1, 21)``), the others rebind it to something unseen (``load_graphs(path)``, the
        same graphs read back from a cache): bounded evidence beats a size nobody can see."""
        paths = model.attr_paths(ref, attr)
        if not paths or not all(rebinds for _fn, _v, rebinds in paths):
            return False
        if any(v.size in (DATA, LOAD) for _fn, v, _r in paths):
            return False
        return any(v.size == BOUNDED and v.kinds & PY_CONTAINERS for _fn, v, _r in paths)

    @staticmethod
    def _anchors(model, ref, attr):
        """Where the attribute is created: in each class of the hierarchy that assigns it, its
        first ``=`` assignment (in ``__init__`` first), else its first write. A base class whose
        own constructor creates it, but whose constructor this class overrides (no ``super()``),
        rebinding it only in a later method (``reset()``), is not where it is created here: its
        own finding is at its constructor."""
        writes = model.attr_writes(ref, attr)
        by_class: dict = {}
        owners: dict = {}
        for fn, w in writes:
            cls = model.class_of(fn)
            key = cls.key if cls is not None else fn.key
            by_class.setdefault(key, []).append((fn, w))
            owners[key] = cls
        reach = model.constructor_reach(ref) if len(by_class) > 1 else frozenset()
        created = {k for k, items in by_class.items() if any(fn.key in reach and w[0] == "=" for fn, w in items)}
        out = []
        for key, items in by_class.items():
            assigns = [x for x in items if x[1][0] == "="]
            if not assigns and len(by_class) > 1:
                continue  # only mutated here: created in another class
            if created and key not in created and key != ref.key and _constructor_assigns(model, owners[key], attr):
                continue  # only rebound after construction: created in another class
            pool = assigns or items
            out.append(min(pool, key=lambda x: (x[0].fn.name != "__init__", x[1][2])))
        return out

    @staticmethod
    def _table_use(model, ref, attr: str) -> bool:
        """Some method looks ``self.attr`` up with a computed key, walks it or measures it (or
        does so to one of its named tables: ``self.ann["images"][i]``), or a project function
        it is handed to looks it up or walks it."""
        for kind, detail, _row, on_self, _scope in model.own_signal(ref, attr, "attr_uses", lambda use: use[4]):
            if kind == "table" and on_self:
                key = table_key(detail)
                if key is not None and (bounded_by_name(key) or key == "names"):
                    continue  # ``len(self.cfg["names"])``: the class names of a configuration
                if table_lookup(detail) and model.label_keyed(ref, attr):
                    continue  # ``self.vocab["yes_no"][q["answer"]]``: label maps by a literal key
                return True
        for fn in model.hierarchy_methods(ref):
            flow = fn.fn.flow
            if attr in flow.iterates:
                return True
            if any(ix[0] != "elt" and not _literal_index(ix) for ix in flow.indexes.get(attr, ())):
                return True
            for kind, target, args, _kw, _row in flow.calls:
                if kind == "attr" and target[0] == attr:
                    if target[1] in ("items", "keys", "values", "__iter__"):
                        return True
                    if target[1] in ("get", "pop", "__getitem__") and args and args[0][0] != "k":
                        return True
            for ret in flow.returns:
                if ret[0] == "c" and ret[1] == ("g", "builtins.len") and ret[2][:1] == (("s", attr),):
                    return True
        return model.looked_up_by_callee(ref, attr)

    @staticmethod
    def _rebound(model, ref, attr, writes) -> bool:
        """A later assignment in the same method turns the container into a compact store
        (``self.x = np.array(self.x)``); a selection from it after that (``self.x =
        self.x[mask]``) keeps what it selects from."""
        last: dict = {}
        for fn, w in writes:
            if w[0] != "=" or w[1][:2] == ("i", ("s", attr)):
                continue
            if fn.key not in last or w[2] > last[fn.key][1][2]:
                last[fn.key] = (fn, w)
        mro = [r.key for r in model.mro(ref)]
        for fn, w in last.values():
            v = model.value(w[1], Env(fn.file, fn, ref))
            compact = bool(v.kinds & COMPACT) or (v.has("instance") and not v.kinds & OPEN)
            if not compact or v.kinds & PY_CONTAINERS:
                continue
            if any(f2.key == fn.key and x[0] == "=" and replaced(x, w) for f2, x in writes):
                return True  # rebound later in the same method, on every path
            cls = model.class_of(fn)
            depth = mro.index(cls.key) if cls is not None and cls.key in mro else len(mro)
            for f2, x in writes:
                other = model.class_of(f2)
                if other is not None and other.key in mro and mro.index(other.key) > depth and x[0] == "=":
                    return True  # a subclass assigns the compact form after its base built the container
        return False


def _file_table(value) -> str | None:
    """The pandas reader (``read_csv``, ``read_parquet`` ...) the frame's rows come from."""
    for w in value.why:
        found = re.match(r"the rows of a table \(`(read_[a-z_]+)`\)$", w[0])
        if found:
            return found.group(1)
    return None


def _literal_index(ix) -> bool:
    """``x["key"]``, ``x[0]``, ``x[0, 0]``: a fixed entry, not a lookup per sample."""
    if ix[0] == "k":
        return True
    return ix[0] == "L" and ix[1] == "tuple" and bool(ix[2]) and all(isinstance(e, tuple) and e[:1] == ("k",) for e in ix[2])


def _nested_data(value, indexed: bool) -> bool:
    """A container of a few data-sized lists or dicts (``{split: [every file]}``; a list of
    per-scale file lists whose elements worker code indexes per sample,
    ``self.images_lr[self.idx_scale][idx]``)."""
    elem = value.elem
    kinds = value.kinds & PY_CONTAINERS
    if not ((kinds <= {"dict"} and value.has("dict")) or (indexed and kinds == {"list"})):
        return False  # a dict keyed by split / source / kind; a list of lists is judged by its uses
    if elem is None or not elem.kinds or not elem.why:
        return False
    if elem.size != DATA and not (indexed and elem.size == LOAD):
        # (lists filled one entry per loaded record, ``self.anno["index"].append(r["id"])``,
        # count when worker code indexes them per sample: ``self.anno["index"][idx]``)
        return False
    lists = {"list", "dict", "tuple", "set", "deque"}
    # all its values data-sized lists; or, when worker code indexes them per sample
    # (``self.data["words"][idx]``), some of them (beside tensors or loaded records)
    return elem.kinds <= lists or (indexed and bool(elem.kinds & lists))


def _plain(v, depth: int) -> bool:
    """A value a pickle round-trip gives back equal and of the same type (str, int, bool, None,
    paths, and tuples / lists / dicts of those)."""
    if depth > 4 or v.is_bottom or not v.kinds or not v.kinds <= PLAIN:
        return False
    parts = [p for p in (v.elem, v.key) if p is not None]
    if v.items is not None:
        parts.extend(v.items)
    if v.kinds & {"list", "dict"} and v.elem is None:
        return False
    return all(_plain(p, depth + 1) for p in parts)


def _elem_words(value) -> str:
    e = value.elem if not value.has("dict") else value.elem
    if e is None or e.is_bottom:
        return ""
    for kind, word in ELEM_WORDS:
        if e.has(kind):
            return word
    return ""


__all__ = ["CopyOnReadContainer", "BOUNDED", "DEDUP", "EMPTY"]
