"""Loops over loaders, read off one file: what a ``for`` iterates (through ``enumerate``, ``iter``,
``tqdm``) and which variable that is (a local, a module name, ``self.x``), so the model can join
loops with the loaders the variable was assigned from."""

from __future__ import annotations

import ast

WRAPPERS = frozenset({"builtins.enumerate", "builtins.iter"})
TQDM = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm", "tqdm.rich.tqdm"})


def call_key(span) -> tuple[int, int]:
    return (span.row, span.col)


def unwrap_iter(ctx, node: ast.AST, target: ast.AST) -> tuple[ast.AST, ast.AST | None]:
    """The iterated object and the part of the loop target that receives its items."""
    for _ in range(4):
        if not isinstance(node, ast.Call) or not node.args:
            break
        name = ctx.call_name(node)
        if name == "builtins.enumerate":
            node = node.args[0]
            if isinstance(target, ast.Tuple) and len(target.elts) == 2:
                target = target.elts[1]
            else:
                target = None
        elif name in WRAPPERS or name in TQDM:
            node = node.args[0]
        else:
            break
    return node, target


def loop_source(ctx, node: ast.AST):
    """("name", scope qualname, name) | ("self", class qualname, attr) | None."""
    if isinstance(node, ast.Name):
        scope = ctx.scope_of(node)
        first = True
        while scope is not None:
            if (first or scope.kind != "class") and node.id in scope.bindings:
                binding = scope.bindings[node.id]
                if binding.kind == "global":
                    return ("name", ctx.module, node.id)
                if binding.kind != "local":
                    return None
                return ("name", scope.qualname if scope.kind != "module" else ctx.module, node.id)
            first = False
            scope = scope.parent
        return None
    if isinstance(node, ast.Attribute):
        fn = ctx.method_of(node)
        if fn is not None and ctx.is_self_attr(node, fn):
            return ("self", fn.cls.qualname, node.attr)
    return None
