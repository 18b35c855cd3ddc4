"""``dllint check [PATHS]`` (also plain ``dllint [PATHS]``)."""

from __future__ import annotations

import os
import sys
from dataclasses import replace

import click

from dllint.config import ConfigError, Overrides, Settings, find_config, is_packaged, load_settings, split_csv, TARGET_VERSIONS
from dllint.discover import discover
from dllint.program.layout import find_project_root, scope_root
from dllint.engine import Engine
from dllint.facts.extract import decode_source
from dllint.fix import NOT_WATCHED, fix_loop, fixed_bytes, unified_diff, write_fixes
from dllint.report import FORMATS, MACHINE_FORMATS, ReportContext, render
from dllint.report.statistics import attach_sources, render_fixes, render_statistics
from dllint.rules import all_rules
from dllint.textutil import display_path

FINISHED = False  # set once check runs: the program may then leave without teardown


def fail(message: str) -> None:
    click.echo(f"dllint: error: {message}", err=True)
    sys.exit(2)


def project_scope(paths: list[str]) -> tuple[str, bool]:
    """(root, bounded): the project root holding a marker (pyproject.toml, setup.py, setup.cfg,
    .git), or, with no marker, the folder the named paths share and False: only the named paths
    and what they import are read then."""
    root = find_project_root(paths or ["."])
    if root is None:
        return scope_root(paths or ["."]), False
    return root, True


def load_configuration(paths: list[str], config: str | None, overrides: Overrides) -> tuple[Settings, str]:
    """(settings, project root) for a run over ``paths``."""
    root, _bounded = project_scope(paths)
    codes = [r.code for r in all_rules()]
    if config:
        if not os.path.isfile(config):
            raise ConfigError(f"config file not found: {config}")
        _, nearest = find_config(os.path.dirname(os.path.abspath(config)))
        settings = load_settings(os.path.abspath(config), codes, nearest)
    else:
        start = paths[0] if paths else "."
        found, nearest = find_config(start)
        settings = load_settings(found, codes, nearest)
    if _bounded and is_packaged(root):
        settings = replace(settings, packaged=True)
    return overrides.apply(settings, codes), root


# output formats that never show a fix's edits (text marks a fixable finding with `[*]`)
EDITLESS_FORMATS = frozenset({"text", "concise", "github"})


def enabled_codes(settings: Settings) -> set[str]:
    rules = all_rules()
    return settings.enabled([r.code for r in rules], {r.code for r in rules if r.default})


def watched_codes(enabled: set[str]) -> frozenset[str]:
    """The rules that run during ``--fix`` / ``--diff`` only to check that no fix adds a finding:
    every rule that is on by default, whatever the selection (a selected rule runs anyway)."""
    return frozenset(r.code for r in all_rules() if r.default) - set(enabled) - NOT_WATCHED


def not_applied(diagnostics, withheld: dict) -> list:
    """Findings whose fix ``--fix`` withheld (it would add a finding, not parse, or not fit a
    notebook): the message says why, and the fix is shown as a suggestion only, never as fixable."""
    out = []
    for d in diagnostics:
        why = withheld.get((d.path, d.code, d.span.row, d.span.col))
        if d.fix is not None and d.fix.applicability != "display" and why is not None:
            d = replace(
                d,
                message=f"{d.message} (fix withheld: {why})",
                fix=replace(d.fix, applicability="display", message=f"{d.fix.message} (withheld: {why})"),
            )
        out.append(d)
    return out


def notebook_diff(shown: str, before, after: bytes) -> list[str]:
    """A notebook's changes as ruff prints them: one unified diff per changed code cell, headed
    ``nb.ipynb:cell N``, of the cells' own text (IPython lines as they are)."""
    from dllint.notebook import cell_diffs

    return [unified_diff(f"{shown}:cell {number}", old, new) for number, old, new in cell_diffs(before, after)]


def open_cache(root: str, cache_dir: str | None):
    """The fact cache for a project root (None when it cannot be used)."""
    from dllint.cache import FactCache, default_cache_dir

    try:
        return FactCache(os.path.abspath(cache_dir) if cache_dir else default_cache_dir(root))
    except OSError:
        return None



def use_color() -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


