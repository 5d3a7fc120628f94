// The OpenAPI-driven fuzz suite (docs/design.md §9): every operation of the served /api/openapi.json gets its valid
// request and then malformed variants of every query parameter, path parameter and body field, bad body
// shapes and content types, with the credentials the route needs, sent to the suite's target (in-process by
// default; HERALD_TEST_TARGET=dist/herald for the built binary, see test/support/target.ts). Every answer must be
// below 500, within SLOW_MS, and — when it is a refusal — the JSON envelope with a catalog code and an
// X-Request-ID. A new route is fuzzed as soon as it is in the document.
//
//   bun test test/fuzz                         default: ~6,000 requests
//   HERALD_TEST_TARGET=dist/herald bun test test/fuzz/routes.test.ts    the same against the built binary
//   HERALD_TEST_ENGINE=postgres HERALD_TEST_TARGET=dist/herald bun test test/fuzz/routes.test.ts    … over PostgreSQL
//   FUZZ_RUNS=200 bun test test/fuzz           200 random variants per operation on top of the catalog
//   FUZZ_SEED=7 bun test test/fuzz             another fast-check seed (each random variant names its seed)
//   bun test test/fuzz -t "GET /api/partner/webhooks/dlq"    one operation
//   HERALD_FUZZ_CLIENTS=8 HERALD_TEST_ENGINE=postgres bun test test/fuzz/routes.test.ts    8 requests in flight per operation
//
// One app is shared by all operations (building and seeding one per operation would cost more than the
// fuzzing). No operation depends on another's: routes that destroy what they are aimed at get objects made
// for them (test/support/fuzz-baseline.ts), and each operation's variants start from the same valid request.
import { afterAll, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { baselineFor } from "../support/fuzz-baseline";
import { operationsOf } from "../support/fuzz-operations";
import { checkAnswer, formatFailures, SLOW_MS, type Failure } from "../support/fuzz-report";
import { createFuzzTarget, FUZZ_CLIENTS, HANG_MS } from "../support/fuzz-target";
import { catalogVariants, DEEP_NESTING_EVERY_BODY_ROUTE, DEEP_NESTING_ROUTES, FUZZ_RUNS, FUZZ_SEED, randomVariants } from "../support/fuzz-variants";

/**
 * Operations that cannot be fuzzed, with the reason. None today: nothing streams forever or needs a peer the
 * suite cannot give it. An operation listed here is reported as skipped on every run, never dropped quietly.
 */
const EXCLUDED: Record<string, string> = {
  // "GET /api/example/stream": "server-sent events: the response never ends",
};

/** Wall time one operation's variants may take before the rest are reported as not run. */
const OPERATION_BUDGET_MS = 45_000 * Math.max(1, FUZZ_RUNS / 50);

const target = await createFuzzTarget();
const docRes = await target.h.request("/api/openapi.json");
if (docRes.status !== 200) throw new Error(`GET /api/openapi.json answered ${docRes.status}`);
const operations = operationsOf(await docRes.json());
const staleExclusions = Object.keys(EXCLUDED).filter((id) => !operations.some((op) => op.id === id));

const failures: Failure[] = [];
const baselines: Array<{ op: string; status: number; excerpt: string }> = [];
const slowest: Array<{ op: string; variant: string; status: number; ms: number }> = [];
const startedAt = performance.now();
const requestsAtStart = target.requests;

const statusCounts = new Map<number, number>();

function recordTime(op: string, variant: string, status: number, ms: number) {
  statusCounts.set(status, (statusCounts.get(status) ?? 0) + 1);
  slowest.push({ op, variant, status, ms });
  slowest.sort((a, b) => b.ms - a.ms);
  slowest.length = Math.min(slowest.length, 8);
}

test("the document has operations, and every exclusion names one of them", () => {
  expect(operations.length).toBeGreaterThan(100);
  expect(staleExclusions).toEqual([]);
});

for (const op of operations) {
  if (op.id in EXCLUDED) {
    test.skip(`${op.id} (excluded: ${EXCLUDED[op.id]})`, () => {});
    continue;
  }
  test(
    `${op.id} [${op.credential}]`,
    async () => {
      const base = await baselineFor(op, target);
      const variants = [...catalogVariants(op, base), ...randomVariants(op, base)];
      const mine: Failure[] = [];
      const deadline = performance.now() + OPERATION_BUDGET_MS;
      // FUZZ_CLIENTS clients take the variants in order, each sending its next one once its last is answered; a
      // variant is sent once. With one client this is the variants one after another.
      let next = 0;
      const client = async () => {
        while (next < variants.length) {
          const i = next++;
          const variant = variants[i]!;
          if (performance.now() > deadline) {
            mine.push({
              op: op.id,
              variant: `${variants.length - i} variants from "${variant.variant}" on`,
              cause: `not run: the operation's ${OPERATION_BUDGET_MS / 1000} s budget ran out`,
              status: 0,
              ms: 0,
              excerpt: "",
            });
            next = variants.length;
            return;
          }
          const answer = await target.send(op, variant);
          recordTime(op.id, variant.variant, answer.status, answer.ms);
          if (i === 0) baselines.push({ op: op.id, status: answer.status, excerpt: answer.text.replace(/\s+/g, " ").slice(0, 140) });
          mine.push(...checkAnswer(op, variant, answer));
        }
      };
      await Promise.all(Array.from({ length: Math.min(FUZZ_CLIENTS, variants.length) }, client));
      failures.push(...mine);
      if (mine.length)
        throw new Error(
          formatFailures(mine, { perOperation: 12, title: `${op.id}: ${mine.length} failing answers of ${variants.length} (seed ${FUZZ_SEED})` }),
        );
    },
    OPERATION_BUDGET_MS + HANG_MS + 30_000,
  );
}

afterAll(async () => {
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
  const requests = target.requests - requestsAtStart;
  const failingOps = new Set(failures.map((f) => f.op));
  const shallow = baselines.filter((b) => b.status >= 400);
  const lines = [
    "",
    `══ Herald OpenAPI fuzz (${target.h.target.label}) ══`,
    `${operations.length} operations (${Object.keys(EXCLUDED).length} excluded), ${requests} requests in ${seconds} s; seed ${FUZZ_SEED}, FUZZ_RUNS=${FUZZ_RUNS}, ${FUZZ_CLIENTS} client${FUZZ_CLIENTS === 1 ? "" : "s"}, slow > ${SLOW_MS} ms`,
    `deep nesting on ${DEEP_NESTING_EVERY_BODY_ROUTE ? "every body route" : `${DEEP_NESTING_ROUTES.size} routes (DEEP_NESTING_EVERY_BODY_ROUTE = false)`}`,
    `answers by status: ${[...statusCounts.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}×${n}`)
      .join(" ")}`,
    "slowest answers:",
    ...slowest.map((s) => `  ${Math.round(s.ms)} ms  ${s.status}  ${s.op}  ${s.variant.slice(0, 90)}`),
  ];
  if (shallow.length) {
    lines.push(`valid request refused on ${shallow.length} operations (their variants stop at that check; not a failure):`);
    for (const b of shallow) lines.push(`  ${b.status}  ${b.op}  ${b.excerpt.slice(0, 110)}`);
  }
  if (failures.length) {
    lines.push(formatFailures(failures, { perOperation: 6, title: `\n${failingOps.size} operations failed, ${failures.length} failing answers:` }));
  } else {
    lines.push("no failures");
  }
  const report = lines.join("\n");
  const file = join(tmpdir(), "herald-fuzz-report.txt");
  await Bun.write(file, report + "\n");
  console.log(`${report}\n(report saved to ${file})`);
  await target.h.ctx.dispatcher.idle();
  await target.close();
});
