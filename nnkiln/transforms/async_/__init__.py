"""Passes on the ``async`` level (L2)."""
