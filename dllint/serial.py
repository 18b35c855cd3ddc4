"""Plain data <-> bytes for the on-disk cache: tagged JSON, never pickle.

The cache lives in the tree being linted (``.dllint_cache/``), so whoever ships a project can ship
a cache: loading one must never run code, and must never produce anything but the plain data
dllint itself stores. So the format is JSON, whose decoder only ever builds strings, numbers,
lists and dicts, and on top of it a small explicit encoding of the facts' types:

- ``None``, ``bool``, ``int``, ``float``, ``str``: themselves;
- every container is a JSON array whose first element is a tag: ``["t", ...]`` tuple,
  ``["l", ...]`` list, ``["f", ...]`` frozenset, ``["s", ...]`` set, ``["d", k1, v1, k2, v2 ...]``
  dict, ``["b", "<base64>"]`` bytes, ``["c", re, im]`` complex, ``["e"]`` Ellipsis, ``["n"]``
  ``model.NOCONST``;
- ``["T", n, ...]``: a tuple of the flow IR (inside a ``Flow``) met in several places, written
  once and labelled n, and ``["r", n]`` wherever else it is met: decoded, those places hold the
  same object again (accepted only where any value may stand, not in a field whose annotation
  names a tuple's members);
- ``["o", "module.Class", field1, field2, ...]``: an instance of a dataclass defined in a dllint
  module that is already imported (``dllint.model``, the rules' own payload classes), its fields in
  declaration order. The class is looked up in that set and nothing is ever imported by name; it is
  rebuilt field by field (no ``__init__``, no ``__reduce__``, nothing of the data is called), and
  each field is checked against its annotation (``Span``, ``tuple[str, ...]``, ``dict[int,
  frozenset[str] | None]`` ...): a value of the wrong shape makes the whole entry invalid.

A file is ``dllint-cache <FORMAT> <blake2b of the body>\\n`` then the body, so a torn, truncated
or edited file is recognised before it is decoded. ``loads`` raises ``CacheDataError`` for
anything else; its ``kind`` says whether the bytes were damaged or not dllint's at all (a pickle:
reported, since dllint never loads one).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import operator
import sys
import threading
import typing
from types import NoneType, UnionType

from dllint.model import NOCONST

MAGIC = b"dllint-cache"
FORMAT = 2  # 2: the flow IR's shared tuples are written once, then referred to (``_share``)


class CacheDataError(ValueError):
    """Bytes that are not a valid cache entry. ``kind``: "damaged", "version" or "foreign"."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


# ---------------------------------------------------------------------------- the classes


_classes: dict[str, type] = {}
_fields: dict[type, tuple] = {}  # class -> ((name, check), ...)
_seen_modules = 0


def _registry() -> dict[str, type]:
    """Dataclasses defined in the dllint modules imported so far, by "module.Qualname"."""
    global _seen_modules
    if len(sys.modules) != _seen_modules:  # modules imported since the last look
        _seen_modules = len(sys.modules)
        modules = [(n, m) for n, m in list(sys.modules.items()) if m is not None and (n == "dllint" or n.startswith("dllint."))]
        for name, module in modules:
            for obj in list(vars(module).values()):
                if isinstance(obj, type) and obj.__module__ == name and dataclasses.is_dataclass(obj):
                    _classes[f"{name}.{obj.__qualname__}"] = obj
    return _classes


