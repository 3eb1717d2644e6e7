// The page: the lobby at `/`, a game at `/g/<game id>`, live over WatchGame.
// Everything goes through the web service's Connect API (rpc.js); boards come from
// DescribeGame (board.js). Where things are: lobby() builds the lobby; Game runs a game page.

import { call, RpcError, setToken, stream, token } from "./rpc.js";
import { bottomSide, cellsIn, draw, turned, turnsFor, withState } from "./board.js";
import { COMMIT, Deployment, REVEAL, SEALED } from "./deployment.js";

const main = document.getElementById("main");
const GAMES = [["war", "The Game of War"], ["battle", "The Game of Battle"], ["napoleonic", "Napoleonic Chess"]];

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function explain(error) {
  if (error instanceof RpcError) return error.reason ? `${error.message} (${error.reason})` : error.message;
  return String(error);
}

function say(where, text, kind = "error") {
  where.textContent = text;
  where.dataset.kind = kind;
}

const who = document.getElementById("who");

async function me() {
  if (!token()) return null;
  try {
    return (await call("matchmaker", "GetPlayer", {})).player;
  } catch (error) {
    if (error.code === "unauthenticated") setToken("");
    return null;
  }
}

function go(path) {
  history.pushState({}, "", path);
  route();
}

window.addEventListener("popstate", () => route());

let current = null;

async function route() {
  if (current) current.close();
  current = null;
  const player = await me();
  who.textContent = player ? `playing as ${player.displayName}` : "";
  const match = location.pathname.match(/^\/g\/([^/]+)$/);
  if (match) {
    current = new Game(decodeURIComponent(match[1]), player);
    current.start();
  } else {
    lobby(player);
  }
}

// --- the lobby ---------------------------------------------------------------------------

function gameSelect(id) {
  return el("select", { id }, GAMES.map(([value, title]) => el("option", { value }, title)));
}

function lobby(player) {
  const notice = el("p", { id: "notice", role: "alert" });
  main.replaceChildren();
  if (!player) {
    const name = el("input", { id: "guest-name", autocomplete: "nickname", maxlength: "40", required: true });
    main.append(el("section", { class: "panel" },
      el("h2", {}, "Play as a guest"),
      el("form", { id: "register", onsubmit: async (event) => {
        event.preventDefault();
        try {
          const reply = await call("matchmaker", "RegisterPlayer", { displayName: name.value.trim() });
          setToken(reply.token);
          route();
        } catch (error) {
          say(notice, explain(error));
        }
      } }, el("label", { for: "guest-name" }, "Your name "), name, " ", el("button", { type: "submit" }, "Register")),
    ));
  } else {
    const level = el("select", { id: "bot-level" }, [1, 2, 3, 4, 5].map((n) => el("option", { value: n }, `level ${n}`)));
    const botGame = gameSelect("bot-game");
    const friendGame = gameSelect("friend-game");
    const quickGame = gameSelect("quick-game");
    const code = el("input", { id: "invite-code", autocomplete: "off", size: "12" });
    const options = el("input", { id: "friend-options", autocomplete: "off", size: "24",
      placeholder: "scenario=three_way", "aria-label": "options (name=value, comma-separated)" });
    const queue = el("p", { id: "queue-status" });
    const create = async (request) => {
      try {
        const reply = await call("matchmaker", "CreateGame", request);
        go(`/g/${reply.game.id}`);
      } catch (error) {
        say(notice, explain(error));
      }
    };
    main.append(
      el("section", { class: "panel" }, el("h2", {}, "Play the bot"),
        el("form", { id: "play-bot", onsubmit: (event) => {
          event.preventDefault();
          create({ game: botGame.value, opponent: "SEAT_KIND_BOT", botLevel: Number(level.value) });
        } }, botGame, " ", level, " ", el("button", { type: "submit" }, "Play"))),
      el("section", { class: "panel" }, el("h2", {}, "Play a friend"),
        el("form", { id: "play-friend", onsubmit: (event) => {
          event.preventDefault();
          create({ game: friendGame.value, visibility: "VISIBILITY_PRIVATE", options: parseOptions(options.value) });
        } }, friendGame, " ", options, " ", el("button", { type: "submit" }, "Create, then share the invite code"))),
      el("section", { class: "panel" }, el("h2", {}, "Join by invite code"),
        el("form", { id: "join-code", onsubmit: async (event) => {
          event.preventDefault();
          try {
            const reply = await call("matchmaker", "JoinGame", { inviteCode: code.value.trim() });
            go(`/g/${reply.game.id}`);
          } catch (error) {
            say(notice, explain(error));
          }
        } }, el("label", { for: "invite-code" }, "Code "), code, " ", el("button", { type: "submit" }, "Join"))),
      el("section", { class: "panel" }, el("h2", {}, "Quick match"),
        el("form", { id: "quick-match", onsubmit: (event) => {
          event.preventDefault();
          const stop = new AbortController();
          queue.textContent = "waiting for an opponent…";
          stream("matchmaker", "JoinQueue", { game: quickGame.value }, (reply) => {
            if (reply.game) {
              stop.abort();
              go(`/g/${reply.game.id}`);
            } else {
              queue.textContent = `waiting: ${reply.waiting || 0} in the queue`;
            }
          }, stop.signal).catch((error) => say(notice, explain(error)));
        } }, quickGame, " ", el("button", { type: "submit" }, "Find an opponent")), queue),
    );
  }
  main.append(notice);
  const list = el("ul", { id: "games" });
  main.append(el("section", { class: "panel" }, el("h2", {}, "Games"), list));
  browse(list, player, notice);
}

