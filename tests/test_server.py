"""``dllint server`` driven through a real LSP exchange over stdio (JSON-RPC with Content-Length
framing), compared with what ``dllint check`` reports for the same unsaved text."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="the language server needs the `lsp` extra (pygls)")

from dllint.model import Diagnostic, Span
from dllint.server import noqa_edit, utf16_col

TIMEOUT = 60  # seconds for any one answer: a hang fails the test instead of blocking it

FRAMES = '''import glob

import torch.multiprocessing as mp
from base import Base

label = "é😀"; mp.set_sharing_strategy("file_system")


class Frames(Base):
    def __init__(self, root):
        self.files = sorted(glob.glob(root + "/*.png"))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return self.files[i]
'''


class Client:
    """A minimal LSP client: a reader thread turns framed messages into a queue."""

    def __init__(self, cwd: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dllint", "server"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.messages: queue.Queue = queue.Queue()
        self.backlog: list[dict] = []
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        try:
            while True:
                headers = {}
                while True:
                    line = out.readline()
                    if not line:
                        self.messages.put(None)
                        return
                    line = line.decode("ascii").strip()
                    if not line:
                        break
                    key, _, value = line.partition(":")
                    headers[key.strip().lower()] = value.strip()
                body = out.read(int(headers["content-length"]))
                self.messages.put(json.loads(body.decode("utf-8")))
        except Exception as exc:  # pragma: no cover - reported by wait()
            self.messages.put({"reader-error": repr(exc)})

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict | None = None) -> None:
        self.send({"method": method, **({"params": params} if params is not None else {})})

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        rid = self.next_id
        self.send({"id": rid, "method": method, **({"params": params} if params is not None else {})})
        reply = self.wait(lambda m: m.get("id") == rid and "method" not in m)
        assert "error" not in reply, reply
        return reply.get("result")

    def wait(self, match, timeout: float = TIMEOUT) -> dict:
        for i, m in enumerate(self.backlog):
            if match(m):
                return self.backlog.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no answer within {timeout}s; got {self.backlog}")
            try:
                m = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if m is None:
                raise AssertionError(f"the server exited: {self.proc.stderr.read().decode(errors='replace')[-2000:]}")
            assert "reader-error" not in m, m
            if "method" in m and "id" in m:  # a request from the server: answer it
                self.send({"id": m["id"], "result": None})
                continue
            if match(m):
                return m
            self.backlog.append(m)

    def diagnostics(self, uri: str, version: int | None = None) -> list[dict]:
        m = self.wait(
            lambda m: m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and (version is None or m["params"].get("version") == version)
        )
        return m["params"]["diagnostics"]

    def close(self) -> int:
        try:
            self.request("shutdown")
            self.notify("exit")
            return self.proc.wait(timeout=TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=TIMEOUT)


def cli(work: Path, text: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dllint", "check", "-", "--stdin-filename", "frames.py", *args],
        cwd=work, input=text, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )


def to_offset(text: str, pos: dict) -> int:
    """An LSP position (UTF-16 columns) -> index in ``text`` (an independent conversion)."""
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: pos["line"]])
    units = lines[pos["line"]].encode("utf-16-le")[: 2 * pos["character"]]
    return start + len(units.decode("utf-16-le"))


def apply(text: str, edits: list[dict]) -> str:
    spans = sorted(((to_offset(text, e["range"]["start"]), to_offset(text, e["range"]["end"]), e["newText"]) for e in edits), reverse=True)
    for a, b, new in spans:
        text = text[:a] + new + text[b:]
    return text


def cli_as_lsp(text: str, findings: list[dict]) -> list[tuple]:
    """The command line's JSON findings as (code, message, LSP range)."""
    lines = text.split("\n")

    def pos(loc):
        line = lines[loc["row"] - 1]
        return {"line": loc["row"] - 1, "character": len(line[: loc["column"] - 1].encode("utf-16-le")) // 2}

    return sorted(
        (f["code"], f["message"], json.dumps({"start": pos(f["location"]), "end": pos(f["end_location"])}, sort_keys=True))
        for f in findings
    )


def lsp_as_tuples(diags: list[dict]) -> list[tuple]:
    return sorted((d["code"], d["message"], json.dumps(d["range"], sort_keys=True)) for d in diags)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.dllint]\ntarget-version = "py311"\n')
    (tmp_path / "base.py").write_text("from torch.utils.data import Dataset\n\n\nclass Base(Dataset):\n    pass\n")
    (tmp_path / "plain.py").write_text("class Base:\n    pass\n")
    (tmp_path / "frames.py").write_text("x = 1\n")  # on disk: not what the editor holds
    return tmp_path


