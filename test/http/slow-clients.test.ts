// Slow and oversized clients, over real TCP sockets to a served Herald on 127.0.0.1 (`bun src/main.ts serve` with
// npm start's flags, or the binary HERALD_TEST_TARGET names). A body trickled in (with a Content-Length or
// chunked) gets 408 request_timeout in the JSON envelope within the body deadline + 1 s, and the connection is
// closed; a body sent at a normal rate, even one that takes longer than the grace period, is unaffected. A header
// section Bun's parser refuses (more than 198 fields, or more than 64 KiB) gets Bun's own bare 431 before any
// Herald code runs: docs/http-conventions.md documents the figures this file measures.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import { BODY_RATE_GRACE_MS, drainLimitBytes } from "../../src/http/body/body-deadline";
import { startTarget, TARGET, type TargetApp, targetFromEnv } from "../support/target";

/** The body deadline the served Herald runs with: small, so each case takes a few seconds. */
const TIMEOUT_MS = 3000;
const MIN_RATE = 1024;
/** A refusal is on time when it comes within its deadline + this (the sweep and the scheduler of a shared machine). */
const SLACK_MS = 1000;

let h: TargetApp;
let port: number;
beforeAll(async () => {
  // An in-process app has no socket to trickle into: the default target is served from the source here.
  h = await startTarget({
    target: TARGET.kind === "app" ? targetFromEnv("source") : TARGET,
    env: {
      REQUEST_BODY_TIMEOUT_MS: String(TIMEOUT_MS),
      REQUEST_BODY_MIN_BYTES_PER_SEC: String(MIN_RATE),
      // Many requests come from one address here; the public limit would answer some of them 429 before their body.
      RATE_LIMIT_PUBLIC_API_PER_MIN: "0",
    },
  });
  port = Number(new URL(h.baseUrl!).port);
}, 60_000);
afterAll(async () => {
  await h?.stop();
});

const ROUTE = "/api/public/audio-share-links/validate/batch";
const VALID_BODY = JSON.stringify({ items: [{ track_url: "/tracks/1" }] });

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A raw HTTP/1.1 connection: what arrives, when it closes, and a way to write on a schedule. */
class Conn {
  private readonly socket: Socket;
  private data = "";
  readonly opened = performance.now();
  closedAt: number | null = null;
  /** The socket's errors (EPIPE, ECONNRESET), in order. */
  readonly errors: string[] = [];
  /** When `writeEvery` wrote its last chunk (ms since opened), once it is done; null while it is writing. */
  lastWriteAt: number | null = null;
  private readonly closed: Promise<void>;
  private timers: ReturnType<typeof setInterval>[] = [];

  constructor() {
    this.socket = connect(port, "127.0.0.1");
    this.socket.setNoDelay(true);
    this.socket.on("data", (d) => {
      this.data += d.toString("latin1");
    });
    // Writing into a connection the server closed fails: that is the point of some cases, not an error; the cases
    // where it must not happen look at `errors`.
    this.socket.on("error", (e: NodeJS.ErrnoException) => this.errors.push(e.code ?? e.message));
    this.closed = new Promise((resolve) =>
      this.socket.on("close", () => {
        this.closedAt = performance.now();
        for (const t of this.timers) clearInterval(t);
        resolve();
      }),
    );
  }

  write(text: string): void {
    if (!this.socket.destroyed && this.socket.writable) this.socket.write(text);
  }

  /** Writes `next()` every `everyMs` until it returns null or the connection closes. */
  writeEvery(everyMs: number, next: () => string | null): void {
    let last = 0;
    const t = setInterval(() => {
      const chunk = next();
      if (chunk === null) {
        clearInterval(t);
        this.lastWriteAt = last;
      } else {
        this.write(chunk);
        last = performance.now() - this.opened;
      }
    }, everyMs);
    this.timers.push(t);
  }

  /** Resolves when the server has closed the connection, or with false after `ms`. */
  async closedWithin(ms: number): Promise<boolean> {
    return Promise.race([this.closed.then(() => true), Bun.sleep(ms).then(() => false)]);
  }

