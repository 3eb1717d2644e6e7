// Boards drawn as SVG from DescribeGame's description, never from knowledge of a game:
// square or diamond cells at their (x, y) (y upwards), the features (rivers, river cells,
// closed sides), and the pieces with the CLI's legend: the kind's chess glyph, outlined
// for the side at the bottom of the drawing (and its allies) and filled for the other, or
// the notation letter (capitals for the bottom side) when two kinds in play share a glyph.

const SVG = "http://www.w3.org/2000/svg";
const OUTLINED = "♔♕♖♗♘♙";
const FILLED = "♚♛♜♝♞♟";

function element(name, attributes = {}, text = "") {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text) node.textContent = text;
  return node;
}

function pairedGlyph(glyph, outlined) {
  for (const row of [OUTLINED, FILLED]) {
    const at = glyph.length === 1 ? row.indexOf(glyph) : -1;
    if (at >= 0) return (outlined ? OUTLINED : FILLED)[at];
  }
  return "";
}

// The side whose pieces (or deployment cells) are lowest in the engine's drawing.
export function bottomSide(board, state) {
  const yOf = Object.fromEntries(board.cells.map((c) => [c.name, c.y || 0]));
  const heights = {};
  for (const piece of state.pieces || []) {
    if (piece.cell in yOf) (heights[piece.side] ||= []).push(yOf[piece.cell]);
  }
  if (Object.keys(heights).length < 2) {
    for (const cell of board.cells) {
      for (const tag of cell.tags || []) {
        if (tag.startsWith("deployment:")) (heights[tag.split(":")[1]] ||= []).push(cell.y || 0);
      }
    }
  }
  const sides = Object.keys(heights);
  if (!sides.length) return board.sides.length ? board.sides[0].id : "";
  const mean = (s) => heights[s].reduce((a, b) => a + b, 0) / heights[s].length;
  return sides.reduce((best, s) => (mean(s) < mean(best) ? s : best));
}

// Each side's men on the board ([x, y]), or its deployment cells when it has none.
function positions(board, state) {
  const at = Object.fromEntries(board.cells.map((c) => [c.name, [c.x || 0, c.y || 0]]));
  const found = {};
  const placed = new Set();
  for (const piece of state.pieces || []) {
    placed.add(piece.side);
    if (piece.cell in at) (found[piece.side] ||= []).push(at[piece.cell]);
  }
  for (const cell of board.cells) {
    for (const tag of cell.tags || []) {
      const side = tag.startsWith("deployment:") ? tag.split(":")[1] : "";
      if (side && !placed.has(side)) (found[side] ||= []).push([cell.x || 0, cell.y || 0]);
    }
  }
  return found;
}

// The quarter turns (anticlockwise) that put `side`'s army, and its allies', at the bottom
// of the drawing, as the CLI turns it (render/board.py, turns_for): allies share one
// orientation; an army from the west edge gets a quarter turn; 0 for a spectator.
export function turnsFor(board, state, side, alliances = {}) {
  const ours = alliances[side] || side;
  const mine = [];
  const theirs = [];
  for (const [owner, points] of Object.entries(positions(board, state))) {
    ((alliances[owner] || owner) === ours ? mine : theirs).push(...points);
  }
  if (!side || !mine.length || !theirs.length) return 0;
  const mean = (points, i) => points.reduce((sum, p) => sum + p[i], 0) / points.length;
  const dx = mean(mine, 0) - mean(theirs, 0);
  const dy = mean(mine, 1) - mean(theirs, 1);
  if (Math.abs(dx) > Math.abs(dy)) return dx < 0 ? 1 : 3;
  return dy <= 0 ? 0 : 2;
}

// The cell tags a state decides, as the CLI reads them: DescribeGame draws the board of the
// options, while a game started from a set-up text has its Citadels (Game of War) in its
// state, and Napoleonic terrain (hills, redoubts, redoubts being built) is the state's.
function stateTags(state) {
  const war = state.war || {};
  if (war.southCitadel && war.northCitadel) {
    return { kinds: ["citadel"], cells: { [war.southCitadel]: ["citadel"], [war.northCitadel]: ["citadel"] } };
  }
  if (!state.napoleonic) return null;
  const terrain = state.napoleonic.terrain || {};
  const cells = {};
  const add = (cell, tag) => { if (cell) cells[cell] = [...(cells[cell] || []), tag]; };
  for (const hill of terrain.hills || []) add(hill, "hill");
  for (const redoubt of terrain.redoubts || []) add(redoubt.cell, "redoubt");
  for (const site of terrain.constructions || []) add(site.cell, "redoubt_site");
  return { kinds: ["hill", "redoubt", "redoubt_site"], cells };
}

