import { Elysia, t } from "elysia";
import { buildGuards } from "../../src/auth/guards";
import { httpCore, RequestStates } from "../../src/http/core";
import { RouteIndex } from "../../src/http/route-index";
import { createTestApp, type TestApp, type TestAppOptions } from "../support/app";

/**
 * The real HTTP core and real guards, with small routes that need each scope and mode — the partner domain's
 * routes land in later issues; these exercise the lock itself. Effects write to a scratch table so tests can
 * count them.
 */
export function guardedApp(opts: TestAppOptions = {}) {
  const h = createTestApp({ ...opts, env: { TRUST_PROXY: "1", ...opts.env } });
  h.ctx.db.sqlite.exec("CREATE TABLE effects (id INTEGER PRIMARY KEY, key_id TEXT, amount REAL)");
  const states = new RequestStates();
  const routes = new RouteIndex();
  const guards = buildGuards(h.ctx, states);
  const insert = h.ctx.db.sqlite.prepare("INSERT INTO effects (key_id, amount) VALUES (?, ?) RETURNING id");
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
        guards.partner.idempotency.run(partner.idempotency, () => {
          const { id } = insert.get(partner.actor.keyId, body.amount) as { id: number };
          return { success: true as const, effect_id: id };
        }),
      { partner: { scope: "credit", mutation: true }, body: t.Object({ amount: t.Number() }) },
    )
    .post(
      "/t/slow",
      ({ partner, body }) =>
        guards.partner.idempotency.runAsync(
          partner.idempotency,
          () => gate,
          () => {
            const { id } = insert.get(partner.actor.keyId, body.amount) as { id: number };
            return { success: true as const, effect_id: id };
          },
        ),
      { partner: { scope: "credit", mutation: true }, body: t.Object({ amount: t.Number() }) },
    )
    .get("/t/admin", ({ admin }) => ({ success: true as const, who: admin.actor.name }), { admin: true });
  routes.load(app.routes);
  const call = (path: string, init?: RequestInit) => app.handle(new Request(`http://localhost${path}`, init));
  const effects = () => (h.ctx.db.sqlite.query("SELECT count(*) AS n FROM effects").get() as { n: number }).n;
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

export type GuardedApp = ReturnType<typeof guardedApp>;
export type { TestApp };
