"""How a Dataset uses its attributes per sample: which attributes ``__len__`` measures, which
``__getitem__`` (and the helpers it calls) indexes with the sample index (or a value derived from
it), which ``__iter__`` walks. This is the structural evidence that an attribute grows with the
data even when its source is invisible (a library call, a loader in another package).
"""

from __future__ import annotations

import re

from dllint.facts.uses import table_key
from dllint.names import canonical, torchvision_sample_attrs
from dllint.program.refs import ClassRef, FuncRef
from dllint.program.values import ARRAY_METHODS, Env, is_property

ENTRIES = ("__getitem__", "__getitems__")
# attributes only arrays, tensors and frames have (no Python container does)
ARRAY_ATTRS = frozenset({"shape", "dtype", "ndim"})
# what an open file is held as: a file object, a memory map, an HDF5 / LMDB / zip ... handle
OPEN_FILES = frozenset({"file", "memmap", "handle", "h5dataset"})


class SampleUses:
    def sample_uses(self, ref: ClassRef) -> dict[str, list[tuple[str, str, int]]]:
        """attr -> [(how, function name, row)]: ``len`` (``__len__`` returns its length),
        ``index`` (indexed with the sample index in worker code, ``self.df.iloc[idx]`` included),
        ``iter`` (walked by ``__iter__``), ``elements`` (each element it holds is indexed with the
        sample index: ``for src in self.sources: src[idx]``), ``feeds`` (a list with ``len`` or
        ``index`` uses gets at most one ``.append`` per element of it), ``text`` (a table whose per-sample cell worker code
        uses as a string: ``sf.read(self.df.iloc[idx]["path"])``, the evidence that a DataFrame
        has object (string) columns), ``str-key`` (looked up with the sample index written as a
        string: ``self.boxes[f"{idx:08d}"]``), ``id-key`` (looked up with the sample's identifier
        read off its row: ``self.features[row["video_id"]]``), ``record-rows`` (its per-sample
        item looked up by name: ``self.items[idx]["file"]``); the last three tell a mapping or a
        list of records from a tensor."""
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
        worker = [f for f, _ in self.worker_functions(ref).values() if member(f) or _instance_helper(f)]
        tainted = self._index_params(ref, worker)

        def follow(func):
            """The flow and the parameters (``self`` left out) of what ``self.<name>(...)`` calls:
            a method of the class, or a function the instance keeps (``self.loader = loader``,
            a parameter defaulting to a module's ``default_loader(path)``); or of a project
            function called by name (``readPFM(path)``)."""
            if func[0] == "g":
                found = self.resolve(func[1], ref.file.root)
                if not isinstance(found, FuncRef) or found.fn.cls is not None or found.fn.flow is None:
                    return None
                return found.fn.flow, found.fn.params
            name = func[1]
            m = self.find_method(ref, name)
            if m is not None:
                return (m.fn.flow, m.fn.params[1:]) if m.fn.flow is not None else None
            if not self.attr_writes(ref, name):
                return None
            held = self.attr_value(ref, name)
            fn = held.fn if held.has("function") else None
            if fn is None or fn.fn.flow is None or fn.fn.cls is not None:
                return None
            return fn.fn.flow, fn.fn.params

        for fn in worker:
            flow = fn.fn.flow
            if flow is None:
                continue
            params = tainted.get(fn.key, set())
            if fn.fn.name == "__iter__" or fn.fn.name == "__next__":
                # (one sample per element: a walk with a loop in its body reads several per element,
                # a shard file's records, and says nothing of how many elements there are)
                for attr in sorted(flow.iterates - flow.iterates_nested):
                    attr = self._accessed(ref, attr)
                    if attr is not None:
                        out.setdefault(attr, []).append(("iter", fn.fn.name, fn.fn.span.row))
            if not params:
                continue
            local_taint = _tainted_locals(flow, params)
            for attr, indexes in flow.indexes.items():
                if any(_uses(ix, params, local_taint) for ix in indexes if ix[0] != "elt"):
                    how = "index"
                elif any(_uses(ix[1], params, local_taint) for ix in indexes if ix[0] == "elt"):
                    how = "element-index"  # self.images_lr[self.idx_scale][idx]
                else:
                    continue
                attr = self._accessed(ref, attr)
                if attr is None:
                    continue
                # (a key that is the sample index written as a string is an index use too: a
                # mapping with one key per sample, ``self.boxes[f"{idx:08d}"]``)
                if how == "index" and any(_str_key(ix, params, local_taint, flow) for ix in indexes if ix[0] != "elt"):
                    out.setdefault(attr, []).append(("str-key", fn.fn.name, fn.fn.span.row))
                out.setdefault(attr, []).append((how, fn.fn.name, fn.fn.span.row))
            for attr, how in sorted(_frame_uses(flow, params, local_taint, follow) | _element_uses(flow, params, local_taint)):
                out.setdefault(attr, []).append((how, fn.fn.name, fn.fn.span.row))
        # ``self.data = self.db``: one object under two names; what the samples do to ``data``
        # they do to ``db`` (an annotation table loaded into one attribute, served by another)
        for fn in self.hierarchy_methods(ref):
            for attr, writes in fn.fn.flow.writes.items():
                for w in writes:
                    source = w[1]
                    if w[0] == "=" and source[0] == "s" and source[1] != attr and attr in out and source[1] not in out:
                        out[source[1]] = list(out[attr])
        if self._library_serves(ref):
            # a library base serves the samples: what its ``__getitem__`` indexes per sample
            for attr in self._library_samples(ref):
                out.setdefault(attr, []).append(("index", "__getitem__", ref.cls.span.row))
        for attr, (source, fn_name, row) in sorted(self._one_per_element(ref, out).items()):
            out.setdefault(source, []).append(("feeds", fn_name, row))
        for attr, (source, fn_name, row) in sorted(self._walked_samples(ref, out).items()):
            out.setdefault(attr, []).append(("follows", source, row))
        memo[ref.key] = out
        return out

    def library_reader(self, ref: ClassRef, attr: str) -> str | None:
        """The library base whose own code reads ``self.<attr>`` (torchvision's ``ImageFolder``
        indexes ``samples``), or None: uses dllint does not see, so no fix is proven safe."""
        return self._library_samples(ref).get(attr)

    def _library_serves(self, ref: ClassRef) -> bool:
        """Whether a library base's ``__getitem__`` serves the samples: the class's project
        hierarchy defines none, or each one it defines ends in ``super().__getitem__(...)`` and the
        last reaches past every project class (``img, target = super().__getitem__(idx)`` in a
        subclass of torchvision's ``CocoDetection``)."""
        method = self.find_method(ref, "__getitem__")
        seen = set()
        while method is not None:
            flow = method.fn.flow
            if method.key in seen or flow is None or not any(c[0] == "super" and c[1] == "__getitem__" for c in flow.calls):
                return False
            seen.add(method.key)
            owner = self.class_of(method)
            if owner is None:
                return False
            method = self.find_method(ref, "__getitem__", after=owner)
        return True

    def _library_samples(self, ref: ClassRef) -> dict[str, str]:
        """attr -> the library base whose own ``__getitem__`` indexes ``self.<attr>`` with the
        sample index: torchvision's ``ImageFolder`` reads ``samples``, ``CIFAR10`` ``data`` and
        ``targets`` (dllint/names.py ``TORCHVISION_SAMPLE_ATTRS``)."""
        out: dict[str, str] = {}
        for base in sorted(self.external_bases(ref)):
            for attr in torchvision_sample_attrs(canonical(base) or base):
                out.setdefault(attr, base)
        return out

    def _walked_samples(self, ref: ClassRef, uses: dict) -> dict[str, tuple[str, str, int]]:
        """attr -> (source attr, function, row) for a container built by walking another
        attribute that grows with the data by use (``__len__`` measures it, ``__getitem__``
        indexes it): ``for ann in self.annotation: self.captions.append(...)``,
        ``self.txt2img[n] = i`` with an int key, ``self.paths = [a["file"] for a in self.anns]``.
        One entry (or more) per sample: it grows with the data too (``walked_sources``)."""
        measured = {a for a, found in uses.items() if any(how in ("len", "index") for how, _f, _r in found)}
        if not measured:
            return {}
        out: dict[str, tuple[str, str, int]] = {}
        for attr, sources in self.walked_sources(ref).items():
            if attr not in measured:
                for source in sources:
                    if source[0] in measured:
                        out[attr] = source
                        break
        return out

    def walked_sources(self, ref: ClassRef) -> dict[str, list[tuple[str, str, int]]]:
        """attr -> [(source attr, function, row)]: the other attributes of the instance whose
        elements build it one entry (or more) each: an ``.append`` / ``.extend`` / ``+=`` in a
        loop over ``self.<source>``, an int-keyed item set in one, a list or int-keyed dict
        comprehension over it, an ``.append`` to one of a dict's lists in such a loop (the
        samples grouped by label: ``self.by_label[y].append(i)``). Not a container filled only
        under a membership test (``if x not in self.names: self.names.append(x)``: distinct
        values), nor a dict keyed by anything but a number (a count per category is bounded)."""
        memo = self.__dict__.setdefault("_walked_sources", {})
        found = memo.get(ref.key)
        if found is not None:
            return found
        out: dict[str, list[tuple[str, str, int]]] = {}
        for fn in self.hierarchy_methods(ref):
            for attr, writes in fn.fn.flow.writes.items():
                for w in writes:
                    how, ir, loops = w[0], w[1], w[4]
                    grouped = how in ("setitem-append", "setitem-extend")
                    # (keyed by each record's own identifier: one entry per record, even when
                    # looked up with ``in``)
                    by_id = how == "setitem" and ir[0] == "kv" and _record_id_key(ir[1], fn.fn.flow)
                    if how in ("append", "extend", "+=") or grouped:
                        # (``self.by_label[y].append(i)``: a few keys, their lists as long as the source)
                        walked = loops[:1]
                    elif how == "setitem" and loops and ir[0] == "kv" and (by_id or self._int_key(ir[1], fn, ref)):
                        # (an int key, or each walked record's own identifier: one entry per record)
                        walked = loops[:1]
                    elif how == "=" and ir[0] == "C" and ir[1] in ("list", "dict", "set") and ir[3]:
                        if ir[1] == "set" or (ir[1] == "dict" and not self._int_key(ir[2][1], fn, ref)):
                            continue
                        walked = ir[3][:1]
                    else:
                        continue
                    source = _walked(walked[0], "s") if walked else None
                    if source is None and walked:
                        # a loop over the named table of another attribute that the class serves
                        # as its samples (``for frame in self.meta["frames"]`` beside
                        # ``len(self.meta["frames"])`` in ``__len__``): one entry per sample
                        table = _walked_table(walked[0])
                        if table is not None and self._sample_table(ref, *table):
                            source = table[0]
                    # (a membership test of a grouping dict asks for its keys, not its entries)
                    if source is not None and source != attr and (grouped or by_id or not self._membership_tested(ref, attr)):
                        out.setdefault(attr, []).append((source, fn.fn.name, w[2]))
        memo[ref.key] = out
        return out

    def _sample_table(self, ref: ClassRef, attr: str, key: str) -> bool:
        """``self.attr[key]`` is the table of the samples: ``__len__`` measures it, or the
        methods serving a sample look it up (``self.meta["frames"][idx]``)."""
        for kind, detail, _row, on_self, scope in self.own_signal(ref, attr, "attr_uses", lambda use: use[4]):
            if kind == "table" and on_self and table_key(detail) == key and scope.rsplit(".", 1)[-1] in SAMPLE_METHODS:
                return True
        return False

    def co_walked(self, ref: ClassRef) -> dict[str, set[str]]:
        """attr -> the other attributes one method builds by walking the same local whole, one
        entry per element each: a list comprehension over it, or a dict comprehension over a
        dict's items keyed by the dict's own keys (``self.videos = [... for k, v in
        data.items()]`` beside ``self.video2idx = {k: v[1] for k, v in data.items()}``): as long
        as each other. Not a comprehension keyed by a field (``{r["label"]: i for ...}``
        deduplicates)."""
        memo = self.__dict__.setdefault("_co_walked", {})
        found = memo.get(ref.key)
        if found is not None:
            return found
        groups: dict[tuple, set[str]] = {}
        for fn in self.hierarchy_methods(ref):
            for attr, writes in fn.fn.flow.writes.items():
                for w in writes:
                    local = _walked_whole(w[1]) if w[0] == "=" else None
                    if local is not None:
                        groups.setdefault((fn.key, local), set()).add(attr)
        out: dict[str, set[str]] = {}
        for attrs in groups.values():
            for attr in attrs:
                if len(attrs) > 1:
                    out.setdefault(attr, set()).update(attrs - {attr})
        memo[ref.key] = out
        return out

    def shard_listing(self, ref: ClassRef, attr: str) -> bool:
        """A list of files each holding many records: the class (or a project function it passes
        the list to) walks it and adds each file's records to another container several at a
        time (``for path in self.data_files: self.data.extend(read(path))``,
        ``results += json.load(f)``). One entry per shard file, not per sample."""
        for fn in self.hierarchy_methods(ref):
            if _extends_per_element(fn.fn.flow, lambda it: _walked(it, "s") == attr):
                return True
        return any(
            _extends_per_element(callee.fn.flow, lambda it: _walked(it, "p") in names)
            for callee, names in self._callees_given(ref, attr)
        )

    def looked_up_by_callee(self, ref: ClassRef, attr: str) -> bool:
        """A project function the class hands ``self.attr`` to looks it up with a sample's
        identifier (``_load_dataset(root, self.img_id2idx)`` doing ``img_id2val[img_id]`` per
        question): the loaded records are a table with one entry per sample."""
        return any(_param_table(callee.fn.flow, names) for callee, names in self._callees_given(ref, attr))

    def label_keyed(self, ref: ClassRef, attr: str) -> bool:
        """Every lookup of an element of ``self.attr`` in the class's methods
        (``self.attr["answer_attr"][answer]``) uses a key the code reads from a record's field
        naming a group (an answer, a label, a word: ``answer = q["answer"]``) or a literal: its
        named tables are label maps, not tables with one entry per sample. False when there is
        no such lookup, or one key is anything else (the sample index, an identifier, a parameter)."""
        found = False
        for fn in self.hierarchy_methods(ref):
            flow = fn.fn.flow
            if flow is None:
                continue
            for ix in flow.indexes.get(attr, ()):
                if ix[0] != "elt":
                    continue
                if not _label_key(flow, ix[1]):
                    return False
                found = True
        return found

    def copied_from(self, ref: ClassRef, attr: str) -> frozenset[str] | None:
        """The other attributes ``self.attr`` is assigned from when every assignment is one of
        them or a comprehension over one (``self._idx2category = self._classes``,
        ``{c: i for i, c in enumerate(self._classes)}``, also over ``sorted`` / ``list``), or it
        is created empty and filled in a loop over one, each entry the element or a field of it
        (``for k, v in self._classes.items(): self.labels[v] = k``); None when it is assigned
        anything else (or not at all)."""
        writes = self.attr_writes(ref, attr)
        if not writes:
            return None
        out: set[str] = set()
        for _fn, w in writes:
            ir = w[1]
            if w[0] in ("setitem", "append", "add") and len(w[4]) == 1:
                # one entry per element of another attribute, in a loop over it (``for k, v in
                # self.classes.items(): self.labels[v] = k``), into a container created empty;
                # each entry a part of the element (not a list of files per class)
                parts = ir[1:] if w[0] == "setitem" and ir[0] == "kv" else (ir,)
                source = _walked(_unwrap_view(w[4][0]), "s") if all(_element_part(p) for p in parts) else None
                if source is None or source == attr:
                    return None
                out.add(source)
                continue
            if w[0] == "=" and _empty_display(ir):
                continue
            if w[0] != "=" or not isinstance(ir, tuple) or not ir:
                return None
            if ir[0] == "C" and len(ir) > 3 and len(ir[3]) == 1:
                ir = ir[3][0]  # a comprehension's only iterable
                if ir[0] == "c" and ir[1] in (("g", "builtins.enumerate"), ("g", "builtins.sorted"), ("g", "builtins.list")) and ir[2]:
                    ir = ir[2][0]
            if not (ir[0] == "s" and ir[1] != attr):
                return None
            out.add(ir[1])
        return frozenset(out) if out else None

    def keyed_by_identifier(self, ref: ClassRef, attr: str) -> bool:
        """``self.attr`` is built as a dict keyed by each walked record's own identifier
        (``{d["id"]: d["answer"] for d in datalist}``, ``{r.video_id: r for r in rows}``): one
        entry per record, whatever its name says (``id2answer`` maps a question's id, not a
        class index). A record's group field (``label``, ``category_id``) keys a label map."""
        for _fn, w in self.attr_writes(ref, attr):
            ir = w[1]
            if w[0] != "=" or not (isinstance(ir, tuple) and ir[:2] == ("C", "dict")) or ir[2][0] != "kv":
                continue
            field = _key_field(ir[2][1], element_only=True)
            if field is not None and _identifier(field):
                return True
        return False

    def _callees_given(self, ref: ClassRef, attr: str):
        """(project function, its parameters) for each call in the class's methods passing
        ``self.attr`` to a project function."""
        for fn in self.hierarchy_methods(ref):
            for kind, target, args, kwargs, _row in fn.fn.flow.calls:
                if kind != "ref":
                    continue
                positions = [i for i, a in enumerate(args) if a == ("s", attr)]
                keywords = {k for k, v in kwargs if v == ("s", attr) and k}
                if not positions and not keywords:
                    continue
                with self.quietly():
                    callee = self.resolve(target, fn.file.root)
                if not isinstance(callee, FuncRef) or callee.fn.flow is None:
                    continue
                params = list(callee.fn.params)
                yield callee, {params[i] for i in positions if i < len(params)} | keywords

    def holds_open_file(self, ref: ClassRef) -> bool:
        """Whether instances of a project class keep a file open: an attribute its methods store
        is an open file, a numpy memmap, an HDF5 / LMDB / zip handle (``self.file = open(path,
        "rb")``). A list of them is one reader per file: each holds a file descriptor, so there
        are at most a few dozen, never one per sample."""
        memo = self.__dict__.setdefault("_open_file_memo", {})
        if ref.key in memo:
            return memo[ref.key]
        memo[ref.key] = False  # (a class storing itself: not a reader by that path)
        found = any(self.attr_value(ref, attr).kinds & OPEN_FILES for fn in self.hierarchy_methods(ref) for attr in fn.fn.flow.writes)
        memo[ref.key] = found
        return found

    def _int_key(self, key_ir, fn: FuncRef, ref: ClassRef) -> bool:
        if key_ir is None:
            return False
        v = self.value(key_ir, Env(fn.file, fn, ref))
        return bool(v.kinds) and v.kinds <= {"int"}

    def length_asserted(self, ref: ClassRef, attr: str) -> bool:
        """``assert len(self.attr) == 1`` (or ``<=`` / ``<`` a literal) in the class's own
        methods: the code fixes its size (a folder asserted to hold one image)."""
        return self._signalled(ref, attr, "length_asserts")

    def _membership_tested(self, ref: ClassRef, attr: str) -> bool:
        """``x in self.attr`` somewhere in the class's own methods."""
        return self._signalled(ref, attr, "member_tests")

    def _signalled(self, ref: ClassRef, attr: str, signal: str) -> bool:
        """The file signal ``signal`` (attr -> [enclosing function]) names ``attr`` in a method
        of the class or of its project bases."""
        return any(True for _ in self.own_signal(ref, attr, signal, lambda scope: scope))

    def array_used(self, ref: ClassRef, attr: str) -> str | None:
        """The first use, in the class's own methods, that only an array or a tensor answers:
        ``self.x.shape``, ``.dtype``, ``.ndim``, ``self.x.astype(...)``, ``.numpy()``,
        ``.reshape(...)`` (no list, dict or tuple has them); the evidence that records loaded
        from a pickle or a torch file are an array, not a Python container."""
        for kind, detail, row, on_self, _scope in self.own_signal(ref, attr, "attr_uses", lambda use: use[4]):
            if not on_self:
                continue
            name = detail.strip("`").lstrip(".")
            if kind == "method" and name.endswith("()") and name[:-2] in ARRAY_METHODS:
                return f"`self.{attr}.{name}`"
            if kind == "attr" and name in ARRAY_ATTRS:
                return f"`self.{attr}.{name}`"
        return None

    def frame_taken_whole(self, ref: ClassRef, attr: str) -> bool:
        """The class takes the frame's values whole, or all its columns but some, as one array
        (``self.data = self.df.iloc[:, 1:].to_numpy()``, ``self.df.drop("date", axis=1).values``,
        ``self.df.values``): a table of numbers (a time series, features), kept beside the array
        it is served from. One column's values (``self.df.iloc[:, 1].values``: the paths) are not."""
        for fn in self.hierarchy_methods(ref):
            flow = fn.fn.flow
            if flow is None:
                continue
            for expr in _exprs(flow):
                for node in _nodes(expr):
                    base = _array_base(node)
                    if base is not None and _whole_frame(base, attr):
                        return True
        return False

    def own_signal(self, ref: ClassRef, attr: str, signal: str, scope_of):
        """The entries of the file signal ``signal`` (attr -> [entry]) for ``attr`` whose enclosing
        function (``scope_of(entry)``) is a method of the class or of its project bases."""
        methods = {(r.file.path, q) for r in self.mro(ref) for q in r.cls.methods.values()}
        for facts in {r.file.path: r.file for r in self.mro(ref)}.values():
            for entry in facts.signals.get(signal, {}).get(attr, ()):
                if (facts.path, scope_of(entry)) in methods:
                    yield entry

    def _one_per_element(self, ref: ClassRef, uses: dict) -> dict[str, tuple[str, str, int]]:
        """attr -> (source attr, function, row) for a list that grows with the data by use
        (``__len__`` measures it, ``__getitem__`` indexes it) and is built by at most one
        ``.append`` per element of another attribute (``for p in self.pairs:
        self.handlers.append(load(p))``, and nothing else but ``= []``): the source has at least
        as many elements, so it grows with the data too, whoever passes it."""
        out: dict[str, tuple[str, str, int]] = {}
        for attr, found in uses.items():
            if not any(how in ("len", "index") for how, _f, _r in found):
                continue
            source = None
            for fn, w in self.attr_writes(ref, attr, include_workers=True):
                how, ir, loops = w[0], w[1], w[4]
                if how == "=" and ir[0] == "L" and ir[1] == "list" and not ir[2]:
                    continue  # self.handlers = []
                if how != "append" or source is not None or len(loops) != 1:
                    source = None
                    break
                loop = loops[0]
                if loop[0] == "c" and loop[1][0] == "g" and loop[1][1] in _SAME_LENGTH and loop[2]:
                    loop = loop[2][0]  # tqdm(self.pairs), enumerate(self.pairs)
                if loop[0] != "s" or loop[1] == attr:
                    source = None
                    break
                source = (loop[1], fn.fn.name, w[2])
            if source is not None:
                out[attr] = source
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
        # and the library base's entry methods that take it (``get_data_info(self, index)``)
        for name in (*ENTRIES, *(n for n in self.library_entries(ref) if n != "collate")):
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
                    if kind == "self":
                        callee = self.find_method(ref, target)
                    elif kind == "ref" and args[:1] == (("self",),):
                        # ``load_image(self, index)``: a module-level helper given the instance
                        with self.quietly():
                            callee = self.resolve(target, f.file.root)
                        if not isinstance(callee, FuncRef) or callee.key not in keys or not _instance_helper(callee):
                            continue
                        args = args[1:]
                    else:
                        continue
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


