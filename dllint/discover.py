"""Paths -> source files: the project root, recursive discovery with .gitignore and excludes,
and each file's module name (found by walking up while ``__init__.py`` exists)."""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import groupby

DEFAULT_EXCLUDES = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".dllint_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "__pycache__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")  # notebooks are linted as their code cells


def find_project_root(paths: list[str]) -> str:
    """The nearest directory above the paths that holds pyproject.toml or .git."""
    starts = [os.path.abspath(p) for p in paths] or [os.getcwd()]
    base = os.path.commonpath(starts) if len(starts) > 1 else starts[0]
    if not os.path.isdir(base):
        base = os.path.dirname(base)
    cur = base
    while True:
        if os.path.exists(os.path.join(cur, "pyproject.toml")) or os.path.exists(os.path.join(cur, ".git")):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            return base
        cur = parent


@dataclass(frozen=True, slots=True)
class ModuleName:
    module: str
    root: str
    is_package: bool


@lru_cache(maxsize=None)
def _is_package_dir(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "__init__.py")) or os.path.isfile(
        os.path.join(directory, "__init__.pyi")
    )


def module_name(path: str) -> ModuleName:
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    stem = filename.rsplit(".", 1)[0]
    is_package = stem == "__init__"
    parts = [] if is_package else [stem]
    while _is_package_dir(directory):
        parent, name = os.path.split(directory)
        if not name.isidentifier() or parent == directory:
            break
        parts.insert(0, name)
        directory = parent
    return ModuleName(".".join(parts) or stem, directory, is_package)


# ---------------------------------------------------------------------------- gitignore


def _glob_to_regex(pattern: str) -> str:
    out = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern[i : i + 3] == "**/":
                out.append("(?:.*/)?")
                i += 3
                continue
            if pattern[i : i + 2] == "**":
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    regex: re.Pattern
    negate: bool
    dir_only: bool
    name: str | None = None  # a plain name without `/` or glob characters: matches a path component


