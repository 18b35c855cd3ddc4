# source: https://github.com/vahidk/tfrecord/issues/78
# error: with num_workers=4 the data is repeated 4 times (no exception)
# platform: linux   python: unknown
# cause: maintainer: TFRecordDataset shards by worker and returns the data once, MultiTFRecordDataset does not split its stream by worker, so each worker yields the data
# edited: file from stored commit 0a412c6; long docstrings shortened
"""Load tfrecord files into torch datasets."""

import typing

import numpy as np
import torch.utils.data

from tfrecord import iterator_utils, reader


class TFRecordDataset(torch.utils.data.IterableDataset):
    """Parse (generic) TFRecords dataset into `IterableDataset` object,
    which contain `np.ndarrays`s. ...
    """

    def __init__(
        self,
        data_path: str,
        index_path: typing.Union[str, None],
        description: typing.Union[typing.List[str], typing.Dict[str, str], None] = None,
        shuffle_queue_size: typing.Optional[int] = None,
        transform: typing.Callable[[dict], typing.Any] = None,
        sequence_description: typing.Union[typing.List[str], typing.Dict[str, str], None] = None,
        compression_type: typing.Optional[str] = None,
    ) -> None:
        super(TFRecordDataset, self).__init__()
        self.data_path = data_path
        self.index_path = index_path
        self.description = description
        self.sequence_description = sequence_description
        self.shuffle_queue_size = shuffle_queue_size
        self.transform = transform or (lambda x: x)
        self.compression_type = compression_type

    def __iter__(self):
        worker_info = torch.utils.data.get_worker_info()
        if worker_info is not None:
            shard = worker_info.id, worker_info.num_workers
            np.random.seed(worker_info.seed % np.iinfo(np.uint32).max)
        else:
            shard = None
        it = reader.tfrecord_loader(
            data_path=self.data_path,
            index_path=self.index_path,
            description=self.description,
            shard=shard,
            sequence_description=self.sequence_description,
            compression_type=self.compression_type,
        )
        if self.shuffle_queue_size:
            it = iterator_utils.shuffle_iterator(it, self.shuffle_queue_size)
        if self.transform:
            it = map(self.transform, it)
        return it


class MultiTFRecordDataset(torch.utils.data.IterableDataset):
    """Parse multiple (generic) TFRecords datasets into an `IterableDataset`
    object, which contain `np.ndarrays`s. ...
    """

    def __init__(
        self,
        data_pattern: str,
        index_pattern: typing.Union[str, None],
        splits: typing.Dict[str, float],
        description: typing.Union[typing.List[str], typing.Dict[str, str], None] = None,
        shuffle_queue_size: typing.Optional[int] = None,
        transform: typing.Callable[[dict], typing.Any] = None,
        sequence_description: typing.Union[typing.List[str], typing.Dict[str, str], None] = None,
        compression_type: typing.Optional[str] = None,
        infinite: bool = True,
    ) -> None:
        super(MultiTFRecordDataset, self).__init__()
        self.data_pattern = data_pattern
        self.index_pattern = index_pattern
        self.splits = splits
        self.description = description
        self.sequence_description = sequence_description
        self.shuffle_queue_size = shuffle_queue_size
        self.transform = transform
        self.compression_type = compression_type
        self.infinite = infinite

    def __iter__(self):
        worker_info = torch.utils.data.get_worker_info()
        if worker_info is not None:
            np.random.seed(worker_info.seed % np.iinfo(np.uint32).max)
        it = reader.multi_tfrecord_loader(
            data_pattern=self.data_pattern,
            index_pattern=self.index_pattern,
            splits=self.splits,
            description=self.description,
            sequence_description=self.sequence_description,
            compression_type=self.compression_type,
            infinite=self.infinite,
        )
        if self.shuffle_queue_size:
            it = iterator_utils.shuffle_iterator(it, self.shuffle_queue_size)
        if self.transform:
            it = map(self.transform, it)
        return it
