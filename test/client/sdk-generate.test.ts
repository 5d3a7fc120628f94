// `npm run sdk:generate` when a method was added to OPERATIONS before its operation reached api-types.ts: the SDK
// does not build (tsc refuses the method), and the app embeds that build, so every load of the app failed —
// sdk:generate's own, which is what writes api-types.ts. It now goes on without the SDK, warns, and writes the file;
// the next load builds the SDK. Run in a copy of the repository's files (node_modules linked), never in place.
import { afterAll, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { BUN, exitWithin, REPO_ROOT } from "../support/process";
import { testOn } from "../support/skipped";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

// The engine plays no part: run once, with the SQLite suite.
testOn("sqlite", "test/client/sdk-generate.test.ts", test)(
  "sdk:generate writes api-types.ts when the SDK does not build, and the next load builds it",
  async () => {
    const copy = mkdtempSync(join(tmpdir(), "herald-sdk-generate-"));
    dirs.push(copy);
    // The working tree's files as git sees them (tracked, and new ones it does not ignore: an uncommitted migration).
    const listed = Bun.spawnSync(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: REPO_ROOT }).stdout.toString();
    for (const file of listed.split("\0").filter((f) => f && existsSync(join(REPO_ROOT, f)))) {
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      cpSync(join(REPO_ROOT, file), join(copy, file));
    }
    symlinkSync(join(REPO_ROOT, "node_modules"), join(copy, "node_modules"));
    const typesPath = join(copy, "src", "client", "api-types.ts");
    const original = readFileSync(typesPath, "utf8");
    // OPERATIONS names capabilities; api-types.ts, as if not yet generated, lacks its operation.
    const broken = original.replace('"GET /api/partner/capabilities": {', '"GET /api/partner/capabilities-not-yet": {');
    expect(broken).not.toBe(original);
    writeFileSync(typesPath, broken);

    const run = Bun.spawn([BUN, "run", "sdk/generate.ts"], { cwd: copy, stdout: "pipe", stderr: "pipe" });
    const output = Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text()]).then((o) => o.join("\n"));
    const code = await exitWithin(run, 90_000);
    expect(code, await output).toBe(0);
    expect(await output).toContain("The SDK does not build yet");
    expect(readFileSync(typesPath, "utf8")).toBe(original);

    // With api-types.ts whole again the SDK builds, and the app serves a real tarball.
    const load = Bun.spawn([BUN, "-e", 'const m = await import("./src/developers/sdk"); console.log(m.sdkTarball.file, m.sdkTarball.bytes.length)'], {
      cwd: copy,
      stdout: "pipe",
      stderr: "pipe",
    });
    const loaded = Promise.all([new Response(load.stdout).text(), new Response(load.stderr).text()]);
    expect(await exitWithin(load, 90_000), (await loaded).join("\n")).toBe(0);
    const [file, size] = (await loaded)[0].trim().split(" ");
    expect(file).toMatch(/^herald-client-.*\.tgz$/);
    expect(Number(size)).toBeGreaterThan(1_000);
  },
  200_000,
);
