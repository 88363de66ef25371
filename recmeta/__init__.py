"""recmeta: re-deriving and re-running papers on recommender-system evaluation."""

__version__ = "0.1.0"
