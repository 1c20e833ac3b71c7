"""Readers and writers for other tools' file formats (installed as ``glovev_ext.adapters``)."""
