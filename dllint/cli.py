"""Command line: argument handling only; the work is done in engine, fix and report."""

from __future__ import annotations

import os
import sys

import click

from dllint import __version__

# Subcommands live in their own modules; each exposes a click command and imports nothing heavy
# (torch is imported inside the command, never at module import).
SUBCOMMAND_MODULES = {
    "check": "dllint.commands.check:check",
    "rule": "dllint.commands.rule:rule",
    "clean": "dllint.commands.clean:clean",
    "doctor": "dllint.doctor:doctor",
    "explain": "dllint.explain:explain",
    "probe": "dllint.probe:probe",
    "server": "dllint.server:server",
}


def _load(spec: str) -> click.Command | None:
    import importlib

    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:  # the module is not written yet / not installed
            return None
        raise
    return getattr(module, attr)


class DefaultGroup(click.Group):
    """``dllint PATHS`` means ``dllint check PATHS``, as plain ``ruff PATHS`` once did."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in SUBCOMMAND_MODULES if self.get_command(ctx, name) is not None]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = SUBCOMMAND_MODULES.get(cmd_name)
        return _load(spec) if spec else None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in SUBCOMMAND_MODULES:
            if not (args and args[0] in ("--help", "-h", "--version")):
                args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="dllint")
def cli() -> None:
    """dllint: find the DataLoader pitfalls in PyTorch training code, and fix what is provably safe.

    `dllint [PATHS]` checks files and directories (the `check` command).
    """


PROGRAM = False  # True when this process is the dllint program itself (``main()`` from the console script)


def main(argv: list[str] | None = None) -> None:
    global PROGRAM
    PROGRAM = argv is None
    try:
        try:
            _run(argv)
        except (KeyboardInterrupt, click.exceptions.Abort):  # Ctrl-C: 130, as shells report SIGINT
            click.echo("dllint: interrupted", err=True)
            sys.exit(130)
    except SystemExit as exc:
        if argv is None and _fast_exit_ok():
            _fast_exit(exc.code)
        raise
    except Exception as exc:  # an internal failure: a message naming the cause, exit 2
        click.echo(f"dllint: internal error: {type(exc).__name__}: {exc}", err=True)
        sys.exit(2)


def _run(argv: list[str] | None) -> None:
    """click's standalone handling, except that an interruption propagates (click would print
    "Aborted!" and exit 1, which reads as "findings remain")."""
    import errno

    try:
        code = cli.main(args=argv, prog_name="dllint", standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except OSError as exc:
        if exc.errno == errno.EPIPE:  # output piped into a command that stopped reading (`| head`)
            sys.stdout = click.utils.PacifyFlushWrapper(sys.stdout)
            sys.stderr = click.utils.PacifyFlushWrapper(sys.stderr)
            sys.exit(1)
        raise
    sys.exit(code if isinstance(code, int) else 0)


def _fast_exit_ok() -> bool:
    """Whether this process ran ``check`` (its process pool is shut down before it exits), and
    no profiler or tracer (cProfile, coverage) waits to write its results at exit."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return False
    module = sys.modules.get("dllint.commands.check")
    return bool(module is not None and getattr(module, "FINISHED", False))


def _fast_exit(code) -> None:
    """Leave without freeing every object one by one: after a big run the interpreter's teardown
    (a last full collection, then millions of deallocations) took 0.6 s of a 4 s run on
    a large ML repository. Only for the program itself (``argv is None``), never inside a host
    process; output is flushed first, and the cache and fixes are written before this point."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message"): printed, status 1
        print(code, file=sys.stderr)
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(status)