def _tag(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _class_fields(cls: type) -> tuple:
    """((field name, decoder), ...) in declaration order; each decoder checks the field's annotation."""
    found = _fields.get(cls)
    if found is None:
        try:
            hints = typing.get_type_hints(cls)
        except Exception:  # an annotation that does not resolve here: fields unchecked
            hints = {}
        names = [f.name for f in dataclasses.fields(cls)]
        decoders: dict[str, object] = {}
        # registered before the decoders are made: a class holding itself (Value.options) looks
        # its fields up again only when decoding, by then complete
        _fields[cls] = found = tuple((name, _Late(decoders, name)) for name in names)
        for name in names:
            decoders[name] = _typed(hints.get(name, typing.Any))
        _fields[cls] = found = tuple((name, decoders[name]) for name in names)
    return found


def _dec_int(x):
    if type(x) is int or type(x) is bool:
        return x
    raise _Bad("expected an int")


class _Late:
    """A field decoder looked up when first called (for self-referencing classes)."""

    __slots__ = ("decoders", "name")

    def __init__(self, decoders: dict, name: str):
        self.decoders = decoders
        self.name = name

    def __call__(self, x):
        return self.decoders[self.name](x)


def _typed(tp):
    """A decoder JSON -> value that accepts only what the annotation ``tp`` says (else _Bad)."""
    if tp is typing.Any or tp is object:
        return _decode
    if tp is NoneType or tp is None:
        return _exactly(NoneType)
    if tp is float:
        def dec_float(x):
            if type(x) is float or type(x) is int:
                return x
            raise _Bad("expected a number")
        return dec_float
    if tp is int:
        return _dec_int
    if tp is str or tp is bool:
        return _exactly(tp)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or origin is UnionType:
        simple = tuple(a for a in args if a in (NoneType, str, bool))
        others = [_typed(a) for a in args if a not in (NoneType, str, bool)]

        def dec_union(x):
            if type(x) in simple:
                return x
            for dec in others:
                try:
                    return dec(x)
                except _Bad:
                    continue
            raise _Bad("no alternative of a union fits")
        return dec_union
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _typed(args[0])
            if item is _decode:
                return lambda x: _dec_tuple(x) if type(x) is list and x and x[0] == "t" else _tagged(x, "t")
            return lambda x: tuple([item(v) for v in _tagged(x, "t")])
        if args:
            items = [_typed(a) for a in args]

            def dec_fixed(x):
                values = _tagged(x, "t")
                if len(values) != len(items):
                    raise _Bad("tuple of the wrong length")
                return tuple([dec(v) for dec, v in zip(items, values)])
            return dec_fixed
        return lambda x: _dec_tuple(x) if type(x) is list and x and x[0] == "t" else _tagged(x, "t")
    if origin in (frozenset, set, list):
        item = _typed(args[0]) if args else _decode
        tag, make = {frozenset: ("f", frozenset), set: ("s", set), list: ("l", list)}[origin]

        def dec_collection(x):
            try:
                return make([item(v) for v in _tagged(x, tag)])
            except TypeError:
                raise _Bad("unhashable member") from None
        return dec_collection
    if origin is dict:
        key, val = (_typed(args[0]), _typed(args[1])) if args else (_decode, _decode)

        def dec_dict(x):
            flat = _tagged(x, "d")
            if len(flat) % 2:
                raise _Bad("odd dict")
            try:
                return {key(flat[i]): val(flat[i + 1]) for i in range(0, len(flat), 2)}
            except TypeError:
                raise _Bad("unhashable key") from None
        return dec_dict
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        tag = _tag(tp)

        def dec_object(x):
            if type(x) is not list or len(x) < 2 or x[0] != "o" or x[1] != tag:
                raise _Bad(f"expected a {tag}")
            return _object(x)
        return dec_object
    if isinstance(tp, type):
        def dec_instance(x):
            value = _decode(x)
            if not isinstance(value, tp):
                raise _Bad(f"expected {tp.__name__}")
            return value
        return dec_instance
    return _decode  # a typing construct not understood here: any plain data


def _exactly(kind: type):
    if kind in _EXACT:
        return _EXACT[kind]

    def dec(x):
        if type(x) is kind:
            return x
        raise _Bad(f"expected {kind.__name__}")
    _EXACT[kind] = dec
    if kind in (str, bool):
        _SIMPLE[dec] = kind
    return dec


_EXACT: dict[type, object] = {}
_SIMPLE: dict[object, type] = {_dec_int: int}  # decoder -> the type it accepts, for _object's fast path


def _tagged(x, tag: str) -> list:
    if type(x) is not list or not x or x[0] != tag:
        raise _Bad(f"expected a {tag!r} array")
    return x[1:]


# ---------------------------------------------------------------------------- encoding


_PLAIN = frozenset({str, int, float, bool, NoneType})  # written as themselves
_objects: dict[type, tuple] = {}  # dataclass -> (tag, attrgetter of its fields), once checked


# id of a tuple -> its encodings, while ``dumps`` encodes (the tuples met more than once are
# written once, then referred to: ``_share``); only the flow IR's tuples (inside a ``Flow``,
# whose fields take any value), where identity matters to the value model
_met: dict[int, list] | None = None
_in_flow = 0
FLOW = "dllint.facts.flow.Flow"


def _tuple(obj, plain=_PLAIN) -> list:
    """A tuple (most of the data: the flow IR is nested tuples), without a call per member."""
    out = ["t"]
    append = out.append
    for v in obj:
        kind = type(v)
        if kind in plain:
            append(v)
        elif kind is tuple:
            append(_tuple(v))
        else:
            append(_encode(v))
    if _in_flow and _met is not None and obj:
        _met.setdefault(id(obj), []).append(out)
    return out


def _share(met: dict[int, list]) -> None:
    """A tuple object met in several places is written whole once, labelled (``["T", n, ...]``),
    and as ``["r", n]`` wherever else it is met: the facts come back with the same objects shared
    as the extractor made them. (The value model memoizes by an IR node's identity: a shared
    node is evaluated once, and reading it back while it is being evaluated is a cycle. Decoded
    unshared, the same facts gave other answers: a cached run reported a finding that a run
    without the cache did not.) Encodings are in document order, which is the decoder's."""
    label = 0
    for outs in met.values():
        if len(outs) < 2:
            continue
        first = outs[0]
        first[0:1] = ["T", label]
        for later in outs[1:]:
            later[:] = ["r", label]
        label += 1


def _encode(obj):
    kind = type(obj)
    if kind in _PLAIN:
        return obj
    plain = _PLAIN
    if kind is tuple:
        return _tuple(obj)
    if kind is dict:
        out = ["d"]
        for k, v in obj.items():
            out.append(k if type(k) in plain else _encode(k))
            out.append(v if type(v) in plain else _encode(v))
        return out
    known = _objects.get(kind)
    if known is not None and _classes.get(known[0]) is kind:
        out = ["o", known[0]]
        values = known[1](obj)
        if known[0] == FLOW:
            global _in_flow
            _in_flow += 1
            try:
                out.extend([v if type(v) in plain else _encode(v) for v in values])
            finally:
                _in_flow -= 1
            return out
        out.extend([v if type(v) in plain else _encode(v) for v in values])
        return out
    if kind is list:
        out = ["l"]
        out.extend([v if type(v) in plain else _encode(v) for v in obj])
        return out
    if kind is frozenset:
        out = ["f"]
        out.extend([v if type(v) in plain else _encode(v) for v in obj])
        return out
    if kind is set:
        out = ["s"]
        out.extend([v if type(v) in plain else _encode(v) for v in obj])
        return out
    if obj is NOCONST:
        return ["n"]
    if kind is bytes:
        return ["b", base64.b64encode(obj).decode("ascii")]
    if kind is complex:
        return ["c", obj.real, obj.imag]
    if obj is Ellipsis:
        return ["e"]
    if dataclasses.is_dataclass(obj) and _registry().get(_tag(kind)) is kind:
        names = [name for name, _ in _class_fields(kind)]
        # attrgetter of one name returns the value itself, of several a tuple
        getter = operator.attrgetter(*names) if len(names) > 1 else (lambda o, n=names: tuple(getattr(o, x) for x in n))
        _objects[kind] = (_tag(kind), getter)
        return _encode(obj)
    raise TypeError(f"not cache data: {kind.__name__}")


# ``dumps`` and ``loads`` keep their state in this module while they run (``_met``,
# ``_labelled``): one at a time in a process (a worker's thread storing facts while a job
# stores others at once: dllint/workers.py)
_busy = threading.Lock()


def dumps(obj) -> bytes:
    """The cache file for ``obj`` (TypeError when it holds something that is not plain data)."""
    global _met
    with _busy:
        _met = {}
        try:
            data = _encode(obj)
            _share(_met)
        finally:
            _met = None
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=True, check_circular=False).encode("ascii")
    digest = hashlib.blake2b(body, digest_size=16).hexdigest().encode("ascii")
    return b"%s %d %s\n%s" % (MAGIC, FORMAT, digest, body)


