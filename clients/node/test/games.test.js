'use strict';
// A whole game of each kind the engine lists, through the engine alone: random legal
// actions (seeded) until the rules end the game, or until one side resigns after
// MAX_PLIES; a draw offered and declined on the way; refusals read from their google.rpc
// details; the record written and replayed to the same end.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { call, engine, pick, random, refused } = require('../lib/wargame');

const ADDRESS = process.env.WARGAME_ENGINE;
const MAX_PLIES = 400;
const POSITION = 'STATE_VIEW_POSITION';

async function playOut(client, game, rand) {
  const started = await call(client, 'NewGame', { game, view: POSITION });
  const initial = { game, position: started.state.position };
  let state = initial;
  let summary = started.state;
  const played = [];
  const apply = async (action) => {
    const applied = await call(client, 'ApplyActions', { state, actions: [action], view: POSITION });
    played.push(applied.applied[0].action);
    state = { game, position: applied.state.position };
    summary = applied.state;
    return applied;
  };
  for (let ply = 0; ply < MAX_PLIES && !summary.outcome; ply++) {
    const listed = await call(client, 'ListLegalActions', { state });
    const actions = listed.actions || [];
    if (!actions.length) break;
    if (ply === 2 && listed.toAct.length === 1) {
      // A draw offered by the side to act, declined by the other.
      const side = listed.toAct[0];
      const other = (await call(client, 'DescribeGame', { game, view: POSITION })).info.sides
        .map((s) => s.id)
        .find((id) => id !== side);
      await apply({ side, offerDraw: {} });
      assert.equal(summary.drawOffer, side);
      await apply({ side: other, declineDraw: {} });
      assert.equal(summary.drawOffer, undefined);
    }
    const chosen = pick(actions, rand);
    if (ply % 2) await apply(chosen.action);
    else await apply({ side: chosen.action.side, notation: chosen.notation });
  }
  if (!summary.outcome) await apply({ side: summary.toAct[0], resign: {} });
  return { initial, state, summary, played };
}

for (const seed of ADDRESS ? [11] : []) {
  test('a whole game of each kind through the engine', async (t) => {
    const client = engine(ADDRESS);
    t.after(() => client.close());
    const { games } = await call(client, 'ListGames', {});
    assert.ok(games.length >= 3);
    for (const info of games) {
      await t.test(info.id, async () => {
        const { initial, summary, played } = await playOut(client, info.id, random(seed));
        assert.ok(summary.outcome, 'the game ended');
        assert.equal(summary.toAct, undefined, 'nobody acts after the end');

        // After the end every game action is refused, with its reason in ErrorInfo.
        const over = await refused(client, 'ApplyActions', {
          state: { game: info.id, position: summary.position },
          actions: [{ side: info.sides[0].id, notation: 'resign' }],
        });
        assert.equal(over.code, 'INVALID_ARGUMENT');
        assert.equal(over.reason, 'GAME_OVER');
        assert.ok(over.message);

        // The record replays to the same end.
        const written = await call(client, 'WriteRecord', {
          initialState: initial,
          actions: played,
          view: POSITION,
        });
        assert.equal(written.finalState.position, summary.position);
        const replayed = await call(client, 'ReplayRecord', { record: written.record, view: POSITION });
        assert.equal(replayed.finalState.position, summary.position);
        assert.equal(replayed.actions.length, played.length);
        console.log(`${info.id}: ${played.length} actions, ${summary.outcome.message}`);
      });
    }
    // A refusal naming a field: BadRequest's field violations come through as well.
    const unknown = await refused(client, 'NewGame', { game: 'no_such_game' });
    assert.deepEqual([unknown.code, unknown.reason], ['NOT_FOUND', 'UNKNOWN_GAME']);
    assert.deepEqual(unknown.fields, ['game']);
  });
}
