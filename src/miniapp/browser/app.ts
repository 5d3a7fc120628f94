// The players' mini-app (GET /app), in the browser: the player's balances, the spin wheel with the commitment shown
// before the spin, the spin's result, and the games and items on offer. Telegram opens this page inside the chat
// with the player's init data; every call sends it as `Authorization: tma <init data>` (docs/messenger.md). Outside
// Telegram the page says so and takes init data pasted by hand (development). Plain DOM, no framework: the page's
// whole script stays a few kilobytes (src/miniapp/page.ts serves it; test/miniapp/app.browser.test.ts drives it).

interface TelegramWebApp {
  initData?: string;
  colorScheme?: "light" | "dark";
  ready?: () => void;
  expand?: () => void;
}
declare global {
  interface Window {
    Telegram?: { WebApp?: TelegramWebApp };
  }
}

interface Balances {
  free_spin_balance: number;
  missile_balance: number;
  points_balance: number;
}
interface Reward {
  free_spins: number;
  missiles: number;
  points: number;
}
interface Segment {
  label: string;
  weight: number;
  reward: Reward;
}
interface WheelStatus {
  available: boolean;
  free_spin_available: boolean;
  next_free_spin_at: string | null;
  free_spin_balance: number;
  campaign: { title: string; segments: Segment[] };
  fairness: { server_seed_hash: string; client_seed: string; next_nonce: number; committed_at: string; next_server_seed_hash: string | null };
  revealed_seed?: { server_seed: string; server_seed_hash: string; client_seed: string } | null;
}
interface Catalog {
  games: Array<{ game_key: string; title: string; available: boolean; reason: string | null }>;
  items: Array<{ item_key: string; title: string; price_points: number }>;
  balances: Balances;
}
interface SpinAnswer {
  spin: {
    segment_index: number;
    segment_label: string;
    reward: Reward;
    paid_with: string;
    fairness: { server_seed_hash: string; client_seed: string; nonce: number };
  };
  balances: Balances;
}
interface GridView {
  grid_id: number;
  status: string;
  cells_total: number;
  prizes_total: number;
  prizes_found: number;
  revealed_cells: Array<{ cell: number; reward: Reward }>;
}
interface GridStatus {
  active_grid: GridView | null;
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
interface PromoAnswer {
  promo: { code: string; reward: Reward };
  replayed: boolean;
  balances: Balances;
}
interface Enrollment {
  progress: number;
  observed: number | null;
  target: number;
  completed: boolean;
}
interface Mission {
  mission_key: string;
  title: string;
  progress_source: "server" | "self_reported";
  target: number;
  reward: Reward;
  enrollment: Enrollment | null;
}
interface ProgressAnswer {
  accepted: boolean;
  message: string | null;
  progress: number;
  target: number;
  completed: boolean;
  reward_paid: Reward | null;
}
interface Activity {
  recent: Array<{ id: number; action: string; deltas: Reward; created_at: string }>;
}
/** What the page needs of a wallet that follows the Wallet Standard (github.com/wallet-standard/wallet-standard). */
interface WalletAccount {
  address: string;
}
interface StandardWallet {
  name: string;
  features: {
    "standard:connect"?: { connect(): Promise<{ accounts: readonly WalletAccount[] }> };
    "solana:signMessage"?: { signMessage(...inputs: Array<{ account: WalletAccount; message: Uint8Array }>): Promise<Array<{ signature: Uint8Array }>> };
  };
}
interface Challenge {
  challenge: { nonce: string; address: string; message: string };
}
interface ErrorBody {
  error?: string;
  message?: string;
  details?: Record<string, unknown>;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** What to do about each refusal the mini-app routes can answer, in words; the server's message comes first. */
const ADVICE: Record<string, string> = {
  init_data_missing: "Open the mini-app from the bot in Telegram.",
  init_data_invalid: "Close the mini-app and open it again from the bot.",
  init_data_expired: "This session is too old: close the mini-app and open it again from the bot.",
  init_data_future_dated: "Your device's clock is ahead: set it right, then open the mini-app again.",
  messenger_not_configured: "The game is not switched on yet. Try again later.",
  game_cooldown: "Your free spin is not due yet, and you have no spins in hand: come back later or buy a spin with points.",
  game_balance_insufficient: "You do not have enough for this.",
  rate_limited: "Too many taps at once: wait a moment, then try again.",
  db_unavailable: "The game is briefly unavailable: try again in a few seconds.",
  request_id_reused: "That tap was already used for something else: try again.",
  game_state_conflict: "The game changed meanwhile: the board has been refreshed, try again.",
  promo_not_found: "Check the code's spelling (letters, digits, - and _).",
  promo_expired: "This code has expired.",
  promo_exhausted: "Every claim this code allows has been made.",
  promo_already_claimed: "You have already used this code; each code works once per player.",
  promo_not_eligible: "This code is for other players.",
  mission_inactive: "This mission has been switched off.",
  wallet_nonce_expired: "The signing request expired: link the wallet again.",
  wallet_nonce_used: "That signature was already used: link the wallet again.",
  wallet_signature_invalid: "The wallet's signature did not check out: link again, with the account you chose.",
  wallet_message_mismatch: "The wallet signed another message than the one asked for: link again.",
  mission_not_found: "This mission no longer exists: the list has been refreshed.",
};

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The player's init data: Telegram's, or the fragment Telegram opens the page with, or what was pasted. */
function initData(): string {
  const fromTelegram = window.Telegram?.WebApp?.initData;
  if (fromTelegram) return fromTelegram;
  const fragment = new URLSearchParams(location.hash.slice(1)).get("tgWebAppData");
  if (fragment) return fragment;
  return sessionStorage.getItem("herald-init-data") ?? "";
}

async function api<T>(path: string, body: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `tma ${initData()}` },
      body: JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "network", "The game could not be reached: check your connection and try again.");
  }
  const json = (await res.json().catch(() => ({}))) as ErrorBody & T;
  if (!res.ok) throw new ApiError(res.status, json.error ?? "error", json.message ?? `The game answered ${res.status}.`);
  return json;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const rewardText = (r: Reward) =>
  [
    r.points && plural(r.points, "point", "points"),
    r.free_spins && plural(r.free_spins, "free spin", "free spins"),
    r.missiles && plural(r.missiles, "missile", "missiles"),
  ]
    .filter(Boolean)
    .join(", ") || "nothing this time";