def test_language_server_matches_the_command_line(work: Path):
    uri = (work / "frames.py").as_uri()
    client = Client(work)
    try:
        init = client.request("initialize", {"processId": os.getpid(), "rootUri": work.as_uri(), "capabilities": {}})
        caps = init["capabilities"]
        assert caps["codeActionProvider"] and caps["textDocumentSync"]
        client.notify("initialized", {})
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": FRAMES}})
        published = client.diagnostics(uri, 1)

        # the same findings as `dllint check` on the same (unsaved) text, positions in UTF-16
        proc = cli(work, FRAMES, "--output-format", "json")
        expected = cli_as_lsp(FRAMES, json.loads(proc.stdout))
        assert lsp_as_tuples(published) == expected
        codes = sorted(d["code"] for d in published)
        # DL101 needs base.py (another file, from disk) to know Frames is a Dataset
        assert codes == ["DL101", "DL302"]
        dl302 = next(d for d in published if d["code"] == "DL302")
        assert dl302["range"]["start"] == {"line": 5, "character": 15}  # "é😀" is 3 UTF-16 units, 2 characters
        assert dl302["severity"] == 2 and dl302["source"] == "dllint"

        # code actions on DL101: its safe fix first, then the noqa quick fix
        dl101 = next(d for d in published if d["code"] == "DL101")
        actions = client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": uri}, "range": dl101["range"], "context": {"diagnostics": [dl101]}},
        )
        titles = [a["title"] for a in actions]
        assert titles[0].startswith("DL101: ") and titles[0].endswith("(safe fix)"), titles
        assert actions[0]["isPreferred"] is True
        assert titles[1] == "DL101: disable for this line (# noqa: DL101)"
        assert all("DL302" not in t for t in titles)  # only what the range touches
        only_source = client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": uri}, "range": dl101["range"], "context": {"diagnostics": [], "only": ["source.organizeImports"]}},
        )
        assert only_source == []  # the client asked for another kind of action
        fixed = apply(FRAMES, actions[0]["edit"]["changes"][uri])
        assert fixed == cli(work, FRAMES, "--fix").stdout  # the same text `dllint check --fix` writes

        # the noqa quick fix for DL302 silences exactly that finding
        actions = client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": uri}, "range": dl302["range"], "context": {"diagnostics": [dl302]}},
        )
        assert [a["title"] for a in actions] == ["DL302: disable for this line (# noqa: DL302)"]
        silenced = apply(FRAMES, actions[0]["edit"]["changes"][uri])
        assert 'mp.set_sharing_strategy("file_system")  # noqa: DL302\n' in silenced
        assert [f["code"] for f in json.loads(cli(work, silenced, "--output-format", "json").stdout)] == ["DL101"]

        # didChange: the class now derives from a base that is not a Dataset; DL101 goes away
        changed = FRAMES.replace("from base import Base", "from plain import Base")
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": changed}]},
        )
        assert [d["code"] for d in client.diagnostics(uri, 2)] == ["DL302"]

        # didSave re-lints (the text is still the editor's)
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        assert [d["code"] for d in client.diagnostics(uri)] == ["DL302"]
        assert client.close() == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


