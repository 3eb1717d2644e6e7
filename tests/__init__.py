"""The wargame test suite. Loaded first, before gRPC: the pool tests fork in the test
process, as the engine does, so gRPC's fork handlers are off here too."""

from wargame.runtime.config import no_grpc_fork_handlers

no_grpc_fork_handlers()
