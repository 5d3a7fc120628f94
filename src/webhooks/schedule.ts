import type { Config } from "../config";
import type { Rng } from "../clock";

type WebhookConfig = Config["webhooks"];

/** Delay before attempt `attempt + 1`, after `attempt` failures: min(max, base · 2^(attempt-1)), no jitter. */
export function baseDelaySeconds(cfg: WebhookConfig, attempt: number): number {
  return Math.min(cfg.retryMaxSeconds, cfg.retryBaseSeconds * 2 ** Math.max(0, attempt - 1));
}

/**
 * The delay with ± jitter (so receivers that recover at once are not hit by every sender in the same second),
 * and a receiver's Retry-After honoured when longer, never past the cap.
 */
export function retryDelaySeconds(cfg: WebhookConfig, attempt: number, rng: Rng, retryAfterSeconds: number | null): number {
  const base = baseDelaySeconds(cfg, attempt);
  const r = (rng.bytes(4).reduce((acc, b) => acc * 256 + b, 0) / 2 ** 32) * 2 - 1; // [-1, 1)
  const jittered = Math.max(1, Math.round(base * (1 + (r * cfg.retryJitterPct) / 100)));
  const wanted = retryAfterSeconds !== null ? Math.max(jittered, retryAfterSeconds) : jittered;
  return Math.min(cfg.retryMaxSeconds, wanted);
}

/** The published schedule: when each attempt happens relative to the event, before jitter. */
export function retrySchedule(cfg: WebhookConfig) {
  const rows: Array<{ attempt: number; delay_seconds: number; at_seconds: number }> = [{ attempt: 1, delay_seconds: 0, at_seconds: 0 }];
  let at = 0;
  for (let attempt = 2; attempt <= cfg.maxAttempts; attempt++) {
    const delay = baseDelaySeconds(cfg, attempt - 1);
    at += delay;
    rows.push({ attempt, delay_seconds: delay, at_seconds: at });
  }
  return rows;
}

/** Parses Retry-After as seconds or an HTTP date; null when absent or unusable. */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}
