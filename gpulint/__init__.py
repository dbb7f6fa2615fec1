"""gpulint: a static linter for Kubernetes GPU scheduling."""

__version__ = "0.1.0"
