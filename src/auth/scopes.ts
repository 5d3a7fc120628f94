import { commaList } from "../config/parse";

export const SCOPES = ["read", "credit", "debit", "ledger", "donation", "users", "webhooks"] as const;
export type Scope = (typeof SCOPES)[number];
export type KeyMode = "sandbox" | "live";

/** The key id's prefix shows its mode, so logs and support tickets tell sandbox from live at a glance. */
export const KEY_PREFIX: Record<KeyMode, string> = { live: "hk_live_", sandbox: "hk_test_" };

export function parseScopes(list: string): { scopes: Scope[]; unknown: string[] } {
  const items = commaList(list);
  const unknown = items.filter((s) => !(SCOPES as readonly string[]).includes(s));
  const scopes = [...new Set(items.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)))].sort();
  return { scopes, unknown };
}
