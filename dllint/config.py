"""``[tool.dllint]`` in pyproject.toml, command-line overrides, and rule selection."""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from dllint.discover import DEFAULT_EXCLUDES

TARGET_VERSIONS = ("py310", "py311", "py312", "py313", "py314")
# A file that cannot be read, decoded or parsed is always reported, whatever is selected or
# ignored (per-file-ignores and noqa included), as ruff reports syntax errors: nothing else can be
# checked in that file, so staying silent would pass it unchecked. `exclude` skips such a file.
ALWAYS_REPORTED = "DL000"
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
    # the project is a distributable package (setup.py / setup.cfg, or a pyproject.toml with a
    # [project] or [build-system] table): its classes are its users' too, whose loaders are unseen
    packaged: bool = False
    # files larger than this (MB) are not analysed but reported as DL000: a module's syntax tree
    # and facts take about 150 bytes of memory per byte of source (a 10 MB file: about 1.5 GB)
    max_file_size: float = 10.0

    # ------------------------------------------------------------------ derived

    @property
    def all_excludes(self) -> list[str]:
        return [*self.exclude, *self.extend_exclude]

    def python_range(self) -> tuple[int, int]:
        """(lowest, highest) Python 3 minor version the code targets."""
        try:
            lo_req, hi_req = parse_requires_python(self.requires_python) if self.requires_python else (None, None)
        except ValueError:  # the loaders reject it first (exit 2); Settings built by hand fall back
            lo_req, hi_req = None, None
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
        """The rules to run: the selection, and DL000 always (see ALWAYS_REPORTED)."""
        chosen = resolve_selection(codes, defaults, self.select, self.extend_select, self.ignore)
        return chosen | ({ALWAYS_REPORTED} & set(codes))

    def ineffective(self) -> list[str]:
        """Warnings for settings that cannot do what they say (ignoring DL000)."""
        where = [key for key, sels in (("ignore` / `--ignore", self.ignore), *((f"per-file-ignores.{p}", c) for p, c in self.per_file_ignores))
                 if ALWAYS_REPORTED in sels]
        return [
            f"`{key}` names {ALWAYS_REPORTED}, which cannot be ignored: a file that cannot be read or parsed is always "
            "reported (use `exclude` to skip the file); ignoring it has no effect"
            for key in where
        ]

    def ignored_for(self, relpath: str) -> set[str]:
        out: set[str] = set()
        name = os.path.basename(relpath)
        for pattern, codes in self.per_file_ignores:
            target = relpath if "/" in pattern else name
            if fnmatch.fnmatch(target, pattern) or fnmatch.fnmatch(relpath, pattern):
                out.update(codes)
        return out


_MAX_MINOR = 99  # "unbounded above": a specifier that admits 3.99 has no upper bound


@lru_cache(maxsize=64)
def parse_requires_python(spec: str) -> tuple[int | None, int | None]:
    """(lowest, highest) Python 3 minor version a ``requires-python`` specifier admits, read with
    ``packaging`` (PEP 440); None where it sets no bound (3.0 admitted / 3.99 admitted).

    ValueError, with the reason, when it is not a valid specifier, is empty, or admits no
    Python 3 version (``>=3.12,<3.10``, ``<3.0``)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if not spec.strip():
        raise ValueError("is empty (write a version specifier such as \">=3.10\")")
    try:
        specs = SpecifierSet(spec)
    except InvalidSpecifier as exc:
        raise ValueError(f"is not a valid version specifier ({exc})") from None
    # A minor is admitted when one of its releases is: try 3.m.0, the patch levels the specifier
    # names and their neighbours, and a very late patch.
    patches = {0, 1, 9999}
    for s in specs:
        release = [p for p in s.version.split(".")]
        if len(release) >= 3 and release[2].isdigit():
            n = int(release[2])
            patches.update({n, n + 1, max(n - 1, 0)})
    admitted = [
        m for m in range(_MAX_MINOR + 1)
        if any(specs.contains(f"3.{m}.{p}", prereleases=False) for p in sorted(patches))
    ]
    if not admitted:
        raise ValueError("admits no Python 3 version")
    lo, hi = admitted[0], admitted[-1]
    return (None if lo == 0 else lo), (None if hi == _MAX_MINOR else hi)


def validate_requires_python(value, where: str) -> str:
    """``value`` when it is a usable ``requires-python``; else ConfigError naming ``where``."""
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a version specifier string such as \">=3.10\", got {value!r}")
    try:
        parse_requires_python(value)
    except ValueError as exc:
        raise ConfigError(f"{where} = {value!r} {exc}") from None
    return value


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
    """(pyproject with a ``tool.dllint`` table, nearest pyproject) searching upward from ``start``.

    The TOML is parsed, so every spelling counts: ``[tool.dllint]``, ``[ tool.dllint ]``,
    ``[tool."dllint"]``, a ``[tool]`` table with ``dllint.select = ...``, dotted keys
    (``tool.dllint.select = ...``) and inline tables. A file that names dllint but is not valid
    TOML is a ConfigError (a configuration dllint cannot read is never skipped silently)."""
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
                    mentions = b"dllint" in fh.read()  # no other file can configure dllint
            except OSError:
                mentions = False
            if mentions and _dllint_table(_read_toml(candidate)) is not None:
                return candidate, nearest
        parent = os.path.dirname(cur)
        if parent == cur:
            return None, nearest
        cur = parent


def _dllint_table(doc: dict):
    """``tool.dllint`` of a parsed pyproject (whatever its type), or None when there is none."""
    tool = doc.get("tool")
    return tool.get("dllint") if isinstance(tool, dict) else None


def _requires_python(doc: dict, path: str) -> str | None:
    """``project.requires-python`` of a parsed pyproject, validated (ConfigError naming the key)."""
    project = doc.get("project")
    if project is None:
        return None
    if not isinstance(project, dict):
        raise ConfigError(f"`project` in {path} must be a table, got {type(project).__name__}")
    if "requires-python" not in project:
        return None
    return validate_requires_python(project["requires-python"], f"`project.requires-python` in {path}")


def is_packaged(root: str) -> bool:
    """The project at ``root`` builds a distributable package: a ``setup.py`` or ``setup.cfg``,
    or a ``pyproject.toml`` with a ``[project]``, ``[build-system]`` or ``[tool.poetry]`` table
    (not one holding only tools' settings)."""
    if any(os.path.isfile(os.path.join(root, name)) for name in ("setup.py", "setup.cfg")):
        return True
    path = os.path.join(root, "pyproject.toml")
    if not os.path.isfile(path):
        return False
    try:
        doc = _read_toml(path)
    except ConfigError:
        return False
    return "project" in doc or "build-system" in doc or "poetry" in (doc.get("tool") or {})


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
        requires = _requires_python(_read_toml(nearest), nearest)
    if path is None:
        return replace(settings, requires_python=requires)
    doc = _read_toml(path)
    nested = _dllint_table(doc)
    is_pyproject = os.path.basename(path) == "pyproject.toml" or nested is not None
    table = ({} if nested is None else nested) if is_pyproject else doc  # a dllint.toml holds the keys at top level
    if is_pyproject:
        own = _requires_python(doc, path)
        requires = own if own is not None else requires
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.dllint] in {path} must be a table, got {type(table).__name__}")
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
        requires_python=requires,
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
