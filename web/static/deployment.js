// Napoleonic secret deployment in the page, as the CLI does it (cli_client/napoleonic.py):
// the player writes the array (`a2=A b2=C ...`, or clicks a square of their rows to start
// an item); Attack at Dawn sends only the engine's digest of array and salt (ParseAction of
// `commit <array> salt <hex>`), keeps both in this browser's storage and reveals them by
// itself in the reveal phase; sealed mode sends the array for the engine to seal. The
// matchmaker shows neither to other players before every array is in.

import { call } from "./rpc.js";

export const COMMIT = "NAPOLEONIC_PHASE_DEPLOY_COMMIT";
export const SEALED = "NAPOLEONIC_PHASE_DEPLOY_SEALED";
export const REVEAL = "NAPOLEONIC_PHASE_DEPLOY_REVEAL";
const PLACEMENT = /^([a-z]\d+)=([A-Za-z])$/;

export class Deployment {
  constructor(gameId) {
    this.gameId = gameId;
  }

  key(side) {
    return `wargame.secret.${this.gameId}.${side}`;
  }

  // The kept secret {array, salt} of `side`'s commitment, or null.
  kept(side) {
    try {
      return JSON.parse(localStorage.getItem(this.key(side)) || "null");
    } catch {
      return null;
    }
  }

  forget(side) {
    localStorage.removeItem(this.key(side));
  }

  // The placements written in `text` as pieces of `side` (unknown letters left out).
  pieces(board, text, side) {
    const kindOf = Object.fromEntries(board.pieceKinds.map((k) => [(k.letter || "").toUpperCase(), k.id]));
    const cells = new Set(board.cells.map((c) => c.name));
    const placed = new Map();
    for (const word of text.replace(/,/g, " ").split(/\s+/)) {
      const match = word.match(PLACEMENT);
      if (match && cells.has(match[1]) && kindOf[match[2].toUpperCase()]) placed.set(match[1], kindOf[match[2].toUpperCase()]);
    }
    return [...placed].map(([cell, kind]) => ({ side, kind, cell }));
  }

  // "to place: 2×A 4×C ..." for `side`'s army less what `text` places.
  remaining(board, state, text, side) {
    const letterOf = Object.fromEntries(board.pieceKinds.map((k) => [k.id, (k.letter || "?").toUpperCase()]));
    const army = ((state.napoleonic || {}).armies || []).find((a) => a.player === side);
    const left = {};
    for (const kind of (army && army.unitTypes) || []) left[letterOf[kind]] = (left[letterOf[kind]] || 0) + 1;
    for (const piece of this.pieces(board, text, side)) left[letterOf[piece.kind]] -= 1;
    const rest = Object.keys(left).sort().filter((l) => left[l] > 0).map((l) => `${left[l]}×${l}`);
    return rest.length ? `to place: ${rest.join(" ")}` : "all placed";
  }

  // The action that sends the array: its digest only (commit), or the array to seal.
  async action(state, phase, text, side) {
    const array = text.trim().replace(/\s+/g, " ");
    if (!array) throw new Error("place your army first (placements like a2=A b2=C)");
    if (phase === SEALED) return { side, notation: `seal ${array}` };
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const salt = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
    const reply = await call("engine", "ParseAction", { state, text: `commit ${array} salt ${salt}`, side });
    const notation = (reply.notation || "").trim();
    if (!notation.startsWith("commit ") || notation.includes("=") || notation.includes(salt)) {
      throw new Error("the engine did not answer with a digest; nothing was sent");
    }
    localStorage.setItem(this.key(side), JSON.stringify({ array, salt }));
    return { side, notation };
  }

  // The reveal action from the kept secret, if there is one.
  reveal(side) {
    const secret = this.kept(side);
    return secret ? { side, notation: `reveal ${secret.array} salt ${secret.salt}` } : null;
  }
}
