"""What a value may hold, with evidence: the program model's evaluator of the flow IR
(dllint/facts/flow.py).

A ``Val`` says which kinds of object a name, an attribute, a parameter or a return value may be
(containers and their elements, arrays, tensors, files and database handles, RNGs, generators,
lambdas, devices, instances of project classes), how its length grows (``data``: with the number
of samples, files or records; ``bounded``: fixed by the code; ``unknown``) and why (the evidence
chain: "lines of a file (data.py:41)"). Values flow through locals, loops, comprehensions,
``.append`` / ``.extend`` / ``[k] = v`` mutations, ``self`` attributes across the class hierarchy
(other files included), project functions' return values (their parameters bound to the call's
arguments) and parameters (bound at every call site in the project).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from dllint.names import DATALOADER_CLASSES, DATASET_SPLITTERS, DATASET_WRAPPERS, canonical, is_openmmlab_dataset, is_torchvision_folder
from dllint.program.refs import ClassRef, FuncRef

CONTAINERS = frozenset({"list", "dict", "set", "tuple", "deque", "frozenset"})
# methods of tensors and arrays that no Python container has: what the receiver must have been
ARRAY_METHODS = {
    "cpu": "tensor", "cuda": "tensor", "detach": "tensor", "contiguous": "tensor", "half": "tensor",
    "clone": "tensor", "numpy": "ndarray", "astype": "ndarray", "reshape": "ndarray", "transpose": "ndarray",
    "flatten": "ndarray", "ravel": "ndarray", "squeeze": "ndarray", "permute": "tensor", "unsqueeze": "tensor",
}
# kinds whose size is a number of elements (a Python container or a lazy sequence of elements)
SIZED = CONTAINERS | frozenset({"ndarray-obj", "iterator", "generator", "range", "records"})
# kinds that may still be a container (nothing known)
OPEN_KINDS = frozenset({"unknown", "param", "records"})
SCALARS = frozenset({"str", "bytes", "int", "float", "bool", "none", "path"})
# external bases that make a project class a Python container itself
CONTAINER_BASES = {
    "collections.UserList": "list", "builtins.list": "list", "typing.List": "list",
    "collections.UserDict": "dict", "builtins.dict": "dict", "collections.OrderedDict": "dict",
    "typing.Dict": "dict", "collections.defaultdict": "dict",
}
# size classes, in join order: a container's length is ...
EMPTY, BOUNDED, DEDUP, UNKNOWN_SIZE, LOAD, DATA = "empty", "bounded", "dedup", "unknown", "load", "data"
_SIZE_RANK = {EMPTY: 0, BOUNDED: 1, DEDUP: 1, UNKNOWN_SIZE: 2, LOAD: 3, DATA: 4}
MAX_EVAL_DEPTH = 24
# how many links (a local, an argument, an attribute, a return) ``instance_classes`` follows from
# a loader's dataset back to the class constructed: ``corpus.train`` -> property -> ``self._train``
# -> ``Corpus.__init__(train)`` -> a subclass's ``super().__init__(train)`` -> ``train = ...``
MAX_CLASS_DEPTH = 10
MAX_NESTING = 120  # evaluations in progress at once, across attributes, parameters and calls
# calls evaluated under their own arguments (a project function's returns with its parameters
# bound to one call's values) that one outermost evaluation may start: a bound on the work of a
# question, far above what real projects need (with calls memoized by their arguments' values,
# MONAI's worst question starts 6,594, dgl's 1,867, NeMo's 119). Past it a call's value is unknown.
MAX_BOUND_CALLS = 20000
MAX_WHY = 3
# the ``detail`` of a DataFrame's ``.values`` / ``.to_numpy()``: an array of the frame's dtype,
# Python objects only when a column is (strings), numbers otherwise
FRAME_ARRAY = "frame-array"


@dataclass(frozen=True, slots=True)
class Val:
    kinds: frozenset = frozenset()
    elem: "Val | None" = None  # element (a dict's value)
    key: "Val | None" = None  # a dict's key
    items: tuple | None = None  # a fixed tuple's items, position by position
    size: str = UNKNOWN_SIZE
    why: tuple = ()  # ((text, path, row), ...): the evidence for ``size`` (and kinds), first first
    device: str | None = None  # "cuda" | "maybe": a device, or a tensor / module on one
    detail: str = ""  # the constructor of a handle / RNG, the source of a value
    cls: object = None  # a project class (ClassRef) this is an instance (or the class object) of
    fn: object = None  # a project function (FuncRef) this value is
    mode: str = ""  # a file: "b" when opened in binary mode
    # named parts of a record-like value: a dict display with literal keys, an argparse namespace
    # (key, Val) pairs sorted by key; None when not known
    attrs: tuple | None = None

    def attr(self, name: str) -> "Val | None":
        if self.attrs is None:
            return None
        for k, v in self.attrs:
            if k == name:
                return v
        return None

    @property
    def is_bottom(self) -> bool:
        return not self.kinds

    def has(self, *kinds: str) -> bool:
        return not self.kinds.isdisjoint(kinds)


BOTTOM = Val(size=EMPTY)  # nothing known yet (a value under evaluation): neutral in joins and in sizes
UNKNOWN = Val(frozenset({"unknown"}))


def val(*kinds: str, **kw) -> Val:
    return Val(frozenset(kinds), **kw)


def join(a: Val, b: Val) -> Val:
    # (the evaluator's most frequent step: set tests without intermediate sets, no calls for
    # the absent parts)
    ak = a.kinds
    if not ak:  # (bottom)
        return b
    bk = b.kinds
    if not bk or a is b:
        return a
    # the size of a container is its length: when only one side is a container (the other a
    # table, a string, a number), the container's size is the size of the join
    ca, cb = not ak.isdisjoint(SIZED), not bk.isdisjoint(SIZED)
    if ca != cb and (bk if ca else ak).isdisjoint(OPEN_KINDS):
        size, why = (a.size, a.why) if ca else (b.size, b.why)
    else:
        sa, sb = a.size, b.size
        size = sa if _SIZE_RANK[sa] >= _SIZE_RANK[sb] else sb
        if (sa == BOUNDED and sb == DEDUP) or (sa == DEDUP and sb == BOUNDED):
            size = BOUNDED
        why = a.why if size == sa and a.why else b.why if size == sb and b.why else a.why or b.why
    items = None
    if a.items is not None and b.items is not None and len(a.items) == len(b.items):
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
    device = None
    if a.device or b.device:
        device = "cuda" if a.device == b.device == "cuda" else "maybe"
    ae, be = a.elem, b.elem
    ak_, bk_ = a.key, b.key
    return Val(
        ak | bk,
        be if ae is None else ae if be is None else join(ae, be),
        bk_ if ak_ is None else ak_ if bk_ is None else join(ak_, bk_),
        items,
        size,
        why,
        device,
        a.detail or b.detail,
        a.cls if a.cls is not None else b.cls,
        a.fn if a.fn is not None else b.fn,
        a.mode or b.mode,
        None if a.attrs is None or b.attrs is None else _join_attrs(a.attrs, b.attrs),
    )


def _join_attrs(a, b):
    """The named parts of two record-like values, both known (``join`` keeps None otherwise)."""
    merged = dict(a)
    for k, v in b:
        merged[k] = join(merged[k], v) if k in merged else v
    return tuple(sorted(merged.items()))


def join_all(values) -> Val:
    out = BOTTOM
    for v in values:
        out = join(out, v)
    return out


def grows(v: Val) -> bool:
    return v.size in (DATA, LOAD)


def replaced(write, later) -> bool:
    """A later ``=`` write of the same attribute in the same function always runs after
    ``write`` (it is in the same block or an enclosing one): ``write``'s value does not survive."""
    if later[0] != "=" or later[2] <= write[5]:
        return False
    wb, lb = write[9], later[9]
    return wb[: len(lb)] == lb


def _why(v: Val, text: str, where) -> tuple:
    return ((text, *where),) + v.why[: MAX_WHY - 1]


def sized(v: Val, size: str, text: str | None = None, where=None) -> Val:
    """``v`` with a size; the evidence ``text`` at ``where`` (path, row) first."""
    why = ((text, *where),) + v.why[: MAX_WHY - 1] if text else v.why
    return replace(v, size=size, why=why)


def element_of(v: Val) -> Val:
    """What iterating ``v`` gives."""
    if v.is_bottom:
        return BOTTOM
    if v.elem is not None:
        e = v.elem
        if v.has("dict") and v.key is not None and not v.has("list", "tuple", "set", "deque", "iterator", "generator"):
            e = v.key
        return e
    if v.has("file"):
        return val("bytes" if v.mode == "b" else "str", size=BOUNDED)
    if v.has("str"):
        return val("str", size=BOUNDED)
    if v.has("range"):
        return val("int", size=BOUNDED)
    if v.has("dataframe"):
        return val("str", size=BOUNDED)  # column names
    return UNKNOWN


def item_of(v: Val, i) -> Val:
    if v.items is not None and isinstance(i, int) and -len(v.items) <= i < len(v.items):
        return v.items[i]
    if v.has("tuple", "list") and v.elem is not None:
        return v.elem
    return UNKNOWN


NO_CYCLE = 1 << 30  # (the low-link of a computation that read no value in progress)


def _static(fn) -> bool:
    """A ``@staticmethod``: called through ``self`` or the class, it takes no ``self``."""
    return any(d == "builtins.staticmethod" or d == "staticmethod" for d in fn.decorators)


def is_classmethod(fn) -> bool:
    return any(d == "builtins.classmethod" or d == "classmethod" for d in fn.decorators)


def _class_param(fn, name: str) -> bool:
    """``name`` is the class parameter of a classmethod (its first: ``cls``)."""
    return bool(fn.params) and fn.params[0] == name and fn.cls is not None and is_classmethod(fn)


PROPERTY_DECORATORS = frozenset({"builtins.property", "property", "functools.cached_property", "cached_property"})


def is_property(fn) -> bool:
    """A ``@property`` (or ``@cached_property``): reading ``self.name`` runs it."""
    return any(d in PROPERTY_DECORATORS for d in fn.decorators)


def container(kind: str, elem: Val | None, size: str, why: tuple = (), **kw) -> Val:
    return Val(frozenset({kind}), elem=elem, size=size, why=why, **kw)


# --------------------------------------------------------------------------- external calls

LISTINGS = {
    "os.listdir": ("list", "str", "a directory listing (`os.listdir`)"),
    "glob.glob": ("list", "str", "a directory listing (`glob.glob`)"),
    "glob.iglob": ("iterator", "str", "a directory listing (`glob.iglob`)"),
    "os.scandir": ("iterator", "direntry", "a directory listing (`os.scandir`)"),
    "os.walk": ("generator", "walk", "a directory walk (`os.walk`)"),
    # the directory walkers of the OpenMMLab file I/O layers (also scandir of mmcv/mmengine)
    "mmengine.list_dir_or_file": ("generator", "str", "a directory listing (`list_dir_or_file`)"),
    "mmengine.fileio.list_dir_or_file": ("generator", "str", "a directory listing (`list_dir_or_file`)"),
    "mmengine.scandir": ("generator", "str", "a directory listing (`mmengine.scandir`)"),
    "mmengine.utils.scandir": ("generator", "str", "a directory listing (`mmengine.scandir`)"),
    "mmcv.scandir": ("generator", "str", "a directory listing (`mmcv.scandir`)"),
    # other libraries' listings: audio files under a folder, images under a folder, a bucket's files
    "librosa.util.find_files": ("list", "str", "a directory listing (`librosa.util.find_files`)"),
    "librosa.util.files.find_files": ("list", "str", "a directory listing (`librosa.util.find_files`)"),
    "imutils.paths.list_images": ("generator", "str", "a directory listing (`imutils.paths.list_images`)"),
    "imutils.paths.list_files": ("generator", "str", "a directory listing (`imutils.paths.list_files`)"),
    "torchvision.datasets.utils.list_files": ("list", "str", "a directory listing (`torchvision list_files`)"),
    "tensorflow.io.gfile.glob": ("list", "str", "a directory listing (`tf.io.gfile.glob`)"),
    "tensorflow.io.gfile.listdir": ("list", "str", "a directory listing (`tf.io.gfile.listdir`)"),
    "tensorflow.gfile.Glob": ("list", "str", "a directory listing (`tf.gfile.Glob`)"),
}
# the lines of a text file, one str each, read by OpenMMLab's helper: a split list (one image id
# per line) as often as a class-name file (its ``get_classes``): judged by how the Dataset uses it
# (measured, indexed or walked per sample), as an unseen source is
LINE_LISTS = frozenset({"mmcv.list_from_file", "mmcv.fileio.list_from_file", "mmengine.list_from_file", "mmengine.fileio.list_from_file"})
# torchvision's folder walk: one (path, class index) pair per file under the class folders
SAMPLE_WALKS = {
    "torchvision.datasets.folder.make_dataset": "a directory walk (`torchvision make_dataset`)",
    "torchvision.datasets.DatasetFolder.make_dataset": "a directory walk (`torchvision make_dataset`)",
}
PATH_LISTING_METHODS = {"glob": "`Path.glob`", "rglob": "`Path.rglob`", "iterdir": "`Path.iterdir`"}
OPENERS = frozenset(
    {"builtins.open", "io.open", "codecs.open", "gzip.open", "bz2.open", "lzma.open", "smart_open.open", "fsspec.open"}
)
# path functions whose result lies under their first argument (``_shipped``)
SHIPPED_PATH_CALLS = frozenset({
    "os.path.join", "os.path.dirname", "os.path.abspath", "os.path.realpath", "os.path.normpath",
    "pathlib.Path", "pathlib.PurePath", "builtins.str", "os.fspath", "builtins.open", "io.open",
})

