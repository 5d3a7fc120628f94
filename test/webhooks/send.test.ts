import { afterEach, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { EXCERPT_BYTES, MAX_RESPONSE_BYTES, sendDelivery } from "../../src/webhooks/send";

// One attempt against real receivers on 127.0.0.1: what a receiver's answer leaves in the attempt's excerpt, read
// in one call when its length is declared and within the bound, through the bounded reader otherwise.

let server: ReturnType<typeof Bun.serve> | null = null;
afterEach(() => {
  server?.stop(true);
  server = null;
});

function receiver(answer: () => Response): string {
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: answer });
  return `http://127.0.0.1:${server.port}/hook`;
}

const send = (url: string) =>
  sendDelivery({
    url,
    eventPublicId: "evt_send_test",
    eventType: "webhook.test",
    body: '{"ok":true}',
    timestampSeconds: Math.floor(Date.now() / 1000),
    secret: "whsec_send_test",
    previousSecret: null,
    timeoutMs: 5_000,
  });

describe("a receiver's answer in the attempt's excerpt", () => {
  test("no body: an empty excerpt", async () => {
    const r = await send(receiver(() => new Response(null, { status: 204 })));
    expect(r).toMatchObject({ ok: true, statusCode: 204, excerpt: "" });
  });

  test("a declared length within the bound: its first EXCERPT_BYTES", async () => {
    const body = "a".repeat(EXCERPT_BYTES) + "b".repeat(4_000);
    const r = await send(receiver(() => new Response(body, { status: 200, headers: { "content-length": String(body.length) } })));
    expect(r).toMatchObject({ ok: true, statusCode: 200, excerpt: "a".repeat(EXCERPT_BYTES) });
  });

  test("a short answer is kept whole, UTF-8 decoded", async () => {
    const r = await send(receiver(() => Response.json({ received: "✓" }, { status: 500 })));
    expect(r).toMatchObject({ ok: false, statusCode: 500, reasonTag: "http_error", excerpt: '{"received":"✓"}' });
  });

  test("a declared length past the bound: read up to MAX_RESPONSE_BYTES, not whole", async () => {
    const body = "c".repeat(4 * MAX_RESPONSE_BYTES);
    const r = await send(receiver(() => new Response(body, { status: 200 })));
    expect(r).toMatchObject({ ok: true, statusCode: 200, excerpt: "c".repeat(EXCERPT_BYTES) });
  });

  test("an endless answer with no length ends at the bound, long before the timeout", async () => {
    const chunk = new TextEncoder().encode("d".repeat(4096));
    const url = receiver(
      () =>
        new Response(
          new ReadableStream({
            pull(controller) {
              controller.enqueue(chunk);
            },
          }),
          { status: 200 },
        ),
    );
    const started = performance.now();
    const r = await send(url);
    expect(r).toMatchObject({ ok: true, statusCode: 200, excerpt: "d".repeat(EXCERPT_BYTES) });
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  test("a compressed answer whose length is small but inflates past the bound goes through the bounded reader", async () => {
    const packed = gzipSync(Buffer.from("e".repeat(64 * MAX_RESPONSE_BYTES)));
    expect(packed.length).toBeLessThan(MAX_RESPONSE_BYTES);
    const url = receiver(() => new Response(packed, { status: 200, headers: { "content-encoding": "gzip", "content-length": String(packed.length) } }));
    const r = await send(url);
    expect(r).toMatchObject({ ok: true, statusCode: 200, excerpt: "e".repeat(EXCERPT_BYTES) });
  });
});