def _instance_helper(fn: FuncRef) -> bool:
    """A module-level function taking the instance first (dllint/facts/flow.py ``instance_helper``)."""
    return fn.fn.cls is None and not fn.fn.nested and fn.fn.params[:1] == ("self",)


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
        elif arg[0] == "i" and arg[1][0] == "s" and arg[2][0] == "k" and isinstance(arg[2][1], str):
            out.add(arg[1][1])  # len(self.ann["images"]): a named table of it (not len(self.parts[0]))
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
    if tag in ("n", "nk") and fn.fn.flow is not None:
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
    if tag in ("n", "nk"):
        return ir[1] in local_taint
    if tag == "b":
        return _uses(ir[2], params, local_taint, depth + 1) or _uses(ir[3], params, local_taint, depth + 1)
    if tag == "u":
        return any(_uses(o, params, local_taint, depth + 1) for o in ir[1])
    if tag == "c" and ir[1][0] == "g" and ir[1][1] in _ARITH_CALLS:
        return any(a[0] != "*" and _uses(a, params, local_taint, depth + 1) for a in ir[2])
    if tag == "L":  # self.x[idx, 0]; a window of positions around the sample: [idx] + [...]
        return any(e[0] not in ("*", "more") and _uses(e, params, local_taint, depth + 1) for e in ir[2])
    if tag == "e":  # for i in range(idx, idx + n) / for j in idx + self.offsets: a neighbour's position
        return _uses(ir[1], params, local_taint, depth + 1)
    if tag == "C" and ir[1] != "dict":  # [i for i in window if i != idx]
        return _uses(ir[2], params, local_taint, depth + 1)
    if tag == "c" and ir[1][0] == "g" and ir[1][1] == "builtins.range":
        return any(a[0] != "*" and _uses(a, params, local_taint, depth + 1) for a in ir[2])
    return _formats(ir, params, local_taint, depth)


