"""dllint: a linter for PyTorch data-loading code."""

__version__ = "0.1.0"