def test_unsaved_text_of_other_open_documents_counts(work: Path):
    frames, base = (work / "frames.py").as_uri(), (work / "base.py").as_uri()
    (work / "frames.py").write_text(FRAMES)
    client = Client(work)
    try:
        client.request("initialize", {"processId": os.getpid(), "rootUri": work.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        # base.py as the editor holds it (unsaved): Base is not a Dataset there
        client.notify("textDocument/didOpen", {"textDocument": {"uri": base, "languageId": "python", "version": 1, "text": "class Base:\n    pass\n"}})
        assert client.diagnostics(base, 1) == []
        client.notify("textDocument/didOpen", {"textDocument": {"uri": frames, "languageId": "python", "version": 1, "text": FRAMES}})
        assert [d["code"] for d in client.diagnostics(frames, 1)] == ["DL302"]
        # the editor goes back to the Dataset base and saves: frames.py is linted again too
        client.notify("textDocument/didChange", {"textDocument": {"uri": base, "version": 2}, "contentChanges": [{"text": (work / "base.py").read_text()}]})
        client.diagnostics(base, 2)
        client.notify("textDocument/didSave", {"textDocument": {"uri": base}})
        assert sorted(d["code"] for d in client.diagnostics(frames, 1)) == ["DL101", "DL302"]
        # closing clears the document's findings
        client.notify("textDocument/didClose", {"textDocument": {"uri": frames}})
        assert client.diagnostics(frames) == []
        assert client.close() == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


def test_a_broken_configuration_does_not_stop_the_server(work: Path):
    (work / "pyproject.toml").write_text("[tool.dllint]\nselect = [\"NOPE\"]\n")
    uri = (work / "frames.py").as_uri()
    client = Client(work)
    try:
        client.request("initialize", {"processId": os.getpid(), "rootUri": work.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": FRAMES}})
        assert client.diagnostics(uri, 1) == []
        log = client.wait(lambda m: m.get("method") == "window/logMessage")
        assert "unknown rule selector" in log["params"]["message"]
        (work / "pyproject.toml").write_text('[tool.dllint]\ntarget-version = "py311"\n')
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        assert sorted(d["code"] for d in client.diagnostics(uri)) == ["DL101", "DL302"]
        assert client.close() == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


def test_utf8_positions_when_the_client_prefers_them(work: Path):
    uri = (work / "frames.py").as_uri()
    client = Client(work)
    try:
        init = client.request(
            "initialize",
            {"processId": os.getpid(), "rootUri": work.as_uri(), "capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]}}},
        )
        assert init["capabilities"]["positionEncoding"] == "utf-8"
        client.notify("initialized", {})
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": FRAMES}})
        dl302 = next(d for d in client.diagnostics(uri, 1) if d["code"] == "DL302")
        line = FRAMES.splitlines()[5]
        assert dl302["range"]["start"] == {"line": 5, "character": len(line[: line.index("mp.")].encode("utf-8"))}
        assert dl302["range"]["start"]["character"] == 18  # "é" is 2 bytes, the emoji 4 (UTF-16: 15)
        assert client.close() == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


def test_noqa_edit_extends_existing_codes_and_refuses_strings():
    def diag(row):
        return Diagnostic("DL302", "m", "f.py", Span(row, 1, row, 2))

    text = "a = 1  # noqa: DL101\nb = 2  # noqa\nc = '''\nx'''\n"
    lines = text.split("\n")[:-1]
    assert noqa_edit(text, lines, diag(1))["newText"] == "a = 1  # noqa: DL101, DL302"
    assert noqa_edit(text, lines, diag(2)) is None  # a bare noqa already silences everything
    assert noqa_edit(text, lines, diag(3)) is None  # a comment there would land inside the string
    cell = ["!pip install x", "mp.set_sharing_strategy('file_system')"]  # a notebook cell with IPython syntax
    assert noqa_edit("\n".join(cell), cell, diag(2))["newText"] == "mp.set_sharing_strategy('file_system')  # noqa: DL302"


def test_utf16_columns():
    assert utf16_col("abc", 2) == 1
    assert utf16_col('x = "😀"; y', 8) == 8  # the emoji counts twice
    assert utf16_col("é", 2) == 1
    assert utf16_col('x = "😀"; y', 8, "utf-8") == 10 and utf16_col('x = "😀"; y', 8, "utf-32") == 7


def test_linter_caches_facts_but_sees_changed_files(work: Path):
    from dllint.server import Linter

    linter = Linter()
    uri = (work / "frames.py").as_uri()
    assert sorted(d.code for d in linter.lint(uri, FRAMES, {}).diagnostics) == ["DL101", "DL302"]
    [engine] = linter.engines.values()
    cached = len(engine.store.cache)
    assert cached >= 2  # frames.py (the editor's text) and base.py
    calls = []
    inner = engine.store.store.compute
    engine.store.store.compute = lambda items: calls.append([i[0] for i in items]) or inner(items)
    linter.lint(uri, FRAMES, {})
    assert calls == []  # nothing changed: no file analysed again
    # saved elsewhere: Base is no Dataset now (the trigger word in its code gets it analysed again)
    (work / "base.py").write_text('class Base:\n    kind = "Dataset"\n')
    assert [d.code for d in linter.lint(uri, FRAMES, {}).diagnostics] == ["DL302"]
    assert calls == [[str(work / "base.py")]]


def test_each_document_starts_again_from_its_last_plan(work: Path, demand_rounds):
    """The server keeps each document's plan (the files its last run analysed, no disk cache):
    the next run after an edit asks one round of demands, with the same findings as a first
    run of the edited text in a new server."""
    from dllint.server import Linter

    # Frames' base is in a file without trigger words, whose own base is in another: the
    # first run follows them one file at a time
    (work / "base.py").write_text("from middle import Middle\n\n\nclass Base(Middle):\n    pass\n")
    (work / "middle.py").write_text("from torch.utils.data import Dataset\n\n\nclass Middle(Dataset):\n    pass\n")
    rounds = demand_rounds
    uri = (work / "frames.py").as_uri()
    linter = Linter()
    first = [d.code for d in linter.lint(uri, FRAMES, {}).diagnostics]
    assert "DL101" in first
    assert len(rounds) > 1  # (the chase follows base.py, then middle.py)
    edited = FRAMES + "\n\ndef added(x):\n    return x\n"
    rounds.clear()
    again = [(d.code, d.span) for d in linter.lint(uri, edited, {}).diagnostics]
    assert len(rounds) == 1
    rounds.clear()
    fresh = [(d.code, d.span) for d in Linter().lint(uri, edited, {}).diagnostics]
    assert again == fresh


def test_a_run_whose_planning_did_not_settle_carries_a_note(work: Path, monkeypatch):
    """The server logs ``Linted.notes`` (a warning in the editor's log, not a diagnostic): here
    planning stops after one round while it still wanted files (``MAX_ROUNDS``); the next run
    starts from the files that one reached, settles, and says nothing."""
    import dllint.engine as engine_module
    from dllint.server import Linter

    (work / "base.py").write_text("from middle import Middle\n\n\nclass Base(Middle):\n    pass\n")
    (work / "middle.py").write_text("from torch.utils.data import Dataset\n\n\nclass Middle(Dataset):\n    pass\n")
    uri = (work / "frames.py").as_uri()
    assert Linter().lint(uri, FRAMES, {}).notes == []
    monkeypatch.setattr(engine_module, "MAX_ROUNDS", 1)
    linter = Linter()
    [note] = linter.lint(uri, FRAMES, {}).notes
    assert "planning did not settle" in note
    assert linter.lint(uri, FRAMES, {}).notes == []


def test_notebook_cells_through_notebook_sync(work: Path):
    cells = [
        ("code", "import torch.multiprocessing as mp\n!echo hi"),
        ("markdown", "# Notes"),
        ("code", 'x = 1  # noqa: DL302\nlabel = "é"; mp.set_sharing_strategy("file_system")'),
    ]
    nb_path = work / "nb.ipynb"
    nb_path.write_text(json.dumps({
        "cells": [{"cell_type": k, "metadata": {}, "source": t, **({"outputs": [], "execution_count": None} if k == "code" else {})} for k, t in cells],
        "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5,
    }, indent=1) + "\n")
    nb_uri = nb_path.as_uri()
    cell_uris = [f"vscode-notebook-cell:{nb_path}#C{i}" for i in range(len(cells))]
    client = Client(work)
    try:
        client.request("initialize", {"processId": os.getpid(), "rootUri": work.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        client.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": nb_uri, "notebookType": "jupyter-notebook", "version": 1,
                                 "cells": [{"kind": 2 if k == "code" else 1, "document": u} for (k, _), u in zip(cells, cell_uris)]},
            "cellTextDocuments": [{"uri": u, "languageId": "python" if k == "code" else "markdown", "version": 1, "text": t}
                                  for (k, t), u in zip(cells, cell_uris)],
        })
        first = client.diagnostics(cell_uris[0])
        third = client.diagnostics(cell_uris[2])
        assert first == []
        # the same findings as `dllint check nb.ipynb`: cell 3, rows and columns within the cell
        cli_out = subprocess.run([sys.executable, "-m", "dllint", "check", "--output-format", "json", "nb.ipynb"],
                                 cwd=work, capture_output=True, text=True, timeout=TIMEOUT, check=False)
        findings = json.loads(cli_out.stdout)
        assert {f["cell"] for f in findings} == {3}
        assert lsp_as_tuples(third) == cli_as_lsp(cells[2][1], findings)
        assert sorted(d["code"] for d in third) == ["DL001", "DL302"]
        # the DL001 fix, applied by the editor to the cell, gives what --fix writes into the notebook
        dl001 = next(d for d in third if d["code"] == "DL001")
        actions = client.request("textDocument/codeAction", {"textDocument": {"uri": cell_uris[2]}, "range": dl001["range"], "context": {"diagnostics": [dl001]}})
        assert actions[0]["title"].endswith("(safe fix)")
        fixed_cell = apply(cells[2][1], actions[0]["edit"]["changes"][cell_uris[2]])
        subprocess.run([sys.executable, "-m", "dllint", "check", "--fix", "nb.ipynb"], cwd=work, capture_output=True, timeout=TIMEOUT, check=False)
        assert "".join(json.loads(nb_path.read_text())["cells"][2]["source"]) == fixed_cell
        # a cell edited in the editor: the findings follow
        client.notify("notebookDocument/didChange", {
            "notebookDocument": {"uri": nb_uri, "version": 2},
            "change": {"cells": {"textContent": [{"document": {"uri": cell_uris[2], "version": 2}, "changes": [{"text": "y = 2\n"}]}]}},
        })
        assert client.diagnostics(cell_uris[2]) == []
        client.notify("notebookDocument/didClose", {"notebookDocument": {"uri": nb_uri}, "cellTextDocuments": [{"uri": u} for u in cell_uris]})
        assert client.diagnostics(cell_uris[0]) == []
        assert client.close() == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


MIXED = '''import glob

import torch
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __init__(self, root):
        self.table = torch.load(root)
        self.files = sorted(glob.glob(root + "/*.png"))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return self.files[i], self.table[i]


loader = DataLoader(Frames("d"), num_workers=2, multiprocessing_context="fork")
'''


def test_safe_fixes_come_first_and_unsafe_ones_are_labelled(work: Path):
    uri = (work / "mixed.py").as_uri()
    client = Client(work)
    try:
        client.request("initialize", {"processId": os.getpid(), "rootUri": work.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": MIXED}})
        published = client.diagnostics(uri, 1)
        assert sorted(d["code"] for d in published) == ["DL101", "DL102"]  # DL102 first in the file
        whole = {"start": {"line": 0, "character": 0}, "end": {"line": len(MIXED.splitlines()), "character": 0}}
        actions = client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": whole, "context": {"diagnostics": published}})
        kinds = [("safe" if a["title"].endswith("(safe fix)") else "unsafe" if a["title"].endswith("(unsafe fix)") else "noqa") for a in actions]
        assert kinds == ["safe", "unsafe", "noqa", "noqa"], [a["title"] for a in actions]
        assert actions[0]["title"].startswith("DL101") and actions[1]["title"].startswith("DL102")
        assert actions[0]["isPreferred"] is True and actions[1]["isPreferred"] is False
        # the unsafe fix is the edit `dllint check --fix --unsafe-fixes` makes for DL102
        unsafe = apply(MIXED, actions[1]["edit"]["changes"][uri])
        proc = subprocess.run(
            [sys.executable, "-m", "dllint", "check", "-", "--stdin-filename", "mixed.py", "--fix", "--unsafe-fixes", "--select", "DL102"],
            cwd=work, input=MIXED, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )
        assert unsafe == proc.stdout != MIXED
        assert client.close() == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()


def test_notebook_sync_naming_missing_documents_keeps_the_session(work: Path):
    """A client that names a cell it never sent, or changes a cell or a notebook that was never
    opened, gets a logged warning (no "Error in server" popup) and the session goes on."""
    nb_uri = (work / "nb.ipynb").as_uri()
    cell = f"vscode-notebook-cell:{work / 'nb.ipynb'}#C0"
    ghost = f"vscode-notebook-cell:{work / 'nb.ipynb'}#C1"
    client = Client(work)
    try:
        client.request("initialize", {"processId": os.getpid(), "rootUri": work.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        client.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": nb_uri, "notebookType": "jupyter-notebook", "version": 1,
                                 "cells": [{"kind": 2, "document": cell}, {"kind": 2, "document": ghost}]},
            "cellTextDocuments": [{"uri": cell, "languageId": "python", "version": 1,
                                   "text": 'import torch.multiprocessing as mp\nmp.set_sharing_strategy("file_system")\n'}],
        })
        # the cell that was sent is linted; the missing one is named in a warning
        assert [d["code"] for d in client.diagnostics(cell)] == ["DL302"]
        log = client.wait(lambda m: m.get("method") == "window/logMessage")
        assert log["params"]["type"] == 2 and ghost in log["params"]["message"]
        client.notify("notebookDocument/didChange", {
            "notebookDocument": {"uri": nb_uri, "version": 2},
            "change": {"cells": {"textContent": [{"document": {"uri": ghost + "x", "version": 2}, "changes": [{"text": "y = 2\n"}]}]}},
        })
        client.notify("notebookDocument/didChange", {
            "notebookDocument": {"uri": (work / "never.ipynb").as_uri(), "version": 2},
            "change": {"cells": {"textContent": [{"document": {"uri": cell, "version": 2}, "changes": [{"text": "y = 2\n"}]}]}},
        })
        for _ in range(2):
            log = client.wait(lambda m: m.get("method") == "window/logMessage")
            assert log["params"]["type"] == 2 and "ignored a notification" in log["params"]["message"]
        # the session goes on: a document opened now is linted
        uri = (work / "frames.py").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": FRAMES}})
        assert sorted(d["code"] for d in client.diagnostics(uri, 1)) == ["DL101", "DL302"]
        assert not [m for m in client.backlog if m.get("method") == "window/showMessage"]
        assert client.close() == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