def _formats(ir, params: set[str], local_taint: set[str], depth: int = 0) -> bool:
    """The sample index written as a string, one key per sample: ``f"{idx:08d}"``,
    ``str(idx)``, ``"%06d" % idx``, ``"{}.jpg".format(idx)``."""
    tag = ir[0]
    if tag == "fs":
        return len(ir) > 2 and any(_uses(v, params, local_taint, depth + 1) for v in ir[2])
    if tag == "c" and (ir[1] == ("g", "builtins.str") or (ir[1][0] == "a" and ir[1][2] == "format" and ir[1][1][0] == "k")):
        return any(a[0] != "*" and _uses(a, params, local_taint, depth + 1) for a in ir[2])
    if tag == "b" and ir[1] == "%" and ir[2][0] == "k" and isinstance(ir[2][1], str):
        return _uses(ir[3], params, local_taint, depth + 1)
    return False


def _str_key(ir, params: set[str], local_taint: set[str], flow) -> bool:
    """An index that is the sample index written as a string (directly or through a local): the
    container it looks up is a mapping, not an array or a tensor."""
    if ir[0] in ("n", "nk"):
        values = flow.locals.get(ir[1], ())
        return bool(values) and all(isinstance(v, tuple) and v and _formats(v, params, local_taint) for v in values)
    return _formats(ir, params, local_taint)


