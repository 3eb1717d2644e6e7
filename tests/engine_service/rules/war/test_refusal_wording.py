"""The Game of War's refusals, word for word: each rule an illegal action breaks is named.

A refused action's explanation is what a player reads (section 2: helpful refusals), so
its wording, the reason, the rule's section and the alternatives offered are the product;
each case below is one branch of `engine_service.rules.war.explain`, pinned exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from engine_service.rules.errors import RuleError

from .helpers import RULES, options, position


@dataclass(frozen=True)
class Refusal:
    """An illegal action in a position, and its refusal: reason, rule, message, alternatives.

    `alternatives` is the whole listing when it is short, else how many there are.
    """

    name: str
    men: str
    text: str
    reason: str
    rule: str
    message: str
    alternatives: tuple[str, ...] | int
    opts: dict[str, str] = field(default_factory=dict)
    side: str = "S"
    reserves: str = "-:-"
    extra: str = ""


REFUSALS = [
    Refusal(
        "huff_off",
        "Te5 td6 Ka1 ka10",
        "huff e5 a1-a2",
        "ILLEGAL_ACTION",
        "",
        (
            "huffing belongs to compulsion = huff; this game uses compulsion = legality; the "
            "South King on a1 has no legal move"
        ),
        ("e5xd6", "e5:c7"),
    ),
    Refusal(
        "huff_none",
        "Te3 td6 Ka1 ka10",
        "huff e3 a1-a2",
        "ILLEGAL_ACTION",
        "",
        "no Troop on e3 may be huffed now (huffable: nothing)",
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
        opts={"compulsion": "huff"},
    ),
    Refusal(
        "no_reserve",
        "Ka1 ka10",
        "F@e5",
        "NO_FLYING_MACHINE_LEFT",
        "8.3",
        "South has no Flying Machine left in reserve",
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
    ),
    Refusal(
        "first_turn",
        "Ka1 ka10",
        "F@e5",
        "PLACEMENT_FORBIDDEN",
        "",
        ("no Flying Machine may be placed on a side's first turn (placement_first_turn = false)"),
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
        opts={"placement_first_turn": "false"},
        reserves="F:f",
    ),
    Refusal(
        "on_citadel",
        "Ka1 ka10",
        "F@f1",
        "PLACEMENT_FORBIDDEN",
        "8.2",
        "a Flying Machine is never placed on a Citadel (f1 and f10)",
        99,
        reserves="F:f",
    ),
    Refusal(
        "occupied",
        "Ka1 ka10 Te5",
        "F@e5",
        "PLACEMENT_FORBIDDEN",
        "8.2",
        "e5 is occupied by the South Troop: a Flying Machine goes on an empty square",
        99,
        reserves="F:f",
    ),
    Refusal(
        "place_compulsory",
        "Tc5 td6 Ka1 ka10",
        "F@e8",
        "CAPTURE_COMPULSORY",
        "7.1",
        "South must capture an exposed North man (d6) by any piece or method",
        ("c5xd6", "c5:e7"),
        reserves="F:f",
    ),
    Refusal(
        "place_and_move",
        "Ka1 ka10",
        "F@e5 a1-a2",
        "ILLEGAL_ACTION",
        "",
        "placing a Flying Machine is the whole turn (placement_uses_turn = true)",
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
        reserves="F:f",
    ),
    Refusal(
        "place_no_move",
        "Ka1 ka10",
        "F@e5",
        "ILLEGAL_ACTION",
        "",
        (
            "after placing a Flying Machine the turn goes on with a move (placement_uses_turn = "
            "false), e.g. F@e5 d2-d4"
        ),
        288,
        opts={"placement_uses_turn": "false"},
        reserves="F:f",
    ),
    Refusal(
        "pass_off",
        "Ka1 ka10",
        "pass",
        "PASSING_NOT_ALLOWED",
        "4",
        "passing is not allowed",
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
    ),
    Refusal(
        "pass_compulsory",
        "Tc5 td6 Ka1 ka10",
        "pass",
        "CAPTURE_COMPULSORY",
        "7.1",
        "South must capture an exposed North man (d6) by any piece or method",
        ("c5xd6", "c5:e7"),
        opts={"passing_allowed": "true"},
    ),
    Refusal(
        "no_man",
        "Ka1 ka10",
        "b2-b3",
        "NO_PIECE",
        "",
        "there is no man on b2",
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
    ),
    Refusal(
        "enemy_man",
        "Ka1 ka10 tc5",
        "c5-c4",
        "NO_PIECE",
        "",
        (
            "the North Troop on c5 is not South's; South is to move; the North Troop on c5 has "
            "no legal move"
        ),
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
    ),
    Refusal(
        "fm_moves",
        "Ka1 ka10 Fe5",
        "e5-e6",
        "PIECE_IMMOBILE",
        "8.3",
        ("a placed Flying Machine never moves; the South Flying Machine on e5 has no legal move"),
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
    ),
    Refusal(
        "final_rank",
        "Tc10 Ka1 ka5",
        "c10-c9",
        "PIECE_IMMOBILE",
        "7.8",
        (
            "the Troop on c10 has reached its final rank and stays there for good; the South "
            "Troop on c10 has no legal move"
        ),
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
    ),
    Refusal(
        "compulsion_move",
        "Tc5 td6 Ka1 ka10",
        "Ka1-a2",
        "CAPTURE_COMPULSORY",
        "7.1",
        "South must capture an exposed North man (d6) by any piece or method",
        ("c5xd6", "c5:e7"),
    ),
    Refusal(
        "longest",
        "Ta3 tb4 td6 Tj3 ti4 Kf1 kf10",
        "j3:h5",
        "ILLEGAL_ACTION",
        "",
        (
            "a jump chain must capture as many men as the longest available (2; "
            "longest_jump_required = true)"
        ),
        ("j3xi4",),
        opts={"longest_jump_required": "true"},
    ),
    Refusal(
        "chain_incomplete",
        "Ta3 tb4 td6 Kj1 kj10",
        "a3:c5",
        "JUMP_CHAIN_INCOMPLETE",
        "7.5",
        "the Troop on a3 must continue its jump chain",
        ("a3:c5:e7",),
    ),
    Refusal(
        "troop_long",
        "Ta3 Kj1 kj10",
        "a3:c5:e7",
        "ILLEGAL_MOVE_GEOMETRY",
        "",
        "no jump chain of this Troop goes that way",
        ("a3-a4", "a3-a5"),
    ),
    Refusal(
        "king_long",
        "Ka1 kj10",
        "Ka1:a2:a3",
        "ILLEGAL_MOVE_GEOMETRY",
        "",
        "only a Troop's jump chain has several landing squares",
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
    ),
    Refusal(
        "own_occupied",
        "Ma1 Ta2 Kj1 kj10",
        "Ma1-a2",
        "DESTINATION_OCCUPIED",
        "",
        "a2 is occupied by South's own Troop",
        ("Ma1-b1", "Ma1-c1", "Ma1-d1", "Ma1-e1", "Ma1-f1", "Ma1-g1", "Ma1-h1", "Ma1-i1"),
    ),
    Refusal(
        "king_geom",
        "Ka1 kj10",
        "Ka1-a3",
        "ILLEGAL_MOVE_GEOMETRY",
        "6",
        "the South King on a1 cannot go to a3: a King steps one square in any direction",
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
    ),
    Refusal(
        "horse_geom",
        "Hb1 Ka1 kj10",
        "Hb1-b3",
        "ILLEGAL_MOVE_GEOMETRY",
        "6",
        "the South Horse on b1 cannot go to b3: a Horse leaps like a chess knight",
        ("Hb1-c3", "Hb1-d2", "Hb1-a3"),
    ),
    Refusal(
        "horse_over_fm",
        "Hb1 Fb2 Ka1 kj10",
        "Hb1-c3",
        "PATH_BLOCKED",
        "6",
        (
            "the South Horse on b1 cannot go to c3: a Flying Machine lies under the leap "
            "(horse_leaps_flying_machine = false)"
        ),
        ("Hb1-d2",),
        opts={"horse_leaps_flying_machine": "false"},
    ),
    Refusal(
        "general_geom",
        "Ge1 Ka1 kj10",
        "Ge1-f3",
        "ILLEGAL_MOVE_GEOMETRY",
        "6",
        (
            "the South General on e1 cannot go to f3: a General moves any distance along a rank, "
            "file or diagonal"
        ),
        26,
    ),
    Refusal(
        "mortar_geom",
        "Ma1 Kj1 kj10",
        "Ma1-b2",
        "ILLEGAL_MOVE_GEOMETRY",
        "6",
        (
            "the South Mortar on a1 cannot go to b2: a Mortar moves any distance along a rank or "
            "file"
        ),
        17,
    ),
    Refusal(
        "cannon_geom",
        "Cc1 Ka1 kj10",
        "Cc1-c2",
        "ILLEGAL_MOVE_GEOMETRY",
        "6",
        ("the South Cannon on c1 cannot go to c2: a Cannon moves any distance along a diagonal"),
        9,
    ),
    Refusal(
        "slider_blocked",
        "Ma1 ta5 Kj1 kj10",
        "Ma1-a7",
        "PATH_BLOCKED",
        "6",
        "the South Mortar on a1 cannot go to a7: the way is blocked at a5",
        12,
    ),
    Refusal(
        "troop_fwd_occ",
        "Tc5 tc6 Ka1 kj10",
        "c5-c6",
        "DESTINATION_OCCUPIED",
        "7",
        (
            "the South Troop on c5 cannot go to c6: a Troop steps forward only to an empty "
            "square; the South Troop on c5 has no legal move"
        ),
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
    ),
    Refusal(
        "double_moved",
        "Tc5 Ka1 kj10",
        "c5-c7",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.2",
        ("the South Troop on c5 cannot go to c7: only a Troop that has never moved double-steps"),
        ("c5-c6",),
    ),
    Refusal(
        "double_rear_only",
        "Tc3 Ka1 kj10",
        "c3-c5",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.2",
        (
            "the South Troop on c3 cannot go to c5: only Rear Troops double-step (double_step = "
            "rear_troops_only)"
        ),
        ("c3-c4",),
        opts={"double_step": "rear_troops_only"},
    ),
    Refusal(
        "double_blocked",
        "Tc2 tc3 Ka1 kj10",
        "c2-c4",
        "PATH_BLOCKED",
        "7.2",
        (
            "the South Troop on c2 cannot go to c4: a double step needs both squares empty; the "
            "South Troop on c2 has no legal move"
        ),
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
    ),
    Refusal(
        "diag_no_capture",
        "Tc5 Ka1 kj10",
        "c5-d6",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.3, 7.7",
        (
            "the South Troop on c5 cannot go to d6: a Troop moves diagonally only to capture; "
            "there is no en passant"
        ),
        ("c5-c6",),
    ),
    Refusal(
        "diag_no_capture_ep",
        "Tc5 Ka1 kj10",
        "c5-d6",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.3",
        "the South Troop on c5 cannot go to d6: a Troop moves diagonally only to capture",
        ("c5-c6",),
        opts={"en_passant": "displacement_only"},
    ),
    Refusal(
        "backward_jump",
        "Tc5 tb4 Ka1 kj10",
        "c5:a3",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.6",
        "the South Troop on c5 cannot go to a3: Troops jump only diagonally forward",
        ("c5-c6",),
    ),
    Refusal(
        "jump_nothing",
        "Tc5 Ka1 kj10",
        "c5:e7",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.4",
        (
            "the South Troop on c5 cannot go to e7: a Troop jumps only over an enemy Troop; d6 "
            "holds nothing"
        ),
        ("c5-c6",),
    ),
    Refusal(
        "jump_non_troop",
        "Tc5 md6 Ka1 kj10",
        "c5:e7",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.4",
        (
            "the South Troop on c5 cannot go to e7: a Troop jumps only over an enemy Troop; d6 "
            "holds the North Mortar"
        ),
        ("c5-c6", "c5xd6"),
    ),
    Refusal(
        "jump_landing",
        "Tc5 td6 te7 Ka1 kj10",
        "c5:e7",
        "DESTINATION_OCCUPIED",
        "7.4",
        "the South Troop on c5 cannot go to e7: a jump lands on an empty square",
        ("c5-c6", "c5xd6"),
    ),
    Refusal(
        "troop_geom",
        "Tc5 Ka1 kj10",
        "c5-c8",
        "ILLEGAL_MOVE_GEOMETRY",
        "7",
        (
            "the South Troop on c5 cannot go to c8: a Troop steps forward, double-steps on its "
            "first move, captures diagonally forward or jumps an enemy Troop diagonally forward"
        ),
        ("c5-c6",),
    ),
    Refusal(
        "target_fm",
        "Ma1 fa5 Kj1 kj10",
        "Ma1xa5",
        "TARGET_NOT_CAPTURABLE",
        "A5",
        "a placed Flying Machine cannot be captured",
        11,
    ),
    Refusal(
        "target_final",
        "Ma2 ta1 Kj1 kj10",
        "Ma2xa1",
        "TARGET_NOT_CAPTURABLE",
        "7.8",
        "the North Troop on a1 stands on its final rank and cannot be captured there",
        17,
    ),
    Refusal(
        "huff_listed",
        "Te5 td6 Tb3 Ka1 ka10",
        "huff b3 Ka10-a9",
        "ILLEGAL_ACTION",
        "",
        "no Troop on b3 may be huffed now (huffable: e5)",
        (
            "Ka10-b10",
            "Ka10-a9",
            "Ka10-b9",
            "huff e5 Ka10-b10",
            "huff e5 Ka10-a9",
            "huff e5 Ka10-b9",
        ),
        opts={"compulsion": "huff"},
        side="N",
        extra="huff=e5",
    ),
    Refusal(
        "pass_not_here",
        "Ka1 ka10",
        "F@e5 pass",
        "ILLEGAL_ACTION",
        "",
        "this pass is not legal here",
        385,
        opts={"passing_allowed": "true", "placement_uses_turn": "false"},
        reserves="F:f",
    ),
    Refusal(
        "own_citadel",
        "Mf2 Kj1 kj10",
        "Mf2-f1",
        "ILLEGAL_ACTION",
        "",
        ("only the King may stand on South's own Citadel f1 (own_men_on_own_citadel = false)"),
        17,
        opts={"own_men_on_own_citadel": "false"},
    ),
    Refusal(
        "game_over",
        "Mf10 Ka1 ka10",
        "Ka1-a2",
        "GAME_OVER",
        "",
        "the game is over; no action is legal",
        (),
    ),
    Refusal(
        "compulsion_north_citadel_defence",
        "td6 Tc5 Te5 Mf10 Kj1 ka10",
        "Ka10-a9",
        "CAPTURE_COMPULSORY",
        "7.1",
        "North must capture an exposed South man (c5, e5, f10) by any piece or method",
        ("d6xc5", "d6xe5", "d6:b4", "d6:f4"),
        opts={"citadel_defence_overrides_compulsion": "true"},
        side="N",
    ),
    Refusal(
        "letter_names_another_man",
        "Ka1 ka10",
        "Ma1-a3",
        "NOTATION_INVALID",
        "",
        "the piece letter M means a Mortar, but a1 holds South's King",
        (),
    ),
    Refusal(
        "letter_names_an_empty_square",
        "Ka1 ka10",
        "Hb1-c3",
        "NOTATION_INVALID",
        "",
        "the piece letter H means a Horse, but b1 holds nothing",
        (),
    ),
    Refusal(
        "van_double_step_blocked",
        "Tc3 tc4 Ka1 kj10",
        "c3-c5",
        "PATH_BLOCKED",
        "7.2",
        (
            "the South Troop on c3 cannot go to c5: a double step needs both squares empty; "
            "the South Troop on c3 has no legal move"
        ),
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
    ),
    Refusal(
        "rear_double_step_blocked",
        "Tc2 tc3 Ka1 kj10",
        "c2-c4",
        "PATH_BLOCKED",
        "7.2",
        (
            "the South Troop on c2 cannot go to c4: a double step needs both squares empty; "
            "the South Troop on c2 has no legal move"
        ),
        ("Ka1-a2", "Ka1-b1", "Ka1-b2"),
        opts={"double_step": "rear_troops_only"},
    ),
    Refusal(
        "troop_captures_onto_a_flying_machine",
        "Tc5 fd6 Ka1 kj10",
        "c5xd6",
        "TARGET_NOT_CAPTURABLE",
        "A5",
        "a placed Flying Machine cannot be captured",
        ("c5-c6",),
    ),
    Refusal(
        "north_jumps_over_nothing",
        "td6 Ka1 kj10",
        "d6:f4",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.4",
        (
            "the North Troop on d6 cannot go to f4: a Troop jumps only over an enemy Troop; "
            "e5 holds nothing"
        ),
        ("d6-d5",),
        side="N",
    ),
    Refusal(
        "north_jumps_backward",
        "td6 Te7 Ka1 kj10",
        "d6:f8",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.6",
        "the North Troop on d6 cannot go to f8: Troops jump only diagonally forward",
        ("d6-d5",),
        side="N",
    ),
    Refusal(
        "jump_over_an_empty_square_high_on_the_board",
        "Tc7 Ka1 kj10",
        "c7:e9",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.4",
        (
            "the South Troop on c7 cannot go to e9: a Troop jumps only over an enemy Troop; "
            "d8 holds nothing"
        ),
        ("c7-c8",),
    ),
    Refusal(
        "double_step_onto_its_own_citadel",
        "Tc2 Ka1 kj10",
        "c2-c4",
        "ILLEGAL_ACTION",
        "",
        "only the King may stand on South's own Citadel c4 (own_men_on_own_citadel = false)",
        ("c2-c3",),
        opts={"own_men_on_own_citadel": "false"},
        extra="citadels=c4,f10",
    ),
    Refusal(
        "north_troop_one_step_from_its_final_rank",
        "ta2 Kj1 kj10",
        "a2-b1",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.3, 7.7",
        (
            "the North Troop on a2 cannot go to b1: a Troop moves diagonally only to capture; "
            "there is no en passant"
        ),
        ("a2-a1",),
        side="N",
    ),
    Refusal(
        "horse_onto_a_flying_machine",
        "Hb1 fc3 Ka1 kj10",
        "Hb1xc3",
        "TARGET_NOT_CAPTURABLE",
        "A5",
        "a placed Flying Machine cannot be captured",
        ("Hb1-d2", "Hb1-a3"),
        opts={"horse_leaps_flying_machine": "false"},
    ),
    Refusal(
        "horse_onto_a_flying_machine_beside_a_blocked_leap",
        "Hb1 fd2 Fb2 Ka1 kj10",
        "Hb1xd2",
        "TARGET_NOT_CAPTURABLE",
        "A5",
        "a placed Flying Machine cannot be captured; the South Horse on b1 has no legal move",
        ("Ka1-a2",),
        opts={"horse_leaps_flying_machine": "false"},
    ),
    Refusal(
        "horse_over_a_flying_machine_on_the_far_square",
        "Hb1 Fc2 Ka1 kj10",
        "Hb1-c3",
        "PATH_BLOCKED",
        "6",
        (
            "the South Horse on b1 cannot go to c3: a Flying Machine lies under the leap "
            "(horse_leaps_flying_machine = false)"
        ),
        ("Hb1-a3",),
        opts={"horse_leaps_flying_machine": "false"},
    ),
    Refusal(
        "huff_of_a_troop_not_listed_among_two",
        "Te5 Tc5 td6 Tb3 Ka1 ka10",
        "huff b3 Ka10-a9",
        "ILLEGAL_ACTION",
        "",
        "no Troop on b3 may be huffed now (huffable: c5, e5)",
        9,
        opts={"compulsion": "huff"},
        side="N",
        extra="huff=c5,e5",
    ),
    Refusal(
        "jump_over_the_troop_just_huffed",
        "Te5 Tc5 td6 Tb3 Ka1 ka10",
        "huff e5 d6:f4",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.4",
        (
            "the North Troop on d6 cannot go to f4: a Troop jumps only over an enemy Troop; "
            "e5 holds nothing"
        ),
        11,
        opts={"compulsion": "huff"},
        side="N",
        extra="huff=c5,e5",
    ),
    Refusal(
        "en_passant_capture_while_another_capture_is_compulsory",
        "Te7 td7 Ta3 tb4 Kj1 kj10",
        "e7xd8",
        "CAPTURE_COMPULSORY",
        "7.1",
        "South must capture an exposed North man (b4) by any piece or method",
        ("a3xb4", "a3:c5"),
        opts={"en_passant": "displacement_only"},
        extra="ep=d8",
    ),
    Refusal(
        "king_move_while_a_jump_is_compulsory",
        "Tc5 td6 Ka1 ka10",
        "Ka1-a3",
        "ILLEGAL_MOVE_GEOMETRY",
        "6",
        (
            "the South King on a1 cannot go to a3: a King steps one square in any direction; "
            "the South King on a1 has no legal move"
        ),
        ("c5xd6", "c5:e7"),
    ),
    Refusal(
        "capture_on_its_own_citadel_low",
        "Mc1 tc4 Kj1 kj10",
        "Mc1xc4",
        "ILLEGAL_ACTION",
        "",
        "only the King may stand on South's own Citadel c4 (own_men_on_own_citadel = false)",
        10,
        opts={"own_men_on_own_citadel": "false"},
        extra="citadels=c4,f10",
    ),
    Refusal(
        "capture_on_its_own_citadel_high",
        "Mc1 tc6 Kj1 kj10",
        "Mc1xc6",
        "ILLEGAL_ACTION",
        "",
        "only the King may stand on South's own Citadel c6 (own_men_on_own_citadel = false)",
        12,
        opts={"own_men_on_own_citadel": "false"},
        extra="citadels=c6,f10",
    ),
    Refusal(
        "king_move_while_a_longer_chain_is_compulsory",
        "Ta3 tb4 td6 Kj1 kj10",
        "Kj1-j3",
        "ILLEGAL_MOVE_GEOMETRY",
        "6",
        (
            "the South King on j1 cannot go to j3: a King steps one square in any direction; "
            "the South King on j1 has no legal move"
        ),
        ("a3xb4", "a3:c5:e7"),
    ),
    Refusal(
        "en_passant_of_the_troop_just_huffed",
        "Tc4 td4 te5 Ka1 kj10",
        "huff c4 d4xc3",
        "ILLEGAL_MOVE_GEOMETRY",
        "7.3",
        "the North Troop on d4 cannot go to c3: a Troop moves diagonally only to capture",
        ("d4-d3", "d4xc3", "huff c4 d4-d3"),
        opts={"compulsion": "huff", "en_passant": "displacement_only"},
        side="N",
        extra="ep=c3 huff=c4",
    ),
    Refusal(
        "pass_while_a_capture_is_compulsory_under_citadel_defence",
        "Tc5 td6 Ka1 ka10",
        "pass",
        "CAPTURE_COMPULSORY",
        "7.1",
        "South must capture an exposed North man (d6) by any piece or method",
        ("c5xd6", "c5:e7"),
        opts={"passing_allowed": "true", "citadel_defence_overrides_compulsion": "true"},
    ),
    Refusal(
        "placement_while_a_capture_is_compulsory_under_citadel_defence",
        "Tc5 td6 Ka1 ka10",
        "F@e8",
        "CAPTURE_COMPULSORY",
        "7.1",
        "South must capture an exposed North man (d6) by any piece or method",
        ("c5xd6", "c5:e7"),
        opts={"citadel_defence_overrides_compulsion": "true"},
        reserves="F:f",
    ),
]


@pytest.mark.parametrize("case", REFUSALS, ids=[case.name for case in REFUSALS])
def test_refusal_names_the_rule_in_words(case: Refusal) -> None:
    state = position(
        case.men,
        side=case.side,
        reserves=case.reserves,
        extra=case.extra,
        opts=options(**case.opts),
    )
    with pytest.raises(RuleError) as caught:
        RULES.parse_action(state, case.text)
    error = caught.value
    assert (error.reason, error.rule) == (case.reason, case.rule)
    assert error.message == f"'{case.text}': {case.message}"
    if isinstance(case.alternatives, int):
        assert len(error.alternatives) == case.alternatives
    else:
        assert tuple(error.alternatives) == case.alternatives


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ((5,), "malformed action (5,): a move needs an origin and at least one landing cell"),
        ((0, 200), "malformed action (0, 200): cells are numbers 0..99"),
    ],
)
def test_a_malformed_action_is_refused_with_what_is_wrong(
    action: tuple[int, ...], message: str
) -> None:
    with pytest.raises(RuleError) as caught:
        RULES.apply(position("Ka1 ka10"), action)
    assert (caught.value.reason, caught.value.message) == ("ILLEGAL_ACTION", message)
