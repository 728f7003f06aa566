"""L0, the blob: its format (``format``), writer (``writer``), validating reader (``reader``) and description
(``inspect``). No xDSL and nothing of the compiler: the runtime imports this package. The specification is
``docs/blob-format.md``; the translation of an ``rt``-level module is ``nnkiln.conversion.rt_to_blob``."""