_SAME_LENGTH = frozenset({"builtins.enumerate", "builtins.list", "builtins.sorted", "tqdm.tqdm", "tqdm.auto.tqdm"})


def _extends_per_element(flow, walks) -> bool:
    """Some container gets ``.extend(...)`` / ``+= ...`` of more than a fixed display inside a loop
    whose outermost iterable ``walks`` accepts."""
    entries = [(m[0], m[1], m[2]) for ms in flow.muts.values() for m in ms]
    entries += [(w[0], w[1], w[4]) for ws in flow.writes.values() for w in ws]
    for how, ir, loops in entries:
        if how in ("extend", "+=") and loops and walks(loops[0]) and isinstance(ir, tuple) and ir[:1] in (("n",), ("C",), ("c",)):
            return True
    return False


def _walked_whole(ir) -> str | None:
    """The local a comprehension walks one entry per element (``co_walked``), or None."""
    if not isinstance(ir, tuple) or ir[0] != "C" or ir[1] not in ("list", "dict") or len(ir[3]) != 1:
        return None
    it = ir[3][0]
    if it[0] == "n":
        return it[1] if ir[1] == "list" else None
    view = _unwrap_view(it)
    if view is not it and view[0] == "n":
        if ir[1] == "list":
            return view[1]
        key = ir[2][1] if ir[2][0] == "kv" else None
        own = (0,) if it[1][2] == "items" else ()
        if it[1][2] != "values" and key is not None and key[0] == "e" and key[2] == own and key[1][:2] == it[:2]:
            return view[1]
    return None


