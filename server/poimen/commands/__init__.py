"""`mem` subcommands: each module defines `register(app)`."""
