"""Clocks: base plus increment, running for every side the rules let act."""

from __future__ import annotations

from matchmaker import clocks


def test_a_running_clock_counts_down_and_the_other_stands() -> None:
    clock = clocks.start(60_000, 2_000, ["south", "north"], 1_000, ["south"])
    assert clocks.remaining_at(clock, 11_000) == {"south": 50_000, "north": 60_000}
    assert clocks.deadline(clock) == 61_000
    assert clocks.fallen(clock, 60_999) == ()
    assert clocks.fallen(clock, 61_000) == ("south",)


def test_the_increment_comes_when_a_side_stops_acting() -> None:
    clock = clocks.start(60_000, 2_000, ["south", "north"], 0, ["south"])
    clock = clocks.advance(clock, 10_000, ["north"])
    assert clock.remaining == {"south": 52_000, "north": 60_000}
    assert clock.running == ("north",) and clock.at_ms == 10_000


def test_a_multi_step_turn_earns_one_increment() -> None:
    # Napoleonic Chess: move, move, end phase... the side stays in to_act throughout.
    clock = clocks.start(60_000, 5_000, ["red", "black"], 0, ["red"])
    clock = clocks.advance(clock, 1_000, ["red"])
    clock = clocks.advance(clock, 3_000, ["red"])
    assert clock.remaining["red"] == 57_000
    clock = clocks.advance(clock, 4_000, ["black"])
    assert clock.remaining["red"] == 61_000


def test_the_defender_spends_its_own_time_mid_turn() -> None:
    # Napoleonic Chess 6: the defending player allocates supports during red's turn.
    clock = clocks.start(60_000, 0, ["red", "black"], 0, ["red"])
    clock = clocks.advance(clock, 5_000, ["black"])  # attacks declared: black defends
    clock = clocks.advance(clock, 12_000, ["red"])  # supports sent: back to red
    assert clock.remaining == {"red": 55_000, "black": 53_000}


def test_simultaneous_deployment_runs_both_clocks() -> None:
    clock = clocks.start(30_000, 0, ["red", "black"], 0, ["red", "black"])
    assert clocks.remaining_at(clock, 10_000) == {"red": 20_000, "black": 20_000}
    clock = clocks.advance(clock, 10_000, ["black"])
    assert clocks.deadline(clock) == 30_000
    assert clocks.fallen(clock, 30_000) == ("black",)


def test_clocks_that_run_out_together_are_a_tie_not_a_name_order() -> None:
    # Both deploy at once and neither sends an array in time: their flags fall together.
    clock = clocks.start(30_000, 0, ["red", "black"], 0, ["red", "black"])
    assert clocks.fallen(clock, 29_999) == ()
    assert clocks.fallen(clock, 30_000) == ("black", "red")
    assert clocks.fallen(clock, 45_000) == ("black", "red")


def test_of_two_clocks_out_the_one_that_ran_out_first_alone_has_fallen() -> None:
    # A redeployment (illegal_reveal = redeploy) starts both clocks again, red with less.
    clock = clocks.Clock(30_000, 0, {"red": 4_000, "black": 9_000}, 0, ("red", "black"))
    assert clocks.fallen(clock, 12_000) == ("red",)


def test_stop_freezes_the_clock() -> None:
    clock = clocks.stop(clocks.start(60_000, 0, ["a", "b"], 0, ["a"]), 7_000)
    assert clock.running == () and clock.remaining["a"] == 53_000
    assert clock.at_ms == 7_000  # stored as the moment the game ended
    assert clocks.deadline(clock) is None and clocks.fallen(clock, 10**9) == ()


def test_json_round_trip() -> None:
    clock = clocks.advance(clocks.start(1_000, 10, ["x", "y"], 5, ["x"]), 9, ["y"])
    assert clocks.Clock.from_json(clock.to_json()) == clock


def test_the_stored_clock_is_compact_json() -> None:
    # Every running game stores its clock in its hash, and a finished game is kept for a
    # week within a budget of 4 KB (docs/throughput.md): no spaces after commas and colons.
    clock = clocks.start(60_000, 2_000, ["south", "north"], 1_000, ["south"])
    stored = clock.to_json()
    assert stored == (
        '{"b":60000,"i":2000,"r":{"south":60000,"north":60000},"at":1000,"run":["south"]}'
    )
    assert clocks.Clock.from_json(stored) == clock
