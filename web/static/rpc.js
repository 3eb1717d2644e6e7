// The Connect protocol over fetch: unary calls and server streams, JSON encoded.
// The caller's token (localStorage) goes in the Authorization header; errors carry the
// contract's reason (google.rpc.ErrorInfo), read from the detail's JSON copy.

const TOKEN = "wargame.token";

export function token() {
  return localStorage.getItem(TOKEN) || "";
}

export function setToken(value) {
  if (value) localStorage.setItem(TOKEN, value);
  else localStorage.removeItem(TOKEN);
}

export class RpcError extends Error {
  constructor(code, message, details = []) {
    super(message || code);
    this.code = code;
    this.details = details;
    const info = details.find((d) => d.type === "google.rpc.ErrorInfo");
    this.reason = (info && info.debug && info.debug.reason) || "";
    const retry = details.find((d) => d.type === "google.rpc.RetryInfo");
    this.retryAfter = retry && retry.debug ? parseFloat(retry.debug.retryDelay) : null;
  }
}

function headers(kind) {
  const result = { "Content-Type": kind, "Connect-Protocol-Version": "1" };
  const held = token();
  if (held) result.Authorization = `Bearer ${held}`;
  return result;
}

function procedure(service, method) {
  const full = service === "engine" ? "wargame.v1.RulesEngine" : "wargame.v1.Matchmaker";
  return `/${full}/${method}`;
}

// One unary call: the answer as a JSON object, or an RpcError.
export async function call(service, method, request = {}) {
  let response;
  try {
    response = await fetch(procedure(service, method), {
      method: "POST",
      headers: headers("application/json"),
      body: JSON.stringify(request),
    });
  } catch (failure) {
    throw new RpcError("unavailable", `the web service cannot be reached (${failure.message})`);
  }
  const text = await response.text();
  let body = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    throw new RpcError("unknown", `HTTP ${response.status}`);
  }
  if (!response.ok) throw new RpcError(body.code || "unknown", body.message, body.details || []);
  return body;
}

// A server stream: calls onMessage(message) for each message; resolves when the stream
// ends well, rejects with an RpcError when it fails. `signal` (AbortSignal) closes it.
export async function stream(service, method, request, onMessage, signal) {
  const body = new TextEncoder().encode(JSON.stringify(request));
  const framed = new Uint8Array(5 + body.length);
  new DataView(framed.buffer).setUint32(1, body.length);
  framed.set(body, 5);
  let response;
  try {
    response = await fetch(procedure(service, method), {
      method: "POST",
      headers: headers("application/connect+json"),
      body: framed,
      signal,
    });
  } catch (failure) {
    if (signal && signal.aborted) return;
    throw new RpcError("unavailable", `the web service cannot be reached (${failure.message})`);
  }
  if (!response.ok) throw new RpcError("unknown", `HTTP ${response.status}`);
  const reader = response.body.getReader();
  let buffer = new Uint8Array(0);
  const decoder = new TextDecoder();
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (failure) {
      if (signal && signal.aborted) return;
      throw new RpcError("unavailable", "the stream broke");
    }
    if (chunk.done) throw new RpcError("unavailable", "the stream ended without its end");
    const joined = new Uint8Array(buffer.length + chunk.value.length);
    joined.set(buffer);
    joined.set(chunk.value, buffer.length);
    buffer = joined;
    while (buffer.length >= 5) {
      const view = new DataView(buffer.buffer, buffer.byteOffset);
      const flags = view.getUint8(0);
      const length = view.getUint32(1);
      if (buffer.length < 5 + length) break;
      const message = JSON.parse(decoder.decode(buffer.subarray(5, 5 + length)) || "{}");
      buffer = buffer.slice(5 + length);
      if (flags & 2) {
        if (message.error) {
          const e = message.error;
          throw new RpcError(e.code || "unknown", e.message, e.details || []);
        }
        return;
      }
      onMessage(message);
    }
  }
}