// "scenario=three_way, turn_limit=40" -> {scenario: "three_way", turn_limit: "40"}.
function parseOptions(text) {
  const options = {};
  for (const pair of text.split(/[,;]/)) {
    const [name, ...rest] = pair.split("=");
    if (name.trim() && rest.length) options[name.trim()] = rest.join("=").trim();
  }
  return options;
}

async function browse(list, player, notice) {
  for (const status of ["GAME_STATUS_OPEN", "GAME_STATUS_RUNNING"]) {
    let reply;
    try {
      reply = await call("matchmaker", "BrowseGames", { status, pageSize: 20 });
    } catch (error) {
      say(notice, explain(error));
      return;
    }
    for (const game of reply.games || []) {
      const seats = (game.seats || []).map((s) => `${s.side}: ${s.player ? s.player.displayName : "open"}`);
      const item = el("li", {}, el("a", { href: `/g/${game.id}`, onclick: (event) => { event.preventDefault(); go(`/g/${game.id}`); } },
        `${game.game} — ${seats.join(", ")}`), status === "GAME_STATUS_OPEN" ? " (open)" : " (playing)");
      if (player && status === "GAME_STATUS_OPEN") {
        for (const seat of game.seats || []) {
          if (seat.player || seat.kind === "SEAT_KIND_BOT") continue;
          item.append(" ", el("button", { onclick: async () => {
            try {
              await call("matchmaker", "JoinGame", { gameId: game.id, side: seat.side });
              go(`/g/${game.id}`);
            } catch (error) {
              say(notice, explain(error));
            }
          } }, `join as ${seat.side}`));
        }
      }
      list.append(item);
    }
  }
  if (!list.children.length) list.append(el("li", {}, "no games yet"));
}

// --- a game ------------------------------------------------------------------------------

function seconds(duration) {
  return duration ? parseFloat(duration) : 0;
}

function clockText(left) {
  const whole = Math.max(0, Math.ceil(left));
  const minutes = Math.floor(whole / 60);
  return `${minutes}:${String(whole % 60).padStart(2, "0")}`;
}

const descriptions = {};

class Game {
  constructor(id, player) {
    this.id = id;
    this.player = player;
    this.view = null;
    this.board = null;
    this.selected = "";
    this.targets = new Map();
    this.last = new Set();
    this.stop = new AbortController();
    this.closed = false;
    this.ticker = 0;
    this.deployment = new Deployment(id);
    this.revealing = false;
  }

  close() {
    this.closed = true;
    this.stop.abort();
    clearInterval(this.ticker);
  }

