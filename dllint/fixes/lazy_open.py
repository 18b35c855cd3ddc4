"""DL104: ``self.X = ctor(args)`` in ``__init__`` into a ``functools.partial`` of the open and a
property ``X`` that opens once per process (keyed on ``os.getpid()``), adding ``import functools``
/ ``import os`` when missing. The rule decides from its facts which assignments qualify; this
builds the edits: three places (the assignment, the property after ``__init__``, the imports)
from one transformed module."""

from __future__ import annotations

from dllint.fixes.cst import CstSource, add_imports, edits_between
from dllint.model import Edit, Span

PROPERTY = '''\
@property
def {attr}(self):
    """Opened on first use in each process: a handle must not cross a fork."""
    if self._{attr}_pid != os.getpid():
        self._{attr}_handle, self._{attr}_pid = self._{attr}_open(), os.getpid()
    return self._{attr}_handle
'''


def _owner(src: CstSource, assign):
    """(class, method, statement line) holding ``assign`` directly in the method's body."""
    import libcst as cst

    for node in src.positions():
        if not isinstance(node, cst.ClassDef) or not isinstance(node.body, cst.IndentedBlock):
            continue
        for method in node.body.body:
            if not isinstance(method, cst.FunctionDef) or not isinstance(method.body, cst.IndentedBlock):
                continue
            for line in method.body.body:
                if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and line.body[0] is assign:
                    return node, method, line
    return None


def lazy_open(src: CstSource, stmt: Span, attr: str) -> tuple[Edit, ...] | None:
    import libcst as cst

    assign = src.find(cst.Assign, stmt)
    if assign is None or len(assign.targets) != 1 or not isinstance(assign.value, cst.Call):
        return None
    target = assign.targets[0].target
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.attr.value == attr):
        return None
    found = _owner(src, assign)
    if found is None:
        return None
    cls, method, line = found
    me = target.value.value
    call = assign.value
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    args = [cst.Arg(value=call.func, comma=comma if call.args else cst.MaybeSentinel.DEFAULT), *call.args]
    opener = cst.Assign(
        targets=[cst.AssignTarget(target=cst.parse_expression(f"{me}._{attr}_open"))],
        value=cst.Call(func=cst.parse_expression("functools.partial"), args=args),
    )
    first = line.with_changes(body=[opener])
    second = cst.parse_statement(f"{me}._{attr}_handle, {me}._{attr}_pid = None, None\n")
    body = []
    for item in method.body.body:
        body.extend((first, second) if item is line else (item,))
    new_method = method.with_changes(body=method.body.with_changes(body=body))
    prop = cst.parse_statement(PROPERTY.format(attr=attr)).with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    members = []
    for item in cls.body.body:
        members.extend((new_method, prop) if item is method else (item,))
    module = src.module.deep_replace(cls, cls.with_changes(body=cls.body.with_changes(body=members)))
    module = add_imports(module, ["functools", "os"])
    return edits_between(src.text, module.code)
