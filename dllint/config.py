"""``[tool.dllint]`` in pyproject.toml, command-line overrides, and rule selection."""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from dataclasses import dataclass, field, replace

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from dllint.discover import DEFAULT_EXCLUDES

TARGET_VERSIONS = ("py310", "py311", "py312", "py313", "py314")
PLATFORMS = ("linux", "darwin", "win32")
LATEST_MINOR = 14


class ConfigError(Exception):
    """Bad configuration or usage: reported with its cause, exit code 2."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None  # None: the rules that are on by default
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    extend_exclude: tuple[str, ...] = ()
    target_version: str | None = None
    requires_python: str | None = None
    platforms: tuple[str, ...] = ("linux",)
    dataset_bases: tuple[str, ...] = ()
    dataloader_classes: tuple[str, ...] = ()
    respect_gitignore: bool = True
    config_path: str | None = None
    # files larger than this (MB) are not analysed but reported as DL000: a module's syntax tree
    # and facts take about 150 bytes of memory per byte of source (a 10 MB file: about 1.5 GB)
    max_file_size: float = 10.0

    # ------------------------------------------------------------------ derived

    @property
    def all_excludes(self) -> list[str]:
        return [*self.exclude, *self.extend_exclude]

    def python_range(self) -> tuple[int, int]:
        """(lowest, highest) Python 3 minor version the code targets."""
        lo_req, hi_req = parse_requires_python(self.requires_python) if self.requires_python else (None, None)
        if self.target_version:
            lo = int(self.target_version[3:])
        elif lo_req is not None:
            lo = lo_req
        else:
            lo = sys.version_info.minor
        if self.requires_python:
            hi = hi_req if hi_req is not None else max(lo, LATEST_MINOR)
        else:
            hi = lo
        return lo, max(lo, hi)

    def default_start_methods(self) -> frozenset[str]:
        """The start methods a loader with no explicit context can get on the targets."""
        lo, hi = self.python_range()
        methods = set()
        for platform in self.platforms:
            if platform == "linux":
                if lo <= 13:
                    methods.add("fork")
                if hi >= 14:
                    methods.add("forkserver")
            else:
                methods.add("spawn")
        return frozenset(methods)

    def enabled(self, codes: list[str], defaults: set[str]) -> set[str]:
        return resolve_selection(codes, defaults, self.select, self.extend_select, self.ignore)

    def ignored_for(self, relpath: str) -> set[str]:
        out: set[str] = set()
        name = os.path.basename(relpath)
        for pattern, codes in self.per_file_ignores:
            target = relpath if "/" in pattern else name
            if fnmatch.fnmatch(target, pattern) or fnmatch.fnmatch(relpath, pattern):
                out.update(codes)
        return out


def parse_requires_python(spec: str) -> tuple[int | None, int | None]:
    lo: int | None = None
    hi: int | None = None
    for part in spec.split(","):
        m = re.match(r"\s*(>=|<=|==|~=|>|<|!=)\s*3(?:\.(\d+))?(?:\.(\d+|\*))?\s*$", part)
        if not m:
            continue
        op, minor_s, patch = m.groups()
        minor = int(minor_s) if minor_s else 0
        if op in (">=", "~="):
            lo = max(lo or 0, minor)
            if op == "~=" and patch not in (None, "*"):  # ~=3.10.2 means >=3.10.2, ==3.10.*
                hi = min(hi if hi is not None else 99, minor)
        elif op == ">":  # >3.10 still admits 3.10.1
            lo = max(lo or 0, minor)
        elif op == "<":
            hi = min(hi if hi is not None else 99, minor - (0 if patch not in (None, "*", "0") else 1))
        elif op == "<=":
            hi = min(hi if hi is not None else 99, minor)
        elif op == "==":
            lo, hi = minor, minor
    return lo, hi


# ---------------------------------------------------------------------------- selection

_SELECTOR = re.compile(r"^(ALL|DL\d{0,3})$")


def validate_selectors(values, key: str, known: list[str]) -> tuple[str, ...]:
    out = []
    for value in values:
        if not isinstance(value, str):
            raise ConfigError(f"`{key}` must be a list of rule codes, got {value!r}")
        sel = value.strip().upper()
        if not _SELECTOR.match(sel) or (sel != "ALL" and not any(code.startswith(sel) for code in known)):
            raise ConfigError(f"unknown rule selector `{value}` in `{key}` (rules: {', '.join(known)})")
        out.append(sel)
    return tuple(out)


def _specificity(selector: str, code: str) -> int:
    if selector == "ALL":
        return 0
    return len(selector) if code.startswith(selector) else -1


def resolve_selection(codes, defaults, select, extend_select, ignore) -> set[str]:
    """ruff's rule: the most specific selector wins; on a tie, ignore wins. A rule that is off
    by default is enabled only by its exact code or ALL, never by a shorter prefix."""
    enabled = set()
    for code in codes:
        best_select = -1
        selectors = list(select) if select is not None else []
        if select is None and code in defaults:
            best_select = 0
        for sel in (*selectors, *extend_select):
            s = _specificity(sel, code)
            if code not in defaults and sel not in ("ALL", code):
                continue
            best_select = max(best_select, s)
        best_ignore = max((_specificity(sel, code) for sel in ignore), default=-1)
        if best_select >= 0 and best_select > best_ignore:
            enabled.add(code)
    return enabled


# ---------------------------------------------------------------------------- pyproject

_KEYS = {
    "select": "codes",
    "extend-select": "codes",
    "ignore": "codes",
    "per-file-ignores": "table",
    "exclude": "strings",
    "extend-exclude": "strings",
    "target-version": "target",
    "dataset-bases": "strings",
    "dataloader-classes": "strings",
    "respect-gitignore": "bool",
    "platforms": "platforms",
    "max-file-size": "megabytes",
}


def find_config(start: str) -> tuple[str | None, str | None]:
    """(pyproject with [tool.dllint], nearest pyproject) searching upward from ``start``."""
    cur = os.path.abspath(start)
    if not os.path.isdir(cur):
        cur = os.path.dirname(cur)
    nearest = None
    while True:
        candidate = os.path.join(cur, "pyproject.toml")
        if os.path.isfile(candidate):
            nearest = nearest or candidate
            try:
                with open(candidate, "rb") as fh:
                    if b"[tool.dllint" in fh.read():
                        return candidate, nearest
            except OSError:
                pass
        parent = os.path.dirname(cur)
        if parent == cur:
            return None, nearest
        cur = parent


def _read_toml(path: str) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def load_settings(path: str | None, codes: list[str], nearest: str | None = None) -> Settings:
    """Settings from a pyproject.toml (``path``), or defaults; ``nearest`` supplies requires-python."""
    settings = Settings()
    requires = None
    if nearest and nearest != path:
        requires = _read_toml(nearest).get("project", {}).get("requires-python")
    if path is None:
        return replace(settings, requires_python=requires if isinstance(requires, str) else None)
    doc = _read_toml(path)
    nested = doc.get("tool", {}).get("dllint") if isinstance(doc.get("tool"), dict) else None
    is_pyproject = os.path.basename(path) == "pyproject.toml" or nested is not None
    table = (nested or {}) if is_pyproject else doc  # a dllint.toml holds the keys at top level
    if is_pyproject:
        requires = doc.get("project", {}).get("requires-python", requires)
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.dllint] in {path} must be a table")
    where = f"[tool.dllint] in {path}" if is_pyproject else path
    values: dict = {}
    for key, value in table.items():
        kind = _KEYS.get(key)
        if kind is None:
            raise ConfigError(f"unknown key `{key}` in {where} (known: {', '.join(sorted(_KEYS))})")
        values[key] = _check(key, kind, value, where, codes)
    return Settings(
        select=values.get("select"),
        extend_select=values.get("extend-select", ()),
        ignore=values.get("ignore", ()),
        per_file_ignores=values.get("per-file-ignores", ()),
        exclude=tuple(values.get("exclude", DEFAULT_EXCLUDES)),
        extend_exclude=tuple(values.get("extend-exclude", ())),
        target_version=values.get("target-version"),
        requires_python=requires if isinstance(requires, str) else None,
        platforms=values.get("platforms", ("linux",)),
        dataset_bases=tuple(values.get("dataset-bases", ())),
        dataloader_classes=tuple(values.get("dataloader-classes", ())),
        respect_gitignore=values.get("respect-gitignore", True),
        config_path=path,
        max_file_size=values.get("max-file-size", Settings.max_file_size),
    )


def _check(key: str, kind: str, value, where: str, codes: list[str]):
    if kind == "codes":
        if not isinstance(value, list):
            raise ConfigError(f"`{key}` in {where} must be a list of rule codes, got {type(value).__name__}")
        return validate_selectors(value, key, codes)
    if kind == "strings":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"`{key}` in {where} must be a list of strings")
        return tuple(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise ConfigError(f"`{key}` in {where} must be true or false")
        return value
    if kind == "target":
        return validate_target(value, f"`{key}` in {where}")
    if kind == "megabytes":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise ConfigError(f"`{key}` in {where} must be a positive number of megabytes, got {value!r}")
        return float(value)
    if kind == "platforms":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) and v in PLATFORMS for v in items):
            raise ConfigError(f"`{key}` in {where} must be a list of {', '.join(PLATFORMS)}")
        return tuple(items)
    if kind == "table":
        if not isinstance(value, dict):
            raise ConfigError(f"`{key}` in {where} must be a table of glob = [codes]")
        return tuple(
            (pattern, validate_selectors(v if isinstance(v, list) else [v], f"{key}.{pattern}", codes))
            for pattern, v in value.items()
        )
    raise AssertionError(kind)  # pragma: no cover


def validate_target(value, where: str) -> str:
    if not isinstance(value, str) or value not in TARGET_VERSIONS:
        raise ConfigError(f"{where} must be one of {', '.join(TARGET_VERSIONS)}, got {value!r}")
    return value


@dataclass
class Overrides:
    """Command-line options that override the configuration."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    target_version: str | None = None
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    extras: dict = field(default_factory=dict)

    def apply(self, settings: Settings, codes: list[str]) -> Settings:
        changes: dict = {}
        if self.select is not None:
            changes["select"] = validate_selectors(self.select, "--select", codes)
        if self.extend_select:
            changes["extend_select"] = settings.extend_select + validate_selectors(
                self.extend_select, "--extend-select", codes
            )
        if self.ignore:
            changes["ignore"] = settings.ignore + validate_selectors(self.ignore, "--ignore", codes)
        if self.target_version:
            changes["target_version"] = validate_target(self.target_version, "--target-version")
        if self.exclude is not None:
            changes["exclude"] = tuple(self.exclude)
        if self.extend_exclude:
            changes["extend_exclude"] = settings.extend_exclude + tuple(self.extend_exclude)
        return replace(settings, **changes)


def split_csv(values) -> tuple[str, ...]:
    out: list[str] = []
    for value in values or ():
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return tuple(out)