RECORD_LOADERS = {
    "json.load": "records of a json file",
    "json.loads": "records of a json string",
    "pickle.load": "records of a pickle file",
    "pickle.loads": "records of a pickle",
    "yaml.load": "records of a yaml file",
    "yaml.safe_load": "records of a yaml file",
    "yaml.full_load": "records of a yaml file",
    "yaml.unsafe_load": "records of a yaml file",
    "ujson.load": "records of a json file",
    "orjson.loads": "records of a json string",
    "joblib.load": "records of a joblib file",
    "mmcv.load": "records of an annotation file (`mmcv.load`)",
    "mmengine.load": "records of an annotation file (`mmengine.load`)",
    "mmengine.fileio.load": "records of an annotation file (`mmengine.load`)",
    "scipy.io.loadmat": "records of a .mat file",
    "srsly.read_json": "records of a json file",
}
JSONL_LOADERS = {"srsly.read_jsonl": "lines of a jsonl file", "jsonlines.open": "lines of a jsonl file"}
# Kaldi-style index files (speech recipes: wav.scp, feats.scp): one key -> path entry per line
SCP_READERS = {"kaldiio.load_scp": "the lines of a Kaldi scp file (`kaldiio.load_scp`)"}
DATAFRAME_READERS = frozenset(
    {
        "pandas.read_csv", "pandas.read_table", "pandas.read_parquet", "pandas.read_json", "pandas.read_pickle",
        "pandas.read_feather", "pandas.read_excel", "pandas.read_hdf", "pandas.read_sql", "pandas.DataFrame",
        "pandas.concat", "pandas.merge",
    }
)
CSV_READERS = {"csv.reader": "list", "csv.DictReader": "dict"}
RNG_CTORS = frozenset(
    {
        "numpy.random.default_rng", "numpy.random.RandomState", "numpy.random.Generator", "random.Random",
        "torch.Generator", "numpy.random.PCG64", "random.SystemRandom",
    }
)
# objects pickle refuses (locks, queues, sockets, capture devices): "lock" values
LOCK_CTORS = frozenset(
    {
        "threading.Lock", "threading.RLock", "threading.Condition", "threading.Semaphore", "threading.Event",
        "threading.BoundedSemaphore", "_thread.allocate_lock", "queue.Queue",
        "concurrent.futures.ThreadPoolExecutor", "socket.socket", "cv2.VideoCapture",
    }
)
# PyG's InMemoryDataset: the attributes holding its collated storage (see Values.attr_value)
PYG_IN_MEMORY = frozenset({"torch_geometric.data.InMemoryDataset", "torch_geometric.data.in_memory_dataset.InMemoryDataset"})
PYG_STORAGE = frozenset({"data", "slices", "_data"})
# a multiprocessing manager: the containers it makes (``manager.list()``) are proxies whose
# elements live in the manager's own process, not in the object holding the proxy
MANAGER_CTORS = frozenset({"multiprocessing.Manager", "multiprocessing.managers.SyncManager", "torch.multiprocessing.Manager"})
MANAGER_PROXIES = frozenset({"list", "dict", "Namespace", "Array", "Value", "Queue", "JoinableQueue"})
HANDLE_CTORS = {
    "h5py.File": "an HDF5 file (`h5py.File`)",
    "lmdb.open": "an LMDB environment (`lmdb.open`)",
    "lmdb.Environment": "an LMDB environment",
    "sqlite3.connect": "a SQLite connection",
    "tables.open_file": "a PyTables file",
    "pandas.HDFStore": "an HDF5 store (`pandas.HDFStore`)",
    "zipfile.ZipFile": "a zip archive (`zipfile.ZipFile`)",
    "tarfile.open": "a tar archive (`tarfile.open`)",
    "tarfile.TarFile": "a tar archive",
    "PIL.Image.open": "a lazily read image file (`PIL.Image.open`)",
    "pymongo.MongoClient": "a MongoDB client",
    "psycopg2.connect": "a PostgreSQL connection",
    "netCDF4.Dataset": "a netCDF (HDF5) file",
    "zarr.open": "a zarr store",
    "pyarrow.parquet.ParquetFile": "a Parquet file",
}
TENSOR_FACTORIES = frozenset(
    {
        "torch.tensor", "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn",
        "torch.randint", "torch.arange", "torch.linspace", "torch.eye", "torch.from_numpy", "torch.as_tensor",
        "torch.stack", "torch.cat", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.zeros_like",
        "torch.ones_like", "torch.randn_like", "torch.empty_like", "torch.full_like", "torch.load",
    }
)
ARRAY_CTORS = frozenset(
    {
        "numpy.array", "numpy.asarray", "numpy.stack", "numpy.concatenate", "numpy.zeros", "numpy.ones",
        "numpy.empty", "numpy.full", "numpy.arange", "numpy.linspace", "numpy.vstack", "numpy.hstack",
        "numpy.frombuffer", "numpy.fromfile", "numpy.cumsum", "numpy.asanyarray", "numpy.ascontiguousarray",
        "numpy.unique", "numpy.sort", "numpy.argsort", "numpy.where", "numpy.nonzero", "numpy.repeat",
        "numpy.tile", "numpy.loadtxt", "numpy.genfromtxt", "numpy.load", "numpy.random.permutation",
        # (an array of what they are given, reshaped or reordered)
        "numpy.transpose", "numpy.squeeze", "numpy.expand_dims", "numpy.reshape", "numpy.moveaxis",
        "numpy.swapaxes", "numpy.flip", "numpy.copy", "numpy.ravel", "numpy.atleast_1d", "numpy.atleast_2d",
        "numpy.atleast_3d", "numpy.column_stack", "numpy.dstack", "numpy.pad", "numpy.clip",
    }
)
INT_ARRAY = "an integer array"  # the detail of ``np.arange(n)`` / a permutation: ``.tolist()`` gives ints
NUMPY_DTYPE_OBJECT = frozenset({"builtins.object", "numpy.object_", "numpy.object", "object", "O"})
# calls that keep a callable argument inside the object they build
LAMBDA_HOLDERS = frozenset(
    {
        "collections.defaultdict", "functools.partial", "torchvision.transforms.Lambda",
        "torchvision.transforms.Compose", "torchvision.transforms.RandomApply", "torchvision.transforms.RandomChoice",
        "torchvision.transforms.RandomOrder", "torchvision.transforms.v2.Lambda", "torchvision.transforms.v2.Compose",
        "torchvision.transforms.v2.RandomApply", "albumentations.Compose", "albumentations.Lambda",
        "monai.transforms.Compose", "monai.transforms.Lambda", "monai.transforms.Lambdad",
    }
)
# libraries whose dataset objects are pipelines: each method call adds a stage that keeps the
# callables it is given (``wds.WebDataset(urls).select(keep).map(decode)``)
PIPELINE_LIBRARIES = frozenset({"webdataset", "torchdata"})
OPAQUE_STORES = frozenset(
    {
        "pyarrow.array", "pyarrow.table", "pyarrow.Table", "datasets.load_dataset", "datasets.Dataset",
        "datasets.load_from_disk", "numpy.memmap", "torch.from_file", "safetensors.safe_open",
    }
)
# methods of a Hugging Face ``datasets.Dataset`` that return another table of (some of) its rows
# a DataFrame's own attributes and methods read as attributes (``df.index``, ``df.shape``): not columns
FRAME_ATTRS = frozenset(
    {
        "index", "columns", "values", "shape", "size", "ndim", "dtypes", "empty", "axes", "attrs", "flags", "T",
        "loc", "iloc", "at", "iat", "style", "plot", "sparse", "array", "dtype", "name", "str", "dt", "cat",
        "groupby", "apply", "map", "head", "tail", "copy", "to_numpy", "to_dict", "to_list", "tolist", "items",
        "iterrows", "itertuples", "keys", "sum", "mean", "min", "max", "count", "nunique", "unique",
    }
)
FRAME_OR_UNKNOWN = frozenset({"dataframe", "unknown"})
HF_TABLE_STAGES = frozenset(
    {"remove_columns", "rename_column", "rename_columns", "select_columns", "filter", "select", "shuffle", "sort", "map", "cast", "flatten"}
)
STR_FUNCS = frozenset(
    {
        "os.path.join", "os.path.basename", "os.path.dirname", "os.path.splitext", "os.path.abspath",
        "os.path.normpath", "os.path.realpath", "os.path.expanduser", "os.path.relpath", "builtins.str",
        "builtins.repr", "builtins.format", "os.fspath",
    }
)
PATH_CTORS = frozenset({"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"})
# builtins that keep the elements and the length of their argument
SAME_LENGTH = {
    "builtins.list": "list", "builtins.sorted": "list", "builtins.tuple": "tuple", "builtins.reversed": "iterator",
    "collections.deque": "deque", "natsort.natsorted": "list", "builtins.iter": "iterator",
    # progress bars iterate what they wrap
    "tqdm.tqdm": "iterator", "tqdm.auto.tqdm": "iterator", "tqdm.std.tqdm": "iterator", "tqdm.notebook.tqdm": "iterator",
    "rich.progress.track": "iterator",
}
# the keyword that names what they iterate, where one can (``tqdm(iterable=rows, total=n)``)
SAME_LENGTH_KEYWORDS = {
    "collections.deque": "iterable", "tqdm.tqdm": "iterable", "tqdm.auto.tqdm": "iterable", "tqdm.std.tqdm": "iterable",
    "tqdm.notebook.tqdm": "iterable", "rich.progress.track": "sequence",
}
DEDUPS = frozenset({"builtins.set", "builtins.frozenset", "collections.Counter", "numpy.unique"})
NUMERIC_FUNCS = frozenset(
    {"builtins.int", "builtins.float", "builtins.len", "builtins.sum", "builtins.max", "builtins.min",
     "builtins.round", "builtins.abs", "math.ceil", "math.floor", "builtins.hash", "builtins.ord"}
)
# methods of a str that give a str / a list of str
STR_METHODS = frozenset(
    {"strip", "lstrip", "rstrip", "lower", "upper", "replace", "format", "join", "rsplit_first", "title",
     "removeprefix", "removesuffix", "zfill", "decode", "encode", "casefold", "capitalize"}
)
SPLITTERS = frozenset({"split", "splitlines", "rsplit"})
OPENMMLAB_LOADERS = frozenset({"load_annotations", "load_data_list"})
COCO_DATA_METHODS = frozenset({"getImgIds", "getAnnIds", "loadImgs", "loadAnns", "get_img_ids", "get_ann_ids", "load_imgs", "load_anns"})
COCO_DATA_ATTRS = frozenset({"imgs", "anns", "imgToAnns", "img_ann_map", "dataset", "img_ids", "ann_ids"})
COCO_CLASSES = frozenset({"pycocotools.coco.COCO", "pycocotools.COCO"})
COCO_JSON = "coco.dataset"  # the detail of a COCO object's ``.dataset`` (its annotation file's JSON)
# the parts of a COCO annotation file that do not grow with the images: the format's schema
COCO_BOUNDED_KEYS = frozenset({"categories", "info", "licenses", "type"})
DICT_VIEW = {"keys": "key", "values": "elem", "items": "items"}


def is_device_param(name: str) -> bool:
    """A parameter named as a device (``device``, ``dev``, ``target_device``)."""
    name = name.lower()
    return name in ("device", "dev", "gpu") or name.endswith("_device")


def is_cuda_string(text) -> bool:
    return isinstance(text, str) and (text == "cuda" or text.startswith("cuda:"))


