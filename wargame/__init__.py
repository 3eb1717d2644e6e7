"""The wargame client library: the generated `wargame.v1` API and the shared gRPC plumbing.

Both services and the CLI depend on this package and on nothing of each other:
`wargame.v1` is generated from `proto/` (`make proto`); `wargame.runtime` holds logging,
configuration, error statuses and server lifecycle, written once.
"""
