"""Analyses shared by passes (liveness)."""
