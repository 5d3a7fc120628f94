// The recon grid on the mini-app's page: start a grid, reveal cells on a 5×5 board (a missile each), buy missiles
// with points (off, with the reason, when short), and the check link of the last grid that ended.
import { api, checkLink, clearMessages, inWords, keepInView, randomHex, say, setButton } from "./api";
import { $, h } from "./dom";
import { rewardText, t } from "./i18n";
import { currentCatalog, gameOpen, later, onRefresh, priceOf, refresh, setBalances, whenCatalogChanges } from "./state";
import { haptic, whilePlaying } from "./telegram";
import type { Catalog, GridStatus, GridView, Reward } from "./wire";

const GRID_SIZE = 25;
const BUNDLES = [1, 5] as const;

/** The next grid's committed seed hash, as the last status published it (none before the first read). */
let nextHash: string | undefined;
/** The grid as last read or answered: redrawn when the balances change. */
let shown: GridStatus | null = null;
/** The cell revealed last: drawn turning over once. */
let fresh: number | null = null;
let busy = false;

const won = (r: Reward) => r.points + r.free_spins + r.missiles > 0;

function board(grid: GridView, missiles: number): HTMLElement[] {
  const found = new Map(grid.revealed_cells.map((c) => [c.cell, c.reward]));
  return Array.from({ length: GRID_SIZE }, (_, cell) => {
    const reward = found.get(cell);
    const content = reward ? (won(reward) ? rewardText(reward) : t("grid.empty")) : "?";
    const label = reward ? t("grid.cell_shown", { cell: cell + 1, content }) : t("grid.cell_hidden", { cell: cell + 1 });
    const button = h("button", { type: "button", id: `cell-${cell}`, textContent: content, attrs: { "aria-label": label } });
    if (reward) {
      button.className = `${won(reward) ? "prize" : "empty"}${cell === fresh ? " fresh" : ""}`;
      button.disabled = true;
    } else {
      button.setAttribute("aria-describedby", "grid-note");
      button.disabled = missiles < 1 || busy;
      button.onclick = () => void revealCell(grid.grid_id, cell);
    }
    return button;
  });
}

function show(g: GridStatus, c: Catalog): void {
  shown = g;
  nextHash = g.next_server_seed_hash;
  const grid = g.active_grid;
  const open = gameOpen(c, "recon_grid");
  const missiles = g.balances.missile_balance;
  const points = g.balances.points_balance;
  const price = priceOf(c, "missile");
  const start = $<HTMLButtonElement>("grid-start");
  start.hidden = grid !== null || !open;
  start.disabled = busy;
  const notes: string[] = [];
  if (!open && !grid) notes.push(t("grid.closed"));
  else {
    notes.push(grid ? t("grid.progress", { found: grid.prizes_found, total: grid.prizes_total, n: missiles }) : t("grid.about"));
    if (missiles < 1 && price !== null) notes.push(t("grid.need_missile", { cost: t("reward.points", { n: BUNDLES[1] * price }) }));
    // A bundle out of reach is off: say why (its price a missile against the points in hand).
    if (price !== null && points < BUNDLES[1] * price) {
      notes.push(t("grid.buy_short", { cost: t("reward.points", { n: price }), has: t("reward.points", { n: points }) }));
    }
  }
  $("grid-note").textContent = notes.join(" ");
  $("board").replaceChildren(...(grid ? board(grid, missiles) : []));
  for (const n of BUNDLES) {
    const id = `buy-${n}`;
    $(id).hidden = price === null || !open;
    if (price !== null) setButton(id, t("grid.buy", { n, cost: t("reward.points", { n: n * price }) }), points >= n * price && !busy);
  }
  // An ended grid's seed is revealed: the check page recomputes its layout from it (values in the fragment only).
  const ended = g.last_grid?.fairness;
  const check = $<HTMLAnchorElement>("grid-check");
  check.hidden = grid !== null || !ended?.server_seed;
  if (ended?.server_seed) check.href = checkLink("grid", { ...ended, server_seed: ended.server_seed }, ended.nonce);
}

onRefresh("grid", async (catalog) => {
  const [c, g] = await Promise.all([catalog, api("/api/messenger/games/recon-grid/status", {})]);
  show(g, c);
});
whenCatalogChanges((c) => {
  if (shown) show({ ...shown, balances: c.balances }, c);
});

/**
 * One play of the grid's: its controls are off until the answer is drawn (a tap meanwhile is visibly not taken,
 * never silently lost) and the closing confirmation is on. A refusal is read again from the server.
 */
async function play(action: () => Promise<void>): Promise<void> {
  if (busy) return;
  clearMessages();
  busy = true;
  fresh = null;
  const paused = [...document.querySelectorAll<HTMLButtonElement>("#board button, #grid-start, #buy-1, #buy-5")].filter((b) => !b.disabled);
  for (const b of paused) b.disabled = true;
  let refused = false;
  try {
    await whilePlaying(action);
  } catch (err) {
    refused = true;
    say("grid-msg", inWords(err), "bad");
  }
  busy = false;
  const c = currentCatalog();
  if (!refused && shown && c) return show(shown, c);
  // Refused: the grid and balances as the server has them (another device may have played); unread, as they were.
  await refresh(["catalog", "grid"]).catch(() => {
    for (const b of paused) b.disabled = false;
  });
  // The redrawn note (why, and how to go on) may have moved the refusal: it stays where the player looks.
  keepInView($("grid-msg"));
}

export const startGrid = () =>
  play(async () => {
    haptic.tap();
    await api("/api/messenger/games/recon-grid/start", { client_seed: randomHex(8), next_server_seed_hash: nextHash });
    await refresh(["grid"]);
    later(["missions"]);
  });

const revealCell = (gridId: number, cell: number) =>
  play(async () => {
    haptic.select();
    const r = await api("/api/messenger/games/recon-grid/reveal", { request_id: crypto.randomUUID(), grid_id: gridId, cell });
    // The answer is the grid as it now stands: drawn at once, the reads of missions and history after the taps.
    fresh = cell;
    if (shown) shown = r.grid.status === "active" ? { ...shown, active_grid: r.grid } : { ...shown, active_grid: null, last_grid: r.grid };
    setBalances(r.balances);
    const words = won(r.reward) ? t("grid.found", { cell: cell + 1, reward: rewardText(r.reward) }) : t("grid.found_empty", { cell: cell + 1 });
    say("grid-msg", r.grid.status === "active" ? words : `${words} ${t("grid.complete")}`, won(r.reward) ? "good" : "");
    haptic.outcome(won(r.reward));
    later(["missions", "history"]);
  });

export const buyMissiles = (quantity: number) =>
  play(async () => {
    haptic.tap();
    const r = await api("/api/messenger/games/recon-grid/purchase", { request_id: crypto.randomUUID(), quantity });
    setBalances(r.balances);
    say("grid-msg", t("grid.bought", { n: quantity }), "good");
    haptic.success();
    later(["missions", "history"]);
  });
