"""Fixes that rewrite code, built with libcst; analysis stays on stdlib ``ast`` (dllint/facts/).

A rule decides *whether* a finding gets a fix from its facts (cheap, per file, cached); the code
here builds the fix *lazily*, in the rule's ``check``, only for the files that have such a finding:
it parses the file's text with libcst once per run (``cst.source_of(project, path)``), finds the
node by the position the facts recorded, transforms the module (matchers, ``deep_replace``,
``AddImportsVisitor`` for imports), and turns the difference between the old and the new text into
the minimal text edits (``cst.edits_between``). The rest of the pipeline (dllint/fix.py, JSON
output, the LSP code actions) keeps working on ``Edit``/``Fix`` text edits.

- ``cst.py``: parsing, finding nodes by position, edits from a transformed module
- ``keywords.py``: add / guard / remove a keyword argument (DL102, DL301, DL304)
- ``partial.py``: a lambda into ``functools.partial`` (DL103)
- ``lazy_open.py``: a handle opened in ``__init__`` into a per-process property (DL104)
- ``opencv.py``: ``cv2.setNumThreads(0)`` after ``import cv2`` (DL204)
- ``spawn.py``: when switching a loader to spawn is possible at all (DL301)
"""