  async start() {
    this.notice = el("p", { id: "notice", role: "alert" });
    this.status = el("p", { id: "status", "aria-live": "polite" });
    this.connection = el("span", { id: "connection" });
    this.seats = el("ul", { id: "seats" });
    this.svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    this.svg.id = "board";
    this.moves = el("ol", { id: "moves" });
    this.legend = el("ul", { id: "legend" });
    this.actions = el("div", { id: "actions" });
    this.controls = el("div", { id: "controls" });
    this.notation = el("input", { id: "notation", autocomplete: "off", "aria-label": "your move in notation" });
    const form = el("form", { id: "move-form", onsubmit: (event) => { event.preventDefault(); this.typed(); } },
      el("label", { for: "notation" }, "Move "), this.notation, " ", el("button", { type: "submit" }, "Play"));
    // A secret array (Napoleonic Attack at Dawn or sealed): shown only while deploying.
    this.array = el("input", { id: "array", autocomplete: "off", "aria-label": "your secret array, placements like a2=A", oninput: () => this.render() });
    this.commitButton = el("button", { type: "submit", id: "commit-array" }, "Commit in secret");
    this.arrayNote = el("span", { id: "array-note" });
    this.deployForm = el("form", { id: "deploy", hidden: true, onsubmit: (event) => { event.preventDefault(); this.commitArray(); } },
      el("label", { for: "array" }, "Your array "), this.array, " ", this.commitButton, " ", this.arrayNote);
    main.replaceChildren(
      el("div", { class: "game" },
        el("div", { class: "board-column" }, this.status, this.svg, this.notice, this.deployForm, form, this.actions, this.controls),
        el("aside", {}, el("h2", {}, "Players ", this.connection), this.seats, el("h2", {}, "Moves"), this.moves,
          el("h2", {}, "Pieces"), this.legend)),
    );
    try {
      const reply = await call("matchmaker", "GetGame", { gameId: this.id });
      await this.show(reply.game);
    } catch (error) {
      say(this.notice, explain(error));
      return;
    }
    this.ticker = setInterval(() => this.tick(), 250);
    this.watch();
  }

  async describe(view) {
    const key = `${view.game}:${JSON.stringify((view.state || {}).options || {})}`;
    if (!descriptions[key]) {
      descriptions[key] = call("engine", "DescribeGame", { game: view.game, options: (view.state || {}).options || {} });
    }
    const description = await descriptions[key];
    this.initialState = description.initialState || {};
    return description.board;
  }

  // Each side's alliance (its own id when the game does not say), as the CLI reads them.
  alliances() {
    const found = {};
    for (const side of this.board.sides || []) if (side.alliance) found[side.id] = side.alliance;
    const napoleonic = ((this.view && this.view.state) || {}).napoleonic || {};
    for (const player of napoleonic.players || []) if (player.alliance) found[player.id] = player.alliance;
    return found;
  }

  // The position the drawing is oriented by: the game's start (the current one before it).
  reference() {
    const state = (this.view && this.view.state) || {};
    return (this.initialState.pieces || []).length ? this.initialState : state;
  }

  // The quarter turns that put my army (and my allies') at the bottom, from the start.
  turns() {
    return turnsFor(this.board, this.reference(), this.mySide(), this.alliances());
  }

  // Follow the game live; reopen the stream from the last version seen when it breaks.
  async watch() {
    let delay = 250;
    while (!this.closed) {
      try {
        this.connection.textContent = "";
        await stream("matchmaker", "WatchGame",
          { gameId: this.id, afterVersion: String(this.version()), followRematch: true },
          (update) => { delay = 250; this.update(update); }, this.stop.signal);
        if (this.closed) return;
        if (this.view && this.view.status === "GAME_STATUS_FINISHED") return;
      } catch (error) {
        if (this.closed) return;
        this.connection.textContent = "(reconnecting…)";
        if (error.retryAfter) delay = Math.max(delay, error.retryAfter * 1000);
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 5000);
    }
  }

  version() {
    return this.view ? Number(this.view.version || 0) : 0;
  }

  update(update) {
    if (update.notice) {
      const notice = update.notice;
      if (notice.kind === "NOTICE_KIND_REMATCH_OFFERED" && notice.gameId) {
        this.controls.append(el("p", { id: "rematch-offer" }, `${notice.side} offers a rematch: `,
          el("a", { href: `/g/${notice.gameId}`, onclick: (event) => { event.preventDefault(); this.joinRematch(notice.gameId); } }, "play again")));
      }
      if (notice.kind === "NOTICE_KIND_DISCONNECTED" || notice.kind === "NOTICE_KIND_RECONNECTED") {
        const seat = ((this.view && this.view.seats) || []).find((s) => s.side === notice.side);
        if (seat) seat.connected = notice.kind === "NOTICE_KIND_RECONNECTED";
        if (notice.kind === "NOTICE_KIND_RECONNECTED" && this.notice.dataset.kind === "info") say(this.notice, "", "info");
        this.drawSeats();
      }
      if (notice.kind === "NOTICE_KIND_ABANDON_WARNING") say(this.notice, `${notice.side} has left and loses unless back soon`, "info");
    }
    if (update.game) this.show(update.game);
  }

