"""Passes on the ``tosa`` level (level 3)."""
