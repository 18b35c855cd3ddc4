"""The folders a file puts on the import search path at run time (``sys.path.insert(0, ...)``,
``sys.path.append``, ``site.addsitedir``), as the ends of their paths.

Research code often runs with a sub-folder made importable by hand: TorchSeg-style configs call
``add_path(osp.join(C.root_dir, 'furnace'))``, whose ``sys.path.insert(0, path)`` lets the
model scripts write ``from datasets import VOC`` for ``furnace/datasets/``. The prefix of such a
path is usually computed at run time (a repository root found from the working folder); its end
is written in the code. The end is what is recorded: the literal path components the argument
ends with (``('furnace',)``, ``('third_party', 'yolov5')``), through ``os.path.join``, ``/`` on
paths, ``str()`` / ``abspath()`` / ``realpath()`` / ``Path()``, a module variable or a local
assigned once, and a parameter of the function making the call, filled by the calls of that
function in the same file. The layout (dllint/program/layout.py) takes the folder to be that end
below the adding file's own folder or one of its ancestors (the computed prefix is a root found
from ``__file__`` or the working folder), and searches it for modules no other root holds. A path ending in ``..`` or ``.`` or built
from nothing written (``os.getcwd()``) gives nothing.
"""

from __future__ import annotations

import ast

from dllint.facts.flow import call_argument

PATH_CALLS = frozenset({"sys.path.insert", "sys.path.append", "sys.path.extend", "site.addsitedir"})
# functions of a path that end where their argument ends
SAME_END = frozenset(
    {
        "builtins.str", "os.path.abspath", "os.path.realpath", "os.path.normpath", "os.path.expanduser",
        "pathlib.Path", "pathlib.PurePath", "posixpath.abspath", "posixpath.realpath",
    }
)
JOIN = frozenset({"os.path.join", "posixpath.join", "ntpath.join"})
MAX_DEPTH = 4


def sys_path_tails(ctx) -> list[tuple[str, tuple[str, ...]]]:
    """Sorted distinct (where, path end) of the folders this file adds to ``sys.path``: where is
    "first" for ``sys.path.insert`` (searched before the installed libraries: it shadows them)
    and "last" for ``append`` / ``extend`` / ``addsitedir`` (an installed library of the same
    name wins)."""
    text = ctx.text
    if "sys" not in text or ("path" not in text and "addsitedir" not in text):
        return []
    found: set[tuple[str, tuple[str, ...]]] = set()
    for call in ctx.nodes(ast.Call):
        name = ctx.qualname(call.func)
        if name not in PATH_CALLS or not call.args:
            continue
        arg = call.args[-1] if name == "sys.path.insert" else call.args[0]
        values = arg.elts if name == "sys.path.extend" and isinstance(arg, (ast.List, ast.Tuple)) else [arg]
        where = "first" if name == "sys.path.insert" else "last"
        for value in values:
            found.update((where, tail) for tail in _tails(ctx, value, 0))
    return sorted(found)


def _tails(ctx, node, depth: int) -> set[tuple[str, ...]]:
    if depth > MAX_DEPTH:
        return set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        tail = _components(node.value)
        return {tail} if tail else set()
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):  # Path(root) / "lib" / "x"
        right = node.right
        if isinstance(right, ast.Constant) and isinstance(right.value, str):
            tail = _components(right.value)
            if not tail:
                return set()
            more = _tails(ctx, node.left, depth + 1)
            return {m + tail for m in more} if more else {tail}
        return set()
    if isinstance(node, ast.Call):
        name = ctx.qualname(node.func)
        if name in JOIN and node.args:
            tail: tuple[str, ...] = ()
            for arg in reversed(node.args):
                if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                    break
                parts = _components(arg.value)
                if not parts:
                    return set() if not tail else {tail}
                tail = parts + tail
            if tail:
                return {tail}
            return _tails(ctx, node.args[-1], depth + 1) if len(node.args) == 1 else set()
        if name in SAME_END and len(node.args) == 1:
            return _tails(ctx, node.args[0], depth + 1)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute", "expanduser") and not node.args:
            return _tails(ctx, node.func.value, depth + 1)
        return set()
    if isinstance(node, ast.Name):
        scope = ctx.scope_of(node)
        binding = ctx.lookup(node.id, scope)
        if binding is None:
            return set()
        if binding.kind == "local" and len(binding.values) == 1 and binding.values[0] is not None:
            return _tails(ctx, binding.values[0], depth + 1)
        if binding.kind == "param" and scope is not None and scope.kind == "function":
            return _passed_tails(ctx, scope, node.id, depth + 1)
    return set()


def _passed_tails(ctx, scope, param: str, depth: int) -> set[tuple[str, ...]]:
    """The ends of what this file's calls of the function (by its name) pass for ``param``."""
    fn = scope.node
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    if param not in params:
        return set()
    position = params.index(param)
    out: set[tuple[str, ...]] = set()
    for call in ctx.nodes(ast.Call):
        if not (isinstance(call.func, ast.Name) and call.func.id == fn.name):
            continue
        passed = call_argument(call, param, position)
        if passed is not None:
            out.update(_tails(ctx, passed, depth))
    return out


def _components(path: str) -> tuple[str, ...]:
    """The folder names a literal path ends with, after its last ``..``; () when it ends in a
    ``..`` or names nothing."""
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or parts[-1] == ".." or any(c in path for c in "{}%*"):
        return ()
    if ".." in parts:
        parts = parts[len(parts) - parts[::-1].index("..") :]
    return tuple(parts)
