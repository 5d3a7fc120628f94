// Bun.serve routes in front of Elysia, for the two paths where Elysia's hooks cost most of the answer: the
// short-link redirect (src/audio-share/redirect.ts) and the liveness probe (src/system/health.ts). Each repeats,
// for its path, what the HTTP core gives every request that it needs (request id, X-Content-Type-Options, metrics, and
// for the redirect the public rate limit and the error envelope), and has an Elysia twin that tests hold it to.

/** What `herald serve` listens with: an Elysia app, whose `config.serve` is merged into Bun.serve's options. */
export interface NativeRoutesHost {
  config: { serve?: { routes?: object } };
}

/**
 * Adds routes to those the app will listen with: Elysia merges `config.serve.routes` into the Bun.serve routes it
 * builds (pinned elysia 1.4.30), and a native route wins over Elysia's own entry for its methods; any other method
 * falls through to Elysia. Call before `listen`.
 */
export function installNativeRoutes(app: NativeRoutesHost, routes: object): void {
  app.config.serve = { ...app.config.serve, routes: { ...app.config.serve?.routes, ...routes } };
}
