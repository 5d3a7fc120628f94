// Global lifecycle hooks that only some routes need. Elysia puts a global hook on every route registered after it,
// and it costs that route even when it returns at once (compression cost the signed partner routes ~1.5–3 µs of
// ~57 µs of CPU a request: bench/README.md). So a global hook is marked with the routes it serves (`scopedHook`), and
// `applyHookScopes` takes it off the others once the app is composed, before any route is compiled (elysia 1.4.30).

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
 * "event: name". A hook added to every route without a thought costs every request (the redirect once lost a tenth
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

/**
 * Takes every scoped hook off the routes it does not serve, and tells Elysia which hooks are synchronous
 * (`synchronousHook`, below: Elysia caches its guess on the hook as `isAsync`). Run once, after the app is
 * composed, before a route is compiled.
 */
export function applyHookScopes(history: readonly ScopedRoute[]): void {
  for (const route of history) {
    for (const event of EVENTS) {
      const list = route.hooks[event] as Array<{ fn: object; isAsync?: boolean }> | undefined;
      if (!list?.length) continue;
      const kept = list.filter((h) => scopes.get(h.fn)?.(route) ?? true);
      if (kept.length !== list.length) route.hooks[event] = kept;
      for (const h of kept) if (synchronous.has(h.fn)) h.isAsync = false;
    }
  }
}

/** A route only a signed partner request reaches (its OpenAPI security names the partner signature). */
export const isSignedRoute = (route: ScopedRoute) => (route.hooks.detail?.security ?? []).some((s) => "PartnerSignature" in s);

// ResumeLater: a synchronous hook's way back to an await. Elysia compiles a route synchronous only when none of its
// hooks is async (pinned elysia 1.4.30), and an async route costs every request a promise (the signed partner GETs,
// bench/README.md "signed"). So a hook whose common case needs no await runs synchronously, and for the rare request
// that must wait (a key not yet in memory, a nonce to record) throws `ResumeLater`: the HTTP core's error hook awaits
// `prepare`, then runs the route's compiled handler again with the same context (its body kept on the request
// state), and the hook finds its work done. The request still gets one answer, log row and metrics count.

/** Thrown by a synchronous hook that must await before the route can go on; not an error the client sees. */
export class ResumeLater extends Error {
  /** Elysia's catch sets the status from a thrown error's: 200 keeps the re-run's own status untouched. */
  readonly status = 200;
  /**
   * The handler's context, as the hook received it: the re-run is given the same object. Set by assignment, not
   * passed to the constructor: Elysia reads a hook's source, and a hook that passes its whole context to a call
   * is taken to read all of it (cookies and body parsed on every request of the route).
   */
  context: object | null = null;
  constructor(
    /** What the hook could not do synchronously; the route runs again once it settles, or is refused if it rejects. */
    readonly prepare: () => Promise<void>,
  ) {
    super("a synchronous hook resumes after an await");
    this.name = "ResumeLater";
  }
}

const synchronous = new WeakSet<object>();

/**
 * Marks a hook as synchronous for Elysia, whatever its source looks like once built: Elysia guesses from a hook's
 * text (`return f(`, the word "await"), and a guess of "async" compiles the whole route async. The mark is applied
 * by applyHookScopes once the app is composed. Returns the hook.
 */
export function synchronousHook<F extends object>(fn: F): F {
  synchronous.add(fn);
  return fn;
}