# ---------------------------------------------------------------------------- decoding


class _Bad(Exception):
    pass


# JSON scalars decode to themselves: containers test their members' type inline instead of calling
# _decode for each (most members of the flow IR's nested tuples are strings, numbers and None)
_SCALARS = frozenset({str, int, float, bool, NoneType})


# label -> the tuple written whole under it (``_share``), while ``loads`` decodes
_labelled: dict[int, tuple] = {}


def _dec_tuple(x: list, scalars=_SCALARS, start: int = 1) -> tuple:
    """``["t", ...]`` (most of the data: the flow IR is nested tuples), without a call per member
    (the members copied at once, the arrays among them decoded in place)."""
    out = x[start:]
    i = 0
    for v in out:
        kind = type(v)
        if kind is list:
            out[i] = _dec_tuple(v) if v and v[0] == "t" else _decode(v)
        elif kind not in scalars:
            out[i] = _decode(v)  # (not JSON this encoding writes: refused there)
        i += 1
    return tuple(out)


def _dec_shared(x: list):
    """``["T", n, ...]``: a tuple written whole, labelled n; ``["r", n]``: the tuple labelled n."""
    if len(x) < 2 or type(x[1]) is not int:
        raise _Bad("shared tuple without a label")
    if x[0] == "T":
        if x[1] in _labelled:
            raise _Bad("a label given twice")
        found = _labelled[x[1]] = _dec_tuple(x, start=2)
        return found
    if len(x) != 2 or x[1] not in _labelled:
        raise _Bad("a reference to no tuple written before")
    return _labelled[x[1]]


