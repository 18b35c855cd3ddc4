"""The cache can only make a run faster: loading it never runs code (a project may ship a
`.dllint_cache/`), entries of the wrong shape never fail or change a run, and a file changed with
the same size and modification time is read again."""

from __future__ import annotations

import dataclasses
import os
import pickle
import time
from pathlib import Path

from click.testing import CliRunner

import dllint.cache as cache_module
from dllint.cache import CACHE_DIR, dumps
from dllint.cli import cli
from dllint.model import FileFacts, Span
from projectgen import generate

ARGS = ["check", "--select", "ALL", "--output-format", "concise", "-q", "--no-fix"]


def run(work: Path, *extra: str) -> tuple[int, str, str]:
    old = os.getcwd()
    os.chdir(work)
    try:
        result = CliRunner().invoke(cli, [*ARGS, *extra, "."], catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def age(root: Path, seconds: float = 10) -> None:
    past = time.time() - seconds
    for p in root.rglob("*.py"):
        os.utime(p, (past, past))


def cache_files(root: Path) -> list[Path]:
    return [p for p in (root / CACHE_DIR).rglob("*") if p.is_file() and p.name not in (".gitignore", "CACHEDIR.TAG")]


class Payload:
    """Unpickling this creates a file: proof that loading ran code."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_shipped_pickle_cache_runs_no_code(tmp_path):
    work = tmp_path / "w"
    generate(str(work), seed=0, files=40)
    age(work)
    code, reference, _ = run(work, "--no-cache")
    assert reference.strip()
    run(work)  # fills the cache
    marker = tmp_path / "pwned"
    evil = pickle.dumps(Payload(str(marker)), protocol=4)
    files = cache_files(work)
    assert files
    for p in files:  # every entry the cache would read is now a malicious pickle
        p.write_bytes(evil)
    (work / CACHE_DIR / "files.pickle").write_bytes(evil)
    for extra in ((), ("--diff",)):  # a stored result, and the facts (--diff reads them)
        code, out, err = run(work, *extra)
        assert not marker.exists(), "loading the cache ran code"
        assert code in (0, 1), err
        if not extra:
            assert out == reference
            warnings = [line for line in err.splitlines() if "warning" in line]
            assert len(warnings) == 1 and "cache" in warnings[0], err
    # and the cache works again afterwards
    code, out, err = run(work)
    assert out == reference and not err


def _rewrite_entries(root: Path, change) -> int:
    """Replace each decodable facts entry by ``change(facts)``, written the way the cache writes."""
    loads = getattr(cache_module, "loads", pickle.loads)
    n = 0
    for p in cache_files(root):
        if "facts" not in p.parts:
            continue
        facts = loads(p.read_bytes())
        assert isinstance(facts, FileFacts)
        p.write_bytes(dumps(change(facts)))
        n += 1
    return n


def test_entries_of_the_wrong_shape_neither_fail_nor_change_the_run(tmp_path):
    generate(str(tmp_path), seed=1, files=40)
    age(tmp_path)
    _, reference, _ = run(tmp_path, "--no-cache")
    run(tmp_path)
    assert _rewrite_entries(tmp_path, lambda f: dataclasses.replace(f, classes=["not", "a", "dict"], noqa="x"))
    code, out, err = run(tmp_path, "--diff")  # reads the facts, not a stored result
    assert code in (0, 1) and "Traceback" not in err and "internal error" not in err, err
    code, out, err = run(tmp_path)
    assert out == reference, err

    run(tmp_path)
    assert _rewrite_entries(tmp_path, lambda f: Span(1, 1, 1, 1))
    code, out, err = run(tmp_path, "--diff")
    assert code in (0, 1) and "internal error" not in err, err
    assert run(tmp_path)[1] == reference


def test_a_stored_result_of_the_wrong_shape_is_not_used(tmp_path):
    generate(str(tmp_path), seed=1, files=40)
    age(tmp_path)
    _, reference, _ = run(tmp_path, "--no-cache")
    run(tmp_path)
    results = [p for p in cache_files(tmp_path) if "results" in p.parts]
    assert results
    for p in results:
        p.write_bytes(dumps((["not a diagnostic", Span(1, 1, 1, 1)], 3)))
    code, out, err = run(tmp_path)
    assert code in (0, 1), err
    assert out == reference


def test_a_file_changed_with_the_same_size_and_mtime_is_read_again(tmp_path):
    generate(str(tmp_path), seed=0, files=40)
    age(tmp_path, 60)
    target = next(p for p in sorted((tmp_path / "proj0" / "data").glob("sets_*.py")) if "lambda" in p.read_text())
    before = run(tmp_path)[1]
    assert run(tmp_path)[1] == before  # warm: served by (mtime, size)
    st = target.stat()
    text = target.read_text()
    old = "lambda x: x * 2"
    target.write_text(text.replace(old, "abs".ljust(len(old))))  # same size, the DL103 lambda gone
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the old modification time (cp -p, rsync -t, tar)
    assert target.stat().st_size == st.st_size and target.stat().st_mtime_ns == st.st_mtime_ns
    after = run(tmp_path)[1]
    assert after == run(tmp_path, "--no-cache")[1]
    assert after != before


def test_decoding_builds_only_dllint_data_classes():
    import hashlib
    import json

    import pytest

    from dllint import serial

    def entry(data) -> bytes:
        body = json.dumps(data).encode()
        return b"dllint-cache %d %s\n%s" % (serial.FORMAT, hashlib.blake2b(body, digest_size=16).hexdigest().encode(), body)

    span = ["o", "dllint.model.Span", 1, 2, 3, 4]
    assert serial.loads(entry(span)) == Span(1, 2, 3, 4)
    for bad in (
        ["o", "os.system", "echo hi"],  # not a dllint class: never imported, never called
        ["o", "subprocess.Popen", ["l", "true"]],
        ["o", "dllint.model.Span", 1, 2, 3],  # a field missing
        ["o", "dllint.model.Span", 1, 2, 3, "4"],  # a field of the wrong type
        ["o", "dllint.model.Value", "ref", "x", ["t", 1], None, ["n"], ["t"], ["t"]],  # span is not a Span
        ["x", 1],  # an unknown tag
        {"a": 1},  # a bare JSON object
    ):
        with pytest.raises(serial.CacheDataError):
            serial.loads(entry(bad))
    good = entry(span)
    with pytest.raises(serial.CacheDataError):  # one byte changed: the checksum says so
        serial.loads(good.replace(b"4]", b"5]"))
    # shared tuples: a reference only to a tuple written (and labelled) before it, a label once,
    # and not where a field's annotation wants a tuple of its own (a `Value`'s items)
    assert serial.loads(entry(["t", ["T", 0, "n", "x"], ["r", 0]])) == (("n", "x"), ("n", "x"))
    for bad in (
        ["t", ["r", 0], ["T", 0, "n", "x"]],
        ["t", ["T", 0, "a"], ["T", 0, "b"]],
        ["t", ["T", "0", "a"], ["r", "0"]],
        ["t", ["r", 0, 1]],
        ["o", "dllint.model.Value", "ref", "x", ["r", 0], None, ["n"], ["t"], ["t"]],
    ):
        with pytest.raises(serial.CacheDataError):
            serial.loads(entry(bad))


def test_temporary_files_of_killed_runs_are_cleaned(tmp_path):
    generate(str(tmp_path), seed=0, files=20)
    run(tmp_path)
    tmp = tmp_path / CACHE_DIR / "tmp"
    assert tmp.is_dir() and not list(tmp.iterdir())  # the cache writes its temporary files here
    stale, fresh = tmp / ".dllint-old.tmp", tmp / ".dllint-new.tmp"
    stale.write_bytes(b"x")
    fresh.write_bytes(b"x")
    hours_ago = time.time() - 2 * 3600
    os.utime(stale, (hours_ago, hours_ago))
    (tmp_path / "late.py").write_text("x = 1\n")  # something to save
    run(tmp_path)
    assert not stale.exists() and fresh.exists()
    assert not [p for p in tmp_path.rglob(".dllint-*") if CACHE_DIR not in p.parts]


def test_cache_files_are_the_same_written_from_two_threads_at_once():
    """A worker process stores facts from a thread of its own while a job may store others
    (dllint/workers.py): ``serial.dumps`` and ``loads`` keep state while they run, so two threads
    encoding and decoding at once must each get what one thread alone gets."""
    import threading

    from dllint import serial
    from dllint.facts.extract import extract
    from dllint.rules import all_rules

    sources = sorted((Path(__file__).parent.parent / "fixtures").rglob("*.py"), key=lambda p: -p.stat().st_size)[:6]
    facts = [
        extract(str(p), p.stem, str(p.parent), False, p.read_bytes(), all_rules(), frozenset({"torch.utils.data.DataLoader"}), frozenset())
        for p in sources
    ]
    expected = [serial.dumps(f) for f in facts]
    problems: list = []

    def work():
        try:
            for _ in range(40):
                for f, blob in zip(facts, expected):
                    if serial.dumps(f) != blob or not serial.same_facts(serial.loads(blob), f):
                        problems.append("differs")
        except Exception as exc:  # (what a race raised)
            problems.append(repr(exc))

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert problems == []
