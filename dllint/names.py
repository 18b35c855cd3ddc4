"""Well-known qualified names, with the aliases under which libraries export them."""

from __future__ import annotations

# Names that are the same object under several import paths. Keys map to the canonical name.
_ALIASES = {
    "torch.utils.data.dataloader.DataLoader": "torch.utils.data.DataLoader",
    "torch.utils.data.dataset.Dataset": "torch.utils.data.Dataset",
    "torch.utils.data.dataset.IterableDataset": "torch.utils.data.IterableDataset",
    "torch.utils.data.dataset.TensorDataset": "torch.utils.data.TensorDataset",
    "torch.utils.data.dataset.ConcatDataset": "torch.utils.data.ConcatDataset",
    "torch.utils.data.dataset.ChainDataset": "torch.utils.data.ChainDataset",
    "torch.utils.data.dataset.Subset": "torch.utils.data.Subset",
    "torch.utils.data.dataset.random_split": "torch.utils.data.random_split",
    "torch.utils.data.dataset.StackDataset": "torch.utils.data.StackDataset",
    "torch.utils.data.Dataset.__init__": "torch.utils.data.Dataset.__init__",
    "torch.utils.data._utils.worker.get_worker_info": "torch.utils.data.get_worker_info",
    "torch.utils.data.dataloader.get_worker_info": "torch.utils.data.get_worker_info",
    "torch.multiprocessing.spawn.set_start_method": "torch.multiprocessing.set_start_method",
    "multiprocessing.context.set_start_method": "multiprocessing.set_start_method",
    "torch.utils.data.dataloader.default_collate": "torch.utils.data.default_collate",
    "torch.utils.data._utils.collate.default_collate": "torch.utils.data.default_collate",
    "torch.utils.data.datapipes.iter.IterDataPipe": "torch.utils.data.IterDataPipe",
    "lightning.pytorch.LightningDataModule": "lightning.LightningDataModule",
    # texar-pytorch's data classes (re-exported by texar.torch.data)
    "texar.torch.data.data.data_base.DatasetBase": "texar.torch.data.DatasetBase",
    "texar.torch.data.data.DatasetBase": "texar.torch.data.DatasetBase",
    "texar.torch.data.data.data_base.DataBase": "texar.torch.data.DataBase",
    "texar.torch.data.data.DataBase": "texar.torch.data.DataBase",
    "texar.torch.data.data.text_data_base.TextDataBase": "texar.torch.data.TextDataBase",
    "texar.torch.data.data.TextDataBase": "texar.torch.data.TextDataBase",
    "pytorch_lightning.LightningDataModule": "lightning.LightningDataModule",
    # pickle's C implementation and its Python 2 / six names (``import _pickle as cPickle``)
    "_pickle.load": "pickle.load",
    "_pickle.loads": "pickle.loads",
    "cPickle.load": "pickle.load",
    "cPickle.loads": "pickle.loads",
    "six.moves.cPickle.load": "pickle.load",
    "six.moves.cPickle.loads": "pickle.loads",
}


def canonical(qualname: str | None) -> str | None:
    if qualname is None:
        return None
    return _ALIASES.get(qualname, qualname)


DATALOADER = "torch.utils.data.DataLoader"

# DataLoader subclasses in widely used libraries that pass num_workers & co. straight through.
DATALOADER_CLASSES = frozenset(
    {
        DATALOADER,
        "torch_geometric.loader.DataLoader",
        "torch_geometric.data.DataLoader",
        "torch_geometric.loader.dataloader.DataLoader",
        "torch_geometric.loader.DenseDataLoader",
        "torch_geometric.loader.dense_data_loader.DenseDataLoader",
        "torch_geometric.data.DenseDataLoader",
        "torch_geometric.loader.DataListLoader",
        "torch_geometric.loader.data_list_loader.DataListLoader",
        "torch_geometric.data.DataListLoader",
        "monai.data.DataLoader",
        "monai.data.dataloader.DataLoader",
        "dgl.dataloading.GraphDataLoader",
    }
)

MAP_DATASET = "torch.utils.data.Dataset"
# torch datasets that serve the samples of the datasets they are built from: a loader given one
# runs the wrapped datasets' ``__getitem__`` (the first argument; for the concatenations, the
# elements of the list it is given)
DATASET_WRAPPERS = {
    "torch.utils.data.Subset": "one",
    "torch.utils.data.ConcatDataset": "many",
    "torch.utils.data.ChainDataset": "many",
}
# torch functions returning a list of Subsets of the dataset they are given (its first argument):
# ``train_ds, val_ds = random_split(ds, [0.9, 0.1])``: each part serves that dataset's samples
DATASET_SPLITTERS = {"torch.utils.data.random_split": "parts"}
ITERABLE_DATASET = "torch.utils.data.IterableDataset"
# ``@click.option(...)``: a command-line option (its default is what a script runs with)
CLICK_OPTIONS = frozenset({"click.option", "click.decorators.option"})

