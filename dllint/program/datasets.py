"""How a Dataset uses its attributes per sample: which attributes ``__len__`` measures, which
``__getitem__`` (and the helpers it calls) indexes with the sample index (or a value derived from
it), which ``__iter__`` walks. This is the structural evidence that an attribute grows with the
data even when its source is invisible (a library call, a loader in another package).
"""

from __future__ import annotations

from dllint.program.refs import ClassRef, FuncRef
from dllint.program.values import is_property

ENTRIES = ("__getitem__", "__getitems__")


class SampleUses:
    def sample_uses(self, ref: ClassRef) -> dict[str, list[tuple[str, str, int]]]:
        """attr -> [(how, function name, row)]: ``len`` (``__len__`` returns its length),
        ``index`` (indexed with the sample index in worker code), ``iter`` (walked by ``__iter__``)."""
        memo = self.__dict__.setdefault("_sample_uses", {})
        found = memo.get(ref.key)
        if found is not None:
            return found
        out: dict[str, list] = {}
        length = self.find_method(ref, "__len__")
        if length is not None and length.fn.flow is not None:
            for ret in length.fn.flow.returns:
                for attr in _measured(ret, length, self, ref, 0):
                    attr = self._accessed(ref, attr)
                    if attr is not None:
                        out.setdefault(attr, []).append(("len", "__len__", length.fn.span.row))
        member = self.in_hierarchy(ref)
        worker = [f for f, _ in self.worker_functions(ref).values() if member(f)]
        tainted = self._index_params(ref, worker)
        for fn in worker:
            flow = fn.fn.flow
            if flow is None:
                continue
            params = tainted.get(fn.key, set())
            if fn.fn.name == "__iter__" or fn.fn.name == "__next__":
                for attr in sorted(flow.iterates):
                    attr = self._accessed(ref, attr)
                    if attr is not None:
                        out.setdefault(attr, []).append(("iter", fn.fn.name, fn.fn.span.row))
            if not params:
                continue
            local_taint = _tainted_locals(flow, params)
            for attr, indexes in flow.indexes.items():
                if any(_uses(ix, params, local_taint) for ix in indexes):
                    attr = self._accessed(ref, attr)
                    if attr is not None:
                        out.setdefault(attr, []).append(("index", fn.fn.name, fn.fn.span.row))
        # ``self.data = self.db``: one object under two names; what the samples do to ``data``
        # they do to ``db`` (an annotation table loaded into one attribute, served by another)
        for r in self.mro(ref):
            for qual in r.cls.methods.values():
                fn = r.file.functions.get(qual)
                flow = fn.flow if fn is not None else None
                if flow is None:
                    continue
                for attr, writes in flow.writes.items():
                    for w in writes:
                        source = w[1]
                        if w[0] == "=" and source[0] == "s" and source[1] != attr and attr in out and source[1] not in out:
                            out[source[1]] = list(out[attr])
        memo[ref.key] = out
        return out

    def _accessed(self, ref: ClassRef, name: str) -> str | None:
        """The attribute a use reaches: ``name`` itself, or for a ``@property`` (``self.files``)
        or a method called without arguments (``self.get_files()``, key ``"get_files()"``) that
        returns one attribute (``return self._files``), that attribute; None for an accessor that
        computes something else."""
        call = name.endswith("()")
        method = self.find_method(ref, name[:-2] if call else name)
        if method is None:
            return None if call else name
        if not call and not is_property(method.fn):
            return name
        returns = method.fn.flow.returns if method.fn.flow is not None else ()
        targets = {r[1] for r in returns if r[0] == "s"}
        if returns and len(targets) == 1 and all(r[0] == "s" for r in returns):
            return targets.pop()
        return None

    def _index_params(self, ref: ClassRef, worker: list[FuncRef]) -> dict[tuple, set[str]]:
        """Function key -> its parameters that hold the sample index (or a value derived from it):
        the index parameter of ``__getitem__``, and the parameters of the class's own worker
        helpers that ``self.m(...)`` calls pass a derived value to."""
        out: dict[tuple, set[str]] = {}
        keys = {f.key for f in worker}
        for f in worker:  # every entry method run (the class's own and the bases' it calls)
            if f.fn.name in ENTRIES and len(f.fn.params) > 1:
                out.setdefault(f.key, set()).add(f.fn.params[1])
        for name in ENTRIES:
            f = self.find_method(ref, name)
            if f is not None and f.key in keys and len(f.fn.params) > 1:
                out.setdefault(f.key, set()).add(f.fn.params[1])
        changed = True
        rounds = 0
        while changed and rounds < 6:
            changed = False
            rounds += 1
            for f in worker:
                params = out.get(f.key)
                if not params or f.fn.flow is None:
                    continue
                local_taint = _tainted_locals(f.fn.flow, params)
                for kind, target, args, kwargs, _row in f.fn.flow.calls:
                    if kind != "self":
                        continue
                    callee = self.find_method(ref, target)
                    if callee is None or callee.fn.flow is None:
                        continue
                    cparams = list(callee.fn.params[1:])
                    hit = set()
                    for i, a in enumerate(args):
                        if i < len(cparams) and a[0] != "*" and _uses(a, params, local_taint):
                            hit.add(cparams[i])
                    for k, v in kwargs:
                        if k in cparams and _uses(v, params, local_taint):
                            hit.add(k)
                    if hit - out.get(callee.key, set()):
                        out.setdefault(callee.key, set()).update(hit)
                        changed = True
        return out