// The board with the tags `state` decides in place of its own tags of those kinds.
export function withState(board, state) {
  const decided = stateTags(state || {});
  if (!decided) return board;
  return {
    ...board,
    cells: board.cells.map((cell) => ({
      ...cell,
      tags: [...(cell.tags || []).filter((tag) => !decided.kinds.includes(tag)), ...(decided.cells[cell.name] || [])],
    })),
  };
}

// The board turned `turns` quarter turns anticlockwise within its frame (width and height
// swap on a quarter turn); the cells keep their names.
export function turned(board, turns) {
  turns = ((turns % 4) + 4) % 4;
  if (!turns) return board;
  const width = board.width || 1;
  const height = board.height || 1;
  const turn = (x = 0, y = 0) => {
    if (turns === 1) return { x: height - y, y: x };
    if (turns === 2) return { x: width - x, y: height - y };
    return { x: y, y: width - x };
  };
  return {
    ...board,
    width: turns === 2 ? width : height,
    height: turns === 2 ? height : width,
    cells: board.cells.map((cell) => ({ ...cell, ...turn(cell.x, cell.y) })),
    features: (board.features || []).map((feature) => ({
      ...feature,
      points: (feature.points || []).map((point) => ({ ...point, ...turn(point.x, point.y) })),
    })),
  };
}

// How pieces are written, as the CLI's Symbols: glyphs by side, or letters by case.
export class Symbols {
  constructor(board, state, upper = bottomSide(board, state)) {
    this.kinds = Object.fromEntries(board.pieceKinds.map((k) => [k.id, k]));
    const alliance = Object.fromEntries(board.sides.map((s) => [s.id, s.alliance || s.id]));
    this.upperSides = new Set(board.sides.filter((s) => alliance[s.id] === alliance[upper]).map((s) => s.id));
    this.upperSides.add(upper);
    this.upper = upper;
    const present = new Set((state.pieces || []).map((p) => p.kind));
    const families = {};
    for (const id of present.size ? present : Object.keys(this.kinds)) {
      const kind = this.kinds[id];
      const family = kind ? pairedGlyph(kind.glyph || "", false) : "";
      if (family) families[family] = (families[family] || 0) + 1;
    }
    this.glyphOk = new Set(Object.keys(families).filter((f) => families[f] === 1));
    this.present = present;
  }

  glyph(kindId, side) {
    const kind = this.kinds[kindId];
    if (!kind || !this.glyphOk.has(pairedGlyph(kind.glyph || "", false))) return "";
    return pairedGlyph(kind.glyph, this.upperSides.has(side));
  }

  letter(kindId, side) {
    const kind = this.kinds[kindId];
    const letter = ((kind && (kind.letter || kind.name)) || "?").slice(0, 1);
    return this.upperSides.has(side) ? letter.toUpperCase() : letter.toLowerCase();
  }

  of(kindId, side) {
    return this.glyph(kindId, side) || this.letter(kindId, side);
  }

  // The legend: each kind in play with its symbols and letter, as the CLI's panel lists them.
  legend(board) {
    const lower = board.sides.find((s) => !this.upperSides.has(s.id));
    const inPlay = board.pieceKinds.filter((kind) => !this.present.size || this.present.has(kind.id));
    return inPlay.map((kind) => {
      const glyphs = this.glyph(kind.id, this.upper) + (lower ? this.glyph(kind.id, lower.id) : "");
      const letter = this.letter(kind.id, this.upper);
      return glyphs ? `${glyphs} ${letter} ${kind.name}` : `${letter} ${kind.name}`;
    });
  }
}

const COLOURS = { blue: "#2456c7", red: "#c0392b", white: "#f4f1e8", black: "#202020" };

function colourOf(board, sideId) {
  const side = board.sides.find((s) => s.id === sideId);
  const named = side ? side.colour || "" : "";
  return COLOURS[named] || named || "#555";
}

function lightText(colour) {
  const hex = colour.startsWith("#") && colour.length === 7 ? colour : "#555555";
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  return 0.299 * r + 0.587 * g + 0.114 * b > 150;
}

