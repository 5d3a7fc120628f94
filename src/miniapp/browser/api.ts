// What every part of the mini-app's page shares: the player's init data, the calls to Herald with it, refusals in
// words, the balances, and the hook that redraws the sections an action changed.

export interface Balances {
  free_spin_balance: number;
  missile_balance: number;
  points_balance: number;
}
export interface Reward {
  free_spins: number;
  missiles: number;
  points: number;
}
interface ErrorBody {
  error?: string;
  message?: string;
  details?: Record<string, unknown>;
}

export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

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

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The player's init data: Telegram's, or the fragment Telegram opens the page with, or what was pasted. */
export function initData(): string {
  const fromTelegram = window.Telegram?.WebApp?.initData;
  if (fromTelegram) return fromTelegram;
  const fragment = new URLSearchParams(location.hash.slice(1)).get("tgWebAppData");
  if (fragment) return fragment;
  return sessionStorage.getItem("herald-init-data") ?? "";
}

/** How long the page waits for one answer before it says so (Herald answers or refuses well within this). */
const CALL_TIMEOUT_MS = 15_000;

/** A call to Herald with the player's init data: POST with a JSON body, or GET without one. */
export async function api<T>(path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: body === undefined ? "GET" : "POST",
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), authorization: `tma ${initData()}` },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
  } catch (err) {
    if ((err as Error).name === "TimeoutError") throw new ApiError(0, "timeout", "The game did not answer in time: try again in a moment.");
    throw new ApiError(0, "network", "The game could not be reached: check your connection and try again.");
  }
  const json = (await res.json().catch(() => ({}))) as ErrorBody & T;
  if (!res.ok) throw new ApiError(res.status, json.error ?? "error", json.message ?? `The game answered ${res.status}.`);
  return json;
}

export const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
export const rewardText = (r: Reward) =>
  [
    r.points && plural(r.points, "point", "points"),
    r.free_spins && plural(r.free_spins, "free spin", "free spins"),
    r.missiles && plural(r.missiles, "missile", "missiles"),
  ]
    .filter(Boolean)
    .join(", ") || "nothing this time";

/** A refusal in words: the server's message, then what to do about it. */
export function inWords(err: unknown): string {
  if (!(err instanceof ApiError)) return "Something went wrong on this page: reload it and try again.";
  const advice = ADVICE[err.code];
  if (!advice || err.message.includes(advice)) return err.message;
  return `${/[.!?]$/.test(err.message) ? err.message : `${err.message}.`} ${advice}`;
}

export function showError(err: unknown): void {
  const box = $("error");
  box.textContent = inWords(err);
  box.hidden = false;
}

export function showBalances(b: Balances): void {
  $("points").textContent = String(b.points_balance);
  $("spins").textContent = String(b.free_spin_balance);
  $("missiles").textContent = String(b.missile_balance);
}

export const randomHex = (bytes: number) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");

const listeners: Array<() => Promise<void>> = [];
/** Registers a redraw to run after an action that changed the player's ledger elsewhere on the page. */
export const whenChanged = (redraw: () => Promise<void>) => {
  listeners.push(redraw);
};
/** Runs the registered redraws (a mission's reward changes the balances, the wheel and the history). */
export async function changed(): Promise<void> {
  for (const redraw of listeners) await redraw();
}
