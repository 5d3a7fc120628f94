// What every answer must look like (docs/design.md §2), and the grouped report of the answers that did not
// (test/fuzz): one run lists every failing operation, grouped by cause, one line per variant.
import { ERROR_CATALOG, isErrorCode } from "../../src/http/errors/errors";
import { FUZZ_CLIENTS, type FuzzAnswer, type FuzzOperation, type FuzzRequest } from "./fuzz-target";

/**
 * A request slower than this is reported: a hang detector with room to spare, not a benchmark. 1 s for one
 * client; with several (FUZZ_CLIENTS) a request may queue behind every other one in flight — two resets of one
 * sandbox take turns — so the bound grows with their number.
 */
export const SLOW_MS = 1_000 * FUZZ_CLIENTS;

export interface Failure {
  op: string;
  variant: string;
  cause: string;
  status: number;
  ms: number;
  excerpt: string;
}

/**
 * Refusals a route gives by design to a request that carries valid credentials: they are findings of the
 * route's own logic, not of the suite's signing. Anything else answering 401/403 means the suite sent the
 * wrong credential and is reported as a suite bug.
 */
const DESIGNED_REFUSALS: ReadonlySet<string> = new Set([
  "short_link_signature_invalid", // a tampered signed short-link token
  "track_auth_required",
  "track_auth_invalid",
]);

const excerptOf = (text: string) => text.replace(/\s+/g, " ").slice(0, 160);

/** Every way `answer` breaks the wire conventions; empty when it is fine. */
export function checkAnswer(op: FuzzOperation, req: FuzzRequest, answer: FuzzAnswer): Failure[] {
  const failures: Failure[] = [];
  const fail = (cause: string) =>
    failures.push({ op: op.id, variant: req.variant, cause, status: answer.status, ms: answer.ms, excerpt: excerptOf(answer.text) });
  if (answer.hung) {
    fail(`no answer within ${Math.round(answer.ms / 1000)} s`);
    return failures;
  }
  if (answer.ms > SLOW_MS) fail(`slower than ${SLOW_MS} ms`);
  // Over a socket, a request line past the runtime's header limit (64 KiB, --max-http-header-size) is refused by
  // Bun with a bare 431 before any Herald code runs; test/fuzz/real-server.test.ts pins where that limit is.
  if (answer.pastHeaderLimit && answer.status === 431 && answer.text === "") return failures;
  const requestId = answer.headers.get("x-request-id");
  if (!requestId) fail("no X-Request-ID header");
  if (req.mustRefuse && answer.status < 400) fail(`accepted with ${answer.status}; a number written as text must be refused with a 4xx`);
  if (answer.status < 400) return failures;
  if (req.mustRefuse && answer.status < 500 && !answer.text.includes('"error":"invalid_payload"')) {
    // Refused, but by a later check (a 409 for a key the valid request already took): the body got past validation.
    fail(`${answer.status} instead of 400 invalid_payload; a number written as text must fail the body's validation`);
  }

  let body: any;
  try {
    body = JSON.parse(answer.text);
  } catch {
    fail(`${answer.status} body is not JSON (content-type ${answer.headers.get("content-type") ?? "none"})`);
    return failures;
  }
  const code = body?.error;
  if (answer.status >= 500) {
    const message = typeof body?.message === "string" ? ` "${body.message.split(/[;.]/)[0]!.slice(0, 60)}"` : "";
    fail(`${answer.status} ${typeof code === "string" ? code : "(no error code)"}${message}`);
  }
  if (body?.success !== false || typeof code !== "string" || typeof body.message !== "string" || typeof body.request_id !== "string") {
    fail(`${answer.status} body is not the envelope {success:false, error, message, request_id}`);
    return failures;
  }
  if (!isErrorCode(code)) {
    fail(`error code "${code}" is not in ERROR_CATALOG`);
    return failures;
  }
  if (ERROR_CATALOG[code].http_status !== answer.status)
    fail(`status ${answer.status} differs from the catalog's ${ERROR_CATALOG[code].http_status} for "${code}"`);
  if (requestId && body.request_id !== requestId) fail("body request_id differs from the X-Request-ID header");
  if ((answer.status === 401 || answer.status === 403) && op.credential !== "public" && !DESIGNED_REFUSALS.has(code)) {
    fail(`SUITE BUG: valid ${op.credential} credentials refused with ${answer.status} ${code}`);
  }
  return failures;
}

/**
 * The kind of input a variant is, without the field it went to: `body.reason={"toString":1}` and
 * `body.title={"toString":1}` are one family, so one cause shows up as one group across every route it hits.
 */
export function variantFamily(variant: string): string {
  const random = / \(fast-check seed=\d+ #\d+\)$/.exec(variant);
  if (random) return `${/^(query|path|body|raw body)/.exec(variant)?.[1] ?? "request"} — random value (fast-check)`;
  return variant.replace(/^(query|path|body)\.[^=\s]+(=| missing| given twice| without)/, "$1.*$2").replace(/ in body\.\S+$/, " in body.*");
}

/** The failures as text: by cause and input family, then by operation, one line per variant (capped per operation). */
export function formatFailures(failures: Failure[], opts: { perOperation?: number; title?: string } = {}): string {
  const perOperation = opts.perOperation ?? 8;
  const byCause = new Map<string, Map<string, Failure[]>>();
  for (const f of failures) {
    const key = `${f.cause}  ←  ${variantFamily(f.variant)}`;
    const ops = byCause.get(key) ?? byCause.set(key, new Map()).get(key)!;
    (ops.get(f.op) ?? ops.set(f.op, []).get(f.op)!).push(f);
  }
  const causes = [...byCause.entries()].sort((a, b) => b[1].size - a[1].size);
  const lines: string[] = [];
  if (opts.title) lines.push(opts.title);
  for (const [cause, ops] of causes) {
    const count = [...ops.values()].reduce((n, l) => n + l.length, 0);
    lines.push("", `■ ${cause} — ${ops.size} operation${ops.size === 1 ? "" : "s"}, ${count} request${count === 1 ? "" : "s"}`);
    for (const [op, list] of ops) {
      lines.push(`  ${op}`);
      for (const f of list.slice(0, perOperation)) {
        lines.push(`    ${f.variant.slice(0, 110)} → ${f.status || "-"} in ${Math.round(f.ms)} ms  ${f.excerpt.slice(0, 110)}`);
      }
      if (list.length > perOperation) lines.push(`    … and ${list.length - perOperation} more variants`);
    }
  }
  return lines.join("\n");
}
