import type { AppContext } from "../context";

/**
 * What the webhook verbs use of the context. Narrower than AppContext so that a context made for one job — a
 * second dispatching instance in a test, the benchmark — runs them on either engine without building an app.
 */
export type WebhookContext = Pick<AppContext, "config" | "store" | "clock" | "rng" | "log" | "secrets" | "dispatcher">;

/** The dispatcher's own needs: everything above but itself. */
export type DispatchContext = Omit<WebhookContext, "dispatcher">;