def _walked_table(loop) -> tuple[str, str] | None:
    """(attribute, key) of a loop over a named table of an attribute: ``self.meta["frames"]``,
    ``enumerate(self.meta["frames"])``."""
    if loop[0] == "c" and loop[1][0] == "g" and (loop[1][1] in _SAME_LENGTH or loop[1][1] == "builtins.zip") and loop[2]:
        loop = loop[2][0]
    if loop[0] == "i" and loop[1][0] == "s" and loop[2][0] == "k" and isinstance(loop[2][1], str):
        return loop[1][1], loop[2][1]
    return None


def _walked(loop, tag: str) -> str | None:
    """The attribute (``tag`` "s") or parameter ("p") a loop walks: ``self.anns``,
    ``enumerate(self.anns)``, ``tqdm(self.anns)``, ``zip(self.anns, ...)`` (its first iterable),
    ``range(len(self.anns))`` (its indexes: one step per element)."""
    if loop[0] == "c" and loop[1][0] == "g" and (loop[1][1] in _SAME_LENGTH or loop[1][1] == "builtins.zip"):
        if loop[2]:
            loop = loop[2][0]
        else:  # tqdm(iterable=self.anns, total=n)
            loop = next((v for k, v in loop[3] if k == "iterable"), loop)
    if loop[0] == "c" and loop[1] == ("g", "builtins.range") and loop[2] and not loop[3]:
        last = loop[2][-1] if len(loop[2]) <= 2 and (len(loop[2]) == 1 or loop[2][0] == ("k", 0)) else None
        if isinstance(last, tuple) and last[:2] == ("c", ("g", "builtins.len")) and len(last[2]) == 1:
            loop = last[2][0]
    return loop[1] if loop[0] == tag else None


def _element_part(ir) -> bool:
    """A loop variable, or a field of one read by a literal key or an attribute (``cat["id"]``)."""
    if ir[0] in ("n", "nk", "e"):
        return True
    if ir[0] == "i" and len(ir) > 2 and ir[2][0] == "k":
        return ir[1][0] in ("n", "nk", "e")
    return ir[0] == "a" and ir[1][0] in ("n", "nk", "e")


def _unwrap_view(loop):
    """``x`` of a loop over ``x.items()`` / ``x.keys()`` / ``x.values()``."""
    if loop[0] == "c" and loop[1][0] == "a" and loop[1][2] in ("items", "keys", "values") and not loop[2] and not loop[3]:
        return loop[1][1]
    return loop


def _empty_display(ir) -> bool:
    """``[]``, ``{}``, ``set()``, ``dict()``, ``list()``: a container created empty."""
    if not isinstance(ir, tuple) or not ir:
        return False
    if ir[0] == "D":
        return not ir[1]
    if ir[0] == "L":
        return not ir[2]
    return ir[0] == "c" and ir[1] in (("g", "builtins.dict"), ("g", "builtins.list"), ("g", "builtins.set")) and not ir[2] and not ir[3]


def _record_id_key(key, flow) -> bool:
    """A dict key that is a walked record's own identifier (``self.seen[rec["question_id"]] = True``,
    also through a local: ``qid = recs[i]["question_id"]``)."""
    if key[:1] in (("n",), ("nk",)) and flow is not None:
        values = flow.locals.get(key[1], ())
        if len(values) != 1:
            return False
        key = values[0]
    field = _key_field(key)
    return field is not None and _identifier(field)


def _key_field(key, element_only: bool = False) -> str | None:
    """The field a key reads off a record (``rec["question_id"]``, ``rec.video_id``); with
    ``element_only``, only off an element of a walked iterable."""
    if key[0] == "i" and len(key) > 2 and key[2][0] == "k" and isinstance(key[2][1], str):
        field = key[2][1]
    elif key[0] == "a" and len(key) > 2 and isinstance(key[2], str):
        field = key[2]
    else:
        return None
    if element_only and key[1][0] != "e":
        return None
    return field


# the methods that serve a sample or count them
SAMPLE_METHODS = frozenset({"__len__", "__getitem__", "__getitems__", "__iter__"})
# pandas row indexers: ``self.df.iloc[idx]`` is the sample's row
FRAME_INDEXERS = frozenset({"iloc", "loc", "iat", "at"})
# a column's positional views: ``self.df["path"].values[idx]`` is the sample's cell
COLUMN_INDEXERS = FRAME_INDEXERS | {"values", "array"}
# fields that name one sample (an id, a name, a path) ...
_ID_NAME = re.compile(
    r"(^|_)(id|ids|uid|uuid|guid|key|name|fname|filename|file|path|vid|video|image|img|utt|utterance|sample|scene"
    r"|sequence|seq|clip|doc|qid)$"
)
# ... unless they name a group of samples: a container keyed by one is a label map
_GROUP_WORDS = frozenset(
    {"class", "cls", "cat", "category", "label", "speaker", "spk", "lang", "language", "answer", "type", "split",
     "task", "domain", "source", "dataset"}
)


