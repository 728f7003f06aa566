"""Passes on the ``rt`` level (L1)."""
