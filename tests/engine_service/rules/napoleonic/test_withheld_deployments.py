"""A server's copy of a secret deployment (10.1) withholds the other players' arrays: from
such a copy the arrays cannot be laid out. Applying the last reveal or seal to it is
refused, naming what is withheld; `play` (an AI writing its line) notes the action as
withheld too and lays nothing out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from engine_service.rules.errors import Reason, RuleError
from engine_service.rules.napoleonic import NapoleonicRuleset
from engine_service.rules.napoleonic.state import NapoleonicState, Phase
from tests.engine_service.rules.napoleonic.helpers import RULESET, SEALED_RULESET, play_text
from tests.engine_service.rules.napoleonic.test_deployment import (
    BLACK,
    RED,
    SALT,
    SALT2,
    committed,
    dawn,
)

REFUSAL = (
    "this copy of the state withholds red's deployment, so the arrays cannot be laid out "
    "from it; send the whole state"
)


def red_revealed_withheld() -> NapoleonicState:
    state, _events = play_text(RULESET, committed(), [f"red reveal {RED} salt {SALT.hex()}"])
    assert state.deployment is not None
    withheld = replace(state.deployment, reveals=(("red", ()),), withheld=frozenset({"red"}))
    return state.evolve(deployment=withheld)


def red_sealed_withheld() -> NapoleonicState:
    state = dawn(SEALED_RULESET, attack_at_dawn_mode="sealed")
    state, _events = play_text(SEALED_RULESET, state, [f"red seal {RED}"])
    assert state.deployment is not None
    withheld = replace(state.deployment, sealed=(("red", b""),), withheld=frozenset({"red"}))
    return state.evolve(deployment=withheld)


@pytest.mark.parametrize(
    ("ruleset", "copy", "last"),
    [
        (RULESET, red_revealed_withheld, f"reveal {BLACK} salt {SALT2.hex()}"),
        (SEALED_RULESET, red_sealed_withheld, f"seal {BLACK}"),
    ],
)
def test_10_1_the_last_array_cannot_be_laid_out_from_a_withholding_copy(
    ruleset: NapoleonicRuleset, copy: Callable[[], NapoleonicState], last: str
) -> None:
    state = copy()
    assert ruleset.check_state(state) == [] and state.deployment is not None
    action = ruleset.parse_action(state, last, "black")
    with pytest.raises(RuleError) as error:
        ruleset.apply(state, action)
    assert (error.value.reason, error.value.message, error.value.field) == (
        Reason.INVALID_STATE,
        REFUSAL,
        "state",
    )
    noted = ruleset.play(state, action)
    assert noted.phase is state.phase and noted.units == ()
    assert noted.deployment is not None
    assert noted.deployment.withheld == {"red", "black"}
    entries = noted.deployment.reveals or noted.deployment.sealed
    assert [player for player, _entry in entries] == ["red", "black"]
    assert not any(entry for _player, entry in entries)
    assert noted.deployment.commitments == state.deployment.commitments
    assert noted.phase in (Phase.DEPLOY_REVEAL, Phase.DEPLOY_SEALED)
