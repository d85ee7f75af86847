"""Scores under a model judge's qrels corrected by people's grades of a sample: prediction-powered means,
intervals and run differences (docs/correction.md)."""
from __future__ import annotations

from .linear import Linear, linear_measure
from .ppi import Estimate, design_total, labels_for_width, p_value, ppi_mean
from .scores import Corrected, Correction, Design, Difference, correct, uniform_design
from .workspace import workspace_correction

corrected_scores = correct  # the name `trecbench` exports

__all__ = ["Corrected", "Correction", "Design", "Difference", "Estimate", "Linear", "correct", "corrected_scores",
           "design_total", "labels_for_width", "linear_measure", "p_value", "ppi_mean", "uniform_design",
           "workspace_correction"]