def parse_gitignore(text: str) -> list[IgnoreRule]:
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        if line.startswith("\\"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _glob_to_regex(line)
        regex = f"^{body}(?:/.*)?$" if anchored else f"^(?:.*/)?{body}(?:/.*)?$"
        plain = not anchored and not any(c in line for c in "*?[\\/")
        rules.append(IgnoreRule(re.compile(regex), negate, dir_only, line if plain else None))
    return rules


def _read_ignore_file(path: str) -> list[IgnoreRule] | None:
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return parse_gitignore(fh.read())
    except OSError:
        return None


class IgnoreStack:
    """The .gitignore files in force in a directory: each applies to paths below its own dir."""

    def __init__(self, entries: tuple[tuple[str, list[IgnoreRule]], ...] = ()):
        self.entries = entries
        self._combined = None  # computed on first use

    def push(self, directory: str) -> "IgnoreStack":
        """The stack with this directory's .gitignore (and, at a repository root, .git/info/exclude)."""
        sources = [os.path.join(directory, ".gitignore")]
        if os.path.isdir(os.path.join(directory, ".git")):
            sources.append(os.path.join(directory, ".git", "info", "exclude"))
        extra = tuple((directory, rules) for rules in map(_read_ignore_file, sources) if rules is not None)
        return IgnoreStack(self.entries + extra) if extra else self

    def ignored(self, path: str, is_dir: bool) -> bool:
        """The last rule that matches decides (a deeper file's rules come after its parents'):
        the rules are taken in runs of the same verdict, each run one set of names and one regex
        (``_combine``), from the last run back to the first that matches."""
        combined = self._combined
        if combined is None:
            combined = self._combined = _combine(self.entries)
        for base, groups in reversed(combined):
            if path.startswith(base + "/"):
                rel = path[len(base) + 1 :]
            else:
                rel = os.path.relpath(path, base).replace(os.sep, "/")
                if rel.startswith(".."):
                    continue
            components = rel.split("/")
            for negate, names, regex, dir_names, dir_regex in reversed(groups):
                if _group_matches(rel, components, is_dir, names, regex, dir_names, dir_regex):
                    return not negate
        return False


def _group_matches(rel, components, is_dir, names, regex, dir_names, dir_regex) -> bool:
    """Whether a rule of the group matches ``rel``: a plain name equal to a component, another
    rule's regex; a directory-only rule on the directory itself or on a directory holding it."""
    if names and not names.isdisjoint(components):
        return True
    if regex is not None and regex.match(rel):
        return True
    if is_dir:
        if dir_names and not dir_names.isdisjoint(components):
            return True
        if dir_regex is not None and dir_regex.match(rel):
            return True
    elif len(components) > 1:
        if dir_names and not dir_names.isdisjoint(components[:-1]):
            return True
        if dir_regex is not None and any(dir_regex.match("/".join(components[: i + 1])) for i in range(len(components) - 1)):
            return True
    return False


def _combine(entries):
    """Per ignore file: (base, its rules in runs of the same verdict, each run (negate, names any
    component may equal, one regex of the other rules, names a parent directory may equal, one
    regex of the other directory-only rules))."""
    out = []
    for base, rules in entries:
        groups = []
        for negate, run in groupby(rules, key=lambda rule: rule.negate):
            run = list(run)
            parts = []
            for dir_only in (False, True):
                mine = [r for r in run if r.dir_only == dir_only]
                names = frozenset(r.name for r in mine if r.name is not None)
                other = [r.regex.pattern for r in mine if r.name is None]
                parts.append((names, re.compile("|".join(f"(?:{p})" for p in other)) if other else None))
            groups.append((negate, *parts[0], *parts[1]))
        out.append((base, groups))
    return out


# ---------------------------------------------------------------------------- excludes


class Excluder:
    """ruff-style exclude globs: matched against the basename and the path below the root."""

    def __init__(self, root: str, patterns: list[str]):
        self.root = root
        self.patterns = [p.rstrip("/") for p in patterns]
        self._regexes = [re.compile(fnmatch.translate(p)) for p in self.patterns]
        names_only = self.patterns and not any("/" in p for p in self.patterns)
        self._names = re.compile("|".join(f"(?:{r.pattern})" for r in self._regexes)) if names_only else None

    def excluded(self, path: str) -> bool:
        name = os.path.basename(path)
        if self._names is not None:  # no pattern with a `/`: only the name decides
            return bool(self._names.match(name))
        rel = os.path.relpath(path, self.root).replace(os.sep, "/")
        absolute = os.path.abspath(path).replace(os.sep, "/")
        for pattern, regex in zip(self.patterns, self._regexes):
            if "/" in pattern:
                if regex.match(rel) or regex.match(absolute) or fnmatch.fnmatch(rel, pattern + "/*"):
                    return True
            elif regex.match(name):
                return True
        return False


def _ancestor_ignores(root: str, directory: str) -> IgnoreStack:
    """The .gitignore files between the project root and a directory the walk starts in."""
    stack = IgnoreStack()
    root = os.path.abspath(root)
    directory = os.path.abspath(directory)
    chain = []
    cur = directory
    while True:
        chain.append(cur)
        if cur == root or os.path.dirname(cur) == cur:
            break
        cur = os.path.dirname(cur)
    if chain[-1] != root:  # the directory is outside the root: only its own ignores
        chain = [directory]
    for d in reversed(chain[1:]):
        stack = stack.push(d)
    return stack


def discover(
    paths: list[str],
    root: str,
    exclude: list[str],
    respect_gitignore: bool = True,
    suffixes: tuple[str, ...] = SOURCE_SUFFIXES,
    force_exclude: bool = False,
    errors: list[tuple[str, str]] | None = None,
    packages: set[str] | None = None,
) -> list[str]:
    """Source files under ``paths`` (absolute, sorted, unique). Files named explicitly are kept
    even when excluded, as ruff does, unless ``force_exclude`` (what pre-commit needs).

    ``packages`` (a set, when given) receives the modules of subpackages that ``.gitignore`` alone
    hides (a folder with ``__init__.py`` inside a package: ``cogdl/data/`` under a ``data/`` rule
    meant for the downloaded data). Python imports them all the same, so the program model needs
    them to resolve names; they are not returned (never linted: the engine reports only on its
    targets).

    A directory that cannot be listed is skipped; ``errors`` (when given) receives
    ``(path, reason)`` for each, for the caller to warn about."""
    excluder = Excluder(root, exclude)
    found: set[str] = set()
    for p in paths:
        ap = os.path.abspath(p)
        if os.path.isfile(ap) or (os.path.lexists(ap) and not os.path.isdir(ap)):
            if force_exclude and _excluded_explicit(ap, root, excluder, respect_gitignore):
                continue
            found.add(ap)  # named explicitly: kept, and reported if it cannot be read
            continue
        if not os.path.isdir(ap):
            continue
        ignores = _ancestor_ignores(root, ap) if respect_gitignore else IgnoreStack()
        _walk(ap, ignores, excluder, respect_gitignore, suffixes, found, errors, packages)
    return sorted(found)


def _walk(directory, ignores, excluder, respect_gitignore, suffixes, found, errors=None, packages=False, hidden=False) -> None:
    """``hidden``: a package .gitignore hides (``packages``): only its modules and subpackages."""
    if respect_gitignore and not hidden:
        ignores = ignores.push(directory)
    try:
        entries = list(os.scandir(directory))
    except OSError as exc:
        if errors is not None:
            errors.append((directory, exc.strerror or str(exc)))
        return
    for entry in entries:
        path = entry.path
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            is_file = entry.is_file()
        except OSError as exc:
            if errors is not None:
                errors.append((path, exc.strerror or str(exc)))
            continue
        if is_dir:
            if excluder.excluded(path):
                continue
            if os.path.exists(os.path.join(path, "pyvenv.cfg")):
                continue  # a virtual environment
            if hidden or (respect_gitignore and ignores.ignored(path, True)):
                subpackage = os.path.exists(os.path.join(path, "__init__.py")) and os.path.exists(os.path.join(directory, "__init__.py"))
                if packages is not None and subpackage:
                    _walk(path, ignores, excluder, respect_gitignore, suffixes, packages, errors, packages, hidden=True)
                continue
            _walk(path, ignores, excluder, respect_gitignore, suffixes, found, errors, packages)
        elif is_file and entry.name.endswith(suffixes):
            if excluder.excluded(path):
                continue
            if hidden:
                if entry.name.endswith(".py"):
                    found.add(os.path.abspath(path))
                continue
            if respect_gitignore and ignores.ignored(path, False):
                continue
            found.add(os.path.abspath(path))


def _excluded_explicit(path: str, root: str, excluder: Excluder, respect_gitignore: bool) -> bool:
    """Whether an explicitly named file would have been skipped by a directory walk."""
    cur = path
    while True:
        if excluder.excluded(cur):
            return True
        parent = os.path.dirname(cur)
        if parent == cur or not os.path.abspath(parent).startswith(os.path.abspath(root)) or cur == root:
            break
        cur = parent
    if respect_gitignore:
        stack = _ancestor_ignores(root, os.path.dirname(path)).push(os.path.dirname(path))
        return stack.ignored(path, False)
    return False
