'use strict';
// A whole game through the matchmaker (WARGAME_MATCHMAKER), the engine (WARGAME_ENGINE)
// only choosing the actions: two players register, one creates a game, the other joins,
// a watcher follows it from the start, both play until the rules end it (or one resigns
// after MAX_PLIES), and the record replays to the same end. Refusals are read from their
// google.rpc details on the way.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { authorized, call, engine, matchmaker, pick, random, refused } = require('../lib/wargame');

const ADDRESS = process.env.WARGAME_MATCHMAKER;
const ENGINE = process.env.WARGAME_ENGINE;
const MAX_PLIES = 300;
const GAME = 'war';

function watch(client, gameId, token) {
  const updates = [];
  const stream = client.WatchGame({ gameId }, authorized(token));
  const finished = new Promise((resolve, reject) => {
    stream.on('data', (update) => {
      updates.push(update);
      if (update.game && update.game.status === 'GAME_STATUS_FINISHED') resolve(update);
    });
    stream.on('error', (error) => (error.code === 1 ? resolve(null) : reject(error)));
    stream.on('end', () => resolve(null));
  });
  return { updates, finished, stop: () => stream.cancel() };
}

for (const seed of ADDRESS && ENGINE ? [5] : []) {
  test('a whole game through the matchmaker', async (t) => {
    const client = matchmaker(ADDRESS);
    const rules = engine(ENGINE);
    t.after(() => {
      client.close();
      rules.close();
    });
    const rand = random(seed);
    const north = await call(client, 'RegisterPlayer', { displayName: 'Node North' });
    const south = await call(client, 'RegisterPlayer', { displayName: 'Node South' });
    assert.ok(north.token && south.token && north.player.id !== south.player.id);

    // A wrong token is refused, its reason in ErrorInfo.
    const wrong = await refused(client, 'CreateGame', { game: GAME }, { token: 'not-a-token' });
    assert.deepEqual([wrong.code, wrong.reason], ['UNAUTHENTICATED', 'TOKEN_INVALID']);

    const created = await call(
      client,
      'CreateGame',
      { game: GAME, side: 'north', opponent: 'SEAT_KIND_HUMAN', visibility: 'VISIBILITY_PUBLIC' },
      { token: north.token },
    );
    const gameId = created.game.id;
    assert.equal(created.game.status, 'GAME_STATUS_OPEN');
    const joined = await call(client, 'JoinGame', { gameId }, { token: south.token });
    assert.equal(joined.game.status, 'GAME_STATUS_RUNNING');
    const watcher = watch(client, gameId, north.token);
    t.after(watcher.stop);
    const tokens = { north: north.token, south: south.token };

    let view = joined.game;
    let plies = 0;
    while (view.status === 'GAME_STATUS_RUNNING') {
      const side = view.state.toAct[0];
      const other = side === 'north' ? 'south' : 'north';
      if (plies >= MAX_PLIES) {
        view = (await call(client, 'Resign', { gameId }, { token: tokens[side] })).game;
        break;
      }
      const state = { game: GAME, position: view.state.position };
      const listed = await call(rules, 'ListLegalActions', { state });
      const chosen = pick(listed.actions, rand);
      if (plies === 1) {
        // Acting for the other side, and on a stale version: refused with their reasons.
        const early = await refused(
          client,
          'SubmitActions',
          { gameId, expectedVersion: view.version, idempotencyKey: crypto.randomUUID(), actions: [chosen.action] },
          { token: tokens[other] },
        );
        assert.deepEqual(
          [early.code, early.reason, early.fields],
          ['PERMISSION_DENIED', 'NOT_A_PLAYER', ['actions[0].side']],
        );
        const stale = await refused(
          client,
          'SubmitActions',
          {
            gameId,
            expectedVersion: String(Number(view.version) - 1),
            idempotencyKey: crypto.randomUUID(),
            actions: [chosen.action],
          },
          { token: tokens[side] },
        );
        assert.equal(stale.reason, 'VERSION_CONFLICT');
      }
      const submitted = await call(
        client,
        'SubmitActions',
        {
          gameId,
          expectedVersion: view.version,
          idempotencyKey: crypto.randomUUID(),
          actions: [{ side, notation: chosen.notation }],
        },
        { token: tokens[side] },
      );
      assert.deepEqual(submitted.notations, [chosen.notation]);
      view = submitted.game;
      plies += 1;
    }
    assert.equal(view.status, 'GAME_STATUS_FINISHED');
    assert.ok(view.outcome && view.outcome.message);

    // The watcher saw the game from its first version to its end.
    const last = await watcher.finished;
    watcher.stop();
    assert.ok(last, 'the watch stream reached the end of the game');
    assert.equal(last.game.status, 'GAME_STATUS_FINISHED');
    const versions = watcher.updates.filter((u) => !u.notice).map((u) => Number(u.version));
    assert.deepEqual(versions, [...versions].sort((a, b) => a - b));
    assert.equal(versions.at(-1), Number(view.version));

    // The record replays through the engine to the same end.
    const { record } = await call(client, 'GetRecord', { gameId }, { token: south.token });
    const replayed = await call(rules, 'ReplayRecord', { record, view: 'STATE_VIEW_POSITION' });
    assert.equal(replayed.finalState.position, view.state.position);
    console.log(`matchmaker ${GAME}: ${plies} actions, ${view.outcome.message}`);
  });
}
