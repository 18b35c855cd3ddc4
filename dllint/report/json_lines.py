"""``--output-format json-lines``: one JSON object per line, each shaped like an item of ``json``."""

from __future__ import annotations

import json

from dllint.report.json import to_dict


def render(diagnostics, ctx) -> str:
    return "".join(json.dumps(to_dict(d, ctx)) + "\n" for d in diagnostics)
