"""The package version, read by pyproject.toml and recorded in every saved model's metadata."""

__version__ = "0.3.0"
