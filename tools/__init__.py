"""Developer tools run from the repository root (`python -m tools.<name>`).

Where things are:

- `conformance/`  the conformance vectors of tests/conformance, written from the engine
- `ladder/`       the bot ladder: the levels' strength in Elo (`make ladder`)
- `mutate/`       mutation testing (`make mutate`)
- `paired.py`     `make test` in two clones at once beside a CPU hog (`make test-paired`)
"""
