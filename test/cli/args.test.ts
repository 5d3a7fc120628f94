// The command line's own conventions (src/cli/args.ts): --version/-v and --help/-h answer and exit without
// starting anything, and what herald does not know (a command, a flag, a value where none is taken) is refused
// with the usage text on stderr and exit code 2.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, UsageError } from "../../src/cli/args";
import { exitWithin, freePort, spawnHerald } from "../support/process";

// Real processes, seconds each on a loaded machine; bun's default is 5 s per test.
setDefaultTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), "herald-args-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("parseArgs", () => {
  test("command, subcommand, positionals and both flag spellings", () => {
    expect(parseArgs(["keys", "create", "--partner", "Acme", "--mode=live", "--scopes", "read", "--json"])).toEqual({
      command: "keys",
      positionals: ["create"],
      flags: { partner: "Acme", mode: "live", scopes: "read", json: true },
    });
    expect(parseArgs(["jobs", "run", "request-log-prune"])).toEqual({ command: "jobs", positionals: ["run", "request-log-prune"], flags: {} });
    expect(parseArgs([])).toEqual({ command: undefined, positionals: [], flags: {} });
  });

  test("-v, --version, -h and --help are flags, before or after a command", () => {
    expect(parseArgs(["-v"]).flags).toEqual({ version: true });
    expect(parseArgs(["--version", "--json"]).flags).toEqual({ version: true, json: true });
    expect(parseArgs(["-h"]).flags).toEqual({ help: true });
    expect(parseArgs(["keys", "--help"])).toMatchObject({ command: "keys", flags: { help: true } });
    expect(parseArgs(["--json", "version"])).toMatchObject({ command: "version", flags: { json: true } });
  });

  test("unknown commands and flags, a value flag without its value and a boolean flag with one are usage errors", () => {
    const refused = (argv: string[]) => {
      try {
        parseArgs(argv);
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError);
        return { message: (err as UsageError).message, usage: (err as UsageError).showUsage };
      }
      throw new Error(`${argv.join(" ")} was accepted`);
    };
    expect(refused(["frobnicate"])).toEqual({ message: "unknown command: frobnicate", usage: true });
    expect(refused(["--frob"])).toEqual({ message: "unknown option --frob for herald", usage: true });
    expect(refused(["-x"])).toEqual({ message: "unknown option -x for herald", usage: true });
    // A typo must not silently create a key with other scopes than meant.
    expect(refused(["keys", "create", "--scope", "read"])).toEqual({ message: "unknown option --scope for herald keys", usage: true });
    expect(refused(["serve", "--port", "3000"])).toEqual({ message: "unknown option --port for herald serve", usage: true });
    expect(refused(["version", "--json=1"])).toEqual({ message: "--json takes no value", usage: true });
    expect(refused(["keys", "create", "--partner"]).message).toBe("--partner needs a value");
    expect(refused(["sign", "--secret", "-abc"]).message).toContain("--secret=VALUE");
    expect(parseArgs(["sign", "--secret=-abc"]).flags.secret).toBe("-abc");
  });
});

async function run(args: string[]) {
  const db = join(dir, `${args.join("_").replace(/[^a-z]/gi, "") || "none"}.db`);
  const p = spawnHerald(args, { HERALD_DB_PATH: db, NODE_ENV: "test", LOG_LEVEL: "warn", PORT: String(freePort()), HOST: "127.0.0.1", JOBS_ENABLED: "0" });
  const out = Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  // A command that started the server would still be running: exitWithin kills it and answers null.
  const code = await exitWithin(p, 30_000);
  const [stdout, stderr] = await out;
  return { stdout, stderr, code, dbCreated: existsSync(db) };
}

describe("herald as a process", () => {
  test("--version and -v print the version and exit 0 without starting the server or opening a database", async () => {
    const results = await Promise.all([run(["--version"]), run(["-v"]), run(["serve", "--version"])]);
    for (const r of results) {
      expect(r).toMatchObject({ code: 0, stderr: "", dbCreated: false });
      expect(r.stdout).toMatch(/^herald \d+\.\d+\.\d+ \(bun [\d.]+\)\n$/);
    }
    const json = await run(["--version", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ success: true, version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });

  test("--help and -h print the usage on stdout and exit 0 without starting the server", async () => {
    const results = await Promise.all([run(["--help"]), run(["-h"]), run(["keys", "-h"])]);
    for (const r of results) {
      expect(r).toMatchObject({ code: 0, stderr: "", dbCreated: false });
      expect(r.stdout).toContain("Usage: herald [<command>] [options]");
      expect(r.stdout).toContain("-v, --version");
    }
  });

  test("an unknown command or flag exits 2 with the reason and the usage text on stderr, nothing on stdout", async () => {
    const cases: Array<[string[], string]> = [
      [["frobnicate"], "herald: unknown command: frobnicate"],
      [["--frobnicate"], "herald: unknown option --frobnicate for herald"],
      [["-x"], "herald: unknown option -x for herald"],
      [["keys", "list", "--mdoe", "live"], "herald: unknown option --mdoe for herald keys"],
    ];
    const results = await Promise.all(cases.map(([args]) => run(args)));
    cases.forEach(([args, message], i) => {
      const r = results[i]!;
      expect({ args, code: r.code, stdout: r.stdout, dbCreated: r.dbCreated }).toEqual({ args, code: 2, stdout: "", dbCreated: false });
      expect(r.stderr.startsWith(message + "\n")).toBe(true);
      expect(r.stderr).toContain("Usage: herald [<command>] [options]");
    });
  });
});
