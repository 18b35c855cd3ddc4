"""A stand-in for tqdm when it is not installed (tests/test_dl101_runtime.py): a progress bar
iterates what it wraps, passed by position or as ``iterable=``."""


def tqdm(iterable=None, *args, **kwargs):
    return iter(iterable if iterable is not None else ())
