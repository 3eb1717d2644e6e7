"""The `wargame` terminal client: play the three games against people or the bot.

Thin by design: boards come from the engine's DescribeGame, actions are the engine's
notation, and every rule question goes to the engine; the client keeps no rule of its own.

Where things are:

- `main.py`        the `wargame` command: its command line read (light: `--help` loads no
                   gRPC, protobuf or rich), one-line errors
- `subcommands.py` what each subcommand does, loaded once a command runs
- `arguments.py`   its command line: subcommands, arguments, flags and their variables
- `defaults.py`    what the command line needs first (default addresses, TLS schemes, the
                   bot's levels), light: `--help` loads no gRPC, protobuf or rich
- `connection.py`  channels to the engine and the matchmaker, one method per call
- `errors.py`      every failure as one readable line (`ClientError`)
- `identity.py`    the guest identity file (token, last game, deployment secrets)
- `info.py`        commands that only show: games (with scenarios), rules, record,
                   leaderboard, the lobby (public games and their free seats)
- `lobby.py`       getting into a game: bot, open, invite, join, quick-match queue
- `session.py`     the client's model of one game (view, board, seats, clocks, losses)
- `details.py`     what a game's own state adds to the screen (phases, reserves, terrain)
- `live.py`        the thread that follows WatchGame and reconnects (the open stream is
                   the player's presence)
- `play.py`        the game loop, the same for every game, player or spectator
- `updates.py`     what the live stream brings, taken into the game: new versions,
                   notices, the connection lost and back, the answer to a draw offer
- `game_commands.py` what a typed command does in a game: help, board, flip, moves, hint,
                   resign (asks first), abort, undo, draw, accept/decline, actions and their
                   refusals
- `chat.py`        a game's chat: lines shown safely (no control characters), `mute`
- `prompt.py`      what the player is told and asked: the welcome line, who the game
                   waits for, what to do now, the prompt
- `after_game.py`  after the game: the result, the rating changes, `rematch` or `quit`
- `notices.py`     the matchmaker's notices in words: disconnected, reconnected, the
                   abandonment warning with the time left, a rematch offered
- `commands.py`    what a typed line means: the client's words or the game's notation
                   (`game_commands.py` carries it out)
- `notation.py`    a refused text read against the legal actions: a destination alone,
                   "did you mean Hb1-c3?", a chess letter judged as the game's own,
                   the nearest word
- `wording.py`     engine sentences as players read them (no section numbers, option
                   names or lists of alternatives)
- `submit.py`      sending actions: versions, idempotency keys, the retry policy
- `hooks.py`       what a game may add to the loop; `napoleonic.py` is the one game that
                   does (phase guidance, combat sums, `end` when nothing else is legal,
                   secret Attack-at-Dawn deployments)
- `display/`       where the game is shown: `fullscreen.py` one screen updated in place
                   (prompt_toolkit) with a pager for long answers and the whole log,
                   `line.py` the scrolling log (pipes, `--plain`)
- `terminal.py`    line-mode terminal: output through rich, a prompt that never blocks
- `render/`        drawings from the engine's descriptions: `board.py` (grid and lattice
                   boards), `panel.py` (players, clocks, events, combat tallies, legends),
                   `theme.py` (Unicode or ASCII, colours, cell marks), `canvas.py`
- `replay.py`      `wargame replay`: a record stepped through position by position
"""