class Values:
    """The evaluator, mixed into the program model (it needs ``resolve``, ``find_method``, the MRO
    and the files' flows)."""

    # ------------------------------------------------------------------ entry points

    def attr_value(self, cls, attr: str, include_workers: bool = False) -> Val:
        """What ``self.<attr>`` holds on an instance of ``cls`` once it is built: every write in
        the class hierarchy (not those in worker code, unless ``include_workers``)."""
        return self._asked(("attr_value", cls.key, attr, include_workers), self._attr_value, cls, attr, include_workers)

    def _asked(self, question: tuple, compute, *args) -> Val:
        """``compute(*args)``; asked loudly from outside any other computation (by the planner or
        a rule) and meeting unparsed files, the question is one the planner follows (``chase``)."""
        if not self._outermost():
            return compute(*args)
        with self._chained(question):
            return compute(*args)

    def _attr_value(self, cls, attr: str, include_workers: bool) -> Val:
        memo = self.__dict__.setdefault("_attr_memo", {})
        key = ("attr", cls.key, attr, include_workers)
        if key in memo:
            return self._memo_hit(memo, key)
        saved = self._memo_start(memo, key)  # a cycle (self.x built from self.x) is neutral
        out = self._library_attr(cls, attr)
        writing = self.__dict__.get("_writing")
        self._writing = key
        try:
            for fn, write in self.attr_writes(cls, attr, include_workers):
                out = self._apply_write(out, fn, write, cls)
        finally:
            self._writing = writing
        if attr in PYG_STORAGE and not out.is_bottom and self._pyg_in_memory(cls):
            # PyG's InMemoryDataset keeps its samples collated: ``self.data, self.slices =
            # torch.load(self.processed_paths[0])`` (or ``self.collate(data_list)``) is one Data of
            # tensors and a dict of slice tensors per field, whatever the file's pickle could hold
            out = val("store", detail="PyG collated storage", size=BOUNDED)
        return self._memo_finish(memo, key, out, saved)

    def _library_attr(self, cls, attr: str) -> Val:
        """What a library base's constructor stores, when the class's constructors call it:
        torchvision's ``DatasetFolder`` / ``ImageFolder`` keep ``samples`` (and ``imgs``), one
        (path, class index) tuple per file under the root; pycocotools' ``COCO`` keeps its
        annotation file's JSON (``dataset``) and per-image / per-annotation indexes (a project
        ``class CocoVID(COCO)`` walks ``self.dataset["videos"]`` in its own ``createIndex``)."""
        if attr == "dataset" or attr in COCO_DATA_ATTRS:
            coco = {canonical(b) or b for b in self.external_bases(cls)} & COCO_CLASSES
            if coco and self._runs_on(self.mro(cls), "__init__"):
                why = ((f"a COCO annotation file (`{cls.cls.name}`)", cls.file.path, cls.cls.span.row),)
                if attr == "dataset":
                    return val("dict", size=DATA, why=why, detail=COCO_JSON)
                return val("dict", "list", size=DATA, why=why)
        if attr not in ("samples", "imgs"):
            return BOTTOM
        folder = [b for b in self.external_bases(cls) if is_torchvision_folder(canonical(b) or b)]
        if not folder or not self._runs_on(self.mro(cls), "__init__"):
            return BOTTOM
        why = ((f"`{folder[0].rsplit('.', 1)[-1]}`'s file listing", cls.file.path, cls.cls.span.row),)
        item = Val(frozenset({"tuple"}), items=(val("str", size=BOUNDED), val("int", size=BOUNDED)), size=BOUNDED)
        return container("list", item, DATA, why)

    def _pyg_in_memory(self, cls) -> bool:
        return any(canonical(b) in PYG_IN_MEMORY for b in self.external_bases(cls))

    def instance_classes(self, ir, env) -> list:
        """The project classes an expression may be an instance of, each alternative kept apart
        (a ``Val`` keeps one class per join): a factory returning one of several Datasets, a
        wrapper's attribute (``LoadData(name).train``), a registry of classes
        (``DATASETS[name](**kw)``), a tuple unpacked from a call, a parameter its callers fill."""
        out: dict = {}
        self._classes_into(ir, env, 0, out, set())
        return list(out.values())

    def _classes_into(self, ir, env, depth, out, seen) -> None:
        if depth > MAX_CLASS_DEPTH or not isinstance(ir, tuple) or not ir or len(out) > 32:
            return
        key = (id(ir), env.key)
        if key in seen:
            return
        seen.add(key)
        tag = ir[0]
        if tag == "c":
            wrapped = _wrapped_datasets(ir)
            if wrapped is not None:
                for inner in wrapped:
                    self._classes_into(inner, env, depth + 1, out, seen)
                return
            self._called_classes(ir[1], env, depth, out, seen)
        elif tag == "u":
            for option in ir[1]:
                self._classes_into(option, env, depth, out, seen)
        elif tag in ("n", "nk") and env.flow is not None:
            for value in env.flow.locals.get(ir[1], ()):
                self._classes_into(value, env, depth + 1, out, seen)
        elif tag == "p" and env.fn is not None:
            for found, site_env in self._site_arguments(env.fn, ir[1], env.self_cls):
                self._classes_into(found, site_env, depth + 1, out, seen)
        elif tag in ("a", "s"):
            owners, attr = self._attr_owners(ir, env, depth, seen)
            for cls in owners:
                prop = self.find_method(cls, attr)
                if prop is not None and is_property(prop.fn) and prop.fn.flow is not None:
                    # ``corpus.train`` of a ``@property`` returning ``self._train``
                    for ret in prop.fn.flow.returns:
                        self._classes_into(ret, Env(prop.file, prop, cls), depth + 1, out, seen)
                    continue
                for fn, write in self.attr_writes(cls, attr):
                    if write[0] == "=":
                        self._classes_into(write[1], Env(fn.file, fn, cls), depth + 1, out, seen)
        elif tag == "b" and ir[1] == "+":
            # ``train_set + extra_set``: Dataset.__add__ concatenates them (a ConcatDataset)
            self._classes_into(ir[2], env, depth + 1, out, seen)
            self._classes_into(ir[3], env, depth + 1, out, seen)
        elif tag == "self" and env.self_cls is not None:
            # ``DataLoader(dataset=self, ...)`` in a method: the class's own instances
            out.setdefault(env.self_cls.key, env.self_cls)
        elif tag == "i" and _split_dataset(ir[1]) is not None:
            # ``train_ds, val_ds = random_split(ds, lengths)``: each part is a Subset of ``ds``
            self._classes_into(_split_dataset(ir[1]), env, depth + 1, out, seen)
        elif tag == "i":
            # ``a, b = self.data.splits()``: the item of the tuple at its place; ``datasets["train"]``
            # of a dict filled by ``datasets[split] = Lines(...)``: what it holds
            index = ir[2]
            if isinstance(index, tuple) and index[:1] == ("k",) and isinstance(index[1], int) and not isinstance(index[1], bool):
                for elts, part_env in self._tuple_items(ir[1], env, depth, seen):
                    if 0 <= index[1] < len(elts):
                        self._classes_into(elts[index[1]], part_env, depth + 1, out, seen)
            for item, item_env in self._held_items(ir[1], env, depth, seen):
                self._classes_into(item, item_env, depth + 1, out, seen)
        elif tag == "e" and ir[2]:
            i = ir[2][0]
            for part in self._tuple_items(ir[1], env, depth, seen):
                elts, part_env = part
                if isinstance(i, int) and 0 <= i < len(elts):
                    item = elts[i]
                    self._classes_into(("e", item, ir[2][1:]) if len(ir[2]) > 1 else item, part_env, depth + 1, out, seen)

    def _tuple_items(self, ir, env, depth, seen, returns: bool = True) -> list:
        """[(element IRs, env)] of the tuple displays an expression may be (``a, b = f()``).
        ``returns=False``: only the displays the expression names, itself or through locals (no
        function's or method's result: ``_called_classes`` for the call index)."""
        if not isinstance(ir, tuple) or not ir or depth > 6:
            return []
        if ir[0] == "L" and ir[1] in ("tuple", "list"):
            return [(ir[2], env)]
        if ir[0] in ("n", "nk") and env.flow is not None:
            return [p for value in env.flow.locals.get(ir[1], ()) for p in self._tuple_items(value, env, depth + 1, seen, returns)]
        if not returns:
            return []
        if ir[0] == "c" and ir[1][:1] == ("g",):
            with self.quietly():
                callee = self.resolve(ir[1][1], env.facts.root)
            if isinstance(callee, FuncRef) and callee.fn.flow is not None:
                callee_env = Env(callee.file, callee, self.class_of(callee))
                return [p for ret in callee.fn.flow.returns for p in self._tuple_items(ret, callee_env, depth + 1, seen)]
        if ir[0] == "c" and ir[1][:1] == ("a",):
            return [
                p for ret, ret_env in self._method_returns(ir[1], env, depth, seen)
                for p in self._tuple_items(ret, ret_env, depth + 1, seen)
            ]
        if ir[0] in ("a", "s"):
            # ``train, val = corpus.splits`` of a ``@property`` returning a tuple of Datasets
            owners, attr = self._attr_owners(ir, env, depth, seen)
            out = []
            for cls in owners:
                prop = self.find_method(cls, attr)
                if prop is not None and is_property(prop.fn) and prop.fn.flow is not None:
                    prop_env = Env(prop.file, prop, cls)
                    out.extend(p for ret in prop.fn.flow.returns for p in self._tuple_items(ret, prop_env, depth + 1, seen))
            return out
        return []

    def _method_returns(self, func, env, depth, seen) -> list:
        """[(return IR, env)] of a method called on an object the model can name
        (``self.data.get_splits()``, ``builder.build()``): each return of the method its class
        (or a base) defines, evaluated on an instance of that class."""
        out = []
        for cls in self._instance_owners(func[1], env, depth, seen):
            m = self.find_method(cls, func[2])
            if m is not None and m.fn.flow is not None and not is_property(m.fn):
                out.extend((ret, Env(m.file, m, cls)) for ret in m.fn.flow.returns)
        return out

    def _attr_owners(self, ir, env, depth, seen) -> tuple[list, str]:
        """(the classes an attribute read ``self.x`` / ``obj.x`` reads from, the attribute)."""
        if ir[0] == "s":
            return self._instance_owners(("self",), env, depth, seen), ir[1]
        return self._instance_owners(ir[1], env, depth, seen), ir[2]

    def _instance_owners(self, recv, env, depth, seen) -> list:
        """The classes an object expression may be an instance of: ``self`` is one of the
        method's own class; anything else, what ``instance_classes`` names."""
        if recv == ("self",):
            return [env.self_cls] if env.self_cls is not None else []
        owners: dict = {}
        self._classes_into(recv, env, depth + 1, owners, seen)
        return list(owners.values())

    def _held_items(self, ir, env, depth, seen) -> list:
        """[(value IR, env)] of what a container an expression names holds: the values of a dict
        display, ``x[k] = v`` and ``x.append(v)`` on a local, on ``self.x`` or on another
        object's attribute (in the methods of the classes the model names for it)."""
        if not isinstance(ir, tuple) or not ir or depth > MAX_CLASS_DEPTH:
            return []
        tag = ir[0]
        if tag == "D":
            return [(v, env) for _k, v in ir[1]]
        if tag == "C":  # {split: Images(split) for split in splits}, [Images(s) for s in splits]
            elt = ir[2]
            if ir[1] == "dict":
                return [(elt[2], env)] if isinstance(elt, tuple) and elt[:1] == ("kv",) else []
            return [(elt, env)]
        out: list = []
        if tag in ("n", "nk") and env.flow is not None:
            for value in env.flow.locals.get(ir[1], ()):
                out.extend(self._held_items(value, env, depth + 1, seen))
            for how, value, *_ in env.flow.muts.get(ir[1], ()):
                out.extend(_stored_item(how, value, env))
        elif tag in ("s", "a"):
            owners, attr = self._attr_owners(ir, env, depth, seen)
            for cls in owners:
                for fn, write in self.attr_writes(cls, attr):
                    write_env = Env(fn.file, fn, cls)
                    if write[0] == "=":
                        out.extend(self._held_items(write[1], write_env, depth + 1, seen))
                    else:
                        out.extend(_stored_item(write[0], write[1], write_env))
        return out

    def _called_classes(self, func, env, depth, out, seen, returns: bool = True) -> None:
        """The classes a call of ``func`` may construct: the class itself, what a project
        function returns, a class a local or a registry holds. ``returns=False``: only the classes
        the expression names (no function's result, no call site asked: it serves the call index)."""
        if not isinstance(func, tuple) or not func or depth > MAX_CLASS_DEPTH:
            return
        tag = func[0]
        if tag == "g":
            found = self.resolve(func[1], env.facts.root)
            if isinstance(found, ClassRef):
                out.setdefault(found.key, found)
            elif returns and isinstance(found, FuncRef) and found.fn.flow is not None:
                # an alternative constructor (``Images.from_meta(path)``, a classmethod returning
                # ``cls(...)``): its ``cls`` is the class it is called on, a subclass included
                named = self.resolve(func[1].rpartition(".")[0], env.facts.root) if is_classmethod(found.fn) else None
                callee_env = Env(found.file, found, named if isinstance(named, ClassRef) else self.class_of(found))
                for ret in found.fn.flow.returns:
                    self._classes_into(ret, callee_env, depth + 1, out, seen)
        elif tag == "u":
            for option in func[1]:
                self._called_classes(option, env, depth, out, seen, returns)
        elif tag in ("n", "nk") and env.flow is not None:
            for value in env.flow.locals.get(func[1], ()):
                self._called_classes(value, env, depth + 1, out, seen, returns)
        elif tag == "i":
            # ``REGISTRY[name](...)``: the classes a dict of classes holds
            for values in self._dict_values(func[1], env, depth):
                self._called_classes(values[0], values[1], depth + 1, out, seen, returns)
        elif tag == "a" and returns:
            # ``self.data.build()``: what the method returns
            for ret, ret_env in self._method_returns(func, env, depth, seen):
                self._classes_into(ret, ret_env, depth + 1, out, seen)
        elif tag == "e" and not func[2]:
            # ``for cls in [Reuters52, Multi30k]: cls(root)``: each class the list holds
            for elts, part_env in self._tuple_items(func[1], env, depth, seen, returns):
                for elt in elts:
                    self._called_classes(elt, part_env, depth + 1, out, seen, returns)
        elif tag == "p" and env.fn is not None and env.self_cls is not None and _class_param(env.fn.fn, func[1]):
            # ``cls(...)`` in a classmethod: the class it was called on
            out.setdefault(env.self_cls.key, env.self_cls)
        elif tag == "p" and returns and env.fn is not None:
            # ``def load_dataset(self, dataset_class): dataset_class(args)``: the classes its
            # callers pass (``self.load_dataset(GraphDataset)``)
            for found, site_env in self._site_arguments(env.fn, func[1], env.self_cls):
                self._called_classes(found, site_env, depth + 1, out, seen, returns)

    def _site_arguments(self, fn, name: str, self_cls=None) -> list:
        """[(argument IR, its env)]: what the call sites of ``fn`` pass as its parameter ``name``
        (the first 16 sites) on an instance of ``self_cls`` (``_sites_on``: a base's ``__init__``
        that the instance's class overrides gets only its own hierarchy's ``super()`` calls)."""
        params = list(fn.fn.params)
        out = []
        for site_env, args, kwargs, _row, skip_self in self._sites_on(fn, self_cls)[:16]:
            found = _bind_arg(params[1:] if skip_self and params else params, name, args, kwargs, fn.fn.kwonly)
            if isinstance(found, tuple):
                out.append((found, site_env))
        return out

    def _dict_values(self, ir, env, depth) -> list:
        """[(value IR, env)] of the dict displays an expression may be."""
        if not isinstance(ir, tuple) or not ir or depth > 6:
            return []
        if ir[0] == "D":
            return [(v, env) for _k, v in ir[1]]
        if ir[0] in ("n", "nk") and env.flow is not None:
            return [p for value in env.flow.locals.get(ir[1], ()) for p in self._dict_values(value, env, depth + 1)]
        if ir[0] == "g":
            mod, _, name = ir[1].rpartition(".")
            facts = self.module(mod, env.facts.root) if mod else None
            if facts is not None and facts.flow is not None:
                module_env = Env(facts, None, None)
                return [p for value in facts.flow.locals.get(name, ()) for p in self._dict_values(value, module_env, depth + 1)]
        return []

    def attr_paths(self, cls, attr: str) -> list:
        """[(FuncRef, Val, rebinds)]: what each method of the hierarchy leaves in ``self.<attr>``
        from its own writes; ``rebinds`` when one of them is an ``=`` (the method builds a value
        of its own rather than adding to another's)."""
        by_fn: dict = {}
        for fn, write in self.attr_writes(cls, attr):
            by_fn.setdefault(fn.key, (fn, []))[1].append(write)
        out = []
        for fn, writes in by_fn.values():
            v = BOTTOM
            for w in writes:
                v = self._apply_write(v, fn, w, cls)
            out.append((fn, v, any(w[0] == "=" for w in writes)))
        return out

    # Memoized recursion with cycles: a value being computed reads as BOTTOM to what it reaches.
    # What is computed while reading such an in-progress value is provisional (it holds BOTTOM
    # where the finished value will hold more): it is memoized only until the outermost value of
    # its cycle is finished, then forgotten and computed again when asked (Tarjan's low-link).

    # (the state is the model's own attributes, set when it is built: ``ProgramModel.__init__``)

    def _memo_hit(self, memo, key) -> Val:
        level = self._active.get(key)
        if level is None:
            level = self._reentered.get(key)
            if level is None:
                level = self._prov_low.get(key)
        if level is not None and level < self._low:
            self._low = level
        return memo[key]

    def _memo_start(self, memo, key, tracked: bool = True) -> tuple[int, int, int]:
        """``tracked``: a value whose cycles matter (an attribute, a parameter, a local: read back
        while computed, ``_ev_selfattr`` and the calls ask whether it is the innermost in
        progress); an expression re-entered while being evaluated reads BOTTOM too, and what read
        it is provisional as well (``_reentered``): kept as final, it held BOTTOM where the
        expression holds more, and which value of a cycle was asked first decided what the
        others held (a loop index ``for i, r in enumerate(self.anno)`` read as unknown by the
        worker code's ``self.train.append(i)`` while ``self.anno`` was being computed, then
        memoized: ``bench/order_check.py``)."""
        memo[key] = BOTTOM
        active = self._active
        reentered = self._reentered
        level = len(active) + len(reentered) + 1
        if tracked:
            active[key] = level
        else:
            reentered[key] = level
        saved = self._low
        self._low = NO_CYCLE
        return saved, len(self._provisional), level

    def _memo_finish(self, memo, key, result: Val, started: tuple[int, int, int]) -> Val:
        saved, mark, level = started
        if self._active.pop(key, None) is None:
            self._reentered.pop(key, None)
        low = self._low
        memo[key] = result
        provisional = self._provisional
        prov_low = self._prov_low
        if low < level:  # read a value of an enclosing computation still in progress
            provisional.append((memo, key))
            prov_low[key] = low
        else:  # finished: what was provisional on it is forgotten
            for m, k in provisional[mark:]:
                m.pop(k, None)
                prov_low.pop(k, None)
            del provisional[mark:]
            low = NO_CYCLE
        self._low = min(saved, low)
        return result

    # the memos of values a model of planning's chase hands to the next one (``carry_values``)
    _CARRIED_MEMOS = ("_val_memo", "_attr_memo", "_param_memo", "_call_memo", "_call_after")

    def carry_values(self, earlier) -> None:
        """Take the values ``earlier`` computed: the model before this one in planning's chase
        (the same run, fewer files). Without them each link of the chase computed every value
        again (MONAI's cold run: one attribute's value, 0.67 s, on each of four links; 4.0 s of
        6.9 in the chase). Taken as they are: a value the files parsed since would change (a
        call into one of them, a call site in one) stays as it was, and a chain through it ends
        here. The chase only parses sooner what the next round of demands would ask for; the
        rounds are asked of models that take nothing, and planning ends when one asks for no
        file (then a fresh evaluation of every question needs nothing more)."""
        for name in self._CARRIED_MEMOS:
            old = earlier.__dict__.get(name)
            if old:
                self.__dict__.setdefault(name, {}).update(old)

    def attr_writes(self, cls, attr: str, include_workers: bool = False) -> list:
        """[(FuncRef, write)] of the writes to ``self.<attr>`` in the class hierarchy, in MRO
        order (bases last) then source order. A method the workers run counts only when the
        constructor runs it too (``load()`` called from ``__init__`` and again, lazily, from
        ``__getitem__``): what it stores there is on the instance before the fork."""
        workers: set = set()
        if not include_workers:
            workers = set(self.worker_functions(cls))
            if workers:
                init = self.find_method(cls, "__init__")
                if init is not None:
                    workers -= self._constructor_reach(init, cls)
        out = []
        mro = self.mro(cls)
        for i, r in enumerate(mro):
            for name, fn, writes in self._writers(r).get(attr, ()):
                if (r.file.path, fn.qualname) in workers:
                    continue
                if not self._runs_on(mro[:i], name):
                    continue  # overridden by a subclass that never calls it (no super().name())
                for write in writes:
                    out.append((self._funcref(r.file, fn), write))
        return out

    def _writers(self, r) -> dict:
        """{attr: [(method name, FunctionFacts, its writes of ``self.<attr>``), ...]} of one class's
        own methods, in their order (one pass per class, not one per attribute asked)."""
        memo = self.__dict__.setdefault("_writers_memo", {})
        found = memo.get(r.key)
        if found is None:
            found = memo[r.key] = {}
            for name, qual in r.cls.methods.items():
                fn = r.file.functions.get(qual)
                if fn is None or fn.flow is None:
                    continue
                for attr, writes in fn.flow.writes.items():
                    if writes:
                        found.setdefault(attr, []).append((name, fn, writes))
        return found

    def constructor_reach(self, cls) -> frozenset:
        """The keys of the functions the constructor of ``cls`` runs (its ``__init__`` and what
        that calls, base constructors through ``super()``); empty without a project ``__init__``."""
        init = self.find_method(cls, "__init__")
        return frozenset(self._constructor_reach(init, cls)) if init is not None else frozenset()

    def _constructor_reach(self, init, cls) -> set:
        """The functions a class's constructor runs. Memoized once the model is settled (the
        planner has asked its questions: ``settled``); before that each ask is computed again,
        for the unparsed files and chains it meets are what the planner follows."""
        if not self.settled:
            return set(self.reachable([init], cls))
        memo = self.__dict__.setdefault("_constructor_reach_memo", {})
        key = (init.key, cls.key)
        found = memo.get(key)
        if found is None:
            found = memo[key] = frozenset(self.reachable([init], cls))
        return found

    def _runs_on(self, before: list, name: str) -> bool:
        """Whether a base's method ``name`` runs on an instance whose more derived classes
        (``before``, in MRO order) may override it: not overridden, or an override calls
        ``super().name()`` (or ``super(C, self).name()``)."""
        overrides = [r for r in before if name in r.cls.methods]
        if not overrides:
            return True
        for r in overrides:
            fn = r.file.functions.get(r.cls.methods[name])
            if fn is None or fn.flow is None:
                return True  # unknown: keep it
            for kind, target, *rest in fn.flow.calls:
                if (kind == "super" and target == name) or (kind == "super_from" and target[1] == name):
                    return True
                if kind == "ref" and self._explicit_base_call(r, target, rest, name):
                    return True
        return False

    def _explicit_base_call(self, r, target: str, rest: list, name: str) -> bool:
        """``Base.name(self, ...)`` in a method of ``r``: a base class of ``r`` (a project class in
        its MRO) named with the method, ``self`` passed first, the pre-``super()`` way of running
        a base constructor (``PairDataset.__init__(self, phase, config)``)."""
        args = rest[0] if rest else ()
        if not args or args[0] != ("self",) or not target.endswith("." + name):
            return False
        owner = self.resolve(target[: -len(name) - 1], r.file.root)
        return isinstance(owner, ClassRef) and owner.key != r.key and any(b.key == owner.key for b in self.mro(r))

    def value(self, ir, env) -> Val:
        """Evaluate an IR node in an environment (Env)."""
        return self._eval(ir, env, 0)

    def param_value(self, fnref, name: str, self_cls=None) -> Val:
        """A parameter: its default and what every call site in the project passes."""
        question = ("param_value", fnref.key, name, self_cls.key if self_cls is not None else None)
        return self._asked(question, self._param_value, fnref, name, self_cls)

    def _param_value(self, fnref, name: str, self_cls) -> Val:
        memo = self.__dict__.setdefault("_param_memo", {})
        key = ("param", fnref.key, name, self_cls.key if self_cls is not None else None)
        if key in memo:
            return self._memo_hit(memo, key)
        saved = self._memo_start(memo, key)
        flow = fnref.fn.flow
        out = BOTTOM
        default = flow.defaults.get(name) if flow is not None else None
        if default is not None and default != ("k", None):
            out = join(out, self._eval(default, Env(fnref.file, fnref, self_cls), 1))
        passed = self._passed_values(fnref, name, self_cls)
        if passed is None:
            out = join(out, self._unseen_param(fnref, name, out))
        else:
            out = join(out, passed)
        if out.is_bottom and not (passed is not None and self._only_from_hierarchy(fnref, self_cls)):
            # (an argument the instance's own class passes up from what it is building:
            # ``super().__init__(self.files)``, nothing more than that attribute)
            out = self._unseen_param(fnref, name, out)
        kind = flow.annotated.get(name) if flow is not None else None
        if kind is not None and not (out.kinds & CONTAINERS):
            # ``items: List[str]``: a Python container whatever the callers pass; its size is theirs
            why = ((f"the `{name}` argument, annotated as a {kind}", fnref.file.path, fnref.fn.span.row),)
            out = join(out, Val(frozenset({kind}), size=UNKNOWN_SIZE, why=why))
        return self._memo_finish(memo, key, out, saved)

    def _unseen_param(self, fnref, name: str, default: Val) -> Val:
        """A parameter whose callers are not seen (or pass ``*args`` / ``**kwargs``): anything
        they pass. A device parameter (named so, or defaulting to a device) of a function nobody
        in the project calls may be a CUDA device: its callers choose it."""
        where = (fnref.file.path, fnref.fn.span.row)
        if (is_device_param(name) or default.has("device")) and not self.call_sites(fnref):
            return val("param", detail=name, device="maybe", why=((f"the `{name}` argument, a device its callers choose", *where),))
        return val("param", detail=name, why=((f"the `{name}` argument", *where),))

    # ------------------------------------------------------------------ call sites

    def call_sites(self, fnref) -> list:
        """[(caller Env, args, kwargs, row)] of the project calls that run ``fnref`` with the
        caller's arguments: calls of the function, of its class (``__init__``), ``self.m()`` and
        ``super().m()`` calls."""
        index = self.__dict__.get("_call_index")
        if index is None:
            if self.__dict__.get("_indexing"):
                # asked while the index is built (what a question of the build reaches asks for
                # call sites, a path the build's questions should not take): none, rather than
                # building the index again inside itself until the stack runs out (the torch
                # tree's cold run ended so)
                return []
            self._indexing = True
            try:
                index = self.__dict__["_call_index"] = self._build_call_index()
            finally:
                self._indexing = False
        unresolved = self.__dict__.get("_call_unresolved")
        if unresolved:
            # the calls whose name met unparsed files: only those named as this function may be
            # one of its call sites (``_build_call_index``)
            met: set[str] = set()
            for name in self._names_calling(fnref):
                met.update(unresolved.get(name, ()))
            if met:
                self._missed(frozenset(met))
        return index.get(fnref.key, [])

    def _names_calling(self, fnref) -> frozenset[str]:
        """The last names of the calls that may run ``fnref``: its own name, and for a
        constructor its class's and its subclasses' names (``pkg.Images(...)``); with the names
        the parsed files import them under (``from .data import Images as Frames``)."""
        memo = self.__dict__.setdefault("_names_calling_memo", {})
        found = memo.get(fnref.key)
        if found is None:
            names = {fnref.fn.name}
            if fnref.fn.name == "__init__":
                owner = self.class_of(fnref)
                if owner is not None:
                    with self.quietly(), self._apart():  # (the subclasses the model sees)
                        names.update(c.cls.name for c in (owner, *self.subclasses_of(owner)))
            aliases = self._import_aliases
            for name in list(names):
                names.update(aliases.get(name, ()))
            found = memo[fnref.key] = frozenset(names)
        return found

    @cached_property
    def _import_aliases(self) -> dict[str, set[str]]:
        """A name -> the other names the parsed files import it under (``from .data import
        Images as Frames``: ``Images`` -> {``Frames``})."""
        aliases: dict[str, set[str]] = {}
        for facts in self.files.values():
            for bound, qual in facts.imports.items():
                last = qual.rpartition(".")[2]
                if last != bound:
                    aliases.setdefault(last, set()).add(bound)
        return aliases

    def _build_call_index(self) -> dict:
        index: dict = {}
        # a function's calls as an earlier model of this run resolved them, while none of the
        # files its resolutions met unparsed has been parsed since and no module name has
        # changed: files are only added during planning, and an answer that met no unparsed file
        # reads only parsed files, whose facts stay (path -> (its functions: ``_flows``,
        # [a part (below) or None, per function]): ``carried_store``). Per function, not
        # per file: a file's other functions keep theirs (NeMo's cold run, the second build:
        # 3,930 of 7,780 functions again, where 512 of 633 files were)
        #
        # A call naming a function that cannot be resolved because its name leads into unparsed
        # files (``diffusers.StableDiffusionXLPipeline.from_pretrained`` through the package's
        # ``__init__``) may only be a call site of a function of that last name (or of a class
        # of that name, for a constructor): those files are met by the questions about such a
        # function only (``call_sites``, ``_call_unresolved``), not by every question asking
        # for any call site. Each function's part: (its entries, the files met unconditionally,
        # ((last names, files met), ...) of its unresolved calls).
        store = self.carried_store("call_index", on_layout=True)
        files = self.files
        replayed: set[str] = set()
        unresolved: dict[str, set[str]] = {}
        with self._apart():  # (what it meets is reported below)
            self._index_parts(index, store, files, replayed, unresolved)
        self._call_unresolved = unresolved
        if replayed:
            with self.quietly():  # what building them met, for the computation asking now
                self._missed(frozenset(replayed))
        return index

    def _index_parts(self, index, store, files, replayed, unresolved) -> None:
        for path, facts in files.items():
            found = self.kept(store, path)
            if found is None:
                flows = _flows(facts)
                found = self.keep(store, path, (flows, [None] * len(flows)))
            flows, parts = found
            for i, part in enumerate(parts):
                if part is None or (part[1] or part[2]) and any(p in files for p in _part_met(part)):
                    fn, flow = flows[i]
                    part = parts[i] = self._flow_part(facts, fn, flow)
                replayed.update(part[1])
                for names, met in part[2]:
                    for name in names:
                        unresolved.setdefault(name, set()).update(met)
                for key, entry in part[0]:
                    index.setdefault(key, []).append(entry)

    def _flow_part(self, facts, fn, flow) -> tuple:
        """A function's part of the call index (``_build_call_index``)."""
        with self._tracking() as met:
            entries = self._flow_calls(facts, fn, flow)
        if not met:
            return (entries, frozenset(), ())
        # which calls met them: asked again one by one (the resolutions are memoized)
        fnref = self._funcref(facts, fn) if fn is not None else None
        self_cls = self.class_of(fnref) if fnref is not None else None
        always: set[str] = set()
        unresolved: list = []
        with self.quietly():
            for kind, target, *_ in flow.calls:
                with self._tracking() as one:
                    callees = self._callees(kind, target, facts, fnref, self_cls)
                if not one:
                    continue
                names = _call_names(kind, target, flow, facts) if not callees else None
                if names and (kind == "lmeth" or all(self.resolve(q, facts.root) is None for q in _called(kind, target, flow, facts))):
                    unresolved.append((names, frozenset(one)))
                else:
                    always.update(one)
        return (entries, frozenset(always), tuple(unresolved))

    def _flow_calls(self, facts, fn, flow) -> list:
        """[(callee key, (caller Env, args, kwargs, row, skip_self))] of the calls of one
        function (None: the module's code) of a file."""
        out = []
        fnref = self._funcref(facts, fn) if fn is not None else None
        self_cls = self.class_of(fnref) if fnref is not None else None
        env = Env(facts, fnref, self_cls)
        with self.quietly():  # (once per function: entering it per call cost more than the rest)
            for kind, target, args, kwargs, row in flow.calls:
                for callee, skip_self in self._callees(kind, target, facts, fnref, self_cls):
                    out.append((callee.key, (env, args, kwargs, row, skip_self)))
        return out

    def _callees(self, kind, target, facts, fnref, self_cls):
        """The project functions a call may run (asked quietly: the call index's questions ask
        for no unparsed file)."""
        if kind == "ref":
            found = self.resolve(target, facts.root)
            if isinstance(found, ClassRef):
                init = self.find_method(found, "__init__")
                return [(init, True)] if init is not None else []
            if isinstance(found, FuncRef):
                # a method named through its class: ``Base.__init__(self, ...)`` passes the
                # instance itself; a classmethod (``Cls.build(...)``) gets its class implicitly
                return [(found, found.fn.cls is not None and bool(found.fn.params) and found.fn.params[0] == "cls")]
            return []
        if kind == "local":
            if fnref is not None and self_cls is not None and _class_param(fnref.fn, target):
                # ``return cls(meta, **kwargs)`` in a classmethod: the class's constructor
                init = self.find_method(self_cls, "__init__")
                return [(init, True)] if init is not None else []
            # a local holding a class or a function: each project one its assignments name
            flow = fnref.fn.flow if fnref is not None else facts.flow
            names = called_names(flow, facts, target)
            return [c for name in names for c in self._callees("ref", name, facts, fnref, self_cls)]
        if kind == "lmeth":
            # ``solver.train(dataset)`` with ``solver = Trainer(...)``: the method of each project
            # class the local's assignments construct
            flow = fnref.fn.flow if fnref is not None else facts.flow
            env = Env(facts, fnref, self_cls)
            built: dict = {}
            for v in flow.locals.get(target[0], ()) if flow is not None else ():
                if v[:1] == ("c",) and v[1][:1] == ("g",):  # (a class named at the construction)
                    self._called_classes(v[1], env, 0, built, set(), returns=False)
            methods = [self.find_method(cls, target[1]) for cls in built.values()]
            return [(m, not _static(m.fn)) for m in methods if m is not None]
        if self_cls is None:
            return []
        if kind == "self":
            m = self.find_method(self_cls, target)
            if m is not None:
                return [(m, not _static(m.fn))]
            inits = [self.find_method(found, "__init__") for found in self.held_classes(self_cls, target)]
            return [(init, True) for init in inits if init is not None]
        if kind == "super":
            owner = self.class_of(fnref)
            m = self.find_method(self_cls, target, after=owner) if owner is not None else None
            return [(m, not _static(m.fn))] if m is not None else []
        if kind == "super_from":
            start = self.resolve(target[0], facts.root)
            m = self.find_method(self_cls, target[1], after=start) if isinstance(start, ClassRef) else None
            return [(m, not _static(m.fn))] if m is not None else []
        return []

    def held_classes(self, cls, attr: str) -> list:
        """``self.dataset(path, files)`` with ``self.dataset = DATASETS[opt.dataset]`` (or a class
        assigned directly): the project classes the attribute may hold."""
        memo = self.__dict__.setdefault("_held_memo", {})
        key = (cls.key, attr)
        found = memo.get(key)
        if found is None:
            out: dict = {}
            for r in self.mro(cls):  # (every write: the call index is being built)
                for qual in r.cls.methods.values():
                    fn = r.file.functions.get(qual)
                    for write in fn.flow.writes.get(attr, ()) if fn is not None and fn.flow is not None else ():
                        if write[0] == "=":
                            self._called_classes(write[1], Env(r.file, FuncRef(r.file, fn), cls), 0, out, set(), returns=False)
            found = memo[key] = list(out.values())
        return found

    def _passed_values(self, fnref, name: str, self_cls=None) -> Val | None:
        """The join of what the call sites pass as parameter ``name``; None: no call site seen (or
        one passes ``*args``/``**kwargs`` that cannot be matched)."""
        params = list(fnref.fn.params)
        sites = self._sites_on(fnref, self_cls)
        if not sites:
            return None
        out = BOTTOM
        for env, args, kwargs, row, skip_self in sites:
            plist = params[1:] if skip_self and params else params
            found = _bind_arg(plist, name, args, kwargs, fnref.fn.kwonly)
            if found is _MISSING:
                continue  # the default applies (already joined)
            if found is None:
                # ``Dataset(*load(split))``: the item of a fixed tuple at the parameter's place;
                # else *args / **kwargs: what the callers of a forwarding function pass it
                v = self._starred(plist, name, args, env)
                if v is None:
                    v = self._forwarded(env, plist, name, args, kwargs, 0)
                if v is None:
                    return None
                out = join(out, v)
                continue
            v = self._eval(found, env, 2)
            if grows(v) or v.has("device") or v.device:
                v = sized(v, v.size, None)
            out = join(out, v)
        return out if not out.is_bottom else BOTTOM

    def _starred(self, plist, name, args, env) -> Val | None:
        """Parameter ``name`` at a call ``f(a, *t)`` where ``t`` is a fixed tuple (a function
        returning ``x, y, z``): its item at the parameter's place; None when not known."""
        if name not in plist:
            return None
        stars = [j for j, a in enumerate(args) if a[0] == "*"]
        if len(stars) != 1 or stars[0] != len(args) - 1:
            return None
        j = stars[0]
        i = plist.index(name) - j
        if i < 0:
            return None
        t = self._eval(args[j][1], env, 2)
        if t.items is None or i >= len(t.items):
            return None
        return t.items[i]

    def _forwarded(self, env, plist, name, args, kwargs, depth) -> Val | None:
        """Parameter ``name`` (of ``plist``) at a call ``f(*args, **kwargs)`` made by a function
        that only forwards what it is given (``def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)``): what that function's own call sites pass in its
        place, through more forwarders. None when it cannot be matched."""
        fwd = env.fn
        if fwd is None or depth > 3 or fwd.fn.params[1:] or fwd.fn.cls is None:
            return None  # (a forwarder of nothing but *args / **kwargs, a method)
        if args[:1] == (("self",),):  # ``Base.__init__(self, *args, **kwargs)``: the instance first
            args = args[1:]
            if list(plist[:1]) == ["self"]:
                plist = plist[1:]
        star = next((j for j, a in enumerate(args) if a[0] == "*"), None)
        i = plist.index(name) if name in plist else None
        index = i - star if star is not None and i is not None and i >= star and args[star][1][0] == "p" else None
        by_name = any(k is None and v[0] == "p" for k, v in kwargs)
        if index is None and not by_name:
            return None
        sites = self._sites_on(fwd, env.self_cls)
        if not sites:
            # a subclass nothing constructs passes nothing (a sibling that is built does)
            return BOTTOM if depth else None
        out = BOTTOM
        for site_env, site_args, site_kwargs, _row, _skip in sites:
            if site_args[:1] == (("self",),):  # ``Fwd.__init__(self, *args)``: the instance first
                site_args = site_args[1:]
            found = next((v for k, v in site_kwargs if k == name), _MISSING) if by_name else _MISSING
            if found is _MISSING and index is not None:
                found = _positional(site_args, index)
            if found is _MISSING:
                if any(k is None for k, _ in site_kwargs):
                    found = None
                else:
                    continue
            if found is None:
                # the caller forwards too: its own callers, the same place further out
                v = self._forwarded(site_env, [*([None] * index), name] if index is not None else [name], name, site_args, site_kwargs, depth + 1)
                if v is None:
                    return None
                out = join(out, v)
                continue
            out = join(out, self._eval(found, site_env, 2))
        return out

    def _sites_on(self, fnref, self_cls) -> list:
        """The call sites that run a base-class method on an instance of ``self_cls``: when a class
        of the instance overrides it (its own ``__init__``), only the ``super().m(...)`` /
        ``self.m(...)`` calls made in the instance's class hierarchy reach the base's method;
        another subclass's calls, or a construction of the base, pass nothing to this instance."""
        sites = self.call_sites(fnref)
        if not self._only_from_hierarchy(fnref, self_cls):
            return sites  # not overridden: constructions of the instance's class run it directly
        mro = {r.key for r in self.mro(self_cls)}
        return [site for site in sites if site[0].self_cls is not None and site[0].self_cls.key in mro]

    def _only_from_hierarchy(self, fnref, self_cls) -> bool:
        """``fnref`` is a base-class method that a class of the ``self_cls`` instance overrides."""
        owner = self.class_of(fnref)
        if self_cls is None or owner is None or owner.key == self_cls.key:
            return False
        if owner.key not in {r.key for r in self.mro(self_cls)}:
            return False
        first = self.find_method(self_cls, fnref.fn.name)
        return first is not None and first.key != fnref.key

    # ------------------------------------------------------------------ the evaluator

    def _eval(self, ir, env, depth: int) -> Val:
        if depth > MAX_EVAL_DEPTH:
            return self._cut()
        memo = self._val_memo
        key = (id(ir), env.key)
        if key in memo:
            return self._memo_hit(memo, key)
        nesting = self._nesting
        if nesting == 0:  # an outermost evaluation: a full budget of calls (MAX_BOUND_CALLS)
            self._bound_calls = 0
        if nesting > MAX_NESTING:
            # attributes, parameters and call sites restart ``depth``: a long chain of them
            # (a property returning another object's property ...) stops here, unknown
            return self._cut()
        self._nesting = nesting + 1
        try:
            if env.binding is not None:
                made = self.__dict__.get("_bound_keys")
                entries = made.get(env.key) if made else None
                if entries is not None:
                    entries.append(key)  # (dropped when that call is evaluated: ``_call_function``)
            # in progress: a cycle resolves to nothing; a local's value read back inside its own
            # evaluation (``objs = valid_objs`` built by walking ``objs``) is tracked, so what is
            # computed inside the cycle is not kept as final
            saved = self._memo_start(memo, key, tracked=ir[0] in ("n", "nk"))
            result = self._eval_node(ir, env, depth + 1)
            return self._memo_finish(memo, key, result, saved)
        finally:
            self._nesting = nesting

    def _eval_node(self, ir, env, depth: int) -> Val:
        if type(ir) is not tuple or not ir:  # not an IR node (never read as one: a string's
            return UNKNOWN  # first letter would pass for a tag)
        tag = ir[0]
        handler = _HANDLERS.get(tag)
        if handler is None:
            return UNKNOWN
        return handler(self, ir, env, depth)

    def _ev_const(self, ir, env, depth):
        v = ir[1]
        if v is None:
            return val("none", size=BOUNDED)
        if isinstance(v, bool):
            return val("bool", size=BOUNDED)
        if isinstance(v, int):
            return val("int", size=BOUNDED, detail=str(v))
        if isinstance(v, float):
            return val("float", size=BOUNDED)
        if isinstance(v, str):
            return val("str", size=BOUNDED, detail=v[:60], device="cuda" if is_cuda_string(v) else None)
        return UNKNOWN

    def _ev_global(self, ir, env, depth):
        qual = ir[1]
        found = self.resolve(qual, env.facts.root)
        if found is None:
            found = self._module_variable(qual, env.facts.root, depth)
            if found is None and "." in qual:  # ``Dataset.NUM_SITES``: a class-level constant
                owner = self.resolve(qual.rpartition(".")[0], env.facts.root)
                if isinstance(owner, ClassRef):
                    found = self._class_attr(owner, qual.rpartition(".")[2], depth)
            return found if found is not None else UNKNOWN
        if isinstance(found, ClassRef):
            return val("class", cls=found, detail=found.cls.qualname)
        if isinstance(found, FuncRef):
            return val("function", fn=found, detail=found.fn.qualname)
        if isinstance(found, str):
            v = self._module_variable(qual, env.facts.root, depth)
            if v is not None:
                return v
            return val("ext", detail=canonical(found) or found)
        return val("module")

    def _shipped(self, ir, env, depth: int = 0, row: int | None = None) -> bool:
        """``ir`` names a path under the module's own folder, or a file opened there: built from
        ``__file__`` (``os.path.dirname(__file__)``, ``Path(__file__).resolve().parent / "x.json"``,
        a module constant holding one, a local, ``open`` of one). Every assignment of a name
        must be such a path."""
        if not isinstance(ir, tuple) or not ir or depth > 8:
            return False
        tag = ir[0]
        if tag == "g":
            if ir[1] == "__file__":
                return True
            mod, _, name = ir[1].rpartition(".")
            facts = env.facts if mod == env.facts.module else self.module(mod, env.facts.root) if mod else None
            if facts is None or facts.flow is None or not facts.flow.locals.get(name):
                return False
            module_env = Env(facts, None, None)
            return all(self._shipped(v, module_env, depth + 1) for v in facts.flow.locals[name])
        if tag in ("n", "nk"):
            flow = env.flow
            values = list(flow.locals.get(ir[1], ())) if flow is not None else []
            killed = ir[2] if tag == "nk" and len(ir) > 2 else ()
            values = [v for i, v in enumerate(values) if i not in killed]
            if row is not None:
                # ``fh`` of several ``with open(...) as fh:`` blocks: those opened before the use
                # (a later one reaches it only through a loop around both)
                before = [v for v in values if (_ir_row(v) or 0) <= row]
                values = before or values
            return bool(values) and all(self._shipped(v, env, depth + 1) for v in values)
        if tag == "with":
            return self._shipped(ir[1], env, depth + 1)
        if tag == "b" and ir[1] in ("/", "+"):
            return self._shipped(ir[2], env, depth + 1)  # dir / "x.json", dir + "/x.json"
        if tag == "a" and ir[2] in ("parent", "parents"):
            return self._shipped(ir[1], env, depth + 1)
        if tag == "i":  # Path(__file__).parents[1]
            return self._shipped(ir[1], env, depth + 1)
        if tag == "c":
            func = ir[1]
            if func[:1] == ("g",) and func[1] in SHIPPED_PATH_CALLS and ir[2]:
                return self._shipped(ir[2][0], env, depth + 1)  # os.path.join(here, "x.json")
            if func[:1] == ("a",) and func[2] in ("resolve", "absolute", "joinpath", "expanduser"):
                return self._shipped(func[1], env, depth + 1)  # a method of such a path
        return False

    def _module_variable(self, qual: str, root, depth) -> Val | None:
        """``pkg.config.FILES`` (or a name of this module) assigned at module level."""
        mod, _, name = qual.rpartition(".")
        if not mod:
            return None
        facts = self.module(mod, root)
        if facts is None or facts.flow is None:
            return None
        found = None
        if facts.flow.locals.get(name):
            found = self._local(name, facts.flow, Env(facts, None, None), depth)
        # assigned in functions that declare it ``global`` (``def main(): global train_data``)
        for qualname in facts.signals.get("global_writes", {}).get(name, ()):
            fn = facts.functions.get(qualname)
            if fn is not None and fn.flow is not None and fn.flow.locals.get(name):
                v = self._local(name, fn.flow, Env(facts, FuncRef(facts, fn), None), depth)
                found = v if found is None else join(found, v)
        return found

    def _ev_local(self, ir, env, depth):
        flow = env.flow
        if flow is None:
            return UNKNOWN
        return self._local(ir[1], flow, env, depth)

    def _ev_local_after(self, ir, env, depth):
        """``("nk", name, dead assignments, dead changes)``: a local some of whose assignments (and
        the changes made to them) cannot reach this use (facts/flow.py ``_killed``)."""
        flow = env.flow
        if flow is None:
            return UNKNOWN
        return self._local(ir[1], flow, env, depth, frozenset(ir[2]), frozenset(ir[3]))

    def _local(self, name, flow, env, depth, dead=frozenset(), dead_muts=frozenset()) -> Val:
        out = BOTTOM
        for i, value in enumerate(flow.locals.get(name, ())):
            if i not in dead:
                out = join(out, self._eval(value, env, depth))
        for i, (how, value, loops) in enumerate(flow.muts.get(name, ())):
            if i not in dead_muts:
                out = self._mutate(out, how, value, loops, env, depth, None)
        return out if not out.is_bottom else UNKNOWN

    def _ev_param(self, ir, env, depth):
        name = ir[1]
        if env.binding is not None and name in env.binding:
            return env.binding[name]
        if env.fn is None:
            return UNKNOWN
        return self.param_value(env.fn, name, env.self_cls)

    def _ev_self(self, ir, env, depth):
        if env.self_cls is None:
            return UNKNOWN
        return val("instance", cls=env.self_cls)

    def _ev_selfattr(self, ir, env, depth):
        if env.self_cls is None:
            return UNKNOWN
        attr = ir[1]
        method = self.find_method(env.self_cls, attr)
        if method is not None:
            if is_property(method.fn):
                return self._call_function(method, (), (), env, depth, env.self_cls)
            return val("method", fn=method, cls=env.self_cls)
        v = self.attr_value(env.self_cls, attr)
        if v.is_bottom:
            active = self._active
            key = ("attr", env.self_cls.key, attr, False)
            # (the innermost value in progress may be the same attribute with the workers'
            # writes counted, asked by the worker code's reach while this one is computed)
            innermost = max(active, key=active.get) if key in active else None
            if (
                innermost is not None and innermost[:3] == key[:3] and self.__dict__.get("_looping") not in (key, innermost)
                and self._set_first(env.self_cls, attr)
            ):
                # read back by its own write while its value is computed, after the project's code
                # gave it one (``self.x = [...]`` then ``self.x = [f for f in self.x if ...]``):
                # neutral (through another attribute, ``self.n = len(self.x)`` read back by
                # ``range(self.n)``, or by a loop that fills it, ``for k in self.x: self.x[k] =
                # ...``, what it measures is not known yet)
                return BOTTOM
            const = self._class_attr(env.self_cls, attr, depth)
            return const if const is not None else UNKNOWN
        return v

    def _set_first(self, cls, attr: str) -> bool:
        """Whether some ``=`` write of ``self.<attr>`` gives it a value without reading it (not
        only ``self.ids = sorted(self.ids)`` over what a library base stored)."""
        return any(w[0] == "=" and not holds(w[1], ("s", attr)) for _fn, w in self.attr_writes(cls, attr))

    def _class_attr(self, cls, attr, depth) -> Val | None:
        for r in self.mro(cls):
            ir = r.cls.attrs_ir.get(attr)
            if ir is not None:
                return self._eval(ir, Env(r.file, None, r), depth)
        return None

    def _ev_attr(self, ir, env, depth):
        base = self._eval(ir[1], env, depth)
        attr = ir[2]
        if base.has("instance") and base.cls is not None:
            m = self.find_method(base.cls, attr)
            if m is not None:
                if is_property(m.fn):
                    return self._call_function(m, (), (), env, depth, base.cls)
                return val("method", fn=m, cls=base.cls)
            v = self.attr_value(base.cls, attr)
            return v if not v.is_bottom else UNKNOWN
        if base.has("coco") and attr == "dataset":
            # the annotation file's JSON: per-image and per-annotation record lists, and a few
            # bounded parts (``_ev_subscript``)
            return val("dict", size=DATA, why=base.why, detail=COCO_JSON)
        if base.has("coco") and attr in COCO_DATA_ATTRS:
            return val("dict", "list", size=DATA, why=base.why)
        if base.has("dataframe") and attr in ("values", "to_numpy"):
            return val("ndarray-obj", size=base.size, why=base.why, detail=FRAME_ARRAY)
        if base.kinds == frozenset({"dataframe"}) and attr in ("iloc", "loc"):
            return base  # the frame's indexers: ``df.iloc[:, 1]`` is a column, ``df.loc[mask]`` rows
        if base.has("dataframe") and base.kinds <= FRAME_OR_UNKNOWN and not attr.startswith("_") and attr not in FRAME_ATTRS:
            # ``df.image_uid``: pandas' attribute access to a column, as ``df["image_uid"]``
            return val("series", size=base.size, why=base.why)
        if base.has("walk"):
            return UNKNOWN
        return UNKNOWN

    def _ev_subscript(self, ir, env, depth):
        base = self._eval(ir[1], env, depth)
        out = self._subscript(base, ir, env, depth)
        if base.device and not out.device and not out.is_bottom:
            out = replace(out, device=base.device)
        return out

    def _subscript(self, base, ir, env, depth):
        index = ir[2]
        if index[0] == "k" and isinstance(index[1], str) and base.attrs is not None:
            part = base.attr(index[1])
            if part is not None:
                return part
        if (
            index[0] == "k" and isinstance(index[1], str) and "dict" in base.kinds and base.kinds <= {"dict", "none", "unknown"}
            and base.size in (BOUNDED, EMPTY) and base.elem is not None and grows(base.elem)
        ):
            # one named field of a record whose fields we cannot tell apart (a config dict passed
            # around): its size is one field's, unknown, not the largest of its siblings
            return replace(base.elem, size=UNKNOWN_SIZE, why=())
        if index[0] == "sl":
            if base.has(*CONTAINERS, "ndarray", "ndarray-obj", "tensor", "str", "dataframe", "series", "records"):
                return base  # (every k-th of a file's records: ``infos[::interval]``)
            return UNKNOWN
        if index[0] == "k" and isinstance(index[1], int):
            if base.items is not None or base.has("tuple", "list"):
                return item_of(base, index[1])
        if index[0] == "cmp" and (base.is_bottom or base.has("dataframe", "series")):
            return base  # a boolean mask keeps the rows that pass: ``df[df["length"] >= n]``
        if base.has("dataframe"):
            if index[0] == "k":  # one column
                return val("series", size=base.size, why=base.why)
            key = self._eval(index, env, depth + 1)
            if key.has("series", "ndarray", "list", "tensor"):  # a boolean mask or a list of columns
                return val("dataframe", size=base.size, why=base.why)
            return val("dataframe", "series", size=base.size, why=base.why)
        if base.has("handle") and base.detail.startswith("h5py"):
            return val("h5dataset", detail=base.detail)
        if base.has("coco"):
            return val("dict", "list", size=DATA, why=base.why)
        if base.detail == COCO_JSON and index[0] == "k" and isinstance(index[1], str):
            if index[1] in COCO_BOUNDED_KEYS:
                return val("list", "dict", size=BOUNDED)  # ``coco.dataset["categories"]``: the classes
            return container("list", val("records", size=LOAD), DATA, base.why)  # ["images"], ["annotations"]
        if base.elem is not None:
            return base.elem
        if base.has("records"):
            if base.detail == "torch.load" and base.has("tensor") and index[0] == "k" and type(index[1]) is int:
                # a part of the tuple a torch file holds (``data, targets = torch.load(path)``):
                # a tensor or records, as the whole is (a part named by a key, ``saved["names"]``,
                # is what a saved dict keeps: records)
                return val("tensor", "records", device=base.device, size=base.size, detail=base.detail, why=base.why)
            return val("records", size=base.size, why=base.why)
        if base.has("ndarray", "ndarray-obj", "tensor"):
            if index[0] == "k" and isinstance(index[1], str) and base.size == LOAD:
                # a named member of a loaded .npz / a field of a record array: one entry per record
                return base
            return replace(base, size=UNKNOWN_SIZE)
        return UNKNOWN

    def _ev_display(self, ir, env, depth):
        kind, elts, row = ir[1], ir[2], ir[3]
        elem = BOTTOM
        size = EMPTY if not elts else BOUNDED
        why = ()
        items = []
        for e in elts:
            if e[0] == "more":
                continue
            if e[0] == "*":
                inner = self._eval(e[1], env, depth)
                elem = join(elem, element_of(inner))
                if _SIZE_RANK[inner.size] > _SIZE_RANK[size]:
                    size, why = inner.size, inner.why
                items = None
                continue
            v = self._eval(e, env, depth)
            elem = join(elem, v)
            if items is not None:
                items.append(v)
        if kind == "tuple" and items is not None:
            return Val(frozenset({"tuple"}), elem=elem if not elem.is_bottom else None, items=tuple(items), size=size, why=why)
        if kind == "list" and items:
            # ``return [paths, labels], n``: each position keeps its own value (``info[1]``); a
            # change to the list (``.append``) joins without them
            return Val(frozenset({"list"}), elem=elem if not elem.is_bottom else None, items=tuple(items), size=size, why=why)
        return container(kind, elem if not elem.is_bottom else None, size, why)

    def _ev_dict(self, ir, env, depth):
        items, row = ir[1], ir[2]
        key = value = BOTTOM
        size = EMPTY if not items else BOUNDED
        why = ()
        named: dict | None = {}
        for k, v in items:
            if named is not None:
                if k is not None and isinstance(k, tuple) and k[0] == "k" and isinstance(k[1], str):
                    named[k[1]] = self._eval(v, env, depth)
                else:
                    named = None
            if k is None:  # {**other}
                inner = self._eval(v, env, depth)
                key, value = join(key, inner.key or UNKNOWN), join(value, inner.elem or UNKNOWN)
                if _SIZE_RANK[inner.size] > _SIZE_RANK[size]:
                    size, why = inner.size, inner.why
                continue
            if isinstance(k, tuple) and k[0] == "more":
                continue
            key = join(key, self._eval(k, env, depth))
            value = join(value, self._eval(v, env, depth))
        return Val(
            frozenset({"dict"}),
            elem=value if not value.is_bottom else None,
            key=key if not key.is_bottom else None,
            size=size,
            why=why,
            attrs=tuple(sorted(named.items())) if named else None,
        )

    def _ev_comprehension(self, ir, env, depth):
        kind, elt, iters, row = ir[1], ir[2], ir[3], ir[4]
        size = BOUNDED
        why: tuple = ()
        for it in iters:
            v = self._eval(it, env, depth)
            s = v.size if v.size != EMPTY else BOUNDED
            if v.has("unknown", "param") and s == UNKNOWN_SIZE:
                s = UNKNOWN_SIZE
            if _SIZE_RANK[s] > _SIZE_RANK[size]:
                size, why = s, v.why
        if len(ir) > 5 and size != BOUNDED and self._kept_within(ir, env, depth, why):
            # ``{c for c in os.listdir(root) if c in self.class_names}``: no more entries than a
            # container the code fixes (a set's, or a listing's entries, each once)
            size, why = BOUNDED, ()
        if kind == "dict":
            key = self._eval(elt[1], env, depth)
            value = self._eval(elt[2], env, depth)
            return Val(frozenset({"dict"}), elem=value, key=key, size=size, why=why)
        elem = self._eval(elt, env, depth)
        if kind == "gen":
            return Val(frozenset({"generator"}), elem=elem, size=size, why=why, detail="a generator expression")
        if kind == "set":
            if size == DATA and _unique_source(why) and _keeps_identity(elt):
                return container("set", elem, size, why)  # one entry per file: nothing to deduplicate
            return container("set", elem, DEDUP if size in (DATA, LOAD) else size, why)
        return container(kind, elem, size, why)

    def _kept_within(self, ir, env, depth, why) -> bool:
        """Whether a comprehension that keeps only the elements found in a bounded container
        (``ir[5]``) is bounded by it: a set, or a dict keyed by its element, holds each once; a
        list does when its source holds each once (a directory listing)."""
        kind, elt = ir[1], ir[2]
        distinct = kind == "set" or (kind == "dict" and elt[1][0] == "e") or _unique_source(why)
        if not distinct:
            return False
        return any(self._eval(c, env, depth).size == BOUNDED for c in ir[5])

    def _ev_element(self, ir, env, depth):
        iterable = self._eval(ir[1], env, depth)
        e = element_of(iterable)
        for i in ir[2]:
            e = item_of(e, i)
        return e

    def _ev_binop(self, ir, env, depth):
        op = ir[1]
        left = self._eval(ir[2], env, depth)
        right = self._eval(ir[3], env, depth)
        if op == "+":
            if left.has(*CONTAINERS) or right.has(*CONTAINERS):
                return join(left, right)
            if left.has("str") or right.has("str"):
                return val("str", size=BOUNDED, device="cuda" if left.device == "cuda" else None)
            if left.has("int", "float") and right.has("int", "float"):
                return _number(left, right, op)
        if op == "*":
            for seq, count in ((left, right), (right, left)):
                if seq.has("list", "tuple") and count.has("int"):
                    size = count.size if count.size in (DATA, LOAD, UNKNOWN_SIZE) else seq.size
                    return replace(seq, size=size, why=count.why if size == count.size else seq.why)
            if left.has("int", "float") and right.has("int", "float"):
                return _number(left, right, op)
        if op == "%":
            if left.has("str"):
                return val("str", size=BOUNDED, device="cuda" if is_cuda_string(left.detail) else None)
        if op == "/" and (left.has("path") or (left.has("str") and right.has("path"))):
            return val("path", size=BOUNDED)
        if op in ("-", "//", "/", "%", "**") and left.has("int", "float"):
            return _number(left, right, op)
        if op == "|" and left.has("dict", "set"):
            return join(left, right)
        if left.has("ndarray", "tensor"):
            return left
        return UNKNOWN

    def _ev_union(self, ir, env, depth):
        options = [self._eval(o, env, depth) for o in ir[1]]
        given = [o for o in options if o.kinds == frozenset({"param"})]
        defaults = [o for o in options if o.kinds != frozenset({"param"})]
        if given and defaults and all(d.size == BOUNDED and d.kinds <= {"range", "list", "tuple"} for d in defaults):
            # ``site_ids or range(1, NUM_SITES + 1)``: an argument whose callers are not seen,
            # with a default fixed by the code, plays the default's role (a few ids)
            return replace(join_all(options), size=BOUNDED, why=())
        return join_all(options)

    def _ev_lambda(self, ir, env, depth):
        kinds = ("lambda", "local-lambda") if env.fn is not None else ("lambda",)
        return val(*kinds, why=(("a lambda", env.facts.path, *ir[1:]),))

    def _ev_localfn(self, ir, env, depth):
        return val("localfn", detail=ir[1], why=((f"`{ir[1].rsplit('.', 1)[-1]}`, defined inside a function", env.facts.path, env.fn.fn.span.row if env.fn else 1),))

    def _ev_closure_muts(self, ir, env, depth):
        """("cm", qualname, name): what a function defined in this one adds to this one's local
        ``name`` (the mutations its own flow records on ``name``: ``name.append(v)``,
        ``name.extend(vs)`` ...), as a container of those values."""
        fn = env.facts.functions.get(ir[1])
        if fn is None or fn.flow is None:
            return UNKNOWN
        inner = Env(env.facts, self._funcref(env.facts, fn), env.self_cls)
        out = BOTTOM
        for how, value, loops in fn.flow.muts.get(ir[2], ()):
            out = self._mutate(out, how, value, loops, inner, depth + 1, None)
        return out if not out.is_bottom else UNKNOWN

    def _ev_with(self, ir, env, depth):
        return self._eval(ir[1], env, depth)

    def _ev_str(self, ir, env, depth):
        prefix = ir[1] if len(ir) > 1 else ""
        return val("str", size=BOUNDED, detail=prefix, device="cuda" if is_cuda_string(prefix.split("{")[0].rstrip(":") or "x") or prefix.startswith("cuda:") else None)

    def _ev_bytes(self, ir, env, depth):
        return val("bytes", size=BOUNDED)

    def _ev_bool(self, ir, env, depth):
        return val("bool", size=BOUNDED)

    def _ev_star(self, ir, env, depth):
        return self._eval(ir[1], env, depth)

    def _ev_kv(self, ir, env, depth):
        return Val(frozenset({"tuple"}), items=(self._eval(ir[1], env, depth), self._eval(ir[2], env, depth)), size=BOUNDED)

    # ------------------------------------------------------------------ calls

    def _ev_call(self, ir, env, depth):
        func, args, kwargs, row = ir[1], ir[2], ir[3], ir[4]
        where = (env.facts.path, row)
        tag = func[0]
        if tag == "g":
            qual = canonical(func[1]) or func[1]
            found = self.resolve(func[1], env.facts.root)
            if isinstance(found, ClassRef):
                return self._instantiate(found, args, kwargs, env, depth, where)
            if isinstance(found, FuncRef):
                return self._call_function(found, args, kwargs, env, depth, None)
            if isinstance(found, str):
                qual = canonical(found) or found
            return self._external_call(qual, args, kwargs, env, depth, where)
        if tag == "a":
            recv = self._eval(func[1], env, depth)
            return self._method_call(recv, func[2], args, kwargs, env, depth, where)
        if tag == "s":
            if env.self_cls is None:
                return UNKNOWN
            method = self.find_method(env.self_cls, func[1])
            if method is not None:
                return self._call_function(method, args, kwargs, env, depth, env.self_cls)
            if func[1] in OPENMMLAB_LOADERS and any(is_openmmlab_dataset(canonical(b) or b) for b in self.external_bases(env.self_cls)):
                # an OpenMMLab base's ``load_annotations(ann_file)``: the file's records, a list
                # of one info dict per sample
                why = ((f"the records an OpenMMLab base loads (`{func[1]}`)", *where),)
                return container("list", val("records", size=LOAD, why=why), LOAD, why)
            stored = self.attr_value(env.self_cls, func[1])
            return self._call_value(stored, args, kwargs, env, depth, where)
        if tag == "fn":
            # a function defined inside this one (``def _extract(key): ... return data``)
            fn = env.facts.functions.get(func[1])
            if fn is not None and fn.flow is not None:
                return self._call_function(self._funcref(env.facts, fn), args, kwargs, env, depth, None)
        callee = self._eval(func, env, depth)
        return self._call_value(callee, args, kwargs, env, depth, where)

    def _call_value(self, callee: Val, args, kwargs, env, depth, where) -> Val:
        if callee.has("class") and callee.cls is not None:
            return self._instantiate(callee.cls, args, kwargs, env, depth, where)
        if callee.has("function", "method") and callee.fn is not None:
            return self._call_function(callee.fn, args, kwargs, env, depth, callee.cls if callee.has("method") else None)
        if callee.has("instance") and callee.cls is not None:
            call = self.find_method(callee.cls, "__call__") or self.find_method(callee.cls, "forward")
            if call is not None:
                return self._call_function(call, args, kwargs, env, depth, callee.cls)
        if callee.has("ext"):
            return self._external_call(callee.detail, args, kwargs, env, depth, where)
        return UNKNOWN

    def _instantiate(self, cls, args, kwargs, env, depth, where) -> Val:
        external = {canonical(b) or b for b in self.external_bases(cls)}
        kinds = {"instance"}
        if cls.cls.local:
            kinds.add("localcls")
        device = None
        if any(b.startswith("torch.nn.") for b in external):
            kinds.add("module")
        if external & COCO_CLASSES:
            kinds.add("coco")
        # a subclass of list / dict (collections.UserList ...) is a Python container itself
        container_kind = next((CONTAINER_BASES[b] for b in sorted(external) if b in CONTAINER_BASES), None)
        if container_kind is not None:
            kinds.add(container_kind)
            return Val(frozenset(kinds), cls=cls, size=UNKNOWN_SIZE, detail=cls.cls.qualname)
        why = ((f"an instance of `{cls.cls.name}`, a class defined inside a function", *where),) if cls.cls.local else ()
        return Val(frozenset(kinds), cls=cls, device=device, size=BOUNDED, detail=cls.cls.qualname, why=why)

    def _parsed_from(self, ir, env, depth) -> Val | None:
        """The data-sized list (the lines of a file, a listing) ``ir`` is an item of, through str
        methods (``lines[0]``, ``lines[i].strip()``); None otherwise."""
        for _ in range(4):
            if isinstance(ir, tuple) and ir[:1] == ("c",) and isinstance(ir[1], tuple) and ir[1][:1] == ("a",) and ir[1][2] in STR_METHODS:
                ir = ir[1][1]
            elif isinstance(ir, tuple) and ir[:1] == ("i",):
                ir = ir[1]
                base = self._eval(ir, env, depth + 1)
                if base.size == DATA and base.kinds & {"list", "tuple"}:
                    return base
            else:
                return None
        return None

    def _call_function(self, fnref, args, kwargs, env, depth, self_cls) -> Val:
        """A project function's return value, its parameters bound to this call's arguments."""
        flow = fnref.fn.flow
        if flow is None:
            return UNKNOWN
        if not flow.yields and not flow.returns:
            return val("none", size=BOUNDED)
        if depth > MAX_EVAL_DEPTH - 6:
            self._cut()
            if flow.yields:
                return val("generator", detail=f"a generator (`{fnref.fn.name}`)", size=UNKNOWN_SIZE)
            return UNKNOWN
        params = list(fnref.fn.params)
        if not _static(fnref.fn) and (self_cls is not None or (fnref.fn.cls is not None and params and params[0] in ("self", "cls"))):
            params = params[1:]
        binding = {}
        for name in params:
            found = _bind_arg(params, name, args, kwargs, fnref.fn.kwonly)
            if found is _MISSING or found is None:
                continue
            binding[name] = self._eval(found, env, depth)
        cls = self_cls if self_cls is not None else self.class_of(fnref)
        callee_env = Env(fnref.file, fnref, cls, binding or None)
        if not binding:
            return self._returned(fnref, flow, callee_env, depth, False)
        # Calls binding equal values give equal results, memoized by those values: without it
        # helpers calling helpers with arguments evaluate their bodies once per path of calls
        # (MONAI's type conversions: 30,000 evaluations of one attribute, a 30 s run). A result a
        # depth or nesting limit cut short holds less than one asked from higher up would: it
        # answers only calls asked as deep or deeper, and is computed again from higher up (by
        # depth alone: compared on depth and nesting both, a call asked alternately deeper on one
        # and on the other was computed again each time, MONAI 7.5 -> 9 s).
        # The unparsed files a call's evaluation met are kept with its answer and recorded again
        # when it is reused, as evaluating it again would (planning follows them).
        memo = self.__dict__.setdefault("_call_memo", {})
        key = (fnref.key, cls.key if cls is not None else None, tuple((k, _val_key(v)) for k, v in binding.items()))
        # key -> (the unparsed files its evaluation met, the depth a limit cut it short at or None)
        after = self.__dict__.setdefault("_call_after", {})
        if key in memo:
            met_before, cut_at = after.get(key, (frozenset(), None))
            if cut_at is None or depth >= cut_at or key in self._active:  # (in progress: a cycle)
                if cut_at is not None:
                    self._cut()  # what it holds was cut short here too
                self._missed(met_before)
                return self._memo_hit(memo, key)
        cuts = self.__dict__.get("_cuts", 0)
        met: set[str] = set()
        stack = self.__dict__.setdefault("_call_deps", [])
        stack.append(met)
        self._calls_active += 1
        started = self._memo_start(memo, key)
        try:
            result = self._bound_call(fnref, flow, callee_env, binding, depth)
        finally:
            self._calls_active -= 1
            stack.pop()
        result = self._memo_finish(memo, key, result, started)
        after[key] = (frozenset(met), depth if self.__dict__.get("_cuts", 0) != cuts else None)
        return result

    def _cut(self) -> Val:
        """A limit's answer (unknown), counted: what is computed around it holds less than it
        would without the limit."""
        self._cuts = self.__dict__.get("_cuts", 0) + 1
        return UNKNOWN

    def _bound_call(self, fnref, flow, callee_env, binding, depth) -> Val:
        spent = self._bound_calls
        if spent >= MAX_BOUND_CALLS:
            return self._cut()
        self._bound_calls = spent + 1
        # What is evaluated under this call's binding answers for this call only: an Env's key
        # holds the binding's id, so the binding is kept as long as the memo (a freed binding's id
        # is soon another call's, whose questions its entries would answer), and the entries
        # made under it are dropped when the call is evaluated (none can be asked for again).
        self.__dict__.setdefault("_bindings", []).append(binding)
        made = self.__dict__.setdefault("_bound_keys", {})
        made[callee_env.key] = []
        try:
            return self._returned(fnref, flow, callee_env, depth, True)
        finally:
            memo = self._val_memo
            for key in made.pop(callee_env.key):
                memo.pop(key, None)

    def _returned(self, fnref, flow, env, depth, fresh: bool) -> Val:
        """What a call of ``fnref`` gives in ``env``: the join of its returns, or a generator;
        ``fresh``: under a call's binding (not memoized across bindings)."""
        if flow.yields:
            return self._generated(fnref, flow, env, depth, fresh)
        ev = self._eval_fresh if fresh else self._eval
        out = BOTTOM
        for r in flow.returns:
            out = join(out, ev(r, env, depth))
        return out if not out.is_bottom else UNKNOWN

    def _generated(self, fnref, flow, env, depth, fresh: bool) -> Val:
        """What calling a generator function gives: a generator of what its ``yield`` statements
        yield, as long as the loops around them (``for p in root.iterdir(): yield p``); a yield
        in no loop is one element, a ``while`` loop an unknown number."""
        ev = self._eval_fresh if fresh else self._eval
        unknown = val("generator", detail=f"a generator (`{fnref.fn.name}`)", size=UNKNOWN_SIZE)
        if not flow.yielded:
            return unknown
        elem, size, why = BOTTOM, BOUNDED, ()
        for value, loops in flow.yielded:
            elem = join(elem, ev(value, env, depth))
            for it in loops:
                if it == ("while",):
                    v = UNKNOWN
                    s = UNKNOWN_SIZE
                else:
                    v = ev(it, env, depth)
                    s = v.size if v.size != EMPTY else BOUNDED
                if _SIZE_RANK[s] > _SIZE_RANK[size]:
                    size, why = s, v.why
        return Val(frozenset({"generator"}), elem=elem if not elem.is_bottom else None, size=size, why=why, detail=unknown.detail)

    def _eval_fresh(self, ir, env, depth) -> Val:
        """Evaluate under a call-specific binding (not memoized across bindings)."""
        if depth > MAX_EVAL_DEPTH:
            return self._cut()
        guard = self.__dict__.setdefault("_fresh_guard", set())
        key = (id(ir), env.key)
        if key in guard:
            return BOTTOM
        guard.add(key)
        try:
            memo = self._val_memo
            result = self._eval_node(ir, env, depth + 1)
            memo.pop(key, None)
            return result
        finally:
            guard.discard(key)

    def _arg(self, args, kwargs, i: int, name: str | None, env, depth) -> Val | None:
        for k, v in kwargs:
            if k == name and name is not None:
                return self._eval(v, env, depth)
        if i is not None and i < len(args) and args[i][0] != "*":
            return self._eval(args[i], env, depth)
        return None

    def _arg_ir(self, args, kwargs, i, name):
        for k, v in kwargs:
            if k == name and name is not None:
                return v
        if i is not None and i < len(args) and args[i][0] != "*":
            return args[i]
        return None

    def _external_call(self, qual: str, args, kwargs, env, depth, where) -> Val:
        if qual in LISTINGS:
            kind, elem, text = LISTINGS[qual]
            shards = _shard_pattern(args[0] if args else None) if "glob" in qual.rsplit(".", 1)[-1].lower() else None
            if shards:
                return Val(frozenset({kind}), elem=val("str", size=BOUNDED), size=BOUNDED, why=((f"shard files (`{shards}`)", *where),), detail=qual)
            e = val("walk", size=BOUNDED) if elem == "walk" else val(elem, size=BOUNDED)
            if elem == "walk":
                files = container("list", val("str", size=BOUNDED), DATA)
                e = Val(frozenset({"tuple"}), items=(val("str", size=BOUNDED), files, files), size=BOUNDED)
            return Val(frozenset({kind}), elem=e, size=DATA, why=((text, *where),), detail=qual)
        if qual in LINE_LISTS:
            return container("list", val("str", size=BOUNDED), UNKNOWN_SIZE, (("the lines of a file (`list_from_file`)", *where),), detail=qual)
        if qual in SAMPLE_WALKS:
            pair = Val(frozenset({"tuple"}), items=(val("str", size=BOUNDED), val("int", size=BOUNDED)), size=BOUNDED)
            return container("list", pair, DATA, ((SAMPLE_WALKS[qual], *where),), detail=qual)
        if qual in RECORD_LOADERS and args and self._shipped(args[0], env, 0, where[1]):
            # records of a file beside the code (``json.load(open(os.path.join(os.path.dirname(
            # __file__), "classes.json")))``): a label map or a configuration the package ships,
            # whatever the data is. (The lines of a text file shipped so are often a split list,
            # one sample per line: those stay the lines of a file.)
            shipped = (("a file shipped with the code (a path from `__file__`)", *where),)
            return val("records", size=BOUNDED, why=shipped)
        if qual in OPENERS or qual.endswith(".open") and qual.rsplit(".", 2)[-2] in ("PathManager", "g_pathmgr", "fs", "gfile", "io", "pathmgr", "path_manager", "fileio", "bf"):
            mode = self._arg(args, kwargs, 1, "mode", env, depth)
            binary = mode is not None and "b" in (mode.detail or "")
            return val("file", mode="b" if binary else "", size=DATA, why=((f"the lines of a file (`{qual.rsplit('.', 1)[-1]}`)", *where),))
        if qual in RECORD_LOADERS:
            return val("records", size=LOAD, why=((RECORD_LOADERS[qual], *where),))
        if qual in JSONL_LOADERS:
            return container("list", val("dict", size=BOUNDED), DATA, ((JSONL_LOADERS[qual], *where),))
        if qual in SCP_READERS:  # a mapping (read lazily per key) holding every line's key and path
            text = val("str", size=BOUNDED)
            return container("dict", text, DATA, ((SCP_READERS[qual], *where),), key=text)
        if qual in CSV_READERS:
            elem = container(CSV_READERS[qual], val("str", size=BOUNDED), BOUNDED)
            return Val(frozenset({"iterator"}), elem=elem, size=DATA, why=(("the rows of a csv file", *where),), detail=qual)
        if qual == "pandas.Series":
            # a Series of a Python list of strings (paths, ids) is an object array: one str per entry
            inner = self._arg(args, kwargs, 0, "data", env, depth)
            elem = element_of(inner) if inner is not None and inner.kinds & CONTAINERS else None
            if elem is not None and elem.kinds and elem.kinds <= {"str"}:
                return Val(frozenset({"ndarray-obj"}), elem=elem, size=inner.size, why=inner.why, detail="a pandas Series of str")
        if qual in DATAFRAME_READERS:
            backend = self._arg(args, kwargs, None, "dtype_backend", env, depth)
            if backend is not None and backend.detail == "pyarrow":  # strings stored as Arrow arrays
                return val("store", detail=qual, size=UNKNOWN_SIZE)
            return val("dataframe", size=DATA, why=(("the rows of a table (`" + qual.rsplit(".", 1)[-1] + "`)", *where),))
        if qual in RNG_CTORS:
            return val("rng", detail=qual, why=((f"`{qual}(...)`", *where),))
        if qual in LOCK_CTORS:
            return val("lock", detail=qual)
        if qual in HANDLE_CTORS:
            return val("handle", detail=qual, why=((HANDLE_CTORS[qual], *where),))
        if qual in MANAGER_CTORS:
            return val("manager", detail=qual)
        if qual in ("torch.utils.data.TensorDataset", "torch.utils.data.StackDataset"):
            parts = [self._eval(a[1] if a[0] == "*" else a, env, depth) for a in (*args, *(v for _, v in kwargs))]
            cuda = [p for p in parts if p.device]
            if cuda:
                return val("tensordataset", device="cuda" if all(p.device == "cuda" for p in cuda) else "maybe", why=cuda[0].why)
            return val("tensordataset")
        if qual in OPAQUE_STORES:
            return val("store", detail=qual, size=UNKNOWN_SIZE)
        if qual == "torch.device":
            arg = self._arg(args, kwargs, 0, "type", env, depth)
            return val("device", device=arg.device if arg is not None else None)
        if qual in TENSOR_FACTORIES:
            dev = self._arg(args, kwargs, None, "device", env, depth)
            if qual == "torch.load":
                # without map_location, tensors saved on a GPU come back on the GPU; but what a
                # file holds is not seen: the device of the value is unknown (DL102 reports the
                # object a Dataset keeps straight from ``torch.load(path)``, dllint/program/hazards.py)
                loc = self._arg(args, kwargs, 1, "map_location", env, depth)
                device = loc.device if loc is not None else None
                return val("tensor", "records", device=device, size=LOAD, detail="torch.load", why=(("records of a torch file", *where),))
            return val("tensor", device=dev.device if dev is not None else None, size=BOUNDED)
        if qual in ARRAY_CTORS:
            return self._numpy(qual, args, kwargs, env, depth, where)
        if qual in PATH_CTORS:
            return val("path", size=BOUNDED)
        if qual in STR_FUNCS:
            first = self._arg(args, kwargs, 0, None, env, depth)
            return val("str", size=BOUNDED, device=first.device if first is not None and qual == "builtins.str" else None)
        if qual in SAME_LENGTH:
            inner = self._arg(args, kwargs, 0, SAME_LENGTH_KEYWORDS.get(qual), env, depth)
            if inner is None:
                return container(SAME_LENGTH[qual], None, EMPTY)
            return Val(frozenset({SAME_LENGTH[qual]}), elem=element_of(inner), size=inner.size, why=inner.why)
        if qual in DEDUPS:
            inner = self._arg(args, kwargs, 0, None, env, depth)
            kind = "dict" if qual == "collections.Counter" else "ndarray" if qual == "numpy.unique" else "set"
            if inner is None:
                return container(kind, None, EMPTY)
            size = DEDUP if inner.size in (DATA, LOAD) else inner.size
            if kind == "set" and inner.size == DATA and _unique_source(inner.why):
                size = DATA  # ``set(zf.namelist())``: the files, each once already
            return Val(frozenset({kind}), elem=element_of(inner), key=element_of(inner) if kind == "dict" else None, size=size, why=inner.why if size == DATA else ())
        if qual == "builtins.range":
            counts = [self._eval(a, env, depth) for a in args if a[0] != "*"]
            size = max((c.size for c in counts), key=lambda s: _SIZE_RANK[s], default=BOUNDED)
            why = next((c.why for c in counts if c.size == size and c.why), ())
            return Val(frozenset({"range"}), elem=val("int", size=BOUNDED), size=size if size != EMPTY else BOUNDED, why=why)
        if qual == "builtins.len":
            inner = self._arg(args, kwargs, 0, None, env, depth)
            if inner is not None and inner.size == LOAD and self._samples_measured(args, env) is not None:
                return val("int", size=DATA, why=inner.why)  # loaded records (an array) served one per sample
            if inner is not None and inner.size in (DATA, LOAD):
                return val("int", size=inner.size, why=inner.why)
            if inner is not None and inner.has("instance") and inner.cls is not None and self.is_dataset(inner.cls):
                length = self.find_method(inner.cls, "__len__")
                returns = length.fn.flow.returns if length is not None and length.fn.flow is not None else ()
                if returns and all(r[0] == "k" and type(r[1]) is int for r in returns):
                    return val("int", size=BOUNDED)  # ``__len__`` returns a constant of the code
                # the number of samples of a Dataset (a wrapper's `range(len(self.dataset))`)
                return val("int", size=DATA, why=((f"the length of `{inner.cls.cls.name}`", *where),))
            # (unless the code fixes what it measures: ``len(self.cloud_names)`` of a literal list)
            measured = self._samples_measured(args, env) if inner is None or inner.size not in (BOUNDED, DEDUP, EMPTY) else None
            if measured is not None:
                return val("int", size=DATA, why=((f"the number of samples (`len(self.{measured})`)", *where),))
            return val("int", size=UNKNOWN_SIZE if inner is None or inner.size == UNKNOWN_SIZE else BOUNDED)
        if qual == "builtins.int" and args and args[0][0] != "*":
            source = self._parsed_from(args[0], env, depth)
            if source is not None:
                # ``n_cam = int(lines[0])``: a count the data file states, not one the code fixes
                # (loaded, as records are: what it counts is judged by its use)
                return val("int", size=LOAD, why=_why(source, "a count read from a file", where))
        if qual in NUMERIC_FUNCS:
            return val("float" if qual == "builtins.float" else "int", size=BOUNDED)
        if qual == "sklearn.model_selection.train_test_split":
            # (train, test) for each array given, each of the kind it was given as (a list gives lists)
            parts = [self._eval(a, env, depth) for a in args if a[0] != "*"]
            if parts:
                return Val(frozenset({"tuple"}), items=tuple(p for p in parts for _ in (0, 1)), size=BOUNDED)
        if qual == "builtins.zip":
            if len(args) == 1 and args[0][0] == "*" and not kwargs:  # zip(*rows): the columns
                rows = self._eval(args[0][1], env, depth)
                column = Val(frozenset({"tuple"}), elem=element_of(element_of(rows)), size=rows.size, why=rows.why)
                return Val(frozenset({"iterator"}), elem=column, size=BOUNDED)
            parts = [self._eval(a, env, depth) for a in args if a[0] != "*"]
            if not parts:
                return val("iterator", size=UNKNOWN_SIZE)
            size, why = _max_size(parts)
            return Val(frozenset({"iterator"}), elem=Val(frozenset({"tuple"}), items=tuple(element_of(p) for p in parts), size=BOUNDED), size=size, why=why)
        if qual == "builtins.enumerate":
            inner = self._arg(args, kwargs, 0, None, env, depth) or UNKNOWN
            return Val(frozenset({"iterator"}), elem=Val(frozenset({"tuple"}), items=(val("int", size=BOUNDED), element_of(inner)), size=BOUNDED), size=inner.size, why=inner.why)
        if qual in ("builtins.map", "builtins.filter", "itertools.chain.from_iterable", "itertools.islice"):
            inner = self._arg(args, kwargs, 1 if qual in ("builtins.map", "builtins.filter") else 0, None, env, depth) or UNKNOWN
            elem = element_of(inner) if qual != "builtins.map" else UNKNOWN
            if qual == "itertools.chain.from_iterable":
                elem = element_of(element_of(inner))
                # as long as all the chained iterables together: a few lists of every file
                size, why = _max_size([inner, element_of(inner)])
                return Val(frozenset({"iterator"}), elem=elem, size=size, why=why)
            return Val(frozenset({"iterator"}), elem=elem, size=inner.size, why=inner.why)
        if qual == "itertools.chain":
            parts = [self._eval(a[1] if a[0] == "*" else a, env, depth) for a in args]
            elems = [element_of(element_of(p)) if a[0] == "*" else element_of(p) for a, p in zip(args, parts)]
            # ``chain(*lists)``: as long as the lists it chains together
            size, why = _max_size([*parts, *(element_of(p) for a, p in zip(args, parts) if a[0] == "*")])
            return Val(frozenset({"iterator"}), elem=join_all(elems), size=size, why=why)
        if qual in ("builtins.dict", "collections.OrderedDict", "collections.defaultdict"):
            if qual == "collections.defaultdict":
                factory = self._arg(args, kwargs, 0, "default_factory", env, depth)
                if factory is not None and factory.has("lambda", "localfn"):
                    bad = factory.kinds & {"lambda", "local-lambda", "localfn"}
                    return Val(frozenset({"dict", "holder"}) | bad, size=EMPTY, detail=factory.detail, why=factory.why)
                elem = None
                if factory is not None and factory.has("ext") and factory.detail in ("builtins.list", "builtins.dict", "builtins.set"):
                    elem = container(factory.detail.rsplit(".", 1)[-1], None, EMPTY)
                return container("dict", elem, EMPTY)
            inner = self._arg(args, kwargs, 0, None, env, depth)
            if inner is None:
                named = {k: self._eval(v, env, depth) for k, v in kwargs if k is not None}
                if named and all(k is not None for k, _ in kwargs):  # dict(a=1, device="cuda"): a record
                    return Val(frozenset({"dict"}), elem=join_all(named.values()), key=val("str", size=BOUNDED),
                               size=BOUNDED, attrs=tuple(sorted(named.items())))
                return Val(frozenset({"dict"}), size=BOUNDED if kwargs else EMPTY)
            pair = element_of(inner)
            if inner.has("dict"):
                return Val(frozenset({"dict"}), elem=inner.elem, key=inner.key, size=inner.size, why=inner.why)
            return Val(frozenset({"dict"}), key=item_of(pair, 0), elem=item_of(pair, 1), size=inner.size, why=inner.why)
        if qual == "dict.fromkeys" or qual == "builtins.dict.fromkeys":
            inner = self._arg(args, kwargs, 0, None, env, depth) or UNKNOWN
            return Val(frozenset({"dict"}), key=element_of(inner), size=inner.size, why=inner.why)
        if qual in ("pycocotools.coco.COCO", "pycocotools.COCO", "lvis.LVIS", "lvis.lvis.LVIS", "xtcocotools.coco.COCO"):
            return val("coco", size=DATA, why=(("a COCO annotation file", *where),))
        if qual in ("copy.deepcopy", "copy.copy"):
            inner = self._arg(args, kwargs, 0, None, env, depth)
            return inner if inner is not None else UNKNOWN
        if qual in ("random.sample", "random.choices"):
            inner = self._arg(args, kwargs, 0, None, env, depth) or UNKNOWN
            return container("list", element_of(inner), UNKNOWN_SIZE)
        if qual in LAMBDA_HOLDERS:
            held = [self._eval(a[1] if a[0] == "*" else a, env, depth) for a in (*args, *(v for _, v in kwargs))]
            bad = [h for h in held for part in (h, h.elem) if part is not None and part.has("lambda", "localfn", "localcls")]
            if qual == "functools.partial" and held and held[0].has("function", "method"):
                return held[0]
            if bad:
                b = bad[0] if bad[0].has("lambda", "localfn", "localcls") else bad[0].elem
                return replace(b, kinds=b.kinds | {"holder"}, detail=b.detail, why=b.why)
            return val("transform", detail=qual)
        if qual in DATALOADER_CLASSES:  # iterating it yields a batch per sample or batch of its dataset
            return Val(frozenset({"loader"}), elem=UNKNOWN, size=DATA, why=(("the batches of a DataLoader", *where),))
        if qual == "multiprocessing.Manager" or qual.endswith("Manager().list"):
            return val("manager")
        held = self._held_callables(qual, args, kwargs, env, depth)
        if held is not None:
            return held
        return val("ext", detail=qual, size=UNKNOWN_SIZE)

    def _samples_measured(self, args, env) -> str | None:
        """``len(self.x)`` in a Dataset whose ``__len__`` returns ``len(self.x)``, or whose worker
        code indexes ``self.x`` with the sample index: the number of samples, whatever ``self.x``
        holds (a wrapped dataset built by a registry, an array loaded from a file)."""
        if len(args) != 1 or args[0][0] != "s" or env.self_cls is None or not self.is_dataset(env.self_cls):
            return None
        attr = args[0][1]
        uses = self.sample_uses(env.self_cls).get(attr, ())
        return attr if any(how in ("len", "index") for how, _fn, _row in uses) else None

    def _held_callables(self, qual: str, args, kwargs, env, depth) -> Val | None:
        """A library class built with a lambda or a local function (a transform, a dataset given
        ``transform=lambda ...``) keeps it: the object is as unpicklable as the callable."""
        name = qual.rsplit(".", 1)[-1]
        if not name[:1].isupper():
            return None  # a function call: it may just call the callable
        for a in (*args, *(v for _, v in kwargs)):
            if a[0] not in ("lam", "fn", "n", "p", "c", "L", "s"):
                continue
            v = self._eval(a[1] if a[0] == "*" else a, env, depth)
            for part in (v, v.elem) if v.elem is not None else (v,):
                if part.has("lambda", "localfn", "localcls"):
                    return replace(part, kinds=part.kinds | {"holder", "ext"}, detail=part.detail or qual)
        return None

    def _pipeline_stage(self, recv: Val, args, kwargs, env, depth) -> Val:
        """``ds.select(fn)`` / ``ds.map(fn)`` on a webdataset or torchdata pipeline: the next
        stage, which keeps the callables it is given and those of the stages before it (one by
        one in ``items``; ``holder`` when there are any)."""
        held = list(recv.items or ()) if recv.has("pipeline") else []
        for a in (*args, *(v for _, v in kwargs)):
            v = self._eval(a[1] if a[0] == "*" else a, env, depth)
            if v.has("lambda", "localfn", "localcls"):
                held.append(v)
        kinds = {"ext", "pipeline"} | ({"holder"} if held else set())
        return Val(frozenset(kinds), detail=recv.detail, items=tuple(held) or None, size=UNKNOWN_SIZE)

    def _numpy(self, qual, args, kwargs, env, depth, where) -> Val:
        if qual == "numpy.load":
            pickled = self._arg(args, kwargs, None, "allow_pickle", env, depth)
            mmap = self._arg(args, kwargs, 1, "mmap_mode", env, depth)
            if mmap is not None and not mmap.has("none"):
                return val("memmap", size=LOAD)
            if pickled is not None and pickled.has("bool") and not pickled.has("none"):
                return val("ndarray", "ndarray-obj", "records", size=LOAD, why=(("records of a pickled .npy file", *where),))
            return val("ndarray", size=LOAD, why=(("a .npy array", *where),))
        if qual in ("numpy.loadtxt", "numpy.genfromtxt", "numpy.fromfile"):
            # a file's rows (a pose per frame, a label per image) or a small matrix: sized by the
            # file, used as a table only where the code uses it as one, as loaded records are
            return val("ndarray", size=LOAD, why=((f"the rows of a file (`{qual.replace('numpy.', 'np.')}`)", *where),))
        inner = self._arg(args, kwargs, 0, None, env, depth)
        dtype = self._arg_ir(args, kwargs, 1 if qual in ("numpy.array", "numpy.asarray") else None, "dtype")
        dtype_name = _dtype_name(dtype)
        if dtype_name in NUMPY_DTYPE_OBJECT:
            return val("ndarray-obj", size=inner.size if inner is not None else UNKNOWN_SIZE, why=inner.why if inner is not None else ())
        size = inner.size if inner is not None else BOUNDED
        if qual == "numpy.unique" and size in (DATA, LOAD):
            return val("ndarray", size=DEDUP)  # the distinct values: a vocabulary, like set(...)
        if qual in ("numpy.array", "numpy.asarray") and inner is not None and dtype_name is None and inner.has("dataframe", "series"):
            # a frame's (or a column's) array, as ``.values``: objects only with a string column
            return val("ndarray-obj", size=inner.size, why=inner.why, detail=FRAME_ARRAY)
        if qual in ("numpy.array", "numpy.asarray") and inner is not None and dtype_name is None:
            e = element_of(inner)
            if e.has("dict", "list", "tuple", "none", "instance", "unknown") and not e.has("str", "int", "float"):
                # ragged or object elements: numpy makes an object array
                if e.has("dict", "instance", "none"):
                    return val("ndarray-obj", size=size, why=inner.why)
        if qual in ("numpy.arange", "numpy.random.permutation") and dtype_name is None:
            return val("ndarray", size=size, why=inner.why if inner is not None else (), detail=INT_ARRAY)
        return val("ndarray", size=size, why=inner.why if inner is not None else ())

    def _method_call(self, recv: Val, method: str, args, kwargs, env, depth, where) -> Val:
        if recv.has("instance", "class") and recv.cls is not None:
            m = self.find_method(recv.cls, method)
            if m is not None:
                return self._call_function(m, args, kwargs, env, depth, recv.cls)
            stored = self.attr_value(recv.cls, method)
            if not stored.is_bottom:
                return self._call_value(stored, args, kwargs, env, depth, where)
        if recv.has("method", "function") and recv.fn is not None and method == "__call__":
            return self._call_function(recv.fn, args, kwargs, env, depth, recv.cls)
        if recv.has("pipeline") or (recv.has("ext") and recv.detail.split(".", 1)[0] in PIPELINE_LIBRARIES):
            return self._pipeline_stage(recv, args, kwargs, env, depth)
        if method in ("cuda",):
            base = recv if not recv.is_bottom else UNKNOWN
            return replace(base, device="cuda", kinds=(base.kinds - {"unknown"}) | {"cudaobj"}, why=(("moved to CUDA", *where),))
        if method == "to":
            dev = self._arg(args, kwargs, 0, "device", env, depth)
            if dev is not None and dev.device:
                return replace(recv, device=dev.device, kinds=(recv.kinds - {"unknown"}) | {"cudaobj"}, why=(("moved to CUDA", *where),))
            return recv
        if recv.has("rng") and method == "permutation" and args:
            # ``rng.permutation(len(self.dataset))``: one index per sample, shuffled
            inner = self._arg(args, kwargs, 0, None, env, depth)
            if inner is not None and inner.size in (DATA, LOAD):
                return val("ndarray", size=inner.size, why=inner.why, detail=INT_ARRAY)
        if recv.has("rng") and method in ("manual_seed", "seed"):
            return recv
        if recv.has("manager") and method in MANAGER_PROXIES:
            return val("proxy", detail=f"a `Manager().{method}()` proxy", size=UNKNOWN_SIZE)
        if method in ARRAY_METHODS and recv.kinds & (CONTAINERS | {"records"}):
            # no Python container has these: the call succeeds on a tensor or an array, so that is
            # what the receiver was (``torch.load(p).cpu()``, a list joined with ``torch.cat``,
            # ``np.array(x).astype(np.int32)``)
            rest = recv.kinds - CONTAINERS - {"records"}
            recv = replace(recv, kinds=rest or frozenset({ARRAY_METHODS[method]}), elem=recv.elem if rest else None, items=None)
        if method in ("cpu", "numpy", "item", "detach", "float", "double", "long", "int", "half", "contiguous", "clone", "eval", "train"):
            if method in ("cpu", "numpy", "item"):
                return replace(recv, device=None)
            return recv
        if method == "open" and (recv.has("path", "ext", "unknown", "module") or recv.is_bottom):
            mode = self._arg(args, kwargs, 0 if recv.has("path") else 1, "mode", env, depth)
            binary = mode is not None and "b" in (mode.detail or "")
            return val("file", mode="b" if binary else "", size=DATA, why=(("the lines of a file (`open`)", *where),))
        if recv.has("file"):
            if method in ("readlines",):
                return container("list", val("bytes" if recv.mode == "b" else "str", size=BOUNDED), DATA, _why(recv, "the lines of a file (`readlines`)", where))
            if method == "read":
                return val("bytes" if recv.mode == "b" else "str", size=DATA, detail="content", why=_why(recv, "the content of a file", where))
            if method == "readline":
                return val("str", size=BOUNDED)
        if method in PATH_LISTING_METHODS and not recv.has("path") and (recv.is_bottom or recv.kinds <= {"unknown", "param", "none"}):
            # ``root.glob("*")`` on a value the model cannot see (a parameter annotated ``Path``, an
            # fsspec filesystem): these names list a directory
            if method != "glob" or (args and args[0][0] in ("k", "fs")):
                return Val(frozenset({"generator"}), elem=val("path", size=BOUNDED), size=DATA, why=((f"a directory listing (`.{method}`)", *where),))
        if recv.has("path"):
            shards = _shard_pattern(args[0]) if method in ("glob", "rglob") and args else None
            if shards:
                return Val(frozenset({"generator"}), elem=val("path", size=BOUNDED), size=BOUNDED, why=((f"shard files (`{shards}`)", *where),))
            if method in PATH_LISTING_METHODS:
                return Val(frozenset({"generator"}), elem=val("path", size=BOUNDED), size=DATA, why=((f"a directory listing ({PATH_LISTING_METHODS[method]})", *where),))
            if method in ("read_text",):
                return val("str", size=DATA, detail="content", why=(("the content of a file", *where),))
            if method in ("with_suffix", "with_name", "joinpath", "resolve", "absolute", "expanduser", "relative_to", "parent"):
                return val("path", size=BOUNDED)
            if method in ("as_posix",):
                return val("str", size=BOUNDED)
        if recv.has("str"):
            if method in SPLITTERS:
                content = recv.size == DATA and recv.detail == "content"
                if method == "splitlines" or content:
                    size = DATA if content else BOUNDED
                    text = "the lines of a file" if content else None
                    return container("list", val("str", size=BOUNDED), size, _why(recv, text, where) if text else ())
                return container("list", val("str", size=BOUNDED), BOUNDED)
            if method == "format" and (recv.detail.startswith("cuda:") or recv.device):
                return val("str", size=BOUNDED, device="cuda")
            if method in STR_METHODS or method.startswith(("is", "start", "end")):
                if method.startswith(("is", "startswith", "endswith")):
                    return val("bool", size=BOUNDED)
                if method in ("strip", "rstrip", "lstrip", "lower") and recv.detail == "content":
                    # ``f.read().strip("\n").split("\n")``: still the whole content of the file
                    return val("str", size=recv.size, detail=recv.detail, why=recv.why)
                return val("str", size=BOUNDED, detail=recv.detail if method in ("strip", "rstrip", "lstrip", "lower") else "")
        if recv.has("bytes") and not recv.has("str"):
            if method == "decode":
                return val("str", size=recv.size, detail=recv.detail, why=recv.why)
            if method in ("strip", "lstrip", "rstrip", "lower", "upper", "replace", "removeprefix", "removesuffix"):
                return val("bytes", size=BOUNDED)
            if method in SPLITTERS:
                return container("list", val("bytes", size=BOUNDED), DATA if recv.detail == "content" else BOUNDED, recv.why)
        if recv.has("dict", "records"):
            if method in DICT_VIEW:
                view = DICT_VIEW[method]
                if view == "items":
                    elem = Val(frozenset({"tuple"}), items=(recv.key or UNKNOWN, recv.elem or UNKNOWN), size=BOUNDED)
                else:
                    elem = (recv.key if view == "key" else recv.elem) or UNKNOWN
                return Val(frozenset({"iterator"}), elem=elem, size=recv.size, why=recv.why)
            if method in ("get", "pop", "setdefault", "__getitem__"):
                if recv.attrs is not None and args and args[0][0] == "k" and isinstance(args[0][1], str):
                    part = recv.attr(args[0][1])
                    if part is not None:
                        return part
                return recv.elem or (val("records", size=recv.size, why=recv.why) if recv.has("records") else UNKNOWN)
            if method == "copy":
                return recv
        if recv.has("list", "tuple", "deque", "set"):
            if method == "copy":
                return recv
            if method in ("pop",):
                return recv.elem or UNKNOWN
            if method in ("index", "count"):
                return val("int", size=BOUNDED)
        if recv.has("dataframe", "series"):
            if method in ("tolist", "to_list"):
                return container("list", UNKNOWN, recv.size, recv.why)
            if method in ("to_dict",):
                orient = self._arg(args, kwargs, 0, "orient", env, depth)
                if orient is not None and orient.detail == "records":  # one dict per row
                    return container("list", val("dict", size=BOUNDED), recv.size, recv.why)
                return Val(frozenset({"dict"}), size=recv.size, why=recv.why)
            if method in ("to_numpy",):
                return val("ndarray-obj", size=recv.size, why=recv.why, detail=FRAME_ARRAY)
            if method in ("itertuples", "iterrows", "iteritems", "items", "groupby"):
                return Val(frozenset({"iterator"}), elem=val("tuple", size=BOUNDED), size=recv.size, why=recv.why)
            if method in ("unique",):
                return val("ndarray-obj", size=DEDUP)
            if method in ("map", "apply", "astype", "copy", "dropna", "fillna", "sort_values", "reset_index", "sample", "head") and recv.has("series") and not recv.has("dataframe"):
                return recv
            return replace(recv, kinds=frozenset({"dataframe"})) if method in ("copy", "reset_index", "sort_values", "dropna", "fillna", "query", "merge", "drop", "rename", "sample", "astype", "apply", "loc", "iloc", "head") else UNKNOWN
        if recv.has("ndarray", "ndarray-obj", "tensor", "memmap"):
            if method == "tolist":
                e = UNKNOWN if recv.has("ndarray-obj") else val("int", size=BOUNDED) if recv.detail == INT_ARRAY else val("int", "float", size=BOUNDED)
                return container("list", e, recv.size if recv.size != BOUNDED else UNKNOWN_SIZE, recv.why)
            if method == "astype":
                dtype = _dtype_name(self._arg_ir(args, kwargs, 0, "dtype"))
                if dtype is not None and dtype not in NUMPY_DTYPE_OBJECT and recv.has("ndarray", "ndarray-obj"):
                    # ``.astype(np.float32)``: numbers (or fixed-width strings), whatever it held
                    return replace(recv, kinds=(recv.kinds - {"ndarray-obj"}) | {"ndarray"})
            if method in ("astype", "reshape", "flatten", "squeeze", "copy", "view", "transpose", "ravel"):
                return recv
        if recv.has("store") and str(recv.detail or "").startswith("datasets."):
            # a Hugging Face ``datasets`` table: its rows are the data; ``to_pandas()`` copies them
            # into a DataFrame, and its stages (``remove_columns``, ``filter``, ``select`` ...) are tables too
            if method == "to_pandas":
                return val("dataframe", size=DATA, why=_why(recv, "the rows of a `datasets` table (`to_pandas`)", where))
            if method in HF_TABLE_STAGES:
                return recv
        if recv.has("coco"):
            if method in COCO_DATA_METHODS:
                return container("list", UNKNOWN, DATA, _why(recv, f"the COCO API (`{method}`)", where))
            if method in ("getCatIds", "loadCats", "get_cat_ids", "load_cats"):
                return container("list", UNKNOWN, BOUNDED)
        if recv.has("handle"):
            if method in ("keys",) and recv.detail.startswith("h5py"):
                return Val(frozenset({"iterator"}), elem=val("str", size=BOUNDED), size=DATA, why=_why(recv, "the keys of an HDF5 file", where))
            if recv.detail.startswith("lmdb") and (method == "cursor" or method.startswith("iter")):
                # the records of an LMDB database: iterating a cursor gives (key, value) pairs
                pair = Val(frozenset({"tuple"}), items=(val("bytes", size=BOUNDED), val("bytes", size=BOUNDED)), size=BOUNDED)
                elem = val("bytes", size=BOUNDED) if method in ("iternext_nodup",) or any(k == "values" for k, _ in kwargs) else pair
                kinds = {"iterator", "handle"} if method == "cursor" else {"iterator"}  # a cursor is iterated or walked
                why = recv.why if recv.has("iterator") else _why(recv, "the keys of an LMDB database", where)
                return Val(frozenset(kinds), elem=elem, size=DATA, detail=recv.detail, why=why)
            if method in ("begin", "cursor", "get", "require_dataset", "require_group"):
                return replace(recv, why=recv.why)
            if method in ("namelist", "getnames", "getmembers", "infolist"):
                return container("list", val("str", size=BOUNDED), DATA, _why(recv, f"the members of an archive (`{method}`)", where))
        if recv.has("iterator", "generator") and method in ("__next__",):
            return recv.elem or UNKNOWN
        if method in ("split", "splitlines", "strip", "rstrip", "lstrip") and recv.has("unknown", "param"):
            if method == "splitlines":
                return container("list", val("str", size=BOUNDED), UNKNOWN_SIZE)
        return UNKNOWN

    # ------------------------------------------------------------------ mutations

    def _apply_write(self, current: Val, fnref, write, cls) -> Val:
        how, ir, row, col, loops = write[:5]
        env = Env(fnref.file, fnref, cls)
        if how == "=":
            return join(current, self._eval(ir, env, 1))
        return self._mutate(current, how, ir, loops, env, 1, row)

    def _mutate(self, current: Val, how: str, ir, loops, env, depth, row) -> Val:
        """``current`` after ``x.<how>(value)`` inside ``loops`` (iterables of the enclosing loops)."""
        value = self._eval(ir, env, depth)
        loop_size, loop_why = BOUNDED, ()
        for it in loops:
            if it == ("while",):
                if _SIZE_RANK[UNKNOWN_SIZE] > _SIZE_RANK[loop_size]:
                    loop_size, loop_why = UNKNOWN_SIZE, ()
                continue
            looping = self.__dict__.get("_looping")
            self._looping = self.__dict__.get("_writing")  # (a loop over the container being filled)
            try:
                v = self._eval(it, env, depth)
            finally:
                self._looping = looping
            s = v.size if v.size != EMPTY else BOUNDED
            if _SIZE_RANK[s] > _SIZE_RANK[loop_size]:
                loop_size, loop_why = s, v.why
        base_kinds = current.kinds - {"unknown"} if not current.is_bottom else frozenset()
        # ``x[k] = v`` / ``x.update(...)`` on a value built by code we cannot see (a library
        # object, a table): it may be a dict, a DataFrame or any mapping; do not invent a dict
        opaque = not current.is_bottom and "unknown" in current.kinds and base_kinds <= {"none"}
        if opaque and (how in ("setitem", "setdefault", "update", "|=") or how.startswith("setitem-")):
            return current
        # one entry per turn of a loop over a configuration's entries (a size not known: loaded,
        # unknown), each entry a whole file's lines or rows: one entry per list file, a handful
        # (``for ds, path in cfg["train"].items(): self.img_files[ds] = open(path).readlines()``)
        per_file = bool(loops) and loop_size in (LOAD, UNKNOWN_SIZE)
        if how in ("append", "add", "appendleft", "insert"):
            kind = "set" if how == "add" else "deque" if how == "appendleft" else "list"
            kinds = base_kinds or frozenset({kind})
            size = loop_size if loops else BOUNDED
            why = loop_why if loops else ()
            if per_file and _whole_file(value):
                size, why = BOUNDED, ()
            new = Val(kinds, elem=value, size=size, why=why)
            return join(current, new)
        if how == "+=" and value.kinds and value.kinds <= {"int", "float", "bool"}:
            return join(current, val(sorted(value.kinds)[0], size=BOUNDED))  # a counter, not a list
        if how in ("extend", "+=", "extendleft", "update", "|="):
            kinds = base_kinds or (frozenset({"dict"}) if how == "update" else frozenset({"list"}))
            size = value.size
            why = value.why
            if loops and _SIZE_RANK[loop_size] > _SIZE_RANK[size]:
                size, why = loop_size, loop_why
            if how in ("|=", "update") and kinds == frozenset({"set"}) and size in (DATA, LOAD):
                size, why = DEDUP, ()  # a union of sets in a loop: deduplicated, like set(...)
            if how == "update" and (value.has("dict") or value.key is not None):
                new = Val(kinds, elem=value.elem, key=value.key, size=size, why=why)
            else:
                new = Val(kinds, elem=element_of(value), size=size, why=why)
            if how == "+=" and current.has("int", "float", "str"):
                return current
            return join(current, new)
        if how in ("setitem", "setdefault") or how.startswith("setitem-"):
            k = item_of(value, 0)
            v = item_of(value, 1)
            kinds = base_kinds or frozenset({"dict"})
            if how.startswith("setitem-"):
                inner_how = how.split("-", 1)[1]
                v = Val(frozenset({"list" if inner_how == "append" else "set" if inner_how == "add" else "list"}), elem=v, size=loop_size if loops else BOUNDED, why=loop_why)
            if kinds & {"list", "ndarray", "tensor"} and "dict" not in kinds:
                if "list" in kinds:
                    # x[i] = v on a list keeps its length; v is one of its elements now (and
                    # x[i].append(v): its elements grow)
                    return join(current, Val(frozenset({"list"}), elem=v, size=EMPTY))
                return current
            size = loop_size if loops else BOUNDED
            why = loop_why if loops else ()
            if isinstance(ir, tuple) and ir[0] == "kv" and isinstance(ir[1], tuple) and ir[1][:1] == ("k",):
                size, why = BOUNDED, ()  # `d["name"] = v` in a loop: one key, however often it is set
            elif per_file and how in ("setitem", "setdefault") and _whole_file(v):
                size, why = BOUNDED, ()
            writing = self.__dict__.get("_writing")
            if how == "setitem" and writing and isinstance(ir, tuple) and ir[0] == "kv" and holds(ir[2], ("i", ("s", writing[2]), ir[1])):
                size, why = EMPTY, ()  # ``d[k] = f(d[k])``: rewrites an entry, adds none
            return join(current, Val(kinds, elem=v, key=k, size=size, why=why))
        return current


