"""Looking a position up in a built tablebase from Python (docs/reference/python.md); it
lives in pipeline/products/probe.py."""

from pipeline.products.probe import Move, Probe, get, probe

__all__ = ["Move", "Probe", "get", "probe"]
