import os
import sys

# ``python -m dllint`` puts the working folder first on ``sys.path``: a project's own
# ``logging.py`` or ``signal/`` would be imported in place of the standard library's, and the run
# end in an internal error (dllint reads a project, it never imports it). The ``dllint`` command
# does not: its first entry is the folder of its script.
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from dllint.cli import main  # noqa: E402

main()
