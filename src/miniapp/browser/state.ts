// The player's state as the page last read it, and how it is read again. After an action the page shows at once
// what the answer says, reads at once what the next tap needs (the wheel after a spin), and the rest (missions,
// history) 2 s after the play, once for all the plays of those 2 s: a player tapping the grid once a second stays
// inside their request budget (120 a minute by default): 60 taps and at most 30 reads of 2 calls.
import { api, showBalances } from "./api";
import type { Balances, Catalog } from "./wire";

/** What the catalog says of a game: open to this player (catalog campaigns), whatever their balances. */
export const gameOpen = (c: Catalog, key: string) => c.games.find((x) => x.game_key === key)?.open_to_you === true;

/** The price in points of one item (the catalog's), or null when it is not sold. */
export const priceOf = (c: Catalog, item: string) => c.items.find((i) => i.item_key === item)?.price_points ?? null;

const ALL = ["catalog", "wheel", "grid", "missions", "history"] as const;
export type Section = (typeof ALL)[number];

/** A section's reload: it starts its own call at once and draws when that and the catalog (prices, balances) are in. */
type Loader = (catalog: Promise<Catalog>) => Promise<void>;
const loaders = new Map<Section, Loader>();
/** Redraws that depend only on the catalog and balances (a button's state and reason): run when either changes. */
const onBalances: Array<(c: Catalog) => void> = [];
let catalog: Catalog | null = null;

export const onRefresh = (section: Section, load: Loader) => void loaders.set(section, load);
export const whenCatalogChanges = (redraw: (c: Catalog) => void) => void onBalances.push(redraw);
export const currentCatalog = () => catalog;

/** The balances an action's answer carries: shown, and every control that depends on them redrawn. */
export function setBalances(b: Balances): void {
  showBalances(b);
  if (!catalog) return;
  catalog = { ...catalog, balances: b };
  for (const redraw of onBalances) redraw(catalog);
}

/** The catalog read and drawn (the balances, and what depends on them) once `ready` (the player's words) is too. */
const readCatalog = (ready: Promise<void> = Promise.resolve()) =>
  Promise.all([api("/api/messenger/games/catalog", {}), ready]).then(([c]) => {
    catalog = c;
    showBalances(c.balances);
    for (const redraw of onBalances) redraw(c);
    return c;
  });

export async function refresh(sections: readonly Section[] = ALL): Promise<void> {
  const fresh = sections.includes("catalog") || !catalog ? readCatalog() : Promise.resolve(catalog);
  await Promise.all([fresh, ...sections.filter((s) => s !== "catalog").map((s) => loaders.get(s)?.(fresh))]);
}

/**
 * The first screen: every section's call at once; `first` settles when the balances and the wheel are drawn (what a
 * player sees first), `rest` when the sections below them are; nothing is drawn before the player's `language`.
 */
export function firstLoad(language: Promise<void>): { first: Promise<void>; rest: Promise<void> } {
  const fresh = readCatalog(language);
  const load = (sections: Section[]) => Promise.all(sections.map((s) => loaders.get(s)?.(fresh))).then(() => undefined);
  const first = Promise.all([fresh, load(["wheel"])]).then(() => undefined);
  return { first, rest: load(["grid", "missions", "history"]) };
}

/** How long after a play the sections it changed elsewhere are read again (the plays meanwhile join that read). */
const SETTLE_MS = 2000;
const pending = new Set<Section>();
let timer: ReturnType<typeof setTimeout> | undefined;
/** A section read after plays only when this says it can have changed (missions: only while one is under way). */
const worthReading = new Map<Section, () => boolean>();
export const readAfterPlaysOnlyWhen = (section: Section, changed: () => boolean) => void worthReading.set(section, changed);

/**
 * Reads `sections` again 2 s after the first play that asked, together with what later plays of those 2 s ask; a
 * failed read (the player's budget spent, say) is dropped: the next play asks again.
 */
export function later(sections: readonly Section[]): void {
  for (const s of sections) pending.add(s);
  if (timer !== undefined) return;
  timer = setTimeout(() => {
    timer = undefined;
    const due = [...pending].filter((s) => worthReading.get(s)?.() ?? true);
    pending.clear();
    if (due.length) refresh(due).catch(() => undefined);
  }, SETTLE_MS);
}
