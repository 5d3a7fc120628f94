// The fairness check (GET /app/fairness), in the browser: a finished spin or grid recomputed from the revealed server
// seed, the client seed and the nonce, and the seed checked against the hash committed before play. Values come from
// the form or from the URL's fragment (api.ts checkLink), which never reaches the server.
import { $, h } from "./dom";
import { type FairInput, GRID_CELLS, gridLayout, pickWeighted, seedHash, verify } from "./fair";
import { languageOfInitData, type MessageKey, rewardText, t, translate, useLanguage } from "./i18n";
import { backButton, haptic, loadTelegram, webApp } from "./telegram";
import { followSystemScheme } from "./theme";

declare global {
  interface Window {
    /** The page's own algorithm, for a player's console (and the test that feeds it the server's outcomes). */
    heraldFair?: { verify: typeof verify; seedHash: typeof seedHash; pickWeighted: typeof pickWeighted; gridLayout: typeof gridLayout };
  }
}

const field = (id: string) => $<HTMLInputElement>(id);
const fragment = new URLSearchParams(location.hash.slice(1));

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
  const grid = $<HTMLSelectElement>("game").value === "grid";
  $("weights-row").hidden = grid;
  $("labels-row").hidden = grid;
}

const line = (text: string, className = "", tag: "p" | "h2" = "p") => h(tag, { textContent: text, ...(className ? { className } : {}) });

/** Segment `i` in words: its name from the form (or the game's link), else its place ("segment 2 of 6"). */
function prizeOf(i: number, count: number): string {
  const labels = field("labels").value;
  const names = labels.split("|").map((x) => x.trim());
  return names.length === count && names[i] ? names[i]! : t("fair.nth", { n: i + 1, count });
}

function layoutList(layout: number[]): HTMLElement {
  const cells = layout.map((cell, position) => {
    const reward = GRID_CELLS[cell];
    const prize = reward !== undefined && reward.points + reward.free_spins + reward.missiles > 0;
    const attrs = { "data-cell": String(cell), ...(prize ? { class: "prize" } : {}) };
    return h("li", { textContent: prize ? rewardText(reward) : t("grid.empty"), title: `${position}: ${cell}`, attrs });
  });
  return h("ol", { className: "grid", id: "layout", attrs: { "aria-label": t("fair.layout") } }, ...cells);
}

async function run(fromLink: boolean): Promise<void> {
  const out = $("result");
  const details = $("details");
  const input = readForm();
  const r = await verify(input);
  if (!r.ok) {
    out.replaceChildren(...r.problems.map((p) => line(t(p), "bad")));
    details.replaceChildren();
    out.dataset.state = "invalid";
    out.dataset.verdict = "";
    return;
  }
  const shownRaw = fragment.get("shown");
  const count = input.weights.split(",").filter((w) => w.trim() !== "").length;
  const shown = fromLink && shownRaw !== null && /^\d{1,3}$/.test(shownRaw) ? Number(shownRaw) : null;
  const shownDiffers = r.segment !== null && shown !== null && shown !== r.segment;
  const verdict = r.hashMatches === false || shownDiffers ? "unfair" : r.hashMatches === true ? "fair" : "unchecked";
  const head: MessageKey = verdict === "unfair" ? "fair.bad" : verdict === "unchecked" ? "fair.unchecked" : r.layout ? "fair.ok_grid" : "fair.ok_wheel";
  const parts = [line(t(head), `verdict ${verdict === "fair" ? "good" : verdict === "unfair" ? "bad" : ""}`, "h2")];
  if (r.segment !== null) {
    parts.push(line(t("fair.landed", { prize: prizeOf(r.segment, count) }), "outcome"));
    if (shown !== null) parts.push(line(shownDiffers ? t("fair.shown_other", { prize: prizeOf(shown, count) }) : t("fair.shown_same")));
  } else parts.push(line(t("fair.grid_layout"), "outcome"));
  const hashLine =
    r.hashMatches === true
      ? t("fair.hash_ok")
      : r.hashMatches === false
        ? t("fair.hash_bad", { hash: r.computedHash })
        : t("fair.hash_none", { hash: r.computedHash });
  parts.push(line(hashLine, `hint${r.hashMatches === false ? " bad" : ""}`));
  out.replaceChildren(...parts);
  details.replaceChildren(...(r.layout ? [layoutList(r.layout)] : []));
  out.dataset.state = verdict === "unfair" ? "mismatch" : "done";
  out.dataset.verdict = verdict;
  out.dataset.segment = r.segment === null ? "" : String(r.segment);
  out.dataset.layout = r.layout === null ? "" : r.layout.join(",");
  if (verdict === "fair") haptic.success();
  else if (verdict === "unfair") haptic.error();
}

/** The longest value the fragment may put in each field; its key there is the field's id with "_" for "-". */
const LINKED = { "server-seed": 64, hash: 64, "client-seed": 200, nonce: 16, weights: 800, labels: 2000 };

/** Fills the form from the fragment; true when it named a server seed (then the check runs at once). */
function fromFragment(): boolean {
  const game = fragment.get("game");
  if (game === "wheel" || game === "grid") $<HTMLSelectElement>("game").value = game;
  for (const [id, max] of Object.entries(LINKED)) {
    const v = fragment.get(id.replace("-", "_"));
    if (v !== null) field(id).value = v.slice(0, max);
  }
  showGame();
  return fragment.has("server_seed");
}

async function chooseLanguage(): Promise<void> {
  const code =
    fragment.get("lang") ??
    webApp()?.initDataUnsafe?.user?.language_code ??
    languageOfInitData(webApp()?.initData ?? "") ??
    sessionStorage.getItem("herald-lang") ??
    "en";
  await useLanguage(code);
  translate();
}

window.heraldFair = { verify, seedHash, pickWeighted, gridLayout };
const language = chooseLanguage();
followSystemScheme();
$("game").addEventListener("change", showGame);
$<HTMLFormElement>("check").addEventListener("submit", (event) => {
  event.preventDefault();
  void run(false);
});
const linked = fromFragment();
let telegramLate = false;
loadTelegram(() => {
  // Telegram's back button returns to the games, as the link at the foot of the page does.
  const base = $<HTMLAnchorElement>("back").href;
  backButton(() => (history.length > 1 ? history.back() : location.assign(base)));
  if (!telegramLate) return;
  // Its script came after the first check: the language it brings, and the check again (with its haptics).
  void chooseLanguage().then(() => (linked ? run(true) : undefined));
});
telegramLate = true;
// The verdict in the player's words: once their catalog is here.
if (linked) void language.then(() => run(true));
