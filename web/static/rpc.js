// The page's calls: @connectrpc/connect-web clients of the services generated from proto/
// (gen/, by buf with protoc-gen-es), binary protobuf on the wire. The page works with each
// message in its proto3 JSON form (toJson/fromJson with the generated schemas), the form
// the CLI's --json prints. The caller's token (localStorage) goes in the Authorization
// header; a failure is an RpcError with the contract's reason (google.rpc.ErrorInfo).

import { fromJson, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ErrorInfoSchema, RetryInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { RulesEngine } from "./gen/wargame/v1/engine_pb.js";
import { Matchmaker } from "./gen/wargame/v1/matchmaker_pb.js";

const TOKEN = "wargame.token";

export function token() {
  return localStorage.getItem(TOKEN) || "";
}

export function setToken(value) {
  if (value) localStorage.setItem(TOKEN, value);
  else localStorage.removeItem(TOKEN);
}

const authorize = (next) => async (request) => {
  const held = token();
  if (held) request.header.set("Authorization", `Bearer ${held}`);
  return next(request);
};

const transport = createConnectTransport({
  baseUrl: location.origin,
  useBinaryFormat: true,
  interceptors: [authorize],
});

const SERVICES = { matchmaker: Matchmaker, engine: RulesEngine };
const clients = Object.fromEntries(
  Object.entries(SERVICES).map(([name, service]) => [name, createClient(service, transport)]),
);

// "InvalidArgument" -> "invalid_argument", as the Connect protocol names codes.
function codeName(code) {
  return Code[code].replace(/[A-Z]/g, (letter, at) => (at ? "_" : "") + letter.toLowerCase());
}

export class RpcError extends Error {
  constructor(code, message, reason = "", retryAfter = null) {
    super(message || code);
    this.code = code;
    this.reason = reason;
    this.retryAfter = retryAfter;
  }

  static from(failure) {
    const error = ConnectError.from(failure);
    const [info] = error.findDetails(ErrorInfoSchema);
    const [retry] = error.findDetails(RetryInfoSchema);
    const delay = retry && retry.retryDelay;
    const retryAfter = delay ? Number(delay.seconds) + delay.nanos / 1e9 : null;
    const message =
      error.code === Code.Unavailable && !error.rawMessage
        ? "the web service cannot be reached"
        : error.rawMessage;
    return new RpcError(codeName(error.code), message, info ? info.reason : "", retryAfter);
  }
}

// The generated method `Name` of a service ("matchmaker" or "engine").
function method(service, name) {
  const found = SERVICES[service].method[name[0].toLowerCase() + name.slice(1)];
  if (!found) throw new RpcError("unimplemented", `no method ${name} in ${SERVICES[service].typeName}`);
  return found;
}

// One unary call: the answer as a JSON object, or an RpcError.
export async function call(service, name, request = {}) {
  const rpc = method(service, name);
  try {
    const reply = await clients[service][rpc.localName](fromJson(rpc.input, request));
    return toJson(rpc.output, reply);
  } catch (failure) {
    throw RpcError.from(failure);
  }
}

// A server stream: calls onMessage(message) for each message; resolves when the stream
// ends well, rejects with an RpcError when it fails. `signal` (AbortSignal) closes it.
export async function stream(service, name, request, onMessage, signal) {
  const rpc = method(service, name);
  try {
    for await (const message of clients[service][rpc.localName](fromJson(rpc.input, request), { signal })) {
      onMessage(toJson(rpc.output, message));
    }
  } catch (failure) {
    if (signal && signal.aborted) return;
    throw RpcError.from(failure);
  }
}
