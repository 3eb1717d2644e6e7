"""The bot ladder: `make ladder` (`python -m tools.ladder`) measures the levels in Elo.

Levels 1-5 (`engine_service/ai/levels.py`) and a uniformly random mover play each other in
every game asked for, in parallel processes, the two sides alternating. Each search gets a
budget of CPU time (`engine_service/ai/budget.py`) and no wall-clock cap to speak of, so a
busy machine makes the ladder slower, not different. A game still going after its cap of
plies is adjudicated by the AI's evaluation from the first side's view.

The ratings are the maximum-likelihood Elo of all games (`elo.py`, as BayesElo and Ordo
compute it without their priors), anchored at level 1 = 1000, with 95 % intervals from the
likelihood's curvature; beside them the score of each adjacent pair. Where things are:

- `__main__.py`  the command line: which games, players, pairs, budgets; the printed table
- `games.py`     one game between two players, and the pairs to play
- `elo.py`       maximum-likelihood ratings and their intervals
- `mcts.py`      the outside yardstick: a plain Monte Carlo tree search with random rollouts
- `openspiel.py` the outside yardstick itself: OpenSpiel's MCTS bot on a pyspiel game over
                 the rules (the optional extra `ladder`; imported only when it plays)
"""
