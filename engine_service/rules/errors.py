"""The one exception the rules refuse something with, and its reasons.

`Reason` is the contract's `wargame.v1.ErrorReason`, written once in `wargame/reasons.py`;
the rules raise only its rules' reasons (below 100 in the contract:
`tests/wargame/test_refusal.py` checks every one the rules name).
"""

from __future__ import annotations

from wargame.reasons import Reason

__all__ = ["Reason", "RuleError"]


class RuleError(Exception):
    """Something the rules refuse, with a reason code and a message naming the rule.

    The message says the rule in words ("a Troop jumps only diagonally forward"); where
    the specification rules it is `rule`, its section ("7.6"; several: "7.3, 7.7"); what
    would be legal instead is `alternatives` (notations), and how actions are written
    `accepted` (for text that is no action). The service sends those three as details beside the
    message (errors.proto), so a player reads one sentence and gets the rest when asked.
    `index` is the position of the offending item when a request carries several
    (actions of one atomic batch, entries of a declaration); `field` names the offending
    part of the input where there is one ("options.compulsion", "state.pieces[3]").
    `logged` is what the service's log says instead of the message when the message tells
    its sender a secret of its own (the squares of a hidden array): None, the message.
    """

    def __init__(
        self,
        reason: Reason,
        message: str,
        *,
        index: int | None = None,
        field: str | None = None,
        rule: str = "",
        alternatives: tuple[str, ...] = (),
        accepted: str = "",
        logged: str | None = None,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.logged = logged
        self.index = index
        self.field = field
        self.rule = rule
        self.alternatives = alternatives
        self.accepted = accepted

    def at(self, index: int) -> RuleError:
        """The same error, placed at item `index` of a batch (keeps an inner index)."""
        if self.index is None:
            self.index = index
        return self

    def __repr__(self) -> str:
        return f"RuleError({self.reason.value}, {self.message!r})"
