"""The wargame client library: the generated `wargame.v1` API and the shared gRPC plumbing.

Both services and the CLI depend on this package and on nothing of each other:
`v1/` is `wargame.v1`, generated from `proto/` (`make proto`; never edited by hand);
`runtime/` holds logging, configuration, error statuses and server lifecycle, written once;
`reasons.py` every reason a request is refused for (the contract's ErrorReason, once);
`position_text.py` the grammar every position text shares (docs/positions.md), which the
engine writes and reads and the matchmaker splits to withhold secrets.
"""