def _ir_row(ir) -> int | None:
    """The row of a call an assignment's IR makes (``("c", ..., row)``, also inside ``with``)."""
    if isinstance(ir, tuple) and ir and ir[0] == "with" and len(ir) > 1:
        ir = ir[1]
    if isinstance(ir, tuple) and len(ir) >= 5 and ir[0] == "c" and isinstance(ir[4], int):
        return ir[4]
    return None


def _whole_file(v) -> bool:
    """A value that is all the lines or rows of one file (``open(path).readlines()``)."""
    return v.size == DATA and bool(v.why) and isinstance(v.why[0][0], str) and v.why[0][0].startswith(("the lines of", "the rows of"))


def _max_size(parts):
    best, why = BOUNDED, ()
    for p in parts:
        s = p.size if p.size != EMPTY else BOUNDED
        if _SIZE_RANK[s] > _SIZE_RANK[best]:
            best, why = s, p.why
    return best, why


def _number(a: Val, b: Val, op: str = "+") -> Val:
    """An arithmetic result: an int from ints (``/`` gives a float), a float when either is one."""
    size = a.size if a.size in (DATA, LOAD) else b.size if b.size in (DATA, LOAD) else BOUNDED
    ints = a.kinds <= {"int", "bool"} and b.kinds <= {"int", "bool"}
    if ints and op != "/":
        return val("int", size=size, why=a.why or b.why)
    if a.kinds <= {"int", "float", "bool"} and b.kinds <= {"int", "float", "bool"}:
        return val("float", size=size, why=a.why or b.why)
    return val("int", "float", size=size, why=a.why or b.why)