/** A refusal in words: the server's message, then what to do about it. */
function inWords(err: unknown): string {
  if (!(err instanceof ApiError)) return "Something went wrong on this page: reload it and try again.";
  const advice = ADVICE[err.code];
  if (!advice || err.message.includes(advice)) return err.message;
  return `${/[.!?]$/.test(err.message) ? err.message : `${err.message}.`} ${advice}`;
}

function showError(err: unknown): void {
  const box = $("error");
  box.textContent = inWords(err);
  box.hidden = false;
}

function showBalances(b: Balances): void {
  $("points").textContent = String(b.points_balance);
  $("spins").textContent = String(b.free_spin_balance);
  $("missiles").textContent = String(b.missile_balance);
}

/** The segment the player's last spin landed on, kept highlighted when the wheel is drawn again. */
let lastWon: number | null = null;
/** The wheel as last drawn, and the last spin's nonce: what revealing the seed needs. */
let lastStatus: WheelStatus | null = null;
let lastNonce: number | null = null;

function showWheel(s: WheelStatus): void {
  lastStatus = s;
  $("wheel-title").textContent = s.campaign.title;
  const list = $("segments");
  list.replaceChildren(
    ...s.campaign.segments.map((seg, i) => {
      const li = document.createElement("li");
      li.id = `segment-${i}`;
      li.textContent = seg.label;
      if (i === lastWon) li.className = "won";
      return li;
    }),
  );
  $("commitment").textContent = s.fairness.server_seed_hash;
  $("client-seed").textContent = s.fairness.client_seed;
  $("nonce").textContent = String(s.fairness.next_nonce);
  const spin = $<HTMLButtonElement>("spin");
  spin.disabled = !s.available;
  $("spin-note").textContent = s.free_spin_available
    ? "Your daily free spin is ready."
    : s.free_spin_balance > 0
      ? `You have ${plural(s.free_spin_balance, "spin", "spins")} in hand.`
      : `Next free spin at ${s.next_free_spin_at ? new Date(s.next_free_spin_at).toLocaleString() : "a later time"}.`;
}

function showCatalog(c: Catalog): void {
  showBalances(c.balances);
  $("games").replaceChildren(
    ...c.games.map((g) => {
      const li = document.createElement("li");
      li.textContent = g.available ? g.title : `${g.title}: ${g.reason ?? "not available now"}`;
      return li;
    }),
  );
  const missile = c.items.find((item) => item.item_key === "missile");
  if (missile) $("buy-missiles").textContent = `Buy 5 missiles (${plural(5 * missile.price_points, "point", "points")})`;
  $("items").replaceChildren(
    ...c.items.map((item) => {
      const li = document.createElement("li");
      li.textContent = `${item.title}: ${plural(item.price_points, "point", "points")}`;
      return li;
    }),
  );
}

