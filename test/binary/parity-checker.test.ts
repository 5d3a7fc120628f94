// The parity check's own test: it must fail for the build flags that once shipped a binary without query
// validation (`--minify` renames TypeBox's TransformDecodeError, which Elysia's compiled handlers recognise by
// name), and it must name each probe that differs.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary } from "../support/build";
import { checkParity, probeDifferences, type ProbeAnswer } from "../support/parity";

const dir = mkdtempSync(join(tmpdir(), "herald-parity-checker-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a difference in status or in error code is named, probe by probe", () => {
  const source: ProbeAnswer[] = [
    { label: "dlq hours=-1", status: 400, code: "invalid_query" },
    { label: "dlq hours=1e308", status: 400, code: "invalid_query" },
    { label: "bad signature", status: 401, code: "unauthorized" },
  ];
  const binary: ProbeAnswer[] = [
    { label: "dlq hours=-1", status: 200, code: "(success)" },
    { label: "dlq hours=1e308", status: 500, code: "server_error" },
    { label: "bad signature", status: 401, code: "unauthorized" },
  ];
  expect(probeDifferences(source, binary)).toEqual([
    "dlq hours=-1: source 400 invalid_query, binary 200 (success)",
    "dlq hours=1e308: source 400 invalid_query, binary 500 server_error",
  ]);
  expect(probeDifferences(source, source)).toEqual([]);
  expect(probeDifferences(source, binary.slice(2))).toEqual(["dlq hours=-1: no answer from the binary", "dlq hours=1e308: no answer from the binary"]);
});

test("a binary built with --minify (class names renamed) fails the check: it refuses to start, saying why", async () => {
  const outfile = join(dir, "herald-minified");
  await buildBinary(outfile, ["--minify", "--bytecode"]);
  const result = await checkParity({ kind: "binary", binary: outfile, label: "a binary built with --minify --bytecode" });
  expect(result.ok).toBe(false);
  expect(result.lines.join("\n")).toContain("renamed classes");
}, 180_000);
