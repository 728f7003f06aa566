"""Passes on the ``buf`` level (L2)."""
