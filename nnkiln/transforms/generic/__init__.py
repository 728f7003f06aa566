"""Dialect-independent passes (canonicalize, cse, dce) built on xDSL's rewriting engine."""