@click.command(short_help="Check files and directories for DataLoader pitfalls.")
# readable=False: an unreadable file is a DL000 finding like any other, not a usage error
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@click.option("--fix/--no-fix", default=False, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply (and show as fixable) unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the unified diff of the fixes; write nothing.")
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (DL1, DL101, ALL); replaces the configured set.")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable on top of the selection.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--config", "config_path", type=click.Path(), help="Path to a pyproject.toml to read [tool.dllint] from.")
@click.option("--target-version", type=click.Choice(TARGET_VERSIONS), help="Lowest Python version the code runs on.")
@click.option("--output-format", type=click.Choice(sorted(FORMATS)), default="text", show_default=True)
@click.option("--stdin-filename", help="The path of the file read from standard input (`-`).")
@click.option("--exclude", multiple=True, help="Glob patterns to exclude (replaces the defaults).")
@click.option("--extend-exclude", multiple=True, help="Glob patterns to exclude on top of the defaults.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes and .gitignore to files named explicitly too.")
@click.option("--jobs", type=int, default=None, help="Processes for per-file analysis (default: all cores).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("--statistics", is_flag=True, help="Print the number of findings per rule instead of the findings.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when --fix changed anything, even if no finding remains.")
@click.option("--show-fixes", is_flag=True, help="With --fix: list what was fixed, per file.")
@click.option("--add-noqa", is_flag=True, help="Write `# noqa: CODE` on every line with a finding (adopt dllint gradually).")
@click.option("--no-cache", is_flag=True, envvar="DLLINT_NO_CACHE", help="Do not read or write the cache (.dllint_cache/ under the project root).")
@click.option("--cache-dir", type=click.Path(file_okay=False), envvar="DLLINT_CACHE_DIR", help="Cache directory (default: .dllint_cache/ under the project root).")
@click.option("--no-prefilter", is_flag=True, hidden=True, help="Parse every file (debugging: the pre-filter must not change findings).")
def check(paths, fix, unsafe_fixes, diff, select, extend_select, ignore, exit_zero, config_path, target_version,
          output_format, stdin_filename, exclude, extend_exclude, force_exclude, jobs, quiet,
          statistics=False, exit_non_zero_on_fix=False, show_fixes=False, add_noqa=False,
          no_cache=False, cache_dir=None, no_prefilter=False):
    """Check PATHS (files or directories, default `.`) for DataLoader pitfalls."""
    global FINISHED
    FINISHED = True  # its exits may skip the interpreter's teardown (dllint.cli._fast_exit)
    from dllint import cli as _cli

    if _cli.PROGRAM:
        # the engine pauses the cyclic garbage collector during a run (Engine.analyse); in the
        # program it stays paused to the end: the objects a run allocated are all still young
        # then, and the first collection after it resumed scanned them all just before the
        # process exits (NeMo, an edited file: one 1.1 s collection of a 9 s run)
        import gc

        gc.disable()
    paths = list(paths) or ["."]
    stdin_data = None
    if "-" in paths:
        if len(paths) > 1:
            fail("`-` (standard input) cannot be combined with other paths")
        stdin_data = sys.stdin.buffer.read()
        paths = [os.path.abspath(stdin_filename or "stdin.py")]
    else:
        missing = [p for p in paths if not os.path.lexists(p)]
        if missing:
            fail(f"path does not exist: {missing[0]}")
    for option, values in (("--select", select), ("--extend-select", extend_select), ("--ignore", ignore)):
        if values and any(not v.strip(" ,") for v in values):  # `--select ""` would turn every rule off
            fail(f"empty rule selector in `{option}` (give codes or prefixes: DL101, DL1, ALL)")
    overrides = Overrides(
        select=split_csv(select) if select else None,
        extend_select=split_csv(extend_select),
        ignore=split_csv(ignore),
        target_version=target_version,
        exclude=split_csv(exclude) if exclude else None,
        extend_exclude=split_csv(extend_exclude),
    )
    try:
        settings, root = load_configuration(paths, config_path, overrides)
    except ConfigError as exc:
        fail(str(exc))
    for warning in settings.ineffective():
        click.echo(f"dllint: warning: {warning}", err=True)
    enabled = enabled_codes(settings)
    _root, bounded = project_scope(paths)
    engine = Engine(settings, root, jobs=jobs, cache=None if no_cache else open_cache(root, cache_dir), bounded=bounded)
    if no_prefilter:
        engine.prefilter = False
    engine.reuse_results = not (fix or diff or add_noqa)  # fixing needs the facts and the sources
    # the formats that print a fix's edits (and fixing itself) need them; the others show only
    # whether a fix exists
    engine.edits = fix or diff or add_noqa or output_format not in EDITLESS_FORMATS
    if stdin_data is not None:
        targets = paths
        base_overlay = {paths[0]: stdin_data}
        explicit = set(paths)
    else:
        warned: set[str] = set()

        def find_targets() -> list[str]:
            errors: list[tuple[str, str]] = []
            hidden: set[str] = set()  # subpackages .gitignore hides: imported, never linted
            found = discover(paths, root, settings.all_excludes, settings.respect_gitignore, force_exclude=force_exclude, errors=errors, packages=hidden)
            for where, why in errors:  # skipped, but never without a word (as ruff does)
                if where not in warned:
                    warned.add(where)
                    click.echo(f"dllint: warning: cannot read directory {display_path(where)}: {why}; skipped", err=True)
            if [os.path.abspath(p) for p in paths] == [root]:
                engine.root_files = sorted({*found, *hidden})  # the same walk the engine would make of the project
            return found

        targets = find_targets()
        base_overlay = {}
        explicit = {os.path.abspath(p) for p in paths if not os.path.isdir(p)} & set(targets)
        if not targets:  # as ruff: say so instead of "All checks passed!" over nothing
            click.echo("dllint: warning: No Python files found under the given path(s)", err=True)

    told: set[str] = set()

    def analyse(overlay, watch=frozenset()):
        try:
            analysis = engine.analyse(targets, enabled, {**base_overlay, **overlay}, explicit, watch)
        except Exception as exc:
            cache = engine.cache
            if cache is None or not cache.served or not cache.read_enabled:
                raise
            # the cache can only make a run faster: data read from it that a rule cannot use
            # (a damaged or crafted .dllint_cache/) means the run is made again without reading it
            click.echo(
                f"dllint: warning: the cache {display_path(cache.directory)} gave data dllint cannot use "
                f"({type(exc).__name__}); analysed again without reading it (`dllint clean` removes it)",
                err=True,
            )
            cache.read_enabled = False
            analysis = engine.analyse(targets, enabled, {**base_overlay, **overlay}, explicit, watch)
        for warning in [*(engine.cache.warnings() if engine.cache is not None else ()), *analysis.notes]:
            if warning not in told:  # (once: --fix analyses again after each pass)
                told.add(warning)
                click.echo(f"dllint: warning: {warning}", err=True)
        return analysis

    if add_noqa:
        if fix or diff or stdin_data is not None:
            fail("--add-noqa cannot be combined with --fix, --diff or standard input")
        from dllint.noqa_edit import add_noqa_to_files

        added, files, warnings = add_noqa_to_files(analyse({}))
        for warning in warnings:
            click.echo(f"dllint: warning: {warning}", err=True)
        click.echo(f"Added {added} noqa directive{'s' if added != 1 else ''} in {files} file{'s' if files != 1 else ''}.", err=True)
        sys.exit(0)

    ctx = ReportContext(unsafe_fixes=unsafe_fixes, color=use_color(), output_format=output_format, show_summary=not quiet)
    if fix or diff:
        watch = watched_codes(enabled)
        result, analysis = fix_loop(lambda overlay: analyse(overlay, watch), unsafe_fixes, ctx.display_path)
        for failure in result.failures:
            click.echo(f"dllint: warning: {failure}", err=True)
        analysis.diagnostics = not_applied(analysis.diagnostics, result.withheld)
        if diff:
            out = []
            for path in sorted(result.fixed):
                if path in result.notebooks:  # each changed cell, in its own text
                    out.extend(notebook_diff(ctx.display_path(path), result.notebook_originals[path], result.notebooks[path]))
                    continue
                before = decode_source(result.originals[path])
                out.append(unified_diff(ctx.display_path(path), before, result.fixed[path]))
            text = "".join(out)
            click.echo(text, nl=False)
            n = len(result.applied)
            click.echo(f"Would fix {n} error{'s' if n != 1 else ''}." if n else "No errors would be fixed.", err=True)
            sys.exit(1 if text else 0)
        if stdin_data is not None:
            # bytes: what is not fixed comes back byte for byte, in the input's encoding
            out = fixed_bytes(result, paths[0]) if paths[0] in result.fixed else stdin_data
            sys.stdout.flush()
            stream = click.get_binary_stream("stdout")
            stream.write(out)
            stream.flush()
            ctx.fix_applied = len(result.applied)
            if show_fixes:
                click.echo(render_fixes(result.applied, ctx), nl=False, err=True)
            attach_sources(ctx, analysis)
            report = render("text" if output_format in ("text", "concise") else output_format, analysis.diagnostics, ctx)
            click.echo(report, nl=False, err=True)
            if exit_non_zero_on_fix and result.applied and not exit_zero:
                sys.exit(1)
            sys.exit(0 if exit_zero or not analysis.diagnostics else 1)
        skipped = write_fixes(result)
        for path, why in sorted(skipped.items()):
            click.echo(f"dllint: warning: {ctx.display_path(path)}: not fixed: {why}", err=True)
        if skipped:  # report what is on disk now: those files' findings remain
            result.applied = [d for d in result.applied if d.path not in skipped]
            targets = find_targets()
            explicit &= set(targets)
            analysis = analyse({})
        ctx.fix_applied = len(result.applied)
        if show_fixes:  # machine formats keep standard output to themselves
            click.echo(render_fixes(result.applied, ctx), nl=False, err=output_format in MACHINE_FORMATS)
    else:
        analysis = analyse({})
    if statistics:
        click.echo(render_statistics(analysis.diagnostics, ctx), nl=False)
    else:
        attach_sources(ctx, analysis)
        click.echo(render(output_format, analysis.diagnostics, ctx), nl=False)
    if exit_zero:
        sys.exit(0)
    if exit_non_zero_on_fix and ctx.fix_applied:
        sys.exit(1)
    sys.exit(1 if analysis.diagnostics else 0)
