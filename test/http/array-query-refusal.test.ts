// A query value refused while Elysia decodes it (an array item past its item schema) arrives at the core's error
// handler as TypeBox's decode error, without the usual list of errors: it is still a 400 naming the problem.
import { expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { httpCore, RequestStates } from "../../src/http/core";
import { RouteIndex } from "../../src/http/routes/route-index";
import { openTestApp } from "../support/app";

test("array query values past their schema are a 400 invalid_query, never a 500", async () => {
  const h = await openTestApp();
  try {
    const states = new RequestStates();
    const routes = new RouteIndex();
    const app = new Elysia({ normalize: false, encodeSchema: false })
      .use(httpCore(h.ctx, states, routes))
      .get("/arr", ({ query }) => ({ ok: query.x }), { query: t.Object({ x: t.Optional(t.Array(t.String({ maxLength: 2 }), { maxItems: 2 })) }) });
    routes.load(app.routes);
    const get = async (q: string) => {
      const res = await app.handle(new Request(`http://127.0.0.1/arr${q}`));
      return { status: res.status, body: (await res.json()) as { error?: string; message?: string; ok?: string[] } };
    };
    for (const q of ["?x=abc", "?x=a&x=b&x=c", "?x=a&x=bcd"]) {
      const res = await get(q);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_query");
      expect(res.body.message).not.toContain("undefined");
    }
    expect(await get("?x=a&x=b")).toEqual({ status: 200, body: { ok: ["a", "b"] } });
  } finally {
    await h.close();
  }
});
