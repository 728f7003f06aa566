"""Analyses shared by passes (liveness, batch axes)."""