async function refresh(): Promise<void> {
  const [catalog, wheel] = await Promise.all([
    api<Catalog>("/api/messenger/games/catalog", {}),
    api<WheelStatus>("/api/messenger/games/spin-wheel/status", {}),
  ]);
  showCatalog(catalog);
  showWheel(wheel);
  await loadGrid();
  await loadMissions();
  await loadHistory();
  $("game").hidden = false;
}

async function spin(): Promise<void> {
  const button = $<HTMLButtonElement>("spin");
  button.disabled = true;
  $("error").hidden = true;
  try {
    const answer = await api<SpinAnswer>("/api/messenger/games/spin-wheel/play", { request_id: crypto.randomUUID() });
    const s = answer.spin;
    lastWon = s.segment_index;
    lastNonce = s.fairness.nonce;
    $("reveal-box").hidden = false;
    $("reveal").hidden = false;
    $("check-link").hidden = true;
    for (const li of $("segments").children) li.classList.toggle("won", li.id === `segment-${s.segment_index}`);
    $("result").textContent = `${s.segment_label}: you won ${rewardText(s.reward)}.`;
    $("result-fairness").textContent =
      `Committed hash ${s.fairness.server_seed_hash}, client seed ${s.fairness.client_seed}, nonce ${s.fairness.nonce}. The server seed is revealed when you change your client seed.`;
    showBalances(answer.balances);
    showWheel(await api<WheelStatus>("/api/messenger/games/spin-wheel/status", {}));
    await loadHistory();
  } catch (err) {
    showError(err);
    button.disabled = false;
  }
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
async function loadGrid(): Promise<void> {
  const g = await api<GridStatus>("/api/messenger/games/recon-grid/status", {});
  gridNext = g.next_server_seed_hash;
  showGrid(g);
  if (!$("game").hidden) await loadHistory();
}

async function startGrid(): Promise<void> {
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
    $("grid-result").textContent =
      `Cell ${cell + 1}: ${rewardText(r.reward) === "nothing this time" ? "empty" : `you found ${rewardText(r.reward)}`}.${r.grid.status === "active" ? "" : " The grid is complete: its seed is revealed in its fairness."}`;
    await loadGrid();
  } catch (err) {
    showError(err);
    await loadGrid().catch(() => undefined);
  }
}

async function buyMissiles(): Promise<void> {
  $("error").hidden = true;
  try {
    const r = await api<Purchase>("/api/messenger/games/recon-grid/purchase", { request_id: crypto.randomUUID(), quantity: 5 });
    showBalances(r.balances);
    await loadGrid();
  } catch (err) {
    showError(err);
  }
}

async function claimPromo(code: string): Promise<void> {
  const out = $("promo-result");
  try {
    const r = await api<PromoAnswer>("/api/messenger/games/promos/claim", { request_id: crypto.randomUUID(), code });
    out.textContent = `Code ${r.promo.code} applied: you got ${rewardText(r.promo.reward)}.`;
    out.className = "good";
    showBalances(r.balances);
    showWheel(await api<WheelStatus>("/api/messenger/games/spin-wheel/status", {}));
    await loadHistory();
  } catch (err) {
    out.className = "bad";
    out.textContent = inWords(err);
  }
}

/** One mission's card: what it counts, the progress, and the one action that moves it on. */
function missionCard(m: Mission): HTMLElement {
  const li = document.createElement("li");
  li.id = `mission-${m.mission_key}`;
  li.className = "mission";
  const title = document.createElement("p");
  const name = document.createElement("strong");
  name.textContent = m.title;
  const about = document.createElement("span");
  about.className = "hint";
  about.textContent = ` ${m.progress_source === "server" ? "counted by the game" : "you report it"} · reward: ${rewardText(m.reward)}`;
  title.append(name, about);
  const e = m.enrollment;
  const bar = document.createElement("progress");
  bar.max = m.target;
  bar.value = e?.progress ?? 0;
  bar.setAttribute("aria-label", `${m.title}: ${e?.progress ?? 0} of ${m.target}`);
  const status = document.createElement("p");
  status.className = "hint";
  status.id = `mission-status-${m.mission_key}`;
  status.textContent = !e
    ? `Not joined yet (0 of ${m.target}).`
    : e.completed
      ? `Done: ${m.target} of ${m.target}, reward paid.`
      : `${e.progress} of ${m.target}.`;
  li.append(title, bar, status);
  if (!e || !e.completed) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "secondary";
    button.id = `mission-action-${m.mission_key}`;
    button.textContent = !e ? "Join" : m.progress_source === "server" ? "Update my progress" : "I did one more";
    button.addEventListener("click", () => void missionAction(m));
    li.append(button);
  }
  return li;
}