def _number(ir) -> bool:
    """A number: a numeric literal or a value converted to one (``float(x)``, ``np.float32(x)``)."""
    if ir[0] == "k":
        return isinstance(ir[1], (int, float)) and not isinstance(ir[1], bool)
    return ir[0] == "c" and ir[1][0] == "g" and (canonical(ir[1][1]) or ir[1][1]) in NUMERIC_SINKS


def _identifier(name: str) -> bool:
    """A field that names one sample (``video_id``, ``uniq_id``, ``img_path``), not a group of
    them (``class_name``, ``speaker_id``, ``label``: a label map has one entry per group)."""
    lowered = name.lower()
    return _ID_NAME.search(lowered) is not None and not set(re.split(r"[_\W]+", lowered)) & _GROUP_WORDS


# calls that take a path or a string: a table cell passed to one is a str, so its column is an
# object (string) column (pandas < 3, or pandas 3 without pyarrow)
TEXT_SINKS = frozenset(
    {
        "builtins.open", "io.open", "os.path.join", "os.path.exists", "os.path.isfile", "os.path.basename",
        "os.path.splitext", "os.path.dirname", "os.path.abspath", "os.path.expanduser", "os.fspath",
        "pathlib.Path", "re.search", "re.match", "re.fullmatch", "re.findall", "re.sub", "re.split",
        "soundfile.read", "soundfile.info", "soundfile.SoundFile", "librosa.load", "librosa.get_duration",
        "torchaudio.load", "torchaudio.info", "PIL.Image.open", "cv2.imread", "imageio.imread",
        "imageio.v2.imread", "imageio.v3.imread", "skimage.io.imread", "numpy.load", "torch.load",
        "nibabel.load", "SimpleITK.ReadImage", "h5py.File", "decord.VideoReader", "cv2.VideoCapture",
        "scipy.io.wavfile.read", "json.load", "pickle.load",
    }
)
# calls that make numbers of what they are given: a row converted whole is a row of numbers
NUMERIC_SINKS = frozenset(
    {
        "torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.FloatTensor", "torch.Tensor",
        "torch.LongTensor", "numpy.float32", "numpy.float64", "numpy.asarray", "numpy.array", "builtins.float",
        "builtins.int",
    }
)
ARITHMETIC = frozenset({"+", "-", "*", "/", "//", "%", "**"})
NUMERIC_METHODS = frozenset({"astype"})
TEXT_METHODS = frozenset(
    {"split", "rsplit", "splitlines", "strip", "lstrip", "rstrip", "startswith", "endswith", "lower", "upper",
     "encode", "removeprefix", "removesuffix", "capitalize", "title", "casefold", "replace", "zfill", "partition",
     "rpartition"}
)


def _nodes(ir, depth: int = 0):
    """Every IR node of an expression (depth-first, bounded)."""
    if depth > 12 or not isinstance(ir, tuple) or not ir or not isinstance(ir[0], str):
        return
    yield ir
    tag = ir[0]
    d = depth + 1
    if tag == "c":
        yield from _nodes(ir[1], d)
        for a in ir[2]:
            yield from _nodes(a, d)
        for _k, v in ir[3]:
            yield from _nodes(v, d)
    elif tag == "L":
        for e in ir[2]:
            yield from _nodes(e, d)
    elif tag == "D":
        for k, v in ir[1]:
            yield from _nodes(k, d)
            yield from _nodes(v, d)
    elif tag == "C":
        yield from _nodes(ir[2], d)
        for it in ir[3]:
            yield from _nodes(it, d)
    elif tag == "u":
        for o in ir[1]:
            yield from _nodes(o, d)
    elif tag in ("i", "a", "e", "*", "with"):
        yield from _nodes(ir[1], d)
        if tag == "i":
            yield from _nodes(ir[2], d)
    elif tag in ("b",):
        yield from _nodes(ir[2], d)
        yield from _nodes(ir[3], d)
    elif tag in ("kv", "sl"):
        yield from _nodes(ir[1], d)
        yield from _nodes(ir[2], d)


