import type { Level } from "./policy";

export type { Level };

/** Every check answers at least this; each adds its own fields (the spec names some of them). */
export interface CheckBase {
  status: Level;
  /** One line a person can act on: why the check is what it is. */
  summary: string;
  /**
   * false when the check has nothing to judge in this deployment (the chain checks without TOKEN_MINT): it is
   * shown as "not configured" and left out of the overall unless the policy raised its level above ok. Set
   * for every check by the engine (src/status/checks/engine.ts); `status` stays within ok|warn|bad, as the spec says.
   */
  configured?: boolean;
}

const RANK: Record<Level, number> = { ok: 0, warn: 1, bad: 2 };

export const worst = (levels: Iterable<Level>): Level => {
  let w: Level = "ok";
  for (const l of levels) if (RANK[l] > RANK[w]) w = l;
  return w;
};

export const isWorse = (a: Level, b: Level): boolean => RANK[a] > RANK[b];

/**
 * A count judged against warn/bad thresholds where 0 means "this threshold is off". Reaching a threshold
 * (>=) trips it: a backlog_warn of 1000 warns at exactly 1000.
 */
export function levelAtLeast(value: number, warnAt: number, badAt: number): Level {
  if (badAt > 0 && value >= badAt) return "bad";
  if (warnAt > 0 && value >= warnAt) return "warn";
  return "ok";
}

export const round2 = (n: number): number => Math.round(n * 100) / 100;
