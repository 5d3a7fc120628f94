// What the `credit` benchmark's bare servers share (bench/credit-sqlite-server.ts, bench/credit-postgres-server.ts):
// Bun.serve on 127.0.0.1 and nothing else. `GET /` answers "ok" (the harness's readiness poll); each POST
// /api/salutes/credit reads its JSON body and its Idempotency-Key, runs `credit` and answers JSON (500 with the
// error's message if it throws). No signature check, no nonce, no framework, no request log. On SIGTERM: stop
// listening, `close` (credits in flight finish first), exit 0 — a signal death reads as no exit code.
export function serveCredits(port: number, credit: (userId: number, idempotencyKey: string) => unknown, close: () => Promise<unknown> | void): void {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method === "GET" && url.pathname === "/") return new Response("ok");
      if (req.method !== "POST" || url.pathname !== "/api/salutes/credit") return new Response("not found", { status: 404 });
      const body = (await req.json()) as { user_id: string };
      const key = req.headers.get("idempotency-key") ?? crypto.randomUUID();
      try {
        await credit(Number(body.user_id), key);
        return Response.json({ success: true, user_id: body.user_id });
      } catch (err) {
        return Response.json({ success: false, error: (err as Error).message }, { status: 500 });
      }
    },
  });
  process.on("SIGTERM", () => {
    void server
      .stop()
      .then(() => close())
      .finally(() => process.exit(0));
  });
}
