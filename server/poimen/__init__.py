"""poimen: remembers how software failures were fixed."""

__version__ = "0.1.0"
