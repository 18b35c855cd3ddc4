"""DL103: ``lambda b: pad(0, b, value=x)`` into ``functools.partial(pad, 0, value=x)``, adding
``import functools`` when the module has no name for ``partial`` yet. Which lambdas qualify is
decided from the facts (dllint/rules/dl103_unpicklable_worker_state.py: the callee is a module-level
function, the lambda's parameters are the call's last positional arguments and appear nowhere
else); this builds the lambda's edits (the import, when one is needed, is ``cst.import_edits``)."""

from __future__ import annotations

from dllint.fixes.cst import CstSource
from dllint.model import Edit, Span


def lambda_to_partial(src: CstSource, span: Span, partial: str) -> tuple[str, tuple[Edit, ...], bool] | None:
    """(the replacement's code, edits, whether it calls ``partial``) for the lambda at ``span``;
    ``partial`` is how the module names ``functools.partial`` (``functools.partial``,
    ``ft.partial``, ``partial``). ``lambda b: f(b)`` becomes ``f`` itself."""
    import libcst as cst

    lam = src.find(cst.Lambda, span)
    if lam is None or not isinstance(lam.body, cst.Call):
        return None
    params = [p.name.value for p in lam.params.params]
    call = lam.body
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keywords = [a for a in call.args if a.keyword is not None]
    if len(positional) + len(keywords) != len(call.args) or len(positional) < len(params):
        return None
    tail = positional[len(positional) - len(params) :]
    if [getattr(a.value, "value", None) for a in tail] != params or not all(isinstance(a.value, cst.Name) for a in tail):
        return None
    kept = positional[: len(positional) - len(params)] + keywords
    if not kept:
        new = call.func.with_changes(lpar=lam.lpar, rpar=lam.rpar) if not call.func.lpar else call.func
    else:
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        args = [cst.Arg(value=call.func, comma=comma)]
        args += [a.with_changes(comma=comma, whitespace_after_arg=cst.SimpleWhitespace("")) for a in kept]
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        new = cst.Call(func=cst.parse_expression(partial), args=args, lpar=lam.lpar, rpar=lam.rpar)
    return src.code(new.with_changes(lpar=[], rpar=[])), src.replace(lam, new), bool(kept)