def local_names(flow, name: str) -> list[str]:
    """The global names a local's assignments bind it to (``dataset_cls = A if lazy else B``:
    A and B): what a call of the local (flow call kind "local") may call."""
    if flow is None:
        return []
    return [o[1] for ir in flow.locals.get(name, ()) for o in (ir[1] if ir[0] == "u" else (ir,)) if o[0] == "g"]


def _flows(facts) -> list:
    """[(function or None for the module's code, its flow)] of a file's code that has a flow, in
    the order of its facts."""
    out = [(None, facts.flow)] if facts.flow is not None else []
    out.extend((fn, fn.flow) for fn in facts.functions.values() if fn.flow is not None)
    return out


def _part_met(part) -> set[str]:
    """The files a function's part of the call index met (``_build_call_index``)."""
    out = set(part[1])
    for _names, met in part[2]:
        out.update(met)
    return out


def _called(kind: str, target, flow, facts) -> list[str]:
    """The global names a call names (``pkg.data.Images``); none for a call of another kind (a
    method of ``self``, ``super()``)."""
    if kind == "ref":
        return [target]
    if kind == "local":
        return called_names(flow, facts, target)
    return []


def _call_names(kind: str, target, flow, facts) -> frozenset[str] | None:
    """The last names of the global names a call names (``pkg.data.Images``: ``Images``), or the
    method a local's object is called by (``vae.encode(x)``: ``encode``); None when it names
    none."""
    if kind == "lmeth":
        return frozenset((target[1],))
    names = _called(kind, target, flow, facts)
    return frozenset(n.rpartition(".")[2] for n in names) if names else None


