"""The engine's sealing is randomized.

A sealed Attack-at-Dawn array used to seal to the same ciphertext in every game (the nonce
was derived from the array), so a ciphertext seen once recognised the same array in any
other game. Now every seal has a random nonce; arrays sealed the old way still open.
"""

from __future__ import annotations

import hmac
from dataclasses import replace

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from engine_service.rules.napoleonic import NapoleonicRuleset
from engine_service.rules.napoleonic.deployment import Sealer, read_placements
from engine_service.rules.napoleonic.setup import canonical_array_text
from engine_service.rules.napoleonic.state import NapoleonicState, Phase

KEY = bytes(range(32))
RULESET = NapoleonicRuleset(seal_key=KEY)
RED = "a2=A b2=C c2=C e2=G f2=C g2=C h2=A a3=I b3=I c3=I d3=I e3=I f3=I g3=I h3=I"
BLACK = "a7=C b7=C c7=I d7=I e7=I f7=I g7=C h7=C a6=I b6=I c6=A d6=G e6=I f6=A g6=I"


def _dawn() -> NapoleonicState:
    options = {"scenario": "attack_at_dawn", "attack_at_dawn_mode": "sealed"}
    state: NapoleonicState = RULESET.new_game(RULESET.resolve_options(options))
    assert state.phase is Phase.DEPLOY_SEALED
    return state


def _sealed(state: NapoleonicState, side: str, array: str) -> bytes:
    after = RULESET.play(state, RULESET.parse_action(state, f"seal {array}", side))
    assert after.deployment is not None
    return dict(after.deployment.sealed)[side]


def test_the_same_array_seals_differently_every_time() -> None:
    seen = {_sealed(_dawn(), "red", RED) for _ in range(20)}
    assert len(seen) == 20


def test_an_array_sealed_the_old_way_still_opens() -> None:
    # The nonce used to be HMAC(key', context | padded plaintext), cut to 12 bytes.
    state = _dawn()
    context = Sealer._context(state, "red")
    plaintext = Sealer._padded(state, "red", canonical_array_text(read_placements(RED)))
    nonce_key = hmac.new(KEY, b"wargame napoleonic seal v1 nonce", "sha256").digest()
    nonce = hmac.new(nonce_key, context + b"|" + plaintext, "sha256").digest()[:12]
    aead = AESGCM(hmac.new(KEY, b"wargame napoleonic seal v1 key", "sha256").digest())
    old = nonce + aead.encrypt(nonce, plaintext, context)
    assert state.deployment is not None
    sealed = state.evolve(deployment=replace(state.deployment, sealed=(("red", old),)))
    laid_out = RULESET.play(sealed, RULESET.parse_action(sealed, f"seal {BLACK}", "black"))
    assert laid_out.phase is Phase.MOVEMENT
    red = {laid_out.geo.names[u.cell]: u.kind for u in laid_out.units if u.side == "red"}
    assert red == dict(read_placements(RED))
