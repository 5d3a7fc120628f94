import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChainFixture } from "../../src/chain/fixture-data";
import { spawnHerald } from "../support/process";
import { expectedBalances } from "../support/solana-rpc";

// `herald dev-rpc --json` as a newcomer would use it: its first stdout line configures herald, and the chain
// jobs run against it from the CLI (`herald jobs run NAME`).

const dir = mkdtempSync(join(tmpdir(), "herald-devrpc-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.split("\n")[0]!;
}

test("dev-rpc --json prints its URL, mint and wallets; herald's chain jobs run against it from the CLI", async () => {
  const server = spawnHerald(["dev-rpc", "--port", "0", "--holders", "300", "--seed", "cli", "--json"], { LOG_LEVEL: "warn" });
  try {
    const info = JSON.parse(await firstLine(server.stdout as ReadableStream<Uint8Array>));
    const fixture = new ChainFixture({ seed: "cli", holders: 300 });
    expect(info).toMatchObject({
      mint: fixture.mint,
      treasury_wallets: fixture.treasury.map((w) => w.owner),
      reserve_wallets: fixture.reserve.map((w) => w.owner),
    });
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const env = {
      HERALD_DB_PATH: join(dir, "herald.db"),
      NODE_ENV: "test",
      LOG_LEVEL: "warn",
      SOLANA_RPC_URLS: info.url,
      TOKEN_MINT: info.mint,
      TREASURY_WALLETS: info.treasury_wallets.join(","),
      RESERVE_WALLETS: info.reserve_wallets.join(","),
    };
    const list = spawnHerald(["jobs", "list", "--json"], env);
    const jobs = JSON.parse(await new Response(list.stdout).text()).jobs.map((j: { name: string }) => j.name);
    expect(jobs).toEqual(expect.arrayContaining(["token-snapshot", "holders-snapshot", "mint-authority-snapshot", "transaction-sync", "holder-growth"]));

    const run = spawnHerald(["jobs", "run", "token-snapshot", "--json"], env);
    const out = JSON.parse(await new Response(run.stdout).text());
    expect(await run.exited).toBe(0);
    expect(out.run).toMatchObject({ name: "token-snapshot", ok: true });
    const { Database } = await import("bun:sqlite");
    const db = new Database(env.HERALD_DB_PATH, { readonly: true });
    const row = db.query("SELECT supply_raw, circulating_raw FROM chain_token_snapshots").get() as { supply_raw: string; circulating_raw: string };
    db.close();
    const e = expectedBalances(fixture);
    expect(row).toEqual({ supply_raw: e.supply.toString(), circulating_raw: e.circulating.toString() });
  } finally {
    server.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  }
});

test("dev-rpc refuses a bad flag with a usage error", async () => {
  const p = spawnHerald(["dev-rpc", "--holders", "lots"], { LOG_LEVEL: "warn" });
  expect(await p.exited).toBe(2);
  expect(await new Response(p.stderr).text()).toContain("--holders must be an integer");
});