def called_names(flow, facts, name: str) -> list[str]:
    """The global names a call of the bare name ``name`` (flow call kind "local") may call: those
    the local's assignments bind it to, or, for a name nothing in the file binds but a star import
    (``from pkg.utils import *``), the module's own name for it (resolution follows the import)."""
    names = local_names(flow, name)
    if not names and facts.star_imports and name not in (flow.locals if flow is not None else ()):
        names = [f"{facts.module}.{name}"]
    return names


# sources whose entries are distinct already: a set of them has one entry per file or key
_UNIQUE_SOURCES = ("a directory listing", "a directory walk", "the members of an archive", "the keys of")
# calls that keep a path's identity (a path of the same file, or its name)
_IDENTITY_CALLS = frozenset(
    {
        "os.path.relpath", "os.path.join", "os.path.abspath", "os.path.basename", "os.path.normpath",
        "os.path.realpath", "os.path.expanduser", "os.fspath", "builtins.str", "pathlib.Path", "posixpath.join",
    }
)


def holds(ir, target: tuple) -> bool:
    """Whether the IR of a value holds ``target`` anywhere inside (argument tuples included):
    ``("s", attr)`` for a read of ``self.<attr>``, ``("i", ("s", attr), key)`` for a read of
    ``self.<attr>[key]``."""
    stack = [ir]
    while stack:
        node = stack.pop()
        if node == target:
            return True
        if isinstance(node, (tuple, list)):
            stack.extend(x for x in node if isinstance(x, (tuple, list)))
    return False


