"""Conversions between levels: ``tosa-to-buf``, ``wrap-into-async-regions``, ``async-to-rt``."""
