// The mini-app's language, chosen from the player's Telegram language_code, English by default. t() fills a
// message's {names}; plural forms are picked by {n} under the language's rules (Intl.PluralRules).
import { type Catalog, CATALOGS, LANGUAGES } from "./messages";
import { en, type Message, type MessageKey } from "./messages-en";
import type { Reward } from "./wire";

export type { Message, MessageKey };
export type Vars = Record<string, string | number>;

let lang = "en";
/** The language's formatters, made once each when first needed (an Intl object costs milliseconds on a slow phone). */
let formats: { plurals?: Intl.PluralRules; dateTime?: Intl.DateTimeFormat } = {};
const plurals = () => (formats.plurals ??= new Intl.PluralRules(lang));

/** The catalog's language for a Telegram language_code ("ru", "ru-RU", "en-GB" …); English when there is none. */
export function languageFor(code: string | null | undefined): string {
  const base = (code ?? "").toLowerCase().split(/[-_]/)[0] ?? "";
  return (LANGUAGES as readonly string[]).includes(base) ? base : "en";
}

/** The language_code of the user in init data (the raw query string Telegram signs), or null. */
export function languageOfInitData(initData: string): string | null {
  try {
    const user = new URLSearchParams(initData).get("user");
    const code = user ? (JSON.parse(user) as { language_code?: unknown }).language_code : null;
    return typeof code === "string" ? code : null;
  } catch {
    return null;
  }
}

/** Loads a language's catalog script (named by the page's data-messages-<lang>); false when it cannot be had. */
function loadCatalog(language: string): Promise<boolean> {
  const src = document.documentElement.getAttribute(`data-messages-${language}`);
  if (!src) return Promise.resolve(false);
  return new Promise((resolve) => {
    const script = document.createElement("script");
    script.src = src;
    script.onload = () => {
      const loaded = (globalThis as unknown as { heraldMessages?: Record<string, Catalog> }).heraldMessages?.[language];
      if (loaded) CATALOGS[language] = loaded;
      resolve(loaded !== undefined);
    };
    script.onerror = () => resolve(false);
    document.head.append(script);
  });
}

/** Switches to the player's language once its catalog is here (English at once; English too if it cannot be had). */
export async function useLanguage(code: string): Promise<void> {
  let chosen = languageFor(code);
  if (!CATALOGS[chosen] && !(await loadCatalog(chosen))) chosen = "en";
  if (chosen !== lang) formats = {};
  lang = chosen;
  document.documentElement.lang = lang;
}

export const currentLanguage = () => lang;

/** A message in the current language with its {names} filled. */
export function t(key: MessageKey, vars: Vars = {}): string {
  const m: Message = (CATALOGS[lang] ?? en)[key] ?? en[key];
  let text: string;
  if (typeof m === "string") text = m;
  else {
    const form = plurals().select(Number(vars.n ?? 0)) as "one" | "few" | "many" | "other";
    text = m[form] ?? m.other;
  }
  return text.replace(/\{(\w+)\}/g, (all, name: string) => (name in vars ? String(vars[name]) : all));
}

/** Fills every element marked data-t="key" (its text) and data-t-label="key" (its aria-label) under `root`. */
export function translate(root: ParentNode = document): void {
  for (const el of root.querySelectorAll<HTMLElement>("[data-t]")) el.textContent = t(el.dataset.t as MessageKey);
  for (const el of root.querySelectorAll<HTMLElement>("[data-t-label]")) el.setAttribute("aria-label", t(el.dataset.tLabel as MessageKey));
  const title = document.querySelector<HTMLElement>("[data-t-title]");
  if (title) document.title = t(title.dataset.tTitle as MessageKey);
}

/** A reward's parts and the words of each, in the order they are written. */
export const REWARD_PARTS = [
  ["points", "reward.points"],
  ["free_spins", "reward.spins"],
  ["missiles", "reward.missiles"],
] as const;

/** "25 points", "2 missiles and 50 points", "nothing". */
export function rewardText(r: Reward): string {
  const parts = REWARD_PARTS.filter(([k]) => r[k]).map(([k, words]) => t(words, { n: r[k] }));
  if (parts.length === 0) return t("reward.nothing");
  return parts.reduce((a, b) => t("reward.and", { a, b }));
}

/** A wait of `seconds` in hours and minutes ("23 h 5 min"); at least one minute. The server counts it (its clock). */
export function waitText(seconds: number): string {
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  if (minutes < 60) return t("time.minutes", { m: minutes });
  const h = Math.floor(minutes / 60);
  return minutes % 60 === 0 ? t("time.hours_only", { h }) : t("time.hours", { h, m: minutes % 60 });
}

export const dateTimeText = (iso: string) =>
  (formats.dateTime ??= new Intl.DateTimeFormat(lang, { dateStyle: "short", timeStyle: "short" })).format(new Date(iso));

/**
 * A chance as a percentage, to one decimal where needed ("40%", "2.5%"; "2,5 %" in Russian). Written out here, not
 * with Intl.NumberFormat, whose first use cost ~40 ms of a 4×-slowed phone's first screen (bench/README.md).
 */
export function percentText(part: number, whole: number): string {
  const tenths = whole > 0 ? Math.round((part * 1000) / whole) : 0;
  const digits = tenths % 10 === 0 ? String(tenths / 10) : `${Math.floor(tenths / 10)}${t("number.decimal_point")}${tenths % 10}`;
  return t("number.percent", { p: digits });
}