# Dataset base classes: a class deriving from any of these is a Dataset.
DATASET_BASES = frozenset(
    {
        MAP_DATASET,
        ITERABLE_DATASET,
        "torch.utils.data.TensorDataset",
        "torch.utils.data.ConcatDataset",
        "torch.utils.data.ChainDataset",
        "torch.utils.data.Subset",
        "torch.utils.data.StackDataset",
        "torch_geometric.data.Dataset",
        "torch_geometric.data.InMemoryDataset",
        "monai.data.Dataset",
        "monai.data.CacheDataset",
        "monai.data.PersistentDataset",
        # texar-pytorch: torch Datasets whose ``collate`` its DataIterator's DataLoader runs
        "texar.torch.data.DatasetBase",
        "texar.torch.data.DataBase",
        "texar.torch.data.TextDataBase",
    }
)
ITERABLE_BASES = frozenset({ITERABLE_DATASET, "torch.utils.data.ChainDataset"})

# Module prefixes whose public classes are all Datasets (torchvision.datasets.ImageFolder, ...).
DATASET_MODULE_PREFIXES = ("torchvision.datasets.", "torchaudio.datasets.", "torchtext.datasets.")

# DataLoader's signature (torch 2.x): positional order, then keyword-only parameters.
DATALOADER_POSITIONAL = (
    "dataset",
    "batch_size",
    "shuffle",
    "sampler",
    "batch_sampler",
    "num_workers",
    "collate_fn",
    "pin_memory",
    "drop_last",
    "timeout",
    "worker_init_fn",
    "multiprocessing_context",
    "generator",
)
NUM_WORKERS_POSITION = DATALOADER_POSITIONAL.index("num_workers")
DATALOADER_KEYWORD_ONLY = ("prefetch_factor", "persistent_workers", "pin_memory_device", "in_order")
DATALOADER_PARAMS = frozenset(DATALOADER_POSITIONAL + DATALOADER_KEYWORD_ONLY)
# Keywords only a DataLoader-like call takes: a call with one of these is recorded as a possible
# loader, so the project index can decide later whether its callee is a DataLoader subclass.
LOADER_ONLY_KEYWORDS = frozenset(
    {
        "num_workers",
        "collate_fn",
        "worker_init_fn",
        "multiprocessing_context",
        "persistent_workers",
        "prefetch_factor",
        "batch_sampler",
        "pin_memory",
    }
)

SET_START_METHOD = frozenset(
    {"multiprocessing.set_start_method", "torch.multiprocessing.set_start_method"}
)
GET_CONTEXT = frozenset({"multiprocessing.get_context", "torch.multiprocessing.get_context"})
START_METHODS = ("fork", "spawn", "forkserver")

WORKER_ENTRY_METHODS = ("__getitem__", "__getitems__", "__iter__", "__next__")


# libraries whose classes named *Dataset are torch Datasets (the OpenMMLab
# BaseDataset, dgl's DGLDataset, NeMo's ...)
ML_DATASET_LIBRARIES = frozenset(
    {
        "mmengine", "mmcv", "mmdet", "mmseg", "mmpretrain", "mmaction", "mmpose", "mmocr", "mmdet3d",
        "detectron2", "fairseq", "allennlp", "speechbrain", "lightning", "pytorch_lightning", "dgl",
        "torch_geometric", "monai", "nemo", "espnet", "espnet2", "torchvision", "torchaudio", "torchtext",
        "timm", "lavis", "pytorchvideo", "kornia", "ignite",
    }
)


def is_dataset_base(qualname: str, extra: frozenset[str] = frozenset()) -> bool:
    qualname = canonical(qualname) or ""
    if qualname in DATASET_BASES or qualname in extra:
        return True
    top, _, _ = qualname.partition(".")
    last = qualname.rsplit(".", 1)[-1]
    if top in ML_DATASET_LIBRARIES and "Dataset" in last and last[:1].isupper() and not last.startswith("IterDataPipe"):
        return True
    if qualname.startswith(DATASET_MODULE_PREFIXES):
        last = qualname.rsplit(".", 1)[-1]
        return last[:1].isupper()
    return False

