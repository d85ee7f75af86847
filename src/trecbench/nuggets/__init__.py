"""Nuggets: the model (`Nugget`, `TopicNuggets`) and nuggets files (ours, AutoNuggetizer's, TREC 2025's)."""
from trecbench.nuggets.io import read_nuggets, write_nuggets
from trecbench.nuggets.model import Nugget, TopicNuggets

__all__ = ["Nugget", "TopicNuggets", "read_nuggets", "write_nuggets"]