def _measured(ir, fn, model, ref, depth) -> set[str]:
    """Attributes whose ``len()`` an expression computes (``len(self.x)``, ``len(self.x) * k``,
    ``self.n`` where ``self.n = len(self.x)``)."""
    out: set[str] = set()
    if depth > 4 or not isinstance(ir, tuple) or not ir:
        return out
    tag = ir[0]
    if tag == "c" and ir[1] == ("g", "builtins.len") and ir[2]:
        arg = ir[2][0]
        if arg[0] == "s":
            out.add(arg[1])
        elif arg[0] == "c" and arg[1][0] == "a" and arg[1][1][0] == "s":
            out.add(arg[1][1][1])  # len(self.x.keys())
        elif arg[0] == "i" and arg[1][0] == "s" and arg[2][0] == "k":
            out.add(arg[1][1])  # len(self.ann["images"]): a named table of it
        elif arg[0] == "c" and arg[1][0] == "s" and not arg[2] and not arg[3]:
            out.add(arg[1][1] + "()")  # len(self.get_items()): an accessor's result
        return out
    if tag == "b":
        return _measured(ir[2], fn, model, ref, depth + 1) | _measured(ir[3], fn, model, ref, depth + 1)
    if tag == "u":
        for o in ir[1]:
            out |= _measured(o, fn, model, ref, depth + 1)
        return out
    if tag == "c" and ir[1][0] == "g" and ir[1][1] in ("builtins.int", "builtins.min", "builtins.max"):
        for a in ir[2]:
            out |= _measured(a, fn, model, ref, depth + 1)
        return out
    if tag == "n" and fn.fn.flow is not None:
        for v in fn.fn.flow.locals.get(ir[1], ()):
            out |= _measured(v, fn, model, ref, depth + 1)
        return out
    if tag == "s":
        # self.length, set to len(self.x) while the instance was built
        for wfn, write in model.attr_writes(ref, ir[1]):
            if write[0] == "=":
                out |= _measured(write[1], wfn, model, ref, depth + 1)
    return out


def _tainted_locals(flow, params: set[str]) -> set[str]:
    """Locals computed from the sample index (``i = idx % n``, ``path, label = self.items[idx]``)."""
    tainted: set[str] = set()
    for _ in range(4):
        grew = False
        for name, values in flow.locals.items():
            if name in tainted:
                continue
            if any(_uses(v, params, tainted) for v in values):
                tainted.add(name)
                grew = True
        if not grew:
            break
    return tainted


_ARITH_CALLS = frozenset({"builtins.int", "builtins.min", "builtins.max", "builtins.abs", "builtins.round", "math.floor", "math.ceil"})


def _uses(ir, params: set[str], local_taint: set[str], depth: int = 0) -> bool:
    """Whether an IR expression is the sample index or arithmetic on it (``idx``, ``idx % n``,
    ``int(idx // 2)``): not a value looked up with it (``self.labels[idx]`` is a label, and a
    container indexed with a label is a label map, not a per-sample table)."""
    if depth > 10 or not isinstance(ir, tuple) or not ir:
        return False
    tag = ir[0]
    if tag == "p":
        return ir[1] in params
    if tag == "n":
        return ir[1] in local_taint
    if tag == "b":
        return _uses(ir[2], params, local_taint, depth + 1) or _uses(ir[3], params, local_taint, depth + 1)
    if tag == "u":
        return any(_uses(o, params, local_taint, depth + 1) for o in ir[1])
    if tag == "c" and ir[1][0] == "g" and ir[1][1] in _ARITH_CALLS:
        return any(a[0] != "*" and _uses(a, params, local_taint, depth + 1) for a in ir[2])
    if tag == "L" and ir[1] == "tuple":  # self.x[idx, 0]
        return any(e[0] not in ("*", "more") and _uses(e, params, local_taint, depth + 1) for e in ir[2])
    return False
