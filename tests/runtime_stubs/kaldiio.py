"""A stand-in for the kaldiio library (not a test dependency), enough for the DL101 fixture
dl101/kaldi_scp: ``load_scp`` maps each line's key to (rate, samples) read lazily by key, as
kaldiio's LazyLoader does. It sits last on the runtime test's sys.path: a real kaldiio wins."""

import numpy as np


class _Lazy(dict):
    def __getitem__(self, key):
        path = super().__getitem__(key)
        with open(path, "rb") as fh:
            return 16000, np.frombuffer(fh.read().ljust(8, b"\0")[:8], dtype=np.int16).copy()


def load_scp(fname, segments=None, **kwargs):
    out = _Lazy()
    with open(fname) as fh:
        for line in fh:
            if line.strip():
                key, path = line.split(maxsplit=1)
                out[key] = path.strip()
    return out