def _frame_uses(flow, params: set[str], local_taint: set[str], follow=None, seeds=None, depth: int = 0) -> set[tuple[str, str]]:
    """(attr, "index" | "text" | "numeric" | "record-rows") for the tables worker code reads per sample: ``self.df.iloc[idx]``
    (``.loc``, ``.iloc[idx, :]``, ``self.df["col"][idx]``) is an index use; a cell of such a row
    (``row["path"]``, ``row.loc["path"]``, ``self.df.at[idx, "path"]``) passed to a call that takes a
    path or a string (``sf.read``, ``os.path.join``, ``re.search``) or given a str method is a
    ``text`` use: the table has a string column; so is a cell joined to or formatted into a string
    (``row["id"] + ".mp4"``, ``"{}.mp4".format(row[1])``). A row or a cell handed to a method of
    the class (``self._get_video_path(row)``), to a function the instance keeps
    (``self.loader(path)``) or to a project function (``follow`` finds its flow and parameters)
    is followed two calls deep (``seeds``: the callee's (rows, cells), parameter -> table); an
    element of a list used so is a string too (``Image.open(self.paths[idx])``). A row converted
    whole to numbers (``torch.tensor(row.values)``) or a cell used in arithmetic or converted
    (``float(row["x"])``) is a ``numeric`` use. A per-sample row looked up by a literal string
    key (``self.items[idx]["file"]``) is ``record-rows``: the table holds records (dicts,
    Series), not numbers."""
    rows: dict[str, str] = dict(seeds[0]) if seeds else {}  # local (or parameter) -> the table attribute it is a row of
    cells: dict[str, str] = dict(seeds[1]) if seeds else {}  # local (or parameter) -> the table attribute it is a cell of

    def per_sample(ix) -> bool:
        if ix[0] == "L" and ix[1] == "tuple" and ix[2]:
            ix = ix[2][0]
        return _uses(ix, params, local_taint)

    def row_of(ir) -> str | None:
        """The table a per-sample row (a Series) comes from."""
        if ir[0] in ("n", "nk", "p"):
            return rows.get(ir[1])
        if ir[0] == "i" and ir[1][0] == "a" and ir[1][2] in FRAME_INDEXERS and ir[1][1][0] == "s":
            ix = ir[2]
            whole_row = not (ix[0] == "L" and ix[1] == "tuple" and len(ix[2]) == 2 and ix[2][1][0] not in ("sl", "?"))  # .iloc[idx, :]
            if whole_row and ir[1][2] in ("iloc", "loc") and per_sample(ix):
                return ir[1][1][1]
        if ir[0] == "i" and ir[1][0] == "s" and ir[2][0] != "sl" and per_sample(ir[2]):
            return ir[1][1]  # ``self.rows[idx]``: a row of a frame's ``.values``
        return None

    def cell_of(ir) -> str | None:
        """The table a per-sample cell comes from."""
        if ir[0] in ("n", "nk", "p"):
            return cells.get(ir[1])
        if ir[0] != "i":
            return None
        base = ir[1]
        if base[0] == "a" and base[2] in FRAME_INDEXERS:
            if base[1][0] == "s" and ir[2][0] == "L" and ir[2][1] == "tuple" and len(ir[2][2]) == 2 and per_sample(ir[2]):
                return base[1][1]  # self.df.at[idx, "path"], self.df.loc[idx, "path"]
            if base[1][0] == "s" and base[2] == "iat" and per_sample(ir[2]):
                return base[1][1]
            found = row_of(base[1])  # row.loc["path"]
            if found is not None and ir[2][0] != "sl":
                return found
            return None
        found = row_of(base)  # row["path"], self.df.iloc[idx]["path"]
        if found is not None and ir[2][0] != "sl":
            return found
        if base[0] == "i" and base[1][0] == "s" and base[2][0] == "k" and isinstance(base[2][1], str) and per_sample(ir[2]):
            return base[1][1]  # self.df["path"][idx]
        return column_cell(ir)

    def id_key(ir, depth) -> bool:
        """The sample's own identifier, read off its row or record (``row["video_id"]``,
        ``self.df["video_id"].values[idx]``, ``sample.uniq_id``), directly or through a local: a
        container looked up with it has one entry per sample (or per video, per image)."""
        if ir[0] in ("n", "nk", "p") and ir[1] in cells:
            return _identifier(ir[1])  # a cell handed over by name (``self._get_video(video_id)``)
        if ir[0] in ("n", "nk") and depth < 2:
            return any(isinstance(v, tuple) and v and id_key(v, depth + 1) for v in flow.locals.get(ir[1], ()))
        if ir[0] == "i" and ir[2][0] == "k" and isinstance(ir[2][1], str):
            return _identifier(ir[2][1]) and (row_of(ir[1]) is not None or cell_of(ir) is not None)
        if ir[0] == "a" and row_of(ir[1]) is not None:
            return _identifier(ir[2])
        if ir[0] == "i" and column_cell(ir) is not None:
            return _identifier(ir[1][1][2][1])
        return False

    def column_cell(ir) -> str | None:
        """``self.df["question"].values[idx]`` (``.iloc[idx]``, ``.array[idx]``): the sample's
        cell of a named column."""
        if ir[0] != "i" or ir[1][0] != "a" or ir[1][2] not in COLUMN_INDEXERS or not per_sample(ir[2]):
            return None
        column = ir[1][1]
        if column[0] == "i" and column[1][0] == "s" and column[2][0] == "k" and isinstance(column[2][1], str):
            return column[1][1]
        return None

    def whole_row(ir) -> str | None:
        """The table whose sample's whole row ``ir`` is, as numbers: ``row.values``,
        ``row.to_numpy()``, a slice of either (``row.values[:-1]``), or the row itself."""
        if ir[0] == "i" and ir[2][0] == "sl":
            ir = ir[1]
        return row_of(_array_base(ir) or ir)

    def text_of(ir, method: str | None = None) -> str | None:
        """The table whose per-sample cell ``ir`` is, or whose per-sample element it is: an
        element of a list used as a string is a string (``Image.open(self.paths[idx])``), as a
        cell is; a frame's row is a Series, whose ``replace`` is not a string's."""
        if ir[0] == "b" and ir[1] == "+" and method is None:
            return text_of(ir[2]) or text_of(ir[3])  # ``os.path.join(root, img_id + self.ext)``
        found = cell_of(ir)
        if found is None and method != "replace":
            found = row_of(ir)
        return found

    exprs = _exprs(flow)
    for _ in range(3):
        for name, values in flow.locals.items():
            for v in values:
                r = row_of(v) if name not in rows else None
                if r is not None:
                    rows[name] = r
                c = cell_of(v) if name not in cells else None
                if c is not None:
                    cells[name] = c
    out: set[tuple[str, str]] = set()
    for expr in exprs:
        for node in _nodes(expr):
            tag = node[0]
            if tag == "i":
                r = row_of(node)
                if r is not None:
                    out.add((r, "index"))
                elif node[1][0] == "i" and node[1][1][0] == "s" and node[1][2][0] == "k" and per_sample(node[2]):
                    out.add((node[1][1][1], "index"))
                elif (c := column_cell(node)) is not None:
                    out.add((c, "index"))
                if node[2][0] == "k" and isinstance(node[2][1], str):
                    r = row_of(node[1])
                    if r is not None:  # ``self.items[idx]["file"]``: its per-sample items are records
                        out.add((r, "record-rows"))
                if node[1][0] == "s" and id_key(node[2], 0):
                    out.add((node[1][1], "id-key"))  # ``self.features[row["video_id"]]``
            elif tag == "b" and node[1] == "+" and any(o[0] == "k" and isinstance(o[1], str) for o in node[2:4]):
                for cell, other in ((node[2], node[3]), (node[3], node[2])):
                    c = text_of(cell)
                    if c is not None and other[0] == "k" and isinstance(other[1], str):
                        out.add((c, "text"))
            elif tag == "b" and node[1] == "%" and node[2][0] == "k" and isinstance(node[2][1], str):
                right = node[3]  # ``"%s.jpg" % row["id"]``, ``"%s/%s" % (root, row[0])``: formatted into a string
                for a in right[2] if right[0] == "L" and right[1] == "tuple" else (right,):
                    c = text_of(a)
                    if c is not None:
                        out.add((c, "text"))
            elif tag == "b" and node[1] in ARITHMETIC:
                for operand, other in ((node[2], node[3]), (node[3], node[2])):
                    if node[1] == "+" and not _number(other):
                        continue  # ``row["id"] + self.ext`` joins strings as well as it adds numbers
                    c = cell_of(operand) or whole_row(operand)
                    if c is not None:  # ``row["x"] * 2.0``, ``row["x"] - mean``: a number
                        out.add((c, "numeric"))
            elif tag == "c":
                func, args, kwargs = node[1], node[2], node[3]
                # ``torch.tensor(row.values, dtype=...)``, ``float(row["x"])``, ``row.values.astype(...)``: numbers
                if func[0] == "a" and func[2] in NUMERIC_METHODS:
                    converted = (func[1],)
                elif func[0] == "g" and (canonical(func[1]) or func[1]) in NUMERIC_SINKS:
                    converted = args[:1]
                else:
                    converted = ()
                for a in converted:
                    found = whole_row(a) or cell_of(a)
                    if found is not None:
                        out.add((found, "numeric"))
                found = follow(func) if follow is not None and func[0] in ("s", "g") else None
                if found is not None:
                    passed: tuple[dict, dict] = ({}, {})
                    callee, names = found
                    for i, a in enumerate(args):
                        if a[0] == "*" or i >= len(names):
                            break
                        r, c = row_of(a), cell_of(a)
                        if r is not None:
                            passed[0][names[i]] = r
                        elif c is not None:
                            passed[1][names[i]] = c
                    if passed[0] or passed[1]:
                        deeper = follow if depth < 1 else None
                        out.update(u for u in _frame_uses(callee, set(), set(), deeper, passed, depth + 1) if u[1] in ("text", "id-key", "numeric"))
                elif func[0] == "a" and func[2] == "format" and func[1][0] == "k" and isinstance(func[1][1], str):
                    for a in (*args, *(v for _k, v in kwargs)):
                        c = text_of(a[1] if a[0] == "*" else a)
                        if c is not None:
                            out.add((c, "text"))
                elif func[0] == "g" and (canonical(func[1]) or func[1]) in TEXT_SINKS:
                    for a in (*args, *(v for _k, v in kwargs)):
                        c = text_of(a[1] if a[0] == "*" else a)
                        if c is not None:
                            out.add((c, "text"))
                elif func[0] == "a" and func[2] in TEXT_METHODS:
                    c = text_of(func[1], func[2])
                    if c is not None:
                        out.add((c, "text"))
    return out