async function loadMissions(): Promise<void> {
  const { missions } = await api<{ missions: Mission[] }>("/api/messenger/missions/catalog", {});
  const list = $("missions");
  list.replaceChildren(...missions.map(missionCard));
  $("missions-none").hidden = missions.length > 0;
}

/** Join a mission, or send a progress event (the server's own count for a server mission; one more for the rest). */
async function missionAction(m: Mission): Promise<void> {
  const out = $("mission-result");
  try {
    if (!m.enrollment) {
      await api("/api/messenger/missions/enroll", { mission_key: m.mission_key });
      out.textContent = `You joined “${m.title}”.`;
    } else {
      const body: Record<string, unknown> = { mission_key: m.mission_key, client_event_id: crypto.randomUUID() };
      if (m.progress_source === "self_reported") body.progress = m.enrollment.progress + 1;
      const r = await api<ProgressAnswer>("/api/messenger/missions/progress", body);
      out.textContent = r.reward_paid
        ? `“${m.title}” done: you got ${rewardText(r.reward_paid)}.`
        : r.accepted
          ? `“${m.title}”: ${r.progress} of ${r.target}.`
          : (r.message ?? "No progress to record yet.");
      if (r.reward_paid) await refresh();
    }
    out.className = "";
    await loadMissions();
  } catch (err) {
    out.className = "bad";
    out.textContent = inWords(err);
  }
}

/** What each ledger action reads as in the history. */
const ACTIONS: Record<string, string> = {
  "spin_wheel.play": "Spin",
  "recon_grid.reveal": "Grid cell revealed",
  "recon_grid.purchase": "Missiles bought",
  "items.purchase": "Item bought",
  "promo.claim": "Promo code",
};

/** A ledger row's change, signed: "+25 points, −1 missile". */
const deltaText = (d: Reward) =>
  [
    d.points && `${d.points > 0 ? "+" : "−"}${plural(Math.abs(d.points), "point", "points")}`,
    d.free_spins && `${d.free_spins > 0 ? "+" : "−"}${plural(Math.abs(d.free_spins), "spin", "spins")}`,
    d.missiles && `${d.missiles > 0 ? "+" : "−"}${plural(Math.abs(d.missiles), "missile", "missiles")}`,
  ]
    .filter(Boolean)
    .join(", ") || "no change";

/** The player's latest game-ledger entries, newest first. */
async function loadHistory(): Promise<void> {
  const res = await fetch("/api/messenger/engagement/activity-preview?limit=10", { headers: { authorization: `tma ${initData()}` } });
  if (!res.ok) return;
  const { recent } = (await res.json()) as Activity;
  $("history").replaceChildren(
    ...recent.map((r) => {
      const li = document.createElement("li");
      const what = ACTIONS[r.action] ?? (r.action.startsWith("mission") ? "Mission reward" : r.action);
      li.textContent = `${new Date(r.created_at).toLocaleString()} · ${what}: ${deltaText(r.deltas)}`;
      return li;
    }),
  );
  $("history-none").hidden = recent.length > 0;
}

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Base58 (Bitcoin's alphabet), as Solana writes keys and signatures: each leading zero byte is a "1". */
function base58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  const digits: number[] = []; // base-58 digits, least significant first
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i]!;
    for (let j = 0; j < digits.length; j++) {
      carry += digits[j]! << 8;
      digits[j] = carry % 58;
      carry = Math.floor(carry / 58);
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = Math.floor(carry / 58);
    }
  }
  return (
    "1".repeat(zeros) +
    digits
      .reverse()
      .map((d) => BASE58[d])
      .join("")
  );
}

/** The Solana wallets in this browser that can connect and sign a message, by the Wallet Standard's events. */
const wallets: StandardWallet[] = [];
function register(...found: StandardWallet[]): () => void {
  for (const w of found) if (w.features["standard:connect"] && w.features["solana:signMessage"] && !wallets.includes(w)) wallets.push(w);
  showWallets();
  return () => undefined;
}
function discoverWallets(): void {
  window.addEventListener("wallet-standard:register-wallet", (event) =>
    (event as CustomEvent<(api: { register: typeof register }) => void>).detail({ register }),
  );
  window.dispatchEvent(new CustomEvent("wallet-standard:app-ready", { detail: { register } }));
}

