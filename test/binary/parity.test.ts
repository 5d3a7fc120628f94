// The binary that ships answers like the source that is tested: a fixed probe set (test/support/parity.ts) sent
// to `bun src/main.ts serve` and to the binary built with package.json's build flags must give the same status
// and error code, probe for probe. With HERALD_TEST_TARGET pointing at a binary (.ci/run: dist/herald) that
// binary is checked; otherwise one is built for this test into a temp dir.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary, shippedCodeFlags } from "../support/build";
import { checkParity } from "../support/parity";
import { TARGET, type Target } from "../support/target";

const dir = mkdtempSync(join(tmpdir(), "herald-parity-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function binaryUnderTest(): Promise<Target> {
  if (TARGET.kind === "binary") return TARGET;
  const outfile = join(dir, "herald");
  await buildBinary(outfile);
  return { kind: "binary", binary: outfile, label: `a binary built with ${shippedCodeFlags().join(" ")}` };
}

test("the built binary gives the source's status and error code to every probe", async () => {
  const binary = await binaryUnderTest();
  const result = await checkParity(binary);
  if (!result.ok) throw new Error(`${binary.label} differs from the source:\n  ${result.lines.join("\n  ")}`);
  // The probes are refusals by design: the source itself must refuse them as the spec says, or agreeing
  // would prove nothing.
  const bySource = Object.fromEntries(result.source.map((a) => [a.label, `${a.status} ${a.code}`]));
  expect(bySource["dlq hours=1e308"]).toBe("400 invalid_query");
  expect(bySource["dlq hours=-1"]).toBe("400 invalid_query");
  expect(bySource["dlq hours=24 (valid)"]).toBe("200 (success)");
  expect(bySource["webhooks limit=1e308"]).toBe("400 invalid_query");
  expect(bySource["share link expires_in=-3"]).toBe("400 invalid_query");
  expect(bySource["QR size=1e308"]).toBe("400 invalid_query");
  expect(bySource["credit malformed JSON"]).toBe("400 invalid_payload");
  expect(bySource["signed route bad signature"]).toBe("401 unauthorized");
  expect(bySource["live route with a sandbox key"]).toBe("403 forbidden");
  expect(bySource["replayed nonce"]).toBe("409 replay_detected");
  expect(bySource["403 digest hours=1e308"]).toBe("400 invalid_query");
  // Integers are decimal digits: the strict formats (src/http/params.ts) hold in the binary too.
  expect(bySource["audit top_limit=0x10"]).toBe("400 invalid_query");
  expect(bySource["webhook id=abc"]).toBe("400 invalid_query");
  // A scalar query parameter is given once (src/http/query-once.ts), signed or not.
  expect(bySource["status trend limit given twice"]).toBe("400 invalid_query");
  expect(bySource["users limit given twice (signed)"]).toBe("400 invalid_query");
  // Text holding U+0000 is refused by the SQLite engine as by PostgreSQL (src/db/sqlite-engine.ts).
  expect(bySource["webhook description holding U+0000"]).toBe("400 invalid_payload");
  expect(bySource["admin route no token"]).toBe("403 forbidden");
}, 180_000);
