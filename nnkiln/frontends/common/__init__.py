"""Helpers every frontend shares: the graph builder, rank broadcasting, layouts, padding, quantization."""
