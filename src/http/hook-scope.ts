// Global lifecycle hooks that only some routes need. Elysia puts a global hook into the hook list of every route
// registered after it, and a hook in a route's lifecycle costs that route even when it returns at once (the
// compression hook cost the signed partner routes ~1.5–3 µs of ~57 µs of CPU a request: bench/README.md). So a
// global hook is marked with the routes it serves (`scopedHook`), and once the app is composed, before it
// serves, `applyHookScopes` takes it off every other route. Elysia keeps a hook list per route and compiles a
// route on its first request (pinned elysia 1.4.30); test/http/compression.test.ts and
// test/ops/export-usage.test.ts hold which routes carry which hook.

export interface ScopedRoute {
  method: string;
  path: string;
  hooks: Record<string, unknown> & { detail?: { security?: Record<string, unknown>[] } };
}

type Keep = (route: ScopedRoute) => boolean;

const scopes = new WeakMap<object, Keep>();
const EVENTS = ["parse", "transform", "beforeHandle", "afterHandle", "mapResponse", "afterResponse"] as const;

/** Marks a global hook as needed only on the routes `keep` accepts; returns the hook. */
export function scopedHook<F extends object>(fn: F, keep: Keep): F {
  scopes.set(fn, keep);
  return fn;
}

const everyRoute = new WeakMap<object, string>();

/**
 * Marks a global hook as needed on every route (or run before routing, where no route is known yet), saying why;
 * returns the hook. The other decision is `scopedHook`: every global hook takes one (see undecidedGlobalHooks).
 */
export function onEveryRoute<F extends object>(fn: F, reason: string): F {
  everyRoute.set(fn, reason);
  return fn;
}

/**
 * The composed app's global hooks that carry no decision — neither `scopedHook` nor `onEveryRoute` — as
 * "event: name". A hook added to every route without a thought costs every request (#29: the redirect lost a tenth
 * of its speed that way); test/http/hook-scope.test.ts keeps this list empty.
 */
export function undecidedGlobalHooks(event: Record<string, unknown>): string[] {
  const found: string[] = [];
  for (const [name, list] of Object.entries(event)) {
    if (!Array.isArray(list)) continue;
    for (const h of list as Array<{ fn?: object }>) {
      const fn = h?.fn;
      if (fn && !scopes.has(fn) && !everyRoute.has(fn)) found.push(`${name}: ${(fn as { name?: string }).name || "(anonymous)"}`);
    }
  }
  return found;
}

/** Takes every scoped hook off the routes it does not serve. Run once, after the app is composed. */
export function applyHookScopes(history: readonly ScopedRoute[]): void {
  for (const route of history) {
    for (const event of EVENTS) {
      const list = route.hooks[event] as Array<{ fn: object }> | undefined;
      if (!list?.length) continue;
      const kept = list.filter((h) => scopes.get(h.fn)?.(route) ?? true);
      if (kept.length !== list.length) route.hooks[event] = kept;
    }
  }
}

/** A route only a signed partner request reaches (its OpenAPI security names the partner signature). */
export const isSignedRoute = (route: ScopedRoute) => (route.hooks.detail?.security ?? []).some((s) => "PartnerSignature" in s);