  async joinRematch(gameId) {
    try {
      await call("matchmaker", "JoinGame", { gameId });
    } catch (error) {
      if (error.reason !== "SEAT_TAKEN" && error.reason !== "GAME_NOT_OPEN") {
        say(this.notice, explain(error));
      }
    }
    go(`/g/${gameId}`);
  }

  async show(view) {
    if (this.view && Number(view.version || 0) < this.version()) return;
    if (this.view && Number(view.version || 0) === this.version()) {
      this.view = view; // the same position (a stream's copy of a reply): keep the selection
      this.render();
      return;
    }
    const before = this.view ? this.view.state : null;
    this.view = view;
    this.shownAt = Date.now();
    this.board = await this.describe(view);
    if (before) this.last = changedCells(before, view.state || {});
    this.selected = "";
    this.targets = new Map();
    this.render();
    this.listActions();
    this.automatic();
  }

  mySide() {
    return this.view ? this.view.yourSide || "" : "";
  }

  phase() {
    return (((this.view && this.view.state) || {}).napoleonic || {}).phase || "";
  }

  // Whether I am placing a secret array now.
  deploying() {
    return this.myTurn() && [COMMIT, SEALED].includes(this.phase());
  }

  // The state drawn: with my secret array (being written, or kept until the reveal) on my
  // rows, for my eyes only.
  shownState(state) {
    const mine = this.mySide();
    if (!mine || ![COMMIT, SEALED, REVEAL].includes(this.phase())) return state;
    const text = this.deploying() ? this.array.value : (this.deployment.kept(mine) || {}).array || "";
    const extra = this.deployment.pieces(this.board, text, mine);
    return extra.length ? { ...state, pieces: [...(state.pieces || []), ...extra] } : state;
  }

  drawDeployment(state) {
    const mine = this.mySide();
    const kept = mine && this.phase() === COMMIT && this.deployment.kept(mine);
    this.deployForm.hidden = !this.deploying() && !kept;
    this.array.disabled = this.commitButton.hidden = !this.deploying();
    if (this.deploying()) {
      this.arrayNote.textContent = this.deployment.remaining(this.board, state, this.array.value, mine);
    } else if (kept) {
      this.array.value = kept.array;
      this.arrayNote.textContent = "committed: only its digest was sent; your array stays in this browser until the reveal";
    }
  }

  async commitArray() {
    try {
      const action = await this.deployment.action(this.view.state, this.phase(), this.array.value, this.mySide());
      if (await this.submit(action)) this.array.value = "";
    } catch (error) {
      say(this.notice, explain(error));
    }
  }

  // Reveal my kept array when the reveal phase comes, by itself, as the CLI does.
  async automatic() {
    const mine = this.mySide();
    if (!mine || this.revealing || this.phase() !== REVEAL || !this.myTurn()) return;
    this.revealing = true;
    try {
      // Both players reveal at once: a reveal refused because the other's came first
      // (VERSION_CONFLICT) is sent again on the game as it now is.
      for (let tries = 0; tries < 3 && this.phase() === REVEAL && this.myTurn(); tries++) {
        const action = this.deployment.reveal(mine);
        if (!action) return;
        if (await this.submit(action)) {
          this.deployment.forget(mine);
          return;
        }
        await this.show((await call("matchmaker", "GetGame", { gameId: this.id })).game);
      }
    } catch (error) {
      say(this.notice, explain(error));
    } finally {
      this.revealing = false;
    }
  }

  myTurn() {
    const state = (this.view && this.view.state) || {};
    return this.view && this.view.status === "GAME_STATUS_RUNNING" && (state.toAct || []).includes(this.mySide());
  }