# torch.cuda functions that initialize the CUDA runtime (torch.cuda._lazy_init) when called.
CUDA_INIT_FUNCTIONS = frozenset(
    {
        "torch.cuda.init",
        "torch.cuda.current_device",
        "torch.cuda.set_device",
        "torch.cuda.synchronize",
        "torch.cuda.get_device_properties",
        "torch.cuda.get_device_name",
        "torch.cuda.get_device_capability",
        "torch.cuda.mem_get_info",
        "torch.cuda.current_stream",
        "torch.cuda.Stream",
        "torch.cuda.empty_cache",
    }
)
# Calls that look like CUDA but do not initialize it.
CUDA_NON_INIT = frozenset(
    {
        "torch.cuda.is_available",
        "torch.cuda.device_count",
        "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all",
        "torch.device",
    }
)
# Calls that split a stream between DataLoader workers: torch's own, webdataset's, torchdata's,
# Hugging Face's `.shard(...)`.
GET_WORKER_INFO = "torch.utils.data.get_worker_info"
SHARDING_NAMES = frozenset({"get_worker_info", "split_by_worker", "sharding_filter", "apply_sharding", "shard"})


# OpenMMLab Dataset bases (mmdet / mmdet3d / mmseg ... ``datasets``, mmengine's ``BaseDataset``):
# their ``__getitem__`` prepares the sample through these methods, with the sample index
OPENMMLAB_PACKAGES = frozenset({
    "mmdet", "mmdet3d", "mmseg", "mmcls", "mmpretrain", "mmaction", "mmpose", "mmocr", "mmrotate",
    "mmtrack", "mmedit", "mmagic", "mmgen", "mmhuman3d", "mmfewshot", "mmselfsup", "mmyolo", "mmengine",
})
OPENMMLAB_ENTRY_METHODS = ("get_data_info", "prepare_train_img", "prepare_test_img", "prepare_data", "prepare_train_data", "prepare_test_data")


def is_openmmlab_dataset(base: str) -> bool:
    """A Dataset class of an OpenMMLab package (``mmdet3d.datasets.NuScenesDataset``,
    ``mmengine.dataset.BaseDataset``)."""
    parts = base.split(".")
    return parts[0] in OPENMMLAB_PACKAGES and ("datasets" in parts[1:-1] or "dataset" in parts[1:-1])


# torchvision datasets whose ``__getitem__`` indexes these attributes with the sample index
# (``img, target = self.data[index], self.targets[index]``), filled by their constructors
TORCHVISION_SAMPLE_ATTRS = {
    "DatasetFolder": ("samples",),
    "ImageFolder": ("samples",),
    "ImageNet": ("samples",),
    "CIFAR10": ("data", "targets"),
    "CIFAR100": ("data", "targets"),
    "MNIST": ("data", "targets"),
    "FashionMNIST": ("data", "targets"),
    "KMNIST": ("data", "targets"),
    "EMNIST": ("data", "targets"),
    "QMNIST": ("data", "targets"),
    "SVHN": ("data", "labels"),
    "STL10": ("data", "labels"),
    # (read off torchvision 0.21's ``__getitem__`` methods: the lists indexed with the sample index)
    "CocoDetection": ("ids",),
    "CocoCaptions": ("ids",),
    "VOCSegmentation": ("images", "masks"),
    "VOCDetection": ("images", "annotations"),
    "SBDataset": ("images", "masks"),
    "Cityscapes": ("images", "targets"),
    "Kitti": ("images",),
    "WIDERFace": ("img_info",),
    "Caltech101": ("index", "y"),
    "Caltech256": ("index", "y"),
    "Flowers102": ("_image_files", "_labels"),
    "Food101": ("_image_files", "_labels"),
    "DTD": ("_image_files", "_labels"),
    "FGVCAircraft": ("_image_files", "_labels"),
    "OxfordIIITPet": ("_images", "_labels", "_segs"),
    "StanfordCars": ("_samples",),
    "GTSRB": ("_samples",),
    "Places365": ("imgs",),
    "INaturalist": ("index",),
    "SBU": ("photos", "captions"),
    "LFWPeople": ("data", "targets"),
    "LFWPairs": ("data", "targets"),
    "Omniglot": ("_flat_character_images",),
}


def _torchvision_dataset(base: str) -> str | None:
    """The class name of a ``torchvision.datasets`` class (``ImageFolder``), else None."""
    return base.rsplit(".", 1)[-1] if base.startswith("torchvision.datasets.") else None


def torchvision_sample_attrs(base: str) -> tuple[str, ...]:
    """The attributes a torchvision dataset base's own ``__getitem__`` indexes per sample."""
    return TORCHVISION_SAMPLE_ATTRS.get(_torchvision_dataset(base) or "", ())


def is_torchvision_folder(base: str) -> bool:
    """torchvision's ``DatasetFolder`` / ``ImageFolder``: its constructor lists the files under the
    root into ``samples`` and its ``__getitem__`` indexes ``self.samples`` per sample."""
    return _torchvision_dataset(base) in ("ImageFolder", "DatasetFolder")
