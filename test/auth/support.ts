import { Elysia, t } from "elysia";
import { buildGuards } from "../../src/auth/guards";
import type { Queryable } from "../../src/db/port";
import { httpCore, RequestStates } from "../../src/http/core";
import { RouteIndex } from "../../src/http/routes/route-index";
import { openTestApp, type TestApp, type TestAppOptions } from "../support/app";

/**
 * The real HTTP core and real guards, with small routes that need each scope and mode — the partner domain's
 * routes land in later issues; these exercise the lock itself. Effects write to a scratch table so tests can
 * count them; the table is made on whichever engine the test app runs (an auto-numbered key is the one thing the
 * two dialects spell differently), and each effect's row is written in the idempotency transaction's handle, so it
 * commits or rolls back with the stored response.
 */
export async function guardedApp(opts: TestAppOptions = {}) {
  const h = await openTestApp({ ...opts, env: { TRUST_PROXY: "1", ...opts.env } });
  const id = h.ctx.store.dialect === "postgres" ? "id bigserial PRIMARY KEY" : "id INTEGER PRIMARY KEY";
  await h.ctx.store.run(`CREATE TABLE effects (${id}, key_id TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)`);
  const states = new RequestStates();
  const routes = new RouteIndex();
  const guards = buildGuards(h.ctx, states);
  const insert = async (q: Queryable, keyId: string, amount: number) => {
    const row = await q.get<{ id: number }>("INSERT INTO effects (key_id, amount) VALUES (?, ?) RETURNING id", [keyId, amount]);
    return row!.id;
  };
  let gate: Promise<void> = Promise.resolve();
  const app = new Elysia()
    .use(httpCore(h.ctx, states, routes))
    .use(guards.partner.plugin)
    .use(guards.admin.plugin)
    .get("/t/read", ({ partner }) => ({ success: true as const, key_id: partner.actor.keyId }), { partner: { scope: "read" } })
    .get("/t/sandbox", ({ partner }) => ({ success: true as const, mode: partner.actor.mode }), { partner: { scope: "read", mode: "sandbox" } })
    .post(
      "/t/credit",
      ({ partner, body }) =>
        guards.partner.idempotency.run(partner.idempotency, async (tx) => ({
          success: true as const,
          effect_id: await insert(tx, partner.actor.keyId, body.amount),
        })),
      { partner: { scope: "credit", mutation: true }, body: t.Object({ amount: t.Number() }) },
    )
    .post(
      "/t/slow",
      ({ partner, body }) =>
        guards.partner.idempotency.runAsync(
          partner.idempotency,
          () => gate,
          async (_prepared, tx) => ({ success: true as const, effect_id: await insert(tx, partner.actor.keyId, body.amount) }),
        ),
      { partner: { scope: "credit", mutation: true }, body: t.Object({ amount: t.Number() }) },
    )
    .get("/t/admin", ({ admin }) => ({ success: true as const, who: admin.actor.name }), { admin: true });
  routes.load(app.routes);
  const call = (path: string, init?: RequestInit) => app.handle(new Request(`http://localhost${path}`, init));
  const effects = async () => (await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM effects"))!.n;
  return {
    h,
    app,
    guards,
    call,
    async json(path: string, init?: RequestInit) {
      const res = await call(path, init);
      return { status: res.status, body: (await res.json()) as any, headers: res.headers };
    },
    effects,
    setGate(p: Promise<void>) {
      gate = p;
    },
  };
}

export type GuardedApp = Awaited<ReturnType<typeof guardedApp>>;
export type { TestApp };
