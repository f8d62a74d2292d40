"""Game parameters, where plug-ins import them (README, "Writing your own game"); they live in
pipeline/core/params.py."""

from pipeline.core.params import BoolParam, ChoiceParam, IntParam, Param, TextParam

__all__ = ["BoolParam", "ChoiceParam", "IntParam", "Param", "TextParam"]
