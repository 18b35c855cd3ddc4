# source: https://github.com/ContinualAI/avalanche/pull/1320
# error: ValueError: prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable multiprocessing.
# platform: unknown   python: unknown
# cause: PR: when _make_data_loader is called with force_no_workers=True (to estimate the number of batches) it sets num_workers=0 but keeps the user's prefetch_factor, which DataLoader rejects without workers
# edited: from avalanche/benchmarks/utils/data_loader.py at stored commit b70ba8a6 (parent of the PR's commit e6298fb): imports and _make_data_loader() with its distributed-helper placeholder; the loader classes and collate helpers (incl. collate_from_data_or_kwargs, defined in this file) trimmed
from itertools import chain
from typing import Dict, Optional, Sequence, Union

import torch
from torch.utils.data import RandomSampler, DistributedSampler
from torch.utils.data.dataloader import DataLoader


def _make_data_loader(
    dataset,
    distributed_sampling,
    data_loader_args,
    batch_size,
    force_no_workers=False,
):
    data_loader_args = data_loader_args.copy()

    collate_from_data_or_kwargs(dataset, data_loader_args)

    if force_no_workers:
        data_loader_args['num_workers'] = 0
        if 'persistent_workers' in data_loader_args:
            data_loader_args['persistent_workers'] = False

    if _DistributedHelper.is_distributed and distributed_sampling:
        sampler = DistributedSampler(
            dataset,
            shuffle=data_loader_args.pop("shuffle", False),
            drop_last=data_loader_args.pop("drop_last", False),
        )
        data_loader = DataLoader(
            dataset, sampler=sampler, batch_size=batch_size, **data_loader_args
        )
    else:
        sampler = None
        data_loader = DataLoader(
            dataset, batch_size=batch_size, **data_loader_args
        )

    return data_loader, sampler


class __DistributedHelperPlaceholder:
    is_distributed = False
    world_size = 1
    rank = 0


_DistributedHelper = __DistributedHelperPlaceholder()