def _decode(x):
    kind = type(x)
    if kind is list:
        if not x:
            raise _Bad("empty array")
        tag = x[0]
        scalars = _SCALARS
        if tag == "t":
            return _dec_tuple(x)
        if tag == "o":
            return _object(x)
        if tag == "T" or tag == "r":
            return _dec_shared(x)
        if tag == "d":
            if len(x) % 2 != 1:
                raise _Bad("odd dict")
            out = {}
            for i in range(1, len(x), 2):
                key = x[i]
                if type(key) not in scalars:
                    key = _decode(key)
                value = x[i + 1]
                try:
                    out[key] = value if type(value) in scalars else _decode(value)
                except TypeError:  # an unhashable key
                    raise _Bad("unhashable key") from None
            return out
        if tag == "l":
            return [v if type(v) in scalars else _decode(v) for v in x[1:]]
        if tag == "f":
            try:
                return frozenset([v if type(v) in scalars else _decode(v) for v in x[1:]])
            except TypeError:
                raise _Bad("unhashable member") from None
        if tag == "s":
            try:
                return {v if type(v) in scalars else _decode(v) for v in x[1:]}
            except TypeError:
                raise _Bad("unhashable member") from None
        if tag == "n" and len(x) == 1:
            return NOCONST
        if tag == "b" and len(x) == 2 and type(x[1]) is str:
            try:
                return base64.b64decode(x[1], validate=True)
            except ValueError:
                raise _Bad("bad base64") from None
        if tag == "c" and len(x) == 3 and all(type(v) in (int, float) for v in x[1:]):
            return complex(x[1], x[2])
        if tag == "e" and len(x) == 1:
            return Ellipsis
        raise _Bad(f"unknown tag {tag!r}")
    if kind in (str, int, float, bool) or x is None:
        return x
    raise _Bad(f"unexpected JSON {kind.__name__}")


_plans: dict[type, tuple] = {}  # class -> ((field, simple type or None, decoder), ...)


def _plan(cls: type) -> tuple:
    found = _plans.get(cls)
    if found is None:
        found = _plans[cls] = tuple((name, _SIMPLE.get(dec), dec) for name, dec in _class_fields(cls))
    return found


