"""``dllint clean``: remove the cache directory."""

from __future__ import annotations

import os
import shutil

import click

CACHE_DIR = ".dllint_cache"


@click.command(short_help="Remove the .dllint_cache directory.")
@click.argument("path", required=False, default=".")
def clean(path):
    """Remove the .dllint_cache directory under PATH (default: the current directory)."""
    target = os.path.join(path, CACHE_DIR)
    if os.path.isdir(target):
        shutil.rmtree(target)
        click.echo(f"Removed {target}")
    else:
        click.echo(f"No cache at {target}")