  /** The first complete answer on the connection (by Content-Length), waiting at most `ms`. */
  async answer(ms: number, nth = 1): Promise<Answer & { at: number }> {
    const until = performance.now() + ms;
    for (;;) {
      const answers = parseAnswers(this.data);
      if (answers.length >= nth) return { ...answers[nth - 1]!, at: performance.now() - this.opened };
      if (performance.now() > until || (this.closedAt !== null && answers.length < nth)) {
        throw new Error(`no answer ${nth} within ${ms} ms (closed: ${this.closedAt !== null}); got ${JSON.stringify(this.data.slice(0, 300))}`);
      }
      await Bun.sleep(10);
    }
  }

  destroy(): void {
    for (const t of this.timers) clearInterval(t);
    this.socket.destroy();
  }
}

/** The complete answers in `raw`, in order (bodies by Content-Length; none is chunked here). */
function parseAnswers(raw: string): Answer[] {
  const out: Answer[] = [];
  let rest = raw;
  for (;;) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) return out;
    const [statusLine, ...lines] = rest.slice(0, end).split("\r\n");
    const headers: Record<string, string> = {};
    for (const l of lines) headers[l.slice(0, l.indexOf(":")).toLowerCase()] = l.slice(l.indexOf(":") + 1).trim();
    const length = Number(headers["content-length"] ?? 0);
    if (rest.length < end + 4 + length) return out;
    out.push({ status: Number(statusLine!.split(" ")[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
}

const head = (path: string, headers: Record<string, string>) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;

/** A body trickled one byte a second on a new connection, with a Content-Length or chunked. */
function trickle(framing: "content-length" | "chunked", requestId: string): Conn {
  const c = new Conn();
  const body = VALID_BODY;
  const framingHeader: Record<string, string> = framing === "chunked" ? { "transfer-encoding": "chunked" } : { "content-length": String(body.length) };
  c.write(head(ROUTE, { "content-type": "application/json", "x-request-id": requestId, ...framingHeader }));
  let i = 0;
  c.writeEvery(1000, () => {
    if (i >= body.length) return null;
    const ch = body[i++]!;
    return framing === "chunked" ? `1\r\n${ch}\r\n` : ch;
  });
  return c;
}

function expectTimeoutEnvelope(a: Answer, requestId: string) {
  expect(a.status).toBe(408);
  expect(a.headers.connection?.toLowerCase()).toBe("close");
  expect(a.headers["content-type"]).toContain("application/json");
  expect(a.headers["x-request-id"]).toBe(requestId);
  const body = JSON.parse(a.body);
  expect(body).toMatchObject({ success: false, error: "request_timeout", request_id: requestId });
  expect(body.message).toContain("did not arrive in time");
  expect(body.details).toMatchObject({ timeout_ms: TIMEOUT_MS, min_bytes_per_sec: MIN_RATE });
  return body as { details: { received_bytes: number; elapsed_ms: number } };
}

describe(`slow request bodies (${TARGET.kind === "app" ? "bun src/main.ts serve" : TARGET.label})`, () => {
  test("a body trickled at 1 byte/s, with a Content-Length or chunked: 408 request_timeout after the grace period, connection closed", async () => {
    const conns = [trickle("content-length", "slow-body-length-0001"), trickle("chunked", "slow-body-chunked-0001")];
    try {
      // Below the minimum rate, the body is refused when the grace period ends, well before the total deadline.
      const deadline = BODY_RATE_GRACE_MS + SLACK_MS;
      const answers = await Promise.all(conns.map((c) => c.answer(deadline + 2000)));
      expect(answers.map((a) => a.status)).toEqual([408, 408]);
      for (const [i, id] of ["slow-body-length-0001", "slow-body-chunked-0001"].entries()) {
        const body = expectTimeoutEnvelope(answers[i]!, id);
        // Both are read chunk by chunk, so the bytes that came before the refusal are counted (one a second).
        expect(body.details.received_bytes).toBeLessThan(10);
        expect(body.details.received_bytes).toBeGreaterThan(0);
        expect(answers[i]!.at).toBeGreaterThanOrEqual(BODY_RATE_GRACE_MS - 100);
        expect(answers[i]!.at).toBeLessThan(deadline);
      }
      // The server closes the connection once the answer is written; the client's next bytes go nowhere.
      for (const c of conns) expect(await c.closedWithin(1000)).toBe(true);
    } finally {
      for (const c of conns) c.destroy();
    }
  }, 15_000);

  test("a short body with a Content-Length of which 3 bytes arrive, then nothing: the 408 says 3 bytes arrived", async () => {
    const c = new Conn();
    try {
      c.write(head(ROUTE, { "content-type": "application/json", "x-request-id": "slow-body-three-0001", "content-length": String(VALID_BODY.length) }));
      c.write(VALID_BODY.slice(0, 3));
      const a = await c.answer(BODY_RATE_GRACE_MS + SLACK_MS + 2000);
      const body = expectTimeoutEnvelope(a, "slow-body-three-0001");
      expect(body.details.received_bytes).toBe(3);
      expect((body as unknown as { message: string }).message).toStartWith("The request body did not arrive in time: 3 bytes in ");
      expect(await c.closedWithin(1000)).toBe(true);
    } finally {
      c.destroy();
    }
  }, 15_000);

  test("a body that keeps coming above the minimum rate but past REQUEST_BODY_TIMEOUT_MS: 408 at the total deadline", async () => {
    const c = new Conn();
    try {
      c.write(head(ROUTE, { "content-type": "application/json", "x-request-id": "slow-body-total-0001", "transfer-encoding": "chunked" }));
      // 4 KiB a second, four times the minimum rate, of JSON whitespace that never ends.
      const piece = " ".repeat(400);
      c.writeEvery(100, () => `${piece.length.toString(16)}\r\n${piece}\r\n`);
      const a = await c.answer(TIMEOUT_MS + SLACK_MS + 2000);
      const body = expectTimeoutEnvelope(a, "slow-body-total-0001");
      expect(body.details.received_bytes).toBeGreaterThan(MIN_RATE * (TIMEOUT_MS / 1000));
      expect(a.at).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
      expect(a.at).toBeLessThan(TIMEOUT_MS + SLACK_MS);
      expect(await c.closedWithin(1000)).toBe(true);
    } finally {
      c.destroy();
    }
  }, 15_000);

  test("a body sent at a normal rate is unaffected, even when it takes longer than the grace period; the connection stays open", async () => {
    const c = new Conn();
    try {
      // ~24 KB of valid JSON (the batch, then whitespace) spread evenly over 2.4 s of the wall clock (whatever the
      // timer's drift on a busy machine): past the grace period, about 10 times the minimum rate, and under the
      // total deadline.
      const body = VALID_BODY + " ".repeat(24_000 - VALID_BODY.length);
      c.write(head(ROUTE, { "content-type": "application/json", "x-request-id": "normal-body-0001", "content-length": String(body.length) }));
      let sent = 0;
      const t0 = performance.now();
      c.writeEvery(100, () => {
        if (sent >= body.length) return null;
        const due = Math.min(body.length, Math.ceil(((performance.now() - t0) / 2_400) * body.length));
        const piece = body.slice(sent, Math.max(due, sent + 1));
        sent += piece.length;
        return piece;
      });
      const first = await c.answer(TIMEOUT_MS + SLACK_MS + 2000);
      expect([first.status, first.headers["x-request-id"], JSON.parse(first.body).success]).toEqual([200, "normal-body-0001", true]);
      expect(first.at).toBeGreaterThan(BODY_RATE_GRACE_MS);
      expect(first.headers.connection?.toLowerCase()).not.toBe("close");
      // Keep-alive: a second request on the same connection, its body at once.
      c.write(
        head(ROUTE, { "content-type": "application/json", "x-request-id": "normal-body-0002", "content-length": String(VALID_BODY.length) }) + VALID_BODY,
      );
      const second = await c.answer(5000, 2);
      expect([second.status, second.headers["x-request-id"]]).toEqual([200, "normal-body-0002"]);
      expect(c.closedAt).toBeNull();
    } finally {
      c.destroy();
    }
  }, 15_000);

  test("100 trickling connections at once: each gets its 408 and is closed within the deadline + 1 s; the server keeps serving", async () => {
    const conns = Array.from({ length: 100 }, (_, i) => trickle(i % 2 ? "chunked" : "content-length", `slow-many-${String(i).padStart(4, "0")}`));
    try {
      const started = performance.now();
      const closed = await Promise.all(conns.map((c) => c.closedWithin(BODY_RATE_GRACE_MS + SLACK_MS + 1000)));
      expect(closed.filter((x) => !x).length).toBe(0);
      const answers = await Promise.all(conns.map((c) => c.answer(100)));
      expect(answers.filter((a) => a.status !== 408).map((a) => a.status)).toEqual([]);
      const lastClose = Math.max(...conns.map((c) => c.closedAt! - c.opened));
      expect(lastClose).toBeLessThan(BODY_RATE_GRACE_MS + SLACK_MS);
      expect(performance.now() - started).toBeLessThan(BODY_RATE_GRACE_MS + SLACK_MS + 500);
      const res = await h.request("/healthz");
      expect(res.status).toBe(200);
    } finally {
      for (const c of conns) c.destroy();
    }
  }, 20_000);
});

describe("bodies over MAX_BODY_BYTES", () => {
  const PIECE = 128 * 1024;

  /** `total` bytes of JSON whitespace, PIECE bytes every 10 ms, with a Content-Length or chunked; `declared` overrides the length. */
  function upload(framing: "content-length" | "chunked", total: number, requestId: string, declared = total): Conn {
    const c = new Conn();
    const framingHeader: Record<string, string> = framing === "chunked" ? { "transfer-encoding": "chunked" } : { "content-length": String(declared) };
    c.write(head(ROUTE, { "content-type": "application/json", "x-request-id": requestId, ...framingHeader }));
    const piece = " ".repeat(PIECE);
    let sent = 0;
    let ended = framing !== "chunked";
    c.writeEvery(10, () => {
      if (sent >= total) {
        if (ended) return null;
        ended = true;
        return "0\r\n\r\n";
      }
      const n = Math.min(PIECE, total - sent);
      sent += n;
      return framing === "chunked" ? `${n.toString(16)}\r\n${piece.slice(0, n)}\r\n` : piece.slice(0, n);
    });
    return c;
  }

  function expectTooLarge(a: Answer, requestId: string, max: number) {
    expect([a.status, a.headers["x-request-id"], a.headers["content-type"]]).toEqual([413, requestId, expect.stringContaining("application/json")]);
    expect(JSON.parse(a.body)).toMatchObject({ success: false, error: "payload_too_large", request_id: requestId, details: { max_bytes: max } });
  }

  test("a client uploading twice the limit in chunks, with a Content-Length or chunked, reads the 413 after its last byte, without a reset; the connection serves on", async () => {
    const max = h.ctx.config.maxBodyBytes;
    const ids = ["over-length-0001", "over-chunked-0001"];
    const conns = [upload("content-length", 2 * max, ids[0]!), upload("chunked", 2 * max, ids[1]!)];
    try {
      const answers = await Promise.all(conns.map((c) => c.answer(TIMEOUT_MS + SLACK_MS)));
      for (const [i, c] of conns.entries()) {
        expectTooLarge(answers[i]!, ids[i]!, max);
        // Herald read the whole body before answering: the answer comes after the client's last byte, on a connection
        // that stays open (no Connection: close), and no write of the client failed.
        expect(answers[i]!.headers.connection?.toLowerCase()).not.toBe("close");
        for (let n = 0; n < 100 && c.lastWriteAt === null; n++) await Bun.sleep(10);
        expect(answers[i]!.at).toBeGreaterThanOrEqual(c.lastWriteAt!);
        expect(c.errors).toEqual([]);
        // Keep-alive: the next request on the same connection is answered.
        c.write(
          head(ROUTE, { "content-type": "application/json", "x-request-id": `${ids[i]}-next`, "content-length": String(VALID_BODY.length) }) + VALID_BODY,
        );
        const next = await c.answer(5000, 2);
        expect([next.status, next.headers["x-request-id"]]).toEqual([200, `${ids[i]}-next`]);
        expect([c.closedAt, c.errors]).toEqual([null, []]);
      }
    } finally {
      for (const c of conns) c.destroy();
    }
  }, 15_000);

  test("past the drain limit (4 × MAX_BODY_BYTES, at most 8 MiB) Herald stops reading: 413 with Connection: close, and the connection is closed", async () => {
    const max = h.ctx.config.maxBodyBytes;
    const limit = drainLimitBytes(max);
    // Declared past the limit: refused at once, before the client has sent it.
    const declared = upload("content-length", 2 * PIECE, "past-drain-length-0001", 4 * limit);
    // Chunked, with no end in sight: refused once the limit is read.
    const chunked = upload("chunked", 4 * limit, "past-drain-chunked-0001");
    try {
      const [a, b] = await Promise.all([declared.answer(TIMEOUT_MS + SLACK_MS), chunked.answer(TIMEOUT_MS + SLACK_MS)]);
      expectTooLarge(a, "past-drain-length-0001", max);
      expectTooLarge(b, "past-drain-chunked-0001", max);
      expect([a.headers.connection?.toLowerCase(), b.headers.connection?.toLowerCase()]).toEqual(["close", "close"]);
      expect(await declared.closedWithin(1000)).toBe(true);
      expect(await chunked.closedWithin(1000)).toBe(true);
      expect((await h.request("/healthz")).status).toBe(200);
    } finally {
      declared.destroy();
      chunked.destroy();
    }
  }, 15_000);
});

describe("header sections Bun's parser refuses (431)", () => {
  /** A GET with Host and `fields`, on a new connection: its answer, and whether the server closed the connection. */
  async function getWith(fields: string[]): Promise<{ answer: Answer; closed: boolean }> {
    const c = new Conn();
    try {
      c.write(`GET /api/public/audio-share-links/channels.json HTTP/1.1\r\nHost: 127.0.0.1\r\n${fields.map((f) => `${f}\r\n`).join("")}\r\n`);
      const answer = await c.answer(5000);
      // Only a refusal is expected to close the connection: an answered request leaves it open (keep-alive).
      return { answer, closed: answer.status === 431 ? await c.closedWithin(1000) : c.closedAt !== null };
    } finally {
      c.destroy();
    }
  }
  const many = (n: number) => Array.from({ length: n }, (_, i) => `X-H${i}: v`);

  test("198 header fields (Host and 197 more) reach Herald; 199 and 10,000 get Bun's bare 431 and the connection closed", async () => {
    const ok = await getWith(["X-Request-ID: headers-198-0001", ...many(196)]);
    expect([ok.answer.status, ok.answer.headers["x-request-id"]]).toEqual([200, "headers-198-0001"]);
    for (const n of [197, 9_998]) {
      const refused = await getWith(["X-Request-ID: headers-many-0001", ...many(n)]);
      // Bun answers before any Herald code runs: no body, no X-Request-ID, Connection: close.
      expect([refused.answer.status, refused.answer.body, refused.answer.headers["x-request-id"], refused.closed]).toEqual([431, "", undefined, true]);
      expect(refused.answer.headers.connection?.toLowerCase()).toBe("close");
    }
  }, 15_000);

  test("a header section of 64 KiB reaches Herald; one byte more gets Bun's bare 431", async () => {
    // The whole head: request line, fields and the blank line, with --max-http-header-size=65536 (npm start, the binary).
    const fixed = "GET /api/public/audio-share-links/channels.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: \r\n\r\n";
    const at = async (total: number) => (await getWith([`X-Pad: ${"p".repeat(total - fixed.length)}`])).answer;
    const fits = await at(65_536);
    expect([fits.status, fits.headers["x-request-id"]?.startsWith("req_")]).toEqual([200, true]);
    const over = await at(65_537);
    expect([over.status, over.body, over.headers["x-request-id"]]).toEqual([431, "", undefined]);
  }, 15_000);
});