def _element_uses(flow, params: set[str], local_taint: set[str]) -> set[tuple[str, str]]:
    """(attr, "elements") for a container of per-sample tables: worker code walks ``self.x`` and
    indexes each element with the sample index (``for src in self.sources: src[idx]``), so every
    element is as long as the data (when the elements are Python containers, not arrays or
    tensors: the rule checks)."""
    elements = {
        name: v[1][1]
        for name, values in flow.locals.items()
        for v in values
        if v[0] == "e" and v[1][0] == "s" and not v[2]
    }
    if not elements and not flow.iterates:
        return set()
    out: set[tuple[str, str]] = set()
    for expr in _exprs(flow):
        for node in _nodes(expr):
            if node[0] != "i" or not _uses(node[2], params, local_taint):
                continue
            base = node[1]
            if base[0] in ("n", "nk") and base[1] in elements:
                out.add((elements[base[1]], "elements"))
            elif base[0] == "e" and base[1][0] == "s" and not base[2]:  # [s[idx] for s in self.x]
                out.add((base[1][1], "elements"))
    return out


def _array_base(ir):
    """``x`` of ``x.to_numpy()`` or ``x.values`` (a frame's, a row's array), else None."""
    if ir[0] == "c" and ir[1][0] == "a" and ir[1][2] == "to_numpy":
        return ir[1][1]
    if ir[0] == "a" and ir[2] == "values":
        return ir[1]
    return None


def _whole_frame(ir, attr: str) -> bool:
    """``self.<attr>``, or all its columns but some: ``.iloc[:, 1:]`` / ``.loc[:, cols]`` (a
    slice or a list of columns), ``.drop(...)``."""
    if ir == ("s", attr):
        return True
    if ir[0] == "c" and ir[1][0] == "a" and ir[1][2] == "drop":
        return ir[1][1] == ("s", attr)
    if ir[0] == "i" and ir[1][0] == "a" and ir[1][2] in ("iloc", "loc") and ir[1][1] == ("s", attr):
        ix = ir[2]
        if ix[0] == "L" and ix[1] == "tuple" and len(ix[2]) == 2:
            columns = ix[2][1]
            return columns[0] in ("sl", "?") or (columns[0] == "L" and columns[1] == "list")  # ("?": a slice in a tuple)
    return False


def _param_table(flow, names: set[str]) -> bool:
    """A parameter in ``names`` looked up with a sample's identifier (``img_id2val[img_id]``,
    ``table.get(q["image_id"])``) or with a key the caller hands over (``gts[index]``) in a
    function's flow: a table with one entry per sample. A key the function finds itself of
    another kind (a chord symbol, an answer) looks up a label map."""

    def identifier(key, depth=0) -> bool:
        if key[0] == "p" and key[1] not in names and depth == 0:
            return True  # a key the caller hands over (``get_ann(img, self.gts, index)``: the sample index)
        if key[0] == "i" and key[2][0] == "k" and isinstance(key[2][1], str):
            return _identifier(key[2][1])
        if key[0] in ("n", "nk") and depth < 2:
            return _identifier(key[1]) or any(
                isinstance(v, tuple) and v and identifier(v, depth + 1) for v in flow.locals.get(key[1], ())
            )
        return False

    for expr in _exprs(flow):
        for node in _nodes(expr):
            if node[0] == "i" and node[1][0] == "p" and node[1][1] in names and identifier(node[2]):
                return True
            if node[0] == "c" and node[1][0] == "a" and node[1][1][0] == "p" and node[1][1][1] in names:
                if node[1][2] in ("get", "pop") and node[2] and identifier(node[2][0]):
                    return True
    return False


def _label_key(flow, key, depth: int = 0) -> bool:
    """A key a function reads from a record's field naming a group (``q["answer"]``,
    ``ann["category"]``; not an identifier such as ``image_id``), a string literal, or a local
    holding only those (``answer = q["answer"] if ... else "unknown"``)."""
    if key[0] == "k":
        return isinstance(key[1], str)
    if key[0] == "i" and key[2][0] == "k" and isinstance(key[2][1], str):
        return key[1][0] in ("n", "i") and not _identifier(key[2][1])
    if key[0] == "u":
        return all(_label_key(flow, option, depth) for option in key[1])
    if key[0] == "n" and depth < 2:
        values = flow.locals.get(key[1], ())
        return bool(values) and all(isinstance(v, tuple) and v and _label_key(flow, v, depth + 1) for v in values)
    return False


def _exprs(flow) -> list:
    """The IR of every expression a flow keeps: locals, mutations, returns, writes, call arguments."""
    exprs = [v for values in flow.locals.values() for v in values]
    exprs += [m[1] for muts in flow.muts.values() for m in muts]
    exprs += list(flow.returns)
    exprs += [w[1] for writes in flow.writes.values() for w in writes]
    for _kind, _target, args, kwargs, _row in flow.calls:
        exprs += [a[1] if a[0] == "*" else a for a in args] + [v for _k, v in kwargs]
    return exprs