def _unique_source(why) -> bool:
    return bool(why) and isinstance(why[0][0], str) and why[0][0].startswith(_UNIQUE_SOURCES)


def _keeps_identity(ir, depth: int = 0) -> bool:
    """An element expression that names the file it comes from (the listing's element, its
    relative or absolute path, its name), not a part shared by several files (its folder, a
    prefix of its name): ``{relpath(join(root, f)) for root, _, files in os.walk(d) for f in files}``."""
    if depth > 4 or not isinstance(ir, tuple) or not ir:
        return False
    if ir[0] == "e":
        return True
    if ir[0] == "a":
        return ir[2] in ("name", "stem") and _keeps_identity(ir[1], depth + 1)
    if ir[0] == "c" and ir[1][0] == "g" and ir[1][1] in _IDENTITY_CALLS:
        return any(a[0] != "*" and _keeps_identity(a, depth + 1) for a in ir[2])
    return False


def _dtype_name(ir) -> str | None:
    if ir is None:
        return None
    if ir[0] == "g":
        return canonical(ir[1]) or ir[1]
    if ir[0] == "k" and isinstance(ir[1], str):
        return ir[1]
    if ir[0] == "a":
        return ir[2]
    return "?"


_MISSING = object()


# container formats a dataset is split into a few dozen of (an LMDB, a webdataset tar, a parquet
# or arrow table, a TFRecord file): a listing of them is bounded, each holds many samples
SHARD_SUFFIXES = (".lmdb", ".tar", ".parquet", ".arrow", ".tfrecord", ".tfrecords", ".zarr")


