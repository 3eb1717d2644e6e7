'use strict';
// Every conformance vector of tests/conformance against a live engine (WARGAME_ENGINE):
// the request sent as it is, the answer compared as proto3 canonical JSON, a refusal by its
// code and ErrorInfo reason. perft vectors are counted through ListLegalActions and
// ApplyActions to depth 2, and to depth 3 where that tree is small.
// WARGAME_VECTORS_SAMPLE=<seed>/<every> runs a sample instead: of each game's vectors of one
// rpc (sorted by file name), one in <every>, which ones turning with <seed>, and at least one
// of each rpc, so every kind of call is still checked every run (`make test` passes it from
// the run's seed, tests/seeds.py; without it, as under -m slow, every vector runs). A sample's
// perft is counted to depth 2 only: depth 3 is thousands of the same two calls, a deeper
// check of the engine's move generation (its own perft tests) rather than of this client.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT, call, engine, refusal } = require('../lib/wargame');

const VECTORS = process.env.WARGAME_VECTORS || path.join(ROOT, 'tests', 'conformance');
const ADDRESS = process.env.WARGAME_ENGINE;
const PARALLEL = 8;
const PERFT_NODES_THROUGH_THE_ENGINE = 3000; // depth 3 only when perft(2) is at most this
const SAMPLE = process.env.WARGAME_VECTORS_SAMPLE || '';

function gamesIn(folder) {
  return fs
    .readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('_'))
    .map((entry) => entry.name)
    .filter((name) => fs.readdirSync(path.join(folder, name)).some((f) => f.endsWith('.json')));
}

// A search the engine turns away because its pool is full (ENGINE_BUSY: on a busy machine
// the vectors' own searches fill it) is asked again when the refusal's retry hint says, as
// the engine tells every client to do; the answer compared is the one that follows.
// An answer as the vectors keep it: without the states' `positionTag`, the engine's
// integrity tag made under its own key (tests/conformance/README.md).
function withoutTags(value) {
  if (Array.isArray(value)) return value.map(withoutTags);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'positionTag')
      .map(([key, item]) => [key, withoutTags(item)]),
  );
}

async function answerOf(client, vector) {
  for (;;) {
    try {
      return { response: withoutTags(await call(client, vector.rpc, vector.request)) };
    } catch (error) {
      if (error.code === undefined) throw error;
      const { code, reason, metadata } = refusal(error);
      if (reason === 'ENGINE_BUSY' && (vector.error || {}).reason !== 'ENGINE_BUSY') {
        await new Promise((resolve) => setTimeout(resolve, Number(metadata.retry_after_ms)));
        continue;
      }
      return { error: { code, reason } };
    }
  }
}

// perft through the engine: the number of action sequences of each length from a state.
async function perft(client, state, depth) {
  const counts = [];
  let layer = [state];
  for (let level = 0; level < depth; level++) {
    const next = [];
    let total = 0;
    for (const node of layer) {
      const listed = await call(client, 'ListLegalActions', { state: node });
      const actions = listed.actions || [];
      total += actions.length;
      if (level + 1 < depth) {
        for (const legal of actions) {
          const applied = await call(client, 'ApplyActions', {
            state: node,
            actions: [legal.action],
            view: 'STATE_VIEW_POSITION',
          });
          next.push({ game: node.game, position: applied.state.position });
        }
      }
    }
    counts.push(String(total));
    layer = next;
  }
  return counts;
}

// The sample of a game's vectors [file, vector] to run (all of them without SAMPLE).
function sampleOf(vectors) {
  if (!SAMPLE) return vectors;
  const [seed, every] = SAMPLE.split('/').map(Number);
  assert.ok(Number.isInteger(seed) && every >= 1, `WARGAME_VECTORS_SAMPLE=${SAMPLE}: <seed>/<every>`);
  const byRpc = new Map();
  for (const entry of vectors) {
    const rpc = entry[1].rpc;
    if (!byRpc.has(rpc)) byRpc.set(rpc, []);
    byRpc.get(rpc).push(entry);
  }
  const chosen = [];
  for (const group of byRpc.values()) {
    const picked = group.filter((_, index) => (index + seed) % every === 0);
    chosen.push(...(picked.length ? picked : [group[seed % group.length]]));
  }
  return chosen.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

async function check(client, vector) {
  if (vector.rpc === 'perft') {
    const expected = vector.response.counts;
    const deep = !SAMPLE && Number(expected[1]) <= PERFT_NODES_THROUGH_THE_ENGINE;
    const depth = deep ? 3 : 2;
    assert.deepEqual(await perft(client, vector.request.state, depth), expected.slice(0, depth));
    return;
  }
  const answer = await answerOf(client, vector);
  if (vector.error) assert.deepEqual(answer, { error: vector.error });
  else assert.deepEqual(answer, { response: vector.response });
}

for (const game of ADDRESS ? gamesIn(VECTORS) : []) {
  test(`conformance vectors of ${game}`, async (t) => {
    const folder = path.join(VECTORS, game);
    const every = fs.readdirSync(folder).filter((f) => f.endsWith('.json')).sort();
    const read = (file) => JSON.parse(fs.readFileSync(path.join(folder, file), 'utf8'));
    const vectors = sampleOf(every.map((file) => [file, read(file)]));
    const client = engine(ADDRESS);
    t.after(() => client.close());
    const failures = [];
    let next = 0;
    async function worker() {
      while (next < vectors.length) {
        const [file, vector] = vectors[next++];
        try {
          await check(client, vector);
        } catch (error) {
          failures.push(`${game}/${file}: ${error.message.split('\n').slice(0, 12).join('\n')}`);
        }
      }
    }
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    const of = SAMPLE
      ? `${vectors.length} of ${every.length} (the sample WARGAME_VECTORS_SAMPLE=${SAMPLE})`
      : `${vectors.length} (every vector)`;
    console.log(`vectors ${game}: ${vectors.length - failures.length} of ${of} passed`);
    assert.equal(failures.length, 0, failures.slice(0, 5).join('\n\n'));
  });
}

test('the engine to check against is given', () => {
  assert.ok(ADDRESS, 'set WARGAME_ENGINE=host:port (tests/node/test_node_client.py does)');
  assert.ok(gamesIn(VECTORS).length >= 3, `no vectors in ${VECTORS}`);
});
