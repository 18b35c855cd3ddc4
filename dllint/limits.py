"""Where dllint stops: a file larger than ``max-file-size`` (MB, default 10) is not analysed.

Analysis time and memory grow linearly with a file's size, but with a large factor: the syntax
tree and facts of a module take about 150 bytes of memory per byte of source (a 12 MB generated
module: 22 s and 1.8 GB to check). Such a file is reported as DL000 ("file too large to analyse")
instead, so a run never exhausts the machine's memory without a word; raise the limit in
``[tool.dllint]`` (``max-file-size = 50``) to analyse it anyway.
"""

from __future__ import annotations

MB = 1_000_000


def too_large(data: dict[str, bytes], entries: dict[str, list], limit_mb: float) -> dict[str, str]:
    """path -> the DL000 message, for the files over the limit; they are removed from ``data``
    (bytes read) and ``entries`` (files the cache let the engine skip; entry[1] is the size)."""
    limit = limit_mb * MB
    out: dict[str, str] = {}
    for path in [p for p, blob in data.items() if len(blob) > limit]:
        out[path] = _message(len(data.pop(path)), limit_mb)
        entries.pop(path, None)
    for path in [p for p, e in entries.items() if e[1] > limit]:
        out[path] = _message(entries.pop(path)[1], limit_mb)
    return out


def _message(size: int, limit_mb: float) -> str:
    return f"file too large to analyse ({size / MB:.1f} MB > {limit_mb:g} MB; see `max-file-size`)"
