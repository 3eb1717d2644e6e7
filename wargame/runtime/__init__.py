"""Shared runtime for the services and the CLI: logs, configuration, errors, serving.

Each piece is written once here and used by both services (and the CLI where it applies).
Where things are:

- `config.py`      command-line configuration: every flag has a `WARGAME_*` variable
- `logs.py`        structlog: JSON lines in services, key=value lines on a terminal
- `refusal.py`     one refusal for both services: status code, contract reason, message
- `calls.py`       what both services' call handlers share: metrics, request ids, times
- `status.py`      rich gRPC error statuses (`google.rpc.Status` with details), both ways
- `quoting.py`     quoting what a client sent, briefly: refusals never echo a whole input
- `serving.py`     server lifecycle: bind, health checking, reflection, graceful shutdown
- `reflection.py`  gRPC server reflection (`grpc.reflection.v1` and `v1alpha`)
- `tls.py`         transport security: TLS for both gRPC servers and every client
- `collection.py`  full garbage collections on a clock (a server holding many streams)
"""
