// The fairness check (GET /app/fairness), in the browser: a finished spin or grid recomputed from the revealed server
// seed, the client seed and the nonce, and the seed checked against the hash committed before play. Values come from
// the form or from the URL's fragment (#game=wheel&server_seed=…&hash=…&client_seed=…&nonce=…&weights=…), which never
// reaches the server: the mini-app links a revealed spin here that way. The check runs entirely in this page.
import { type FairInput, GRID_CELLS, gridLayout, pickWeighted, seedHash, verify } from "./fair";

declare global {
  interface Window {
    /** The page's own algorithm, for a player's console (and the test that feeds it the server's outcomes). */
    heraldFair?: { verify: typeof verify; seedHash: typeof seedHash; pickWeighted: typeof pickWeighted; gridLayout: typeof gridLayout };
  }
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const field = (id: string) => $<HTMLInputElement>(id);

function readForm(): FairInput {
  return {
    game: $<HTMLSelectElement>("game").value === "grid" ? "grid" : "wheel",
    serverSeed: field("server-seed").value,
    hash: field("hash").value,
    clientSeed: field("client-seed").value,
    nonce: field("nonce").value,
    weights: field("weights").value,
  };
}

function showGame(): void {
  $("weights-row").hidden = $<HTMLSelectElement>("game").value === "grid";
}

function line(text: string, className = ""): HTMLParagraphElement {
  const p = document.createElement("p");
  p.textContent = text;
  if (className) p.className = className;
  return p;
}

async function run(): Promise<void> {
  const out = $("result");
  const input = readForm();
  const r = await verify(input);
  if (!r.ok) {
    out.replaceChildren(...r.problems.map((p) => line(p, "bad")));
    out.dataset.state = "invalid";
    return;
  }
  const parts: HTMLElement[] = [];
  if (r.hashMatches === true) parts.push(line("✔ The server seed matches the hash committed before play: the server could not change it afterwards.", "good"));
  else if (r.hashMatches === false)
    parts.push(
      line(`✘ The server seed does NOT match the committed hash: SHA-256 of this seed is ${r.computedHash}. Check that you copied both exactly.`, "bad"),
    );
  else parts.push(line(`SHA-256 of this server seed: ${r.computedHash}. Enter the hash you were shown before play to compare.`));
  if (r.segment !== null) {
    parts.push(line(`The spin lands on segment ${r.segment} (counting from 0, in the order of the weights).`, "outcome"));
  }
  if (r.layout !== null) {
    parts.push(line("The grid's layout (position: cell):", "outcome"));
    const grid = document.createElement("ol");
    grid.className = "grid";
    grid.id = "layout";
    grid.setAttribute("aria-label", "The grid's 25 positions, row by row");
    for (const [position, cell] of r.layout.entries()) {
      const li = document.createElement("li");
      li.textContent = GRID_CELLS[cell] ?? "?";
      li.title = `position ${position}: cell ${cell}`;
      li.dataset.cell = String(cell);
      if (cell < 10) li.className = "prize";
      grid.append(li);
    }
    parts.push(grid);
  }
  out.replaceChildren(...parts);
  out.dataset.state = r.hashMatches === false ? "mismatch" : "done";
  out.dataset.segment = r.segment === null ? "" : String(r.segment);
  out.dataset.layout = r.layout === null ? "" : r.layout.join(",");
}

/** Fills the form from the fragment; true when it named a server seed (then the check runs at once). */
function fromFragment(): boolean {
  const f = new URLSearchParams(location.hash.slice(1));
  const set = (id: string, key: string) => {
    const v = f.get(key);
    if (v !== null) field(id).value = v;
  };
  const game = f.get("game");
  if (game === "wheel" || game === "grid") $<HTMLSelectElement>("game").value = game;
  set("server-seed", "server_seed");
  set("hash", "hash");
  set("client-seed", "client_seed");
  set("nonce", "nonce");
  set("weights", "weights");
  showGame();
  return f.has("server_seed");
}

window.heraldFair = { verify, seedHash, pickWeighted, gridLayout };
$("game").addEventListener("change", showGame);
$<HTMLFormElement>("check").addEventListener("submit", (event) => {
  event.preventDefault();
  void run();
});
if (fromFragment()) void run();
window.Telegram?.WebApp?.ready?.();
