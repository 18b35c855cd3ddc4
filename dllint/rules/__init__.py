"""The rule registry: every module ``dlNNN_*.py`` in this package defines one Rule subclass."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from dllint.rules.base import Rule


@lru_cache(maxsize=1)
def all_rules() -> tuple[Rule, ...]:
    found: list[Rule] = []
    package = importlib.import_module(__name__)
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("dl"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        classes = [
            obj
            for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__
        ]
        if len(classes) != 1:
            raise RuntimeError(f"rule module {module.__name__} must define exactly one Rule subclass")
        found.append(classes[0]())
    found.sort(key=lambda r: r.code)
    codes = [r.code for r in found]
    if len(set(codes)) != len(codes):
        raise RuntimeError(f"duplicate rule codes: {codes}")
    return tuple(found)


def rule_by_code(code: str) -> Rule | None:
    for rule in all_rules():
        if rule.code == code.upper():
            return rule
    return None


def all_codes() -> tuple[str, ...]:
    return tuple(r.code for r in all_rules())
