"""Conformance vectors: requests to the RulesEngine with the answers it must give.

`generate.py` (`python -m tools.conformance.generate`, `make conformance`) writes
tests/conformance/; tests/conformance/README.md says how another implementation uses them.
"""
