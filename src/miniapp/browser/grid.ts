// The recon grid on the mini-app's page: start a grid, buy missiles, reveal cells on a 5×5 board of buttons.
import { $, api, type Balances, plural, randomHex, type Reward, rewardText, showBalances, showError } from "./api";
import { loadHistory } from "./history";

interface GridView {
  grid_id: number;
  status: string;
  cells_total: number;
  prizes_total: number;
  prizes_found: number;
  revealed_cells: Array<{ cell: number; reward: Reward }>;
}
interface GridFairness {
  server_seed: string | null;
  server_seed_hash: string;
  client_seed: string;
  nonce: number;
}
interface GridStatus {
  active_grid: GridView | null;
  /** The latest grid that ended: its seed is revealed. */
  last_grid: { grid_id: number; status: string; fairness: GridFairness } | null;
  balances: Balances;
  next_server_seed_hash: string | null;
}
interface Purchase {
  balances: Balances;
}
interface RevealAnswer {
  cell: number;
  reward: Reward;
  grid: { grid_id: number; status: string; prizes_found: number };
  balances: Balances;
}

const GRID_SIZE = 25;

/** The recon grid: a 5×5 board of buttons; a revealed cell shows what it held. */
function showGrid(g: GridStatus): void {
  showBalances(g.balances);
  const board = $("board");
  const grid = g.active_grid;
  $<HTMLButtonElement>("grid-start").hidden = grid !== null;
  $("grid-note").textContent = grid
    ? `Prizes found: ${grid.prizes_found} of ${grid.prizes_total}. Each reveal costs one missile; you have ${plural(g.balances.missile_balance, "missile", "missiles")}.`
    : "Start a grid: ten prizes are hidden among 25 cells; each reveal costs one missile.";
  // An ended grid's seed is revealed: the check page recomputes its layout from it (values in the fragment only).
  const ended = g.last_grid?.fairness;
  const check = $<HTMLAnchorElement>("grid-check");
  check.hidden = grid !== null || !ended?.server_seed;
  if (ended?.server_seed) {
    const fragment = new URLSearchParams({
      game: "grid",
      server_seed: ended.server_seed,
      hash: ended.server_seed_hash,
      client_seed: ended.client_seed,
      nonce: String(ended.nonce),
    });
    check.href = `${document.documentElement.dataset.appBase ?? "/app"}/fairness#${fragment}`;
  }
  if (!grid) {
    board.replaceChildren();
    return;
  }
  const found = new Map(grid.revealed_cells.map((c) => [c.cell, c.reward]));
  board.replaceChildren(
    ...Array.from({ length: GRID_SIZE }, (_, cell) => {
      const button = document.createElement("button");
      button.type = "button";
      button.id = `cell-${cell}`;
      const reward = found.get(cell);
      button.textContent = reward ? (rewardText(reward) === "nothing this time" ? "empty" : rewardText(reward)) : "?";
      button.setAttribute("aria-label", reward ? `Cell ${cell + 1}: ${button.textContent}` : `Cell ${cell + 1}: hidden, reveal it`);
      button.disabled = reward !== undefined;
      if (!reward) button.addEventListener("click", () => void revealCell(grid.grid_id, cell));
      return button;
    }),
  );
}

let gridNext: string | null = null;
export async function loadGrid(): Promise<void> {
  const g = await api<GridStatus>("/api/messenger/games/recon-grid/status", {});
  gridNext = g.next_server_seed_hash;
  showGrid(g);
}

export async function startGrid(): Promise<void> {
  $("error").hidden = true;
  try {
    await api("/api/messenger/games/recon-grid/start", { client_seed: randomHex(8), next_server_seed_hash: gridNext });
    await loadGrid();
  } catch (err) {
    showError(err);
  }
}

async function revealCell(gridId: number, cell: number): Promise<void> {
  $("error").hidden = true;
  try {
    const r = await api<RevealAnswer>("/api/messenger/games/recon-grid/reveal", { request_id: crypto.randomUUID(), grid_id: gridId, cell });
    // The board first, then the words: what the words say is on the board when they appear.
    await Promise.all([loadGrid(), loadHistory()]);
    $("grid-result").textContent =
      `Cell ${cell + 1}: ${rewardText(r.reward) === "nothing this time" ? "empty" : `you found ${rewardText(r.reward)}`}.${r.grid.status === "active" ? "" : " The grid is complete: its seed is revealed in its fairness."}`;
  } catch (err) {
    showError(err);
    await loadGrid().catch(() => undefined);
  }
}

export async function buyMissiles(): Promise<void> {
  $("error").hidden = true;
  try {
    const r = await api<Purchase>("/api/messenger/games/recon-grid/purchase", { request_id: crypto.randomUUID(), quantity: 5 });
    showBalances(r.balances);
    await Promise.all([loadGrid(), loadHistory()]);
  } catch (err) {
    showError(err);
  }
}
