# source: https://github.com/AnswerDotAI/ModernBERT/issues/38
# error: ValueError: prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.
# platform: unknown   python: unknown
# cause: build_dataloader passes prefetch_factor=2 when num_workers is 0 (non-Linux); torch >= 2.0 requires None
# edited: split constants, parse_args body and progress/writer code trimmed to ...
# Copyright 2022 MosaicML Examples authors
# SPDX-License-Identifier: Apache-2.0

"""Streaming dataset conversion scripts for C4 and The Pile."""

import os
import platform
import warnings
from argparse import ArgumentParser, Namespace
from dataclasses import dataclass, field
from enum import Enum
from typing import Dict, Iterable, Optional, Union

import datasets as hf_datasets
import numpy as np
from streaming import MDSWriter
from torch.utils.data import DataLoader, IterableDataset
from tqdm import tqdm
from transformers import AutoTokenizer, PreTrainedTokenizerBase


class ConcatMode(Enum):
    NO_CONCAT = "NO_CONCAT"
    CONCAT_TOKENS = "CONCAT_TOKENS"


def parse_args() -> Namespace:
    """Parse commandline arguments."""
    ...


# (split constants c4constants / pileconstants omitted)
CONSTS = {"c4": c4constants, "the_pile": pileconstants}


class NoConcatDataset(IterableDataset):
    """An IterableDataset that returns text samples for MDSWriter.

    Returns dicts of {'text': bytes}
    """

    def __init__(self, dataset_name: str, data_subset: Union[str, None], split: str):
        self.hf_dataset = hf_datasets.load_dataset(path=dataset_name, name=data_subset, split=split, streaming=True)

    def __iter__(self) -> Iterable[Dict[str, bytes]]:
        for sample in self.hf_dataset:
            # convert to bytes to store in MDS binary format
            yield {"text": sample["text"].encode("utf-8")}


class ConcatTokensDataset(IterableDataset):
    """An IterableDataset that returns token samples for MDSWriter.

    Returns dicts of {'tokens': bytes}
    """

    def __init__(
        self,
        dataset_name: str,
        split: str,
        tokenizer: PreTrainedTokenizerBase,
        max_length: int,
        bos_text: str,
        eos_text: str,
        no_wrap: bool,
        data_subset: Union[str, None] = None,
    ):
        self.tokenizer = tokenizer
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        self.max_length = max_length
        self.bos_text = bos_text
        self.eos_text = eos_text
        self.should_wrap = not no_wrap
        self.hf_dataset = hf_datasets.load_dataset(path=dataset_name, name=data_subset, split=split, streaming=True)

        self.bos_tokens = self.tokenizer(self.bos_text, truncation=False, padding=False, add_special_tokens=False)[
            "input_ids"
        ]
        self.eos_tokens = self.tokenizer(self.eos_text, truncation=False, padding=False, add_special_tokens=False)[
            "input_ids"
        ]
        ...

    def __iter__(self) -> Iterable[Dict[str, bytes]]:
        buffer = []
        for sample in self.hf_dataset:
            encoded = self.tokenizer(sample["text"], truncation=False, padding=False)
            iids = encoded["input_ids"]
            buffer = buffer + self.bos_tokens + iids + self.eos_tokens
            while len(buffer) >= self.max_length:
                concat_sample = buffer[: self.max_length]
                buffer = buffer[self.max_length :] if self.should_wrap else []
                yield {
                    # convert to bytes to store in MDS binary format
                    "tokens": np.asarray(concat_sample).tobytes()
                }


def build_hf_dataset(
    dataset_name: str,
    split: str,
    mode: ConcatMode,
    max_length: int,
    bos_text: Optional[str],
    eos_text: Optional[str],
    no_wrap: bool,
    tokenizer: Optional[PreTrainedTokenizerBase],
    data_subset: Union[str, None] = None,
) -> IterableDataset:
    if mode == ConcatMode.NO_CONCAT:
        dataset = NoConcatDataset(dataset_name=dataset_name, data_subset=data_subset, split=split)
    else:
        ...
        dataset = ConcatTokensDataset(
            dataset_name=dataset_name,
            data_subset=data_subset,
            split=split,
            tokenizer=tokenizer,
            max_length=max_length,
            bos_text=bos_text,
            eos_text=eos_text,
            no_wrap=no_wrap,
        )
    return dataset


def build_dataloader(dataset, batch_size) -> DataLoader:
    # Multiple workers is only supported on linux machines
    if "linux" in platform.platform().lower():
        num_workers = min(64, dataset.hf_dataset.n_shards)  # type: ignore
    else:
        num_workers = 0

    # If using multiple workers, configure each worker to prefetch as many samples as it can, up to
    # the aggregate device batch size
    # If not using workers, the torch DataLoader expects the default value for prefetch_factor,
    # which non-intuitively must be 2.
    prefetch_factor = max(1, 2 * batch_size // num_workers) if num_workers > 0 else 2

    return DataLoader(
        dataset=dataset,
        sampler=None,
        batch_size=batch_size,
        num_workers=num_workers,
        prefetch_factor=prefetch_factor,
    )


def generate_samples(loader: DataLoader, truncate_num_samples: Optional[int] = None) -> Iterable[Dict[str, bytes]]:
    n_samples = 0
    for batch in loader:
        keys = list(batch.keys())
        current_bs = len(batch[keys[0]])
        for idx in range(current_bs):
            if truncate_num_samples is not None and n_samples == truncate_num_samples:
                return
            n_samples += 1
            yield {k: v[idx] for k, v in batch.items()}


def main(args: Namespace) -> None:
    ...
    for split_name in args.splits:
        ...
        # Get samples
        dataset = build_hf_dataset(
            dataset_name=args.dataset,
            data_subset=args.data_subset,
            split=hf_split,
            mode=mode,
            max_length=args.concat_tokens,
            bos_text=args.bos_text,
            eos_text=args.eos_text,
            no_wrap=args.no_wrap,
            tokenizer=tokenizer,
        )
        loader = build_dataloader(dataset=dataset, batch_size=512)
        samples = generate_samples(loader, truncate_num_samples=truncate_num_samples)
        ...


if __name__ == "__main__":
    main(parse_args())
