// What every part of the mini-app's page shares: the player's init data, the calls to Herald with it, the messages
// beside each control (a result or a refusal in the player's words, cleared by the next action), and the balances.
import type { ErrorBody } from "../../http/envelope";
import type { Static } from "elysia";
import { $ } from "./dom";
import { t, waitText } from "./i18n";
import { REFUSALS, type RefusalCode } from "./refusals";
import { haptic } from "./telegram";
import type { AnswerOf, Balances, BodyOf, Path } from "./wire";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: RefusalCode,
    readonly details: Record<string, unknown> = {},
    /** Retry-After, seconds (a cooldown's wait, counted on the server's clock). */
    readonly retryAfterSeconds = 0,
  ) {
    super(code);
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

/** A call to Herald with the player's init data: POST with a JSON body, or GET without one (wire.ts: what each takes). */
export function api<P extends Path>(path: P, ...body: BodyOf<P>): Promise<AnswerOf<P>>;
export async function api(path: string, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: body === undefined ? "GET" : "POST",
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), authorization: `tma ${initData()}` },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
  } catch (err) {
    throw new ApiError(0, (err as Error).name === "TimeoutError" ? "timeout" : "network");
  }
  const json: unknown = await res.json().catch(() => ({}));
  if (!res.ok) {
    // Herald's error body; a refusal without one (a proxy's page) is {}. Its code is one of the catalog's, and one the
    // page has no words for falls to the generic message.
    const { error, details } = json as Partial<Static<typeof ErrorBody>>;
    const retry = Number(res.headers.get("retry-after") ?? 0);
    throw new ApiError(res.status, (error ?? "error") as RefusalCode, details ?? {}, Number.isSafeInteger(retry) && retry > 0 ? retry : 0);
  }
  return json;
}

const num = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) ? v : 0);

/** A refusal in the player's words: what happened and the way on, never the server's paths or field names. */
export function inWords(err: unknown): string {
  if (!(err instanceof ApiError)) return err instanceof Error && err.message.startsWith("msg:") ? err.message.slice(4) : t("error.page");
  const d = err.details;
  if (err.code === "game_balance_insufficient" && (d.balance === "missile_balance" || d.balance === "points_balance")) {
    const n = Math.max(1, num(d.required));
    return t(d.balance === "missile_balance" ? "error.need_missiles" : "error.need_points", { n, has: num(d.has) });
  }
  // A cooldown's {wait} is Retry-After, counted on the server's clock.
  return t(REFUSALS[err.code] ?? "error.unknown", { wait: waitText(err.retryAfterSeconds) });
}

/** A message of the page's own (not the server's), for inWords. */
export const ownMessage = (text: string) => new Error(`msg:${text}`);

const shown = new Set<string>();

/** Writes a result ("good") or a refusal ("bad") beside the control that caused it. */
export function say(id: string, text: string, kind: "good" | "bad" | "" = ""): void {
  const el = $(id);
  el.textContent = text;
  el.className = `msg ${kind}`.trim();
  if (text) shown.add(id);
  if (kind === "bad") haptic.error();
  if (text) keepInView(el);
}

/** Where the player is looking: an element off screen is brought into view (the nearest edge, no jump when it is in). */
export function keepInView(el: HTMLElement): void {
  const r = el.getBoundingClientRect();
  if (r.top < 0 || r.bottom > innerHeight)
    el.scrollIntoView({ block: "nearest", behavior: matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth" });
}

/** The next action clears every message on the page: what is written is about the latest thing the player did. */
export function clearMessages(): void {
  for (const id of shown) {
    const el = document.getElementById(id);
    if (el) el.textContent = "";
  }
  shown.clear();
}

export function showBalances(b: Balances): void {
  $("points").textContent = String(b.points_balance);
  $("spins").textContent = String(b.free_spin_balance);
  $("missiles").textContent = String(b.missile_balance);
}

/**
 * The fairness page's check of a play whose seed is revealed: its values in the fragment, which never reaches the
 * server; `extra` adds the wheel's segments and what the game showed.
 */
export function checkLink(game: "wheel" | "grid", seed: { server_seed: string; server_seed_hash: string; client_seed: string }, nonce: number, extra = {}) {
  const fragment = new URLSearchParams({
    game,
    server_seed: seed.server_seed,
    hash: seed.server_seed_hash,
    client_seed: seed.client_seed,
    nonce: String(nonce),
    ...extra,
    lang: document.documentElement.lang,
  });
  return `${document.documentElement.dataset.appBase ?? "/app"}/fairness#${fragment}`;
}

export const randomHex = (bytes: number) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");

/** A button: its text, its state, and the reason beside it when it is disabled. */
export function setButton(id: string, text: string, enabled: boolean): void {
  const b = $<HTMLButtonElement>(id);
  b.textContent = text;
  b.disabled = !enabled;
}
