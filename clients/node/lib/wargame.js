'use strict';
// The wargame contract from Node, built only from proto/: clients of the RulesEngine and the
// Matchmaker, answers as proto3 canonical JSON, and refusals with their google.rpc details.

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const protobuf = require('protobufjs');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const PROTO = path.join(ROOT, 'proto');

// Messages as proto3 canonical JSON objects: lowerCamelCase names, enums by name, 64-bit
// integers as strings, bytes in base64, fields at their default (and empty lists) left out.
const CANONICAL = {
  keepCase: false,
  longs: String,
  enums: String,
  bytes: String,
  defaults: false,
  arrays: false,
  objects: false,
  oneofs: false,
  json: true,
  includeDirs: [PROTO],
};

const definition = protoLoader.loadSync(
  ['wargame/v1/engine.proto', 'wargame/v1/matchmaker.proto'],
  CANONICAL,
);
const wargame = grpc.loadPackageDefinition(definition).wargame.v1;

// google.rpc.Status and its details, from the copies shipped in proto/google/rpc.
const details = new protobuf.Root();
details.resolvePath = (_origin, target) => path.join(PROTO, target);
details.loadSync(['google/rpc/status.proto', 'google/rpc/error_details.proto'], { keepCase: true });
const Status = details.lookupType('google.rpc.Status');
const DETAIL_TYPES = ['ErrorInfo', 'BadRequest', 'RetryInfo'].map((name) =>
  details.lookupType(`google.rpc.${name}`),
);

const CODE_NAMES = Object.fromEntries(Object.entries(grpc.status).map(([k, v]) => [v, k]));

/** A client of the RulesEngine at `address` (host:port, plaintext). */
function engine(address) {
  return new wargame.RulesEngine(address, grpc.credentials.createInsecure());
}

/** A client of the Matchmaker at `address` (host:port, plaintext). */
function matchmaker(address) {
  return new wargame.Matchmaker(address, grpc.credentials.createInsecure());
}

/** The refusal a gRPC error carries: its code name, message, ErrorInfo reason and metadata,
 * and the field violations of a BadRequest, read from the grpc-status-details-bin trailer. */
function refusal(error) {
  const out = { code: CODE_NAMES[error.code], message: error.details, reason: '', fields: [] };
  const [bin] = (error.metadata && error.metadata.get('grpc-status-details-bin')) || [];
  if (!bin) return out;
  const status = Status.decode(bin);
  for (const any of status.details) {
    const type = DETAIL_TYPES.find((t) => any.type_url.endsWith(`/${t.fullName.slice(1)}`));
    if (!type) continue;
    const detail = type.toObject(type.decode(any.value));
    if (type.name === 'ErrorInfo') {
      out.reason = detail.reason;
      out.metadata = detail.metadata || {};
    } else if (type.name === 'BadRequest') {
      out.fields = (detail.field_violations || []).map((v) => v.field);
    } else {
      out.retryDelay = detail.retry_delay;
    }
  }
  return out;
}

/** Metadata carrying the matchmaker's authorization for `token` (none when empty). */
function authorized(token) {
  const metadata = new grpc.Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

/** Call a unary method; resolves to the answer, rejects with the gRPC error (see `refusal`).
 * `token` adds the matchmaker's authorization. */
function call(client, method, request, { token = '', seconds = 60 } = {}) {
  return new Promise((resolve, reject) => {
    client[method](request, authorized(token), { deadline: Date.now() + seconds * 1000 }, (error, answer) =>
      error ? reject(error) : resolve(answer),
    );
  });
}

/** The call's refusal (see `refusal`); fails when the call succeeds. */
async function refused(client, method, request, options) {
  try {
    await call(client, method, request, options);
  } catch (error) {
    if (error.code === undefined) throw error;
    return refusal(error);
  }
  throw new Error(`${method} was expected to be refused`);
}

/** A small seeded random number generator (mulberry32), so games are repeatable. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random legal action of a ListLegalActions answer, taking captures ("x" in the
 * notation) and attacks first most of the time so that games end sooner. */
function pick(actions, rand) {
  const fierce = actions.filter((a) => /x|attack/.test(a.notation));
  const from = fierce.length && rand() < 0.8 ? fierce : actions;
  return from[Math.floor(rand() * from.length)];
}

module.exports = { CANONICAL, PROTO, ROOT, authorized, call, engine, matchmaker, pick, random, refusal, refused };
