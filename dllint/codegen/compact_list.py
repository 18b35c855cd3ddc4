"""The read-only packed list DL101's fix adds to a module (``SOURCE``), and its name.

``_CompactList(items)`` keeps a list's items in one ``bytes`` buffer with an ``array`` of end
offsets: reading an item touches no per-item Python object, so a forked DataLoader worker does
not copy the list page by page (copy-on-read). Strings are stored in the narrowest fixed width
that holds them (latin-1, else UTF-32, ``surrogatepass``: every ``str`` round-trips exactly); other
items (tuples, lists, dicts of str / int / bool / None) are pickled. An item comes back equal to,
and of the same type as, the original; a slice comes back as a ``list``; ``len``, iteration,
``in``, ``reversed``, ``index``, ``count``, truth value and ``repr`` behave as the list's.

Memory: when packing would not take less memory than the list itself (its slots and its distinct
item objects, measured with ``sys.getsizeof``: short strings shared many times, say),
``_CompactList(items)`` returns ``items`` unchanged, so the result never takes more memory than
the list it replaces. Only standard-library modules are used (no numpy).
"""

NAME = "_CompactList"

SOURCE = '''
class _CompactList:
    """A read-only list kept as one bytes buffer (added by dllint, DL101): forked DataLoader
    workers read its items without copying one Python object per item. Items come back equal
    and of the same type; a slice comes back as a list. When packing would not save memory,
    _CompactList(items) returns the list itself."""

    __slots__ = ("_buf", "_ends", "_wide")

    def __new__(cls, items=(), _state=None):
        import array
        import pickle
        import sys

        self = object.__new__(cls)
        if _state is not None:
            self._buf, self._ends, self._wide = _state
            return self
        if all(type(x) is str for x in items):
            wide = array.array("B")
            parts = []
            for s in items:
                try:
                    parts.append(s.encode("latin-1"))
                    wide.append(0)
                except UnicodeEncodeError:
                    parts.append(s.encode("utf-32-le", "surrogatepass"))
                    wide.append(1)
            self._wide = wide
        else:
            parts = [pickle.dumps(x, protocol=4) for x in items]
            self._wide = None
        total, ends = 0, []
        for p in parts:
            total += len(p)
            ends.append(total)
        self._ends = array.array("L" if total < 2 ** 32 else "Q", ends)
        self._buf = b"".join(parts)
        packed = sum(sys.getsizeof(x) for x in (self, self._buf, self._ends, self._wide))
        seen, size, stack = set(), sys.getsizeof(items), list(items)
        while stack:
            x = stack.pop()
            if id(x) not in seen:
                seen.add(id(x))
                size += sys.getsizeof(x)
                if type(x) in (tuple, list):
                    stack.extend(x)
                elif type(x) is dict:
                    stack.extend(x.keys())
                    stack.extend(x.values())
        return self if packed < size else items

    def __reduce__(self):
        return (type(self), ((), (self._buf, self._ends, self._wide)))

    def __len__(self):
        return len(self._ends)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._ends)))]
        try:
            i = index.__index__()
        except AttributeError:
            raise TypeError("list indices must be integers or slices, not " + type(index).__name__) from None
        n = len(self._ends)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("list index out of range")
        chunk = self._buf[self._ends[i - 1] if i else 0 : self._ends[i]]
        if self._wide is None:
            import pickle

            return pickle.loads(chunk)
        return chunk.decode("utf-32-le", "surrogatepass") if self._wide[i] else chunk.decode("latin-1")

    def __iter__(self):  # an iterator that pickles, as a list's does
        return map(self.__getitem__, range(len(self._ends)))

    def __reversed__(self):
        return map(self.__getitem__, range(len(self._ends) - 1, -1, -1))

    def __contains__(self, value):
        return any(item == value for item in self)

    def index(self, value, start=0, stop=None):
        for i in range(*slice(start, stop).indices(len(self._ends))):
            if self[i] == value:
                return i
        raise ValueError(f"{value!r} is not in list")

    def count(self, value):
        return sum(1 for item in self if item == value)

    def __repr__(self):
        return repr(list(self))
'''
