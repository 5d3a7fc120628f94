// The shape of an error-catalog entry and its constructor, shared by src/http/errors.ts and the domain blocks it
// spreads in (errors-messenger.ts).

export type RetryClass = "fail_fast" | "retryable" | "retry_after" | "safe_noop" | "fix_and_retry";
export type ErrorCategory =
  | "validation"
  | "authentication"
  | "authorization"
  | "not_found"
  | "conflict"
  | "throttling"
  | "idempotency"
  | "dependency"
  | "server";

export interface CatalogEntry {
  http_status: number;
  title: string;
  category: ErrorCategory;
  retry_class: RetryClass;
  retry_behavior: string;
  retry_after_seconds: number;
  available_in_modes: ReadonlyArray<"live" | "sandbox">;
  endpoint_groups: readonly string[];
}

export const BOTH = ["live", "sandbox"] as const;
export const ALL_GROUPS = ["partner", "sandbox", "salutes", "public", "transparency", "audio-share", "messenger", "admin"] as const;

/** One catalog entry; defaults: no Retry-After, both modes, every endpoint group. */
export const entry = (
  http_status: number,
  title: string,
  category: ErrorCategory,
  retry_class: RetryClass,
  retry_behavior: string,
  extra: Partial<CatalogEntry> = {},
): CatalogEntry => ({
  http_status,
  title,
  category,
  retry_class,
  retry_behavior,
  retry_after_seconds: 0,
  available_in_modes: BOTH,
  endpoint_groups: ALL_GROUPS,
  ...extra,
});