def _shard_pattern(ir) -> str | None:
    """The glob pattern of a listing of shard files (``"*.lmdb"``, ``os.path.join(root,
    "*.tar")``, ``root + "/*.parquet"``), or None."""
    if not isinstance(ir, tuple) or not ir:
        return None
    text = None
    if ir[0] == "k" and isinstance(ir[1], str):
        text = ir[1]
    elif ir[0] == "c" and ir[1] == ("g", "os.path.join") and ir[2]:
        last = ir[2][-1]
        text = last[1] if last[0] == "k" and isinstance(last[1], str) else None
    elif ir[0] == "b" and ir[1] == "+":
        right = ir[3]
        text = right[1] if isinstance(right, tuple) and right[:1] == ("k",) and isinstance(right[1], str) else None
    if text and "*" in text and text.lower().endswith(SHARD_SUFFIXES):
        return text
    return None


def _stored_item(how: str, value, env) -> list:
    """[(value IR, env)] that one change puts into a container: ``x[k] = v``, ``x.append(v)``."""
    if how in ("setitem", "setdefault") and isinstance(value, tuple) and value[:1] == ("kv",) and len(value) == 3:
        return [(value[2], env)]
    if how in ("append", "add", "appendleft", "insert"):
        return [(value, env)]
    return []


def _split_dataset(ir):
    """The dataset a torch splitter call divides (``random_split(ds, lengths)``: its first
    argument), or None (``names.DATASET_SPLITTERS``)."""
    if not (isinstance(ir, tuple) and ir and ir[0] == "c"):
        return None
    found = _torch_dataset_arg(ir, DATASET_SPLITTERS, ("dataset",))
    return found[1] if found is not None else None


def _wrapped_datasets(ir) -> list | None:
    """The datasets a torch wrapper call is built from (``Subset(ds, idx)``, ``ConcatDataset([a,
    b])``), None when the call is not one of those wrappers (``names.DATASET_WRAPPERS``)."""
    found = _torch_dataset_arg(ir, DATASET_WRAPPERS, ("dataset", "datasets"))
    if found is None:
        return None
    how, first = found
    if first is None:
        return []
    if how == "one":
        return [first]
    if first[0] == "C" and first[1] in ("list", "gen"):
        return [first[2]]  # ``ConcatDataset([Lines(f) for f in files])``: each is one of those
    return list(first[2]) if first[0] == "L" else []


def _torch_dataset_arg(ir, names, keywords: tuple[str, ...]):
    """(what ``names`` says of the torch function a call ``ir`` runs, its dataset argument: the
    first positional one or a keyword of ``keywords``; None when it is unpacked or not given), or
    None when the call runs none of ``names`` (canonical name -> how it holds the dataset)."""
    func = ir[1]
    if not (isinstance(func, tuple) and func and func[0] == "g"):
        return None
    how = names.get(canonical(func[1]))
    if how is None:
        return None
    args, kwargs = ir[2], ir[3]
    first = args[0] if args else next((v for k, v in kwargs if k in keywords), None)
    return how, (first if isinstance(first, tuple) and first and first[0] != "*" else None)


def _bind_arg(params: list, name: str, args, kwargs, kwonly: int = 0):
    """The argument IR a call passes for parameter ``name``; _MISSING when the call does not
    pass it (the default applies); None when it cannot be matched (``*args``, ``**kw``).
    ``kwonly``: how many of ``params``, the last ones, are keyword-only (after ``*args``): no
    positional argument binds to them."""
    for k, v in kwargs:
        if k == name:
            return v
    if name not in params:
        return _MISSING
    at = params.index(name)
    if at >= len(params) - kwonly:
        found = _MISSING
    else:
        found = _positional(args, at)
    if found is _MISSING and any(k is None for k, _ in kwargs):
        return None
    return found


def _positional(args, i: int):
    """The argument IR a call passes at position ``i``: None when a ``*x`` at or before that
    position hides it, _MISSING when the call passes fewer positional arguments."""
    for j, a in enumerate(args):
        if a[0] == "*":
            return None if j <= i else args[i]  # (before the star: passed positionally)
    return args[i] if i < len(args) else _MISSING


def _val_key(v: Val | None):
    """A value as plain hashable data (project classes and functions by their keys): equal for
    values that are the same to the evaluator."""
    if v is None:
        return None
    return (
        v.kinds,
        _val_key(v.elem),
        _val_key(v.key),
        None if v.items is None else tuple(_val_key(i) for i in v.items),
        v.size,
        v.why,
        v.device,
        v.detail,
        None if v.cls is None else v.cls.key,
        None if v.fn is None else v.fn.key,
        v.mode,
        None if v.attrs is None else tuple((k, _val_key(a)) for k, a in v.attrs),
    )


class Env:
    """Where an IR node is evaluated: the file, the function (None: module level), the class
    ``self`` is an instance of, and parameter values bound by a call."""

    __slots__ = ("facts", "fn", "self_cls", "binding", "key", "flow")

    def __init__(self, facts, fn=None, self_cls=None, binding=None):
        self.facts = facts
        self.fn = fn
        self.self_cls = self_cls
        self.binding = binding
        self.flow = fn.fn.flow if fn is not None else facts.flow
        self.key = (
            facts.path,
            fn.fn.qualname if fn is not None else None,
            self_cls.key if self_cls is not None else None,
            id(binding) if binding else None,
        )

    def where(self, row: int):
        return (self.facts.path, row)


_HANDLERS = {
    "k": Values._ev_const,
    "g": Values._ev_global,
    "n": Values._ev_local,
    "nk": Values._ev_local_after,
    "p": Values._ev_param,
    "self": Values._ev_self,
    "s": Values._ev_selfattr,
    "a": Values._ev_attr,
    "c": Values._ev_call,
    "i": Values._ev_subscript,
    "L": Values._ev_display,
    "D": Values._ev_dict,
    "C": Values._ev_comprehension,
    "e": Values._ev_element,
    "b": Values._ev_binop,
    "u": Values._ev_union,
    "lam": Values._ev_lambda,
    "fn": Values._ev_localfn,
    "cm": Values._ev_closure_muts,
    "with": Values._ev_with,
    "fs": Values._ev_str,
    "kb": Values._ev_bytes,
    "cmp": Values._ev_bool,
    "*": Values._ev_star,
    "kv": Values._ev_kv,
}