// Draw `state` on `board` into the <svg> `svg`. `marks`: {last: Set of cells, selected:
// cell, targets: Set of cells, upper: the side written as the bottom one (capitals, outlined
// glyphs), by default the lowest in this drawing}. `onCell(name)` is called for a click or Enter on a cell.
export function draw(svg, board, state, marks, onCell) {
  const width = board.width || 1;
  const height = board.height || 1;
  const diamonds = board.cells.some((c) => c.shape === "CELL_SHAPE_DIAMOND");
  const pad = diamonds ? 1 : 0;
  svg.replaceChildren();
  svg.setAttribute("viewBox", `${-pad} ${-pad} ${width + 2 * pad} ${height + 2 * pad}`);
  svg.setAttribute("role", "grid");
  svg.setAttribute("aria-label", board.title || board.game);
  const Y = (y) => height - (y || 0);
  const symbols = new Symbols(board, state, marks.upper || bottomSide(board, state));
  const byCell = {};
  for (const piece of state.pieces || []) (byCell[piece.cell] ||= []).push(piece);
  const cells = element("g", { class: "cells" });
  for (const cell of board.cells) {
    const x = cell.x || 0;
    const y = Y(cell.y);
    const tags = cell.tags || [];
    const classes = ["cell", ...tags.map((t) => "tag-" + t.replace(/[^a-z0-9]+/gi, "-"))];
    if (marks.last && marks.last.has(cell.name)) classes.push("last");
    if (marks.selected === cell.name) classes.push("selected");
    if (marks.targets && marks.targets.has(cell.name)) classes.push("target");
    const pieces = byCell[cell.name] || [];
    const label = [cell.name, ...tags.filter((t) => !/^(dark|light|bank:)/.test(t)),
      ...pieces.map((p) => `${p.side} ${symbols.kinds[p.kind] ? symbols.kinds[p.kind].name : p.kind}`)];
    const group = element("g", {
      class: classes.join(" "),
      "data-cell": cell.name,
      tabindex: "0",
      role: "gridcell",
      "aria-label": label.join(", "),
    });
    const shape = diamonds || cell.shape === "CELL_SHAPE_DIAMOND"
      ? element("polygon", { points: `${x - 1},${y} ${x},${y - 1} ${x + 1},${y} ${x},${y + 1}` })
      : element("rect", { x: x - 0.5, y: y - 0.5, width: 1, height: 1 });
    shape.setAttribute("class", "ground");
    group.append(shape);
    if (!diamonds) group.append(element("text", { x: x - 0.46, y: y + 0.44, class: "coord" }, cell.name));
    if (cell.label && !pieces.length) {
      group.append(element("text", { x, y: y + 0.12, class: "label" }, cell.label));
    }
    if (tags.includes("station")) group.append(element("circle", { cx: x + 0.32, cy: y - 0.32, r: 0.08, class: "station" }));
    if (tags.includes("citadel")) group.append(element("rect", { x: x - 0.45, y: y - 0.45, width: 0.9, height: 0.9, class: "citadel" }));
    for (const piece of pieces.slice(0, 1)) {
      const fill = colourOf(board, piece.side);
      group.append(element("circle", { cx: x, cy: y, r: 0.42, class: "piece", fill, stroke: lightText(fill) ? "#333" : "#eee" }));
      group.append(element("text", {
        x, y: y + 0.16, class: "glyph", fill: lightText(fill) ? "#111" : "#fff",
        "data-piece": `${piece.side}:${piece.kind}`,
      }, symbols.of(piece.kind, piece.side)));
      if (pieces.length > 1) group.append(element("text", { x: x + 0.35, y: y - 0.25, class: "count" }, String(pieces.length)));
    }
    group.addEventListener("click", () => onCell(cell.name));
    group.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        onCell(cell.name);
      }
    });
    cells.append(group);
  }
  svg.append(cells);
  const features = element("g", { class: "features" });
  for (const feature of board.features || []) {
    const points = (feature.points || []).map((p) => `${p.x || 0},${Y(p.y)}`).join(" ");
    const kind = feature.kind || "feature";
    if (kind === "river_cell" || kind === "area") {
      features.append(element("polygon", { points, class: `feature ${kind}` }));
    } else if ((feature.points || []).length >= 2) {
      features.append(element("polyline", { points, class: `feature ${kind}` }));
    } else if ((feature.points || []).length === 1) {
      const p = feature.points[0];
      features.append(element("circle", { cx: p.x || 0, cy: Y(p.y), r: 0.12, class: `feature ${kind}` }));
    }
  }
  svg.insertBefore(features, cells);
  return symbols;
}

// The cells a notation names, other than `except` ("e3-e5" -> e5; "attack d4>e5" -> e5).
export function cellsIn(notation, names, except = "") {
  // A cell name is a small letter or none, then digits: "Mj1xj10" names j1 and j10, and
  // "34x19" 34 and 19 (x19 being no cell).
  return (notation.match(/[a-z]?\d+/g) || [])
    .map((t) => (names.has(t) ? t : t.slice(1)))
    .filter((t) => names.has(t) && t !== except);
}