  render() {
    const view = this.view;
    const state = view.state || {};
    const turns = this.turns();
    this.svg.dataset.turns = String(turns);
    const symbols = draw(this.svg, turned(withState(this.board, state), turns), this.shownState(state),
      { last: this.last, selected: this.selected, targets: new Set(this.targets.keys()),
        upper: bottomSide(this.board, this.reference()) },
      (cell) => this.clicked(cell));
    this.svg.dataset.version = String(view.version || 0);
    this.legend.replaceChildren(...symbols.legend(this.board).map((line) => el("li", {}, line)));
    this.moves.replaceChildren(...(view.moves || []).map((move) => el("li", {}, move)));
    this.moves.scrollTop = this.moves.scrollHeight;
    this.drawSeats();
    this.drawDeployment(state);
    let text;
    if (view.status === "GAME_STATUS_OPEN") {
      text = view.inviteCode ? `Waiting for an opponent — invite code ${view.inviteCode}` : "Waiting for players";
    } else if (view.status === "GAME_STATUS_FINISHED") {
      const outcome = view.outcome || state.outcome || {};
      text = `Game over: ${outcome.message || (outcome.winner ? outcome.winner + " wins" : "draw")}`;
    } else {
      const toAct = (state.toAct || []).join(", ");
      text = this.myTurn() ? `Your move (${this.mySide()})` : `${toAct} to move`;
    }
    this.status.textContent = text;
    this.status.dataset.status = view.status || "";
    this.drawControls();
  }

  drawSeats() {
    const view = this.view;
    const clock = view.clock || {};
    this.seats.replaceChildren(...(view.seats || []).map((seat) => {
      const name = seat.player ? seat.player.displayName : "open";
      const bot = seat.kind === "SEAT_KIND_BOT" ? ` (bot level ${seat.botLevel || ""})` : "";
      const presence = seat.kind === "SEAT_KIND_BOT" ? "" : seat.connected ? " ●" : " ○";
      const item = el("li", { "data-side": seat.side, class: seat.side === this.mySide() ? "mine" : "" },
        `${seat.side}: ${name}${bot}`, el("span", { class: "presence", title: seat.connected ? "here" : "away" }, presence));
      if (clock.remaining && seat.side in clock.remaining) item.append(" ", el("span", { class: "clock", "data-side": seat.side }));
      return item;
    }));
    this.tick();
  }

  tick() {
    const clock = (this.view && this.view.clock) || null;
    if (!clock || !clock.remaining) return;
    const running = (clock.running || "").split(",").filter(Boolean);
    const asOf = clock.asOf ? Date.parse(clock.asOf) : this.shownAt;
    const live = this.view.status === "GAME_STATUS_RUNNING";
    for (const span of this.seats.querySelectorAll(".clock")) {
      const side = span.dataset.side;
      let left = seconds(clock.remaining[side]);
      if (live && running.includes(side)) left -= (Date.now() - asOf) / 1000;
      span.textContent = clockText(left);
      span.classList.toggle("running", live && running.includes(side));
    }
  }

  drawControls() {
    const view = this.view;
    const state = view.state || {};
    const mine = this.mySide();
    this.controls.replaceChildren();
    if (!mine) {
      if (view.status === "GAME_STATUS_OPEN" && this.player) {
        for (const seat of view.seats || []) {
          if (!seat.player && seat.kind !== "SEAT_KIND_BOT") {
            this.controls.append(el("button", { onclick: () => this.act("JoinGame", { gameId: this.id, side: seat.side }) }, `Join as ${seat.side}`), " ");
          }
        }
      }
      return;
    }
    if (view.status === "GAME_STATUS_RUNNING") {
      this.controls.append(el("button", { id: "resign", onclick: () => { if (confirm("Resign this game?")) this.act("Resign", { gameId: this.id }); } }, "Resign"), " ");
      if (state.drawOffer && state.drawOffer !== mine) {
        this.controls.append(el("button", { id: "accept-draw", onclick: () => this.act("AnswerDraw", { gameId: this.id, accept: true }) }, "Accept the draw"), " ",
          el("button", { id: "decline-draw", onclick: () => this.act("AnswerDraw", { gameId: this.id, accept: false }) }, "Decline"));
      } else if (!state.drawOffer) {
        this.controls.append(el("button", { id: "offer-draw", onclick: () => this.act("OfferDraw", { gameId: this.id }) }, "Offer a draw"));
      } else {
        this.controls.append(el("span", {}, "draw offered"));
      }
    }
    if (view.status === "GAME_STATUS_FINISHED") {
      if (view.rematchGameId) {
        this.controls.append(el("a", { href: `/g/${view.rematchGameId}`, onclick: (event) => { event.preventDefault(); this.joinRematch(view.rematchGameId); } }, "Go to the rematch"));
      } else {
        this.controls.append(el("button", { id: "rematch", onclick: async () => {
          try {
            const reply = await call("matchmaker", "Rematch", { gameId: this.id });
            go(`/g/${reply.game.id}`);
          } catch (error) {
            say(this.notice, explain(error));
          }
        } }, "Rematch"));
      }
    }
  }

