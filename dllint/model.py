"""Plain data shared by every stage: positions, values, per-file facts, diagnostics and fixes.

Everything here is picklable and holds no AST or CST node, so facts can be computed in worker
processes and cached on disk. Rows are 1-based; columns are 1-based and count characters (not
bytes), as ruff's JSON output does.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field, fields
from typing import Any


def pickled_by_fields(cls):
    """A dataclass pickled as ``cls(*its fields)``: facts travel from the worker processes to the
    parent by pickle (dllint/engine.py), and the default way (a ``__getstate__`` that asks
    ``dataclasses.fields`` per object for a frozen class with slots, a dict of slot names per
    object for the others) took about twice the time and twice the bytes. Only for classes whose
    ``__init__`` takes every field and does nothing more (no ``__post_init__``)."""
    names = [f.name for f in fields(cls)]
    if len(names) > 1:
        values = operator.attrgetter(*names)
    else:
        def values(obj, name=names[0]):
            return (getattr(obj, name),)

    def __reduce__(self):
        return (cls, values(self))

    cls.__reduce__ = __reduce__
    return cls


# --------------------------------------------------------------------------- positions


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Span:
    row: int
    col: int
    end_row: int
    end_col: int

    def contains_row(self, row: int) -> bool:
        return self.row <= row <= self.end_row


NO_SPAN = Span(1, 1, 1, 1)

# --------------------------------------------------------------------------- values


class _NoConst:
    """Marker for "this value is not a literal constant" (None is a real constant)."""

    _instance = None

    def __new__(cls):  # a singleton that survives pickling
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __reduce__(self):
        return (_NoConst, ())

    def __repr__(self) -> str:
        return "NOCONST"

    def __bool__(self) -> bool:
        return False


NOCONST = _NoConst()


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class Value:
    """A small summary of an expression, enough to join facts across files.

    kind:
      const     a literal (int/float/str/bool/None); ``const`` holds it
      ref       a name or attribute chain that resolves to ``ref`` (a qualified name)
      call      a call; ``ref`` is the callee's qualified name when it resolves
      partial   functools.partial(f, ...): ``ref`` is f's qualified name
      lambda    a lambda; ``refs`` are the qualified names it calls
      self_method  ``self.m`` (a bound method); ``ref`` is the method name
      param     a parameter of the enclosing function; ``ref`` is its name
      union     one of ``options`` (an if-expression, several assignments)
      subset    ``base[i]`` with a non-string index: ``options`` holds the base (a PyG dataset
                indexed with a slice or index array is a dataset of the same class)
      unknown   anything else
    """

    kind: str
    text: str = ""
    span: Span = NO_SPAN
    ref: str | None = None
    const: Any = NOCONST
    options: tuple["Value", ...] = ()
    refs: tuple[str, ...] = ()

    def alternatives(self) -> tuple["Value", ...]:
        """The possible values, with unions flattened."""
        if self.kind != "union":
            return (self,)
        out: list[Value] = []
        for opt in self.options:
            out.extend(opt.alternatives())
        return tuple(out)

    @property
    def is_const(self) -> bool:
        return self.kind == "const"


# --------------------------------------------------------------------------- facts


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class CallRef:
    """A call made inside a function, kept for reachability.

    kind: ``self`` (self.m()), ``super`` (super().m()), ``ref`` (a resolved qualified name),
    ``selfattr`` (self.attr(...), a callable stored on the instance).
    """

    kind: str
    target: str
    row: int


@pickled_by_fields
@dataclass(slots=True)
class FunctionFacts:
    qualname: str
    name: str
    cls: str | None  # qualified name of the class when this is a method
    span: Span  # the def's name
    params: tuple[str, ...] = ()
    kwonly: int = 0  # how many of ``params`` (the last ones) are keyword-only: no argument binds by position
    calls: tuple[CallRef, ...] = ()
    self_reads: frozenset[str] = frozenset()
    self_writes: dict[str, tuple[Value, ...]] = field(default_factory=dict)
    returns: tuple[Value, ...] = ()
    decorators: tuple[str, ...] = ()
    nested: bool = False  # defined inside another function
    flow: Any = None  # dllint.facts.flow.Flow: what the function does with values


@pickled_by_fields
@dataclass(slots=True)
class ClassFacts:
    qualname: str
    name: str
    span: Span  # the class name
    bases: tuple[Value, ...] = ()
    methods: dict[str, str] = field(default_factory=dict)  # name -> function qualname
    class_attrs: dict[str, Value] = field(default_factory=dict)
    local: bool = False  # defined inside a function
    attrs_ir: dict[str, Any] = field(default_factory=dict)  # class-level NAME = value, as flow IR
    decorators: tuple[str, ...] = ()  # qualified names of the decorators (the called one for ``@f(...)``)


@pickled_by_fields
@dataclass(slots=True)
class LoaderCall:
    """A call that may construct a DataLoader (the index decides from ``callee``)."""

    callee: str  # qualified name of the called class
    span: Span  # the whole call
    func_span: Span  # the callee expression: where findings point
    scope: str  # qualified name of the enclosing function, or the module
    args: dict[str, Value] = field(default_factory=dict)  # DataLoader parameter name -> value
    positional: int = 0  # number of positional arguments given
    unresolved_kwargs: bool = False  # a ``**kw`` we could not see through
    in_main_guard: bool = False
    module_level: bool = False
    target: str | None = None  # the name the loader is assigned to, if any
    # DataLoader parameter name -> flow IR of the argument (dllint/facts/flow.py), evaluated by the
    # model in the enclosing function (``scope``)
    args_ir: dict[str, Any] = field(default_factory=dict)
    # what the keyword fixes would find in the call's source (``facts.keyword_text``): its keyword
    # names, a generator argument without parentheses of its own, the ``num_workers`` argument's
    # source when simple; a run printing no edits decides from these whether a fix exists
    edit_facts: tuple[tuple[str, ...], bool, str | None] | None = None


@pickled_by_fields
@dataclass(slots=True)
class StartMethodCall:
    """``set_start_method(...)`` (multiprocessing or torch.multiprocessing)."""

    method: str | None  # the literal method, or None when not a literal
    span: Span
    scope: str
    in_main_guard: bool
    module_level: bool
    force: bool
    # under an ``if`` that may be false on some runs (``if num_gpus > 1:``): the target's
    # default start method applies on those (not the main guard, nor a test that the method is
    # not set yet: ``if mp.get_start_method(allow_none=True) is None``)
    conditional: bool = False


@pickled_by_fields
@dataclass(slots=True)
class ParseError:
    message: str
    row: int
    col: int


@pickled_by_fields
@dataclass(slots=True)
class FileFacts:
    path: str
    module: str
    root: str  # the directory the module name is relative to
    is_package: bool = False
    error: ParseError | None = None
    imports: dict[str, str] = field(default_factory=dict)  # module-level binding -> qualname
    star_imports: tuple[str, ...] = ()
    imported_modules: frozenset[str] = frozenset()
    constants: dict[str, Value] = field(default_factory=dict)  # module-level NAME = value
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    loaders: tuple[LoaderCall, ...] = ()
    start_methods: tuple[StartMethodCall, ...] = ()
    main_guard: Span | None = None
    noqa: dict[int, frozenset[str] | None] = field(default_factory=dict)  # row -> codes (None: all)
    file_noqa: frozenset[str] | None = frozenset()  # codes off for the whole file (None: all)
    payloads: dict[str, Any] = field(default_factory=dict)  # rule code -> that rule's facts
    flow: Any = None  # dllint.facts.flow.Flow of the module body (module-level names)
    # file-level signals the model reads: "cv2_threads_off" (cv2.setNumThreads(0) or
    # OMP_NUM_THREADS set somewhere in the file), and the payloads of facts/extract.py's
    # ``_core_facts``
    signals: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- findings


@dataclass(frozen=True, slots=True)
class Edit:
    content: str
    span: Span  # the replaced range; an insertion has span.row == end_row and col == end_col


def are_edits(value) -> bool:
    """``value`` is a tuple of Edits (the shape of a fix's edits read back from the cache)."""
    return type(value) is tuple and all(type(e) is Edit for e in value)


@dataclass(frozen=True, slots=True)
class Fix:
    applicability: str  # "safe" | "unsafe" | "display"
    message: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str
    path: str
    span: Span
    fix: Fix | None = None
    severity: str = "warning"  # "error" | "warning" | "info"
    noqa_row: int | None = None
    # notebooks: spans are rows of the concatenated code cells; ``cell`` is the 1-based cell
    # number and ``cell_row_offset`` the rows before that cell (row in the cell = row - offset)
    cell: int | None = None
    cell_row_offset: int = 0
    # what the finding is about and why, for machine outputs and `--output-format full`:
    # (("class", "Images"), ("attribute", "files"), ("evidence", ("lines of a file (data.py:41)", ...)))
    details: tuple = ()

    @property
    def row(self) -> int:
        return self.span.row

    @property
    def cell_row(self) -> int:
        """The row to show: the line in the cell for a notebook, else the file row."""
        return self.span.row - self.cell_row_offset

    def sort_key(self) -> tuple:
        return (self.path, self.span.row, self.span.col, self.code, self.message)