function showWallets(): void {
  const list = $("wallets");
  list.replaceChildren(
    ...wallets.map((w, i) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "secondary";
      button.id = `wallet-${i}`;
      button.textContent = `Link a wallet with ${w.name}`;
      button.addEventListener("click", () => void linkWallet(w));
      return button;
    }),
  );
  $("wallets-none").hidden = wallets.length > 0;
}

/**
 * Sign-In-With-Solana: the wallet connects, Herald issues a challenge for its address, the wallet signs the message
 * as given (its UTF-8 bytes), and Herald checks the signature (docs/messenger.md, "Wallet proof").
 */
async function linkWallet(w: StandardWallet): Promise<void> {
  const out = $("wallet-result");
  out.className = "";
  try {
    let accounts: readonly WalletAccount[];
    try {
      accounts = (await w.features["standard:connect"]!.connect()).accounts;
    } catch {
      throw new ApiError(0, "wallet", `${w.name} did not connect: approve the connection in the wallet, then try again.`);
    }
    const account = accounts[0];
    if (!account) throw new ApiError(0, "wallet", `${w.name} shared no account: choose one in the wallet, then try again.`);
    const { challenge } = await api<Challenge>("/api/messenger/wallet-proof/challenge", { address: account.address });
    let signature: Uint8Array;
    try {
      const [signed] = await w.features["solana:signMessage"]!.signMessage({ account, message: new TextEncoder().encode(challenge.message) });
      signature = signed!.signature;
    } catch {
      throw new ApiError(0, "wallet", `${w.name} did not sign: approve the message in the wallet to prove the wallet is yours.`);
    }
    await api("/api/messenger/wallet-claim/verify", {
      address: account.address,
      nonce: challenge.nonce,
      message: challenge.message,
      signature: base58(signature),
    });
    out.textContent = `Wallet ${account.address} is linked to your account.`;
    out.className = "good";
  } catch (err) {
    out.textContent = inWords(err);
    out.className = "bad";
  }
}

const randomHex = (bytes: number) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");

/**
 * Reveals the server seed of the last spin's pair by starting a new pair with a fresh client seed — onto the seed
 * whose hash the wheel showed as next_server_seed_hash, never one made by this call — then links the check page with
 * the revealed values in the fragment (the server never sees what the check page computes).
 */
async function reveal(): Promise<void> {
  const status = lastStatus;
  if (!status || lastNonce === null) return;
  $("error").hidden = true;
  try {
    const rotated = await api<WheelStatus>("/api/messenger/games/spin-wheel/status", {
      client_seed: randomHex(8),
      next_server_seed_hash: status.fairness.next_server_seed_hash,
    });
    const seed = rotated.revealed_seed;
    if (!seed) throw new ApiError(200, "not_revealed", "The game did not reveal the seed; try again.");
    const fragment = new URLSearchParams({
      game: "wheel",
      server_seed: seed.server_seed,
      hash: seed.server_seed_hash,
      client_seed: seed.client_seed,
      nonce: String(lastNonce),
      weights: status.campaign.segments.map((x) => x.weight).join(","),
    });
    const link = $<HTMLAnchorElement>("check-link");
    link.href = `/app/fairness#${fragment}`;
    link.hidden = false;
    $("reveal").hidden = true;
    showWheel(rotated);
  } catch (err) {
    showError(err);
  }
}

/** Inside Telegram (it opens the page with #tgWebAppData…) and without its script yet: load it, from Telegram only. */
function loadTelegramScript(): void {
  if (window.Telegram?.WebApp || !location.hash.includes("tgWebAppData")) return;
  const script = document.createElement("script");
  script.src = "https://telegram.org/js/telegram-web-app.js";
  script.onload = () => {
    window.Telegram?.WebApp?.ready?.();
    window.Telegram?.WebApp?.expand?.();
  };
  document.head.append(script);
}

function start(): void {
  window.Telegram?.WebApp?.ready?.();
  window.Telegram?.WebApp?.expand?.();
  loadTelegramScript();
  discoverWallets();
  $("spin").addEventListener("click", () => void spin());
  $("reveal").addEventListener("click", () => void reveal());
  $("grid-start").addEventListener("click", () => void startGrid());
  $("buy-missiles").addEventListener("click", () => void buyMissiles());
  $<HTMLFormElement>("promo-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = $<HTMLInputElement>("promo-code").value.trim();
    if (code) void claimPromo(code);
  });
  $<HTMLFormElement>("paste-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem("herald-init-data", $<HTMLTextAreaElement>("paste").value.trim());
    $("outside").hidden = true;
    refresh().catch(showError);
  });
  if (!initData()) {
    $("outside").hidden = false;
    return;
  }
  refresh().catch(showError);
}

start();
export {};