def _object(x: list):
    if len(x) < 2 or type(x[1]) is not str:
        raise _Bad("object without a class")
    cls = _registry().get(x[1])
    if cls is None:
        raise _Bad(f"unknown class {x[1]}")
    fields = _plans.get(cls) or _plan(cls)
    if len(x) != 2 + len(fields):
        raise _Bad(f"{x[1]}: {len(x) - 2} fields, expected {len(fields)}")
    obj = object.__new__(cls)
    setattr_ = object.__setattr__
    scalars = _SCALARS
    i = 2
    for name, kind, dec in fields:
        raw = x[i]
        i += 1
        if kind is not None:  # str / bool / int fields: checked here, without a call
            if type(raw) is not kind and not (kind is int and type(raw) is bool):
                raise _Bad(f"{x[1]}.{name}: expected {kind.__name__}")
            setattr_(obj, name, raw)
        elif dec is _decode and type(raw) in scalars:
            setattr_(obj, name, raw)
        else:
            setattr_(obj, name, dec(raw))
    return obj


def same_facts(a, b) -> bool:
    """Whether two values of cache data are the same data: equal, of the same types all the way
    down (``1``, ``1.0`` and ``True`` differ; ``0.0`` and ``-0.0`` differ), dicts in the same order.
    False for anything else, never an error (the engine's early cutoff then runs in full)."""
    try:
        return _same(a, b)
    except RecursionError:
        return False


def _same(a, b) -> bool:
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is str or kind is int or kind is bool or a is None or kind is bytes:
        return a == b
    if kind is tuple or kind is list:
        return len(a) == len(b) and all([x is y or _same(x, y) for x, y in zip(a, b)])
    if kind is dict:
        return len(a) == len(b) and all(_same(k, j) and _same(v, w) for (k, v), (j, w) in zip(a.items(), b.items()))
    if kind is float or kind is complex:
        return repr(a) == repr(b)
    if kind is frozenset or kind is set:
        # members are hashable plain data: equal sets whose members print the same
        return len(a) == len(b) and a == b and sorted(map(repr, a)) == sorted(map(repr, b))
    if a is NOCONST or a is Ellipsis:
        return a is b
    known = _objects.get(kind)
    if known is None and dataclasses.is_dataclass(a) and _registry().get(_tag(kind)) is kind:
        with _busy:
            _encode(a)  # registers its fields' getter
        known = _objects.get(kind)
    if known is not None:
        return _same(known[1](a), known[1](b))
    return False


def looks_like_pickle(blob: bytes) -> bool:
    return len(blob) >= 2 and blob[0] == 0x80 and 2 <= blob[1] <= 5


def split(blob: bytes) -> bytes:
    """The verified body of a cache file, or CacheDataError."""
    if not blob.startswith(MAGIC + b" "):
        if looks_like_pickle(blob):
            raise CacheDataError("foreign", "pickled data (never loaded: it can run code)")
        raise CacheDataError("damaged", "not a dllint cache file")
    head, sep, body = blob.partition(b"\n")
    parts = head.split(b" ")
    if not sep or len(parts) != 3:
        raise CacheDataError("damaged", "bad header")
    if parts[1] != str(FORMAT).encode():
        raise CacheDataError("version", "another cache format")
    if hashlib.blake2b(body, digest_size=16).hexdigest().encode("ascii") != parts[2]:
        raise CacheDataError("damaged", "checksum mismatch")
    return body


def loads(blob: bytes):
    """The data of a cache file written by ``dumps``; CacheDataError for anything else."""
    body = split(blob)
    with _busy:
        _labelled.clear()
        try:
            return _decode(json.loads(body))
        except (_Bad, ValueError, RecursionError) as exc:
            raise CacheDataError("damaged", f"bad data: {exc}") from None
        finally:
            _labelled.clear()


def loads_json(blob: bytes):
    """A plain JSON cache file (``dumps_json``), checked the same way; CacheDataError otherwise."""
    try:
        return json.loads(split(blob))
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, CacheDataError):
            raise
        raise CacheDataError("damaged", f"bad JSON: {exc}") from None


def dumps_json(data) -> bytes:
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=True, check_circular=False).encode("ascii")
    digest = hashlib.blake2b(body, digest_size=16).hexdigest().encode("ascii")
    return b"%s %d %s\n%s" % (MAGIC, FORMAT, digest, body)
