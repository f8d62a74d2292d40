"""Game parameters, where plug-ins import them (docs/how-to/write-a-game.md); they live in
pipeline/core/params.py."""

from pipeline.core.params import BoolParam, ChoiceParam, IntParam, Param, TextParam

__all__ = ["BoolParam", "ChoiceParam", "IntParam", "Param", "TextParam"]
