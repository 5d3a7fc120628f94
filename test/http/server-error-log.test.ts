import { afterEach, describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { httpCore, RequestStates } from "../../src/http/core";
import { AppError } from "../../src/http/errors/errors";
import { RouteIndex } from "../../src/http/routes/route-index";
import { createLogger } from "../../src/log";
import { openTestApp, type TestApp } from "../support/app";

// A 5xx AppError is the server's fault, and its answer tells the caller to quote the request id or to see the
// server log: so the HTTP core logs it — code, message, the `internal` text the caller never sees, the cause —
// under that request id. 4xx are the caller's and are not logged. Routes over the real HTTP core.

let h: TestApp | undefined;
afterEach(() => h?.close());

async function serve() {
  const lines: Array<Record<string, unknown>> = [];
  h = await openTestApp({ log: createLogger("debug", (l) => lines.push(JSON.parse(l))) });
  const states = new RequestStates();
  const routes = new RouteIndex();
  const app = new Elysia({ normalize: false })
    .use(httpCore(h.ctx, states, routes))
    .get("/boom", () => {
      throw new AppError("server_error", "The backup failed its integrity check and was removed; see the server log", {
        internal: "*** in database main ***\nPage 7: btreeInitPage() returns error code 11",
      });
    })
    .get("/down", () => {
      throw new AppError("db_unavailable", "The database did not answer; retry with backoff", { cause: new Error("SQLITE_BUSY: database is locked") });
    })
    .get("/gone", () => {
      throw new AppError("not_found", "nothing here", { internal: "never logged" });
    });
  routes.load(app.routes);
  const get = async (path: string) => {
    const res = await app.handle(new Request(`http://localhost${path}`));
    return { status: res.status, body: (await res.json()) as { request_id: string; message: string } };
  };
  return { lines, get };
}

describe("5xx AppErrors reach the server log", () => {
  test("a 500 with an internal text: logged at error under the request id; the caller sees only the message", async () => {
    const { lines, get } = await serve();
    const r = await get("/boom");
    expect(r.status).toBe(500);
    expect(JSON.stringify(r.body)).not.toContain("btreeInitPage");
    const line = lines.find((l) => l.msg === "request failed");
    expect(line).toMatchObject({ level: "error", request_id: r.body.request_id, path: "/boom", error_code: "server_error", status: 500 });
    expect(line!.internal).toContain("btreeInitPage() returns error code 11");
  });

  test("a 503 with a cause: logged at warn with the cause's message", async () => {
    const { lines, get } = await serve();
    const r = await get("/down");
    expect(r.status).toBe(503);
    expect(lines.find((l) => l.msg === "request failed")).toMatchObject({
      level: "warn",
      request_id: r.body.request_id,
      error_code: "db_unavailable",
      cause: "SQLITE_BUSY: database is locked",
    });
  });

  test("a 4xx is the caller's: not logged", async () => {
    const { lines, get } = await serve();
    expect((await get("/gone")).status).toBe(404);
    expect(lines.filter((l) => l.msg === "request failed")).toEqual([]);
  });
});
