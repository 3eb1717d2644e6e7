"""Shared runtime for the services and the CLI: logs, configuration, errors, serving."""
