"""The ``nnkiln`` command line."""