  async act(method, request) {
    try {
      const reply = await call("matchmaker", method, request);
      say(this.notice, "", "info");
      if (reply.game) await this.show(reply.game);
    } catch (error) {
      say(this.notice, explain(error));
    }
  }

  // The actions with no cell to click (phase steps: end, declare, commit, pass, ...).
  async listActions() {
    this.actions.replaceChildren();
    if (!this.myTurn()) return;
    let reply;
    try {
      reply = await call("engine", "ListLegalActions", { state: this.view.state });
    } catch (error) {
      return;
    }
    const names = new Set(this.board.cells.map((c) => c.name));
    const plain = (reply.actions || []).filter((a) => a.notation && cellsIn(a.notation, names).length === 0);
    const buttons = plain.slice(0, 12).map((a) => el("button", { class: "action", onclick: () => this.submit(a.action) }, a.notation));
    if (buttons.length) this.actions.append(el("span", {}, "Actions: "), ...buttons);
  }

  async clicked(cell) {
    if (!this.myTurn()) return;
    if (this.deploying()) {
      const row = this.board.cells.find((c) => c.name === cell);
      if (row && (row.tags || []).includes(`deployment:${this.mySide()}`)) {
        this.array.value = `${this.array.value.trim()} ${cell}=`.trim();
        this.array.focus();
      }
      return;
    }
    if (this.selected && this.targets.has(cell)) {
      const choices = this.targets.get(cell);
      this.selected = "";
      this.targets = new Map();
      if (choices.length === 1) {
        await this.submit(choices[0].action);
      } else {
        this.actions.replaceChildren(el("span", {}, "Which? "),
          ...choices.map((a) => el("button", { class: "action", onclick: () => this.submit(a.action) }, a.notation)));
      }
      return;
    }
    if (this.selected === cell) {
      this.selected = "";
      this.targets = new Map();
      this.render();
      return;
    }
    try {
      const reply = await call("engine", "ListLegalActions", { state: this.view.state, cell });
      const names = new Set(this.board.cells.map((c) => c.name));
      this.targets = new Map();
      for (const legal of reply.actions || []) {
        const named = cellsIn(legal.notation || "", names, cell);
        const target = named.length ? named[named.length - 1] : cell;
        if (!this.targets.has(target)) this.targets.set(target, []);
        this.targets.get(target).push(legal);
      }
      this.selected = this.targets.size ? cell : "";
      if (!this.targets.size) say(this.notice, `nothing to do from ${cell}`, "info");
      else say(this.notice, "", "info");
      this.render();
    } catch (error) {
      say(this.notice, explain(error));
    }
  }

  async typed() {
    const text = this.notation.value.trim();
    if (!text || !this.view) return;
    if (this.deploying() && /^commit\s.*=/.test(text)) {
      // An array typed as the CLI's `commit a2=A ...`: only its digest leaves this page.
      this.array.value = text.replace(/^commit\s+/, "").replace(/\s+salt\s+\S+$/, "");
      this.notation.value = "";
      await this.commitArray();
      return;
    }
    const side = (this.mySide() || ((this.view.state || {}).toAct || [])[0] || "");
    // Cleared once played, unless the next move is being typed already (a late reply).
    if (await this.submit({ side, notation: text }) && this.notation.value.trim() === text) this.notation.value = "";
  }

  async submit(action) {
    const key = crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2);
    try {
      const reply = await call("matchmaker", "SubmitActions", {
        gameId: this.id, expectedVersion: String(this.version()), idempotencyKey: key, actions: [action],
      });
      say(this.notice, "", "info");
      await this.show(reply.game);
      return true;
    } catch (error) {
      say(this.notice, explain(error));
      this.render();
      return false;
    }
  }
}

// The cells whose pieces changed between two states: the last move's marks.
function changedCells(before, after) {
  const at = (state) => {
    const map = {};
    for (const piece of state.pieces || []) map[piece.cell] = (map[piece.cell] || "") + `${piece.side}:${piece.kind}:${piece.id || ""};`;
    return map;
  };
  const a = at(before);
  const b = at(after);
  const changed = new Set();
  for (const cell of new Set([...Object.keys(a), ...Object.keys(b)])) if (a[cell] !== b[cell]) changed.add(cell);
  return changed;
}

route();
