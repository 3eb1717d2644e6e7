"""`python -m tools.ladder`: play the ladder and print each game's Elo table.

    python -m tools.ladder --games war,battle,napoleonic --per-pair 40 --budget 0.2 --workers 2

By default every adjacent pair of levels plays (5-4, 4-3, 3-2, 2-1) and level 1 plays the
random mover; `--pairs all` plays every pair of those. The outside yardstick, a plain Monte
Carlo tree search with random rollouts at ten times the levels' budget (`mcts.py`), plays
only when named: `--pairs 5-mcts,3-mcts,1-mcts`. Results stream to `--out` (one JSON line a
game) so that a long run can be read while it goes and `--resume`d after it stops; the
games go in rounds, one of each pair a round, so a run cut short has met every pair.
`--games grand_battle_2v2` plays Napoleonic Chess's battle of two alliances, each player of
a pair taking both seats of one alliance (`games.py`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TextIO

from tools.ladder.elo import Rating, Result, ratings
from tools.ladder.games import MCTS, OPENSPIEL, RANDOM, Pairing, Played, pairings, play
from tools.ladder.openspiel import GAMES as OPENSPIEL_GAMES
from tools.ladder.openspiel import pyspiel_module

LEVELS = ("1", "2", "3", "4", "5")
LADDER = (RANDOM, *LEVELS)
# Every player, weakest first as a pair's tally names them ("5-mcts", "5-openspiel": level 5's
# score).
PLAYERS = (RANDOM, MCTS, OPENSPIEL, *LEVELS)


def main(argv: list[str] | None = None) -> int:
    """Play the ladder; print the tables."""
    parser = argparse.ArgumentParser(prog="python -m tools.ladder", description=__doc__)
    parser.add_argument(
        "--games", default="war,battle,napoleonic", help="comma-separated; or grand_battle_2v2"
    )
    parser.add_argument("--per-pair", type=int, default=40, help="games per pair per game")
    parser.add_argument("--budget", type=float, default=0.2, help="CPU seconds per action")
    parser.add_argument(
        "--pairs", default="adjacent", help="adjacent, all, or a list such as 5-4,4-3"
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("run/ladder/games.jsonl"))
    parser.add_argument("--resume", action="store_true", help="keep the games in --out")
    args = parser.parse_args(argv)
    games = [g for g in args.games.split(",") if g]
    if any(OPENSPIEL in pair for pair in pairs(args.pairs)):
        pyspiel_module()  # OpenSpielMissing says how to install it
        if other := [g for g in games if g not in OPENSPIEL_GAMES]:
            raise SystemExit(
                f"ladder: the openspiel player plays only {', '.join(OPENSPIEL_GAMES)}"
                f", not {', '.join(other)}"
            )
    todo = interleaved(
        [
            pairing
            for game in games
            for pairing in pairings(game, pairs(args.pairs), args.per_pair, args.budget, args.seed)
        ]
    )
    done = _read(args.out) if args.resume else []
    seen = {_key(p.pairing) for p in done}
    todo = [p for p in todo if _key(p) not in seen]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    print(f"ladder: {len(todo)} games to play ({len(done)} kept), {args.workers} processes")
    with args.out.open("a" if args.resume else "w") as out:
        if args.workers > 1:
            with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
                for played in pool.imap_unordered(play, todo):
                    _record(out, played, done)
        else:
            for pairing in todo:
                _record(out, play(pairing), done)
    for game in games:
        print()
        print(table(game, [p for p in done if p.pairing.game == game]))
    return 0


def interleaved(todo: list[Pairing]) -> list[Pairing]:
    """The games in rounds, a game of each pair of each game a round, so that a run cut
    short has played every pair about as often."""
    groups: dict[tuple[str, frozenset[str]], list[Pairing]] = {}
    for pairing in todo:
        groups.setdefault((pairing.game, frozenset(pairing.players)), []).append(pairing)
    rounds = itertools.zip_longest(*groups.values())
    return [pairing for round_ in rounds for pairing in round_ if pairing is not None]


def pairs(which: str) -> list[tuple[str, str]]:
    """The pairs to play, the stronger player first: "adjacent", "all" or a list "5-4,1-random"."""
    if which == "all":
        return [(a, b) for i, a in enumerate(LADDER) for b in LADDER[:i]]
    if which == "adjacent":
        return [(LADDER[i], LADDER[i - 1]) for i in range(len(LADDER) - 1, 0, -1)]
    chosen = []
    for item in which.split(","):
        a, _, b = item.partition("-")
        if a not in PLAYERS or b not in PLAYERS or a == b:
            raise SystemExit(f"ladder: {item!r} is no pair of {', '.join(PLAYERS)}")
        chosen.append((a, b))
    return chosen


def table(game: str, played: list[Played]) -> str:
    """The game's Elo table (anchored at level 1 = 1000, or at the weakest player present)
    and its pairs' scores."""
    results = [Result(*p.pairing.players, p.score) for p in played]
    if not results:
        return f"{game}: no games"
    lines = [f"{game}: {len(results)} games, {played[0].pairing.budget:g} CPU s per action"]
    lines.append(f"  {'player':<8} {'Elo':>6} {'95 %':>7} {'games':>6} {'score':>6}")
    present = {name for r in results for name in (r.first, r.second)}
    anchor = "1" if "1" in present else min(present, key=PLAYERS.index)
    rated: list[Rating] = sorted(ratings(results, anchor=anchor), key=lambda r: -r.elo)
    for r in rated:
        interval = "open" if r.interval == float("inf") else f"±{r.interval:.0f}"
        name = f"level {r.player}" if r.player in LEVELS else r.player
        lines.append(f"  {name:<8} {r.elo:>6.0f} {interval:>7} {r.games:>6} {r.score:>6.0%}")
    lines.append("  pair      wins draws losses  score  (adjudicated)")
    by_pair: dict[tuple[str, str], Counter[str]] = {}
    for p in played:
        stronger = max(p.pairing.players, key=PLAYERS.index)
        weaker = min(p.pairing.players, key=PLAYERS.index)
        score = p.score if p.pairing.players[0] == stronger else 1 - p.score
        tally = by_pair.setdefault((stronger, weaker), Counter())
        tally["win" if score == 1 else "draw" if score == 0.5 else "loss"] += 1
        tally["adjudicated"] += p.end == "adjudicated"
    for (stronger, weaker), tally in sorted(by_pair.items(), key=lambda kv: kv[0], reverse=True):
        n = tally["win"] + tally["draw"] + tally["loss"]
        score = (tally["win"] + tally["draw"] / 2) / n
        lines.append(
            f"  {stronger}-{weaker:<7} {tally['win']:>4} {tally['draw']:>5} {tally['loss']:>6}"
            f" {score:>6.0%}  ({tally['adjudicated']})"
        )
    if cpu := [p.cpu_ratio for p in played if p.cpu_ratio is not None]:
        lines.append(
            f"  {OPENSPIEL}: CPU time per move {sum(cpu) / len(cpu):.2f} of its budget"
            f" (mean of {len(cpu)} games' means)"
        )
    return "\n".join(lines)


def _key(pairing: Pairing) -> tuple[object, ...]:
    return (pairing.game, pairing.players, pairing.seed, pairing.budget)


def _record(out: TextIO, played: Played, done: list[Played]) -> None:
    done.append(played)
    p = played.pairing
    line = {
        "game": p.game,
        "players": list(p.players),
        "seed": p.seed,
        "budget": p.budget,
        "score": played.score,
        "end": played.end,
        "plies": played.plies,
    }
    if played.cpu_ratio is not None:
        line["cpu_ratio"] = round(played.cpu_ratio, 4)
    print(json.dumps(line), file=out, flush=True)
    print(f"  {p.game} {p.players[0]} vs {p.players[1]}: {played.score} ({played.end})")


def _read(path: Path) -> list[Played]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        d = json.loads(line)
        first, second = d["players"]
        pairing = Pairing(d["game"], (first, second), d["seed"], d["budget"])
        out.append(Played(pairing, d["score"], d["end"], d["plies"], d.get("cpu_ratio")))
    return out


if __name__ == "__main__":
    sys.exit(main())
