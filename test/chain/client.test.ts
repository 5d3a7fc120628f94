import { afterEach, describe, expect, test } from "bun:test";
import { ChainUnavailableError, redactUrls } from "../../src/solana/rpc-errors";
import { rpcHealth } from "../../src/chain/service";
import { openTestApp, type TestApp } from "../support/app";
import { chainEnv, deadRpcUrl, startSolanaRpc, type DevRpcServer } from "../support/solana-rpc";

// The RPC client against real HTTP servers: retries with backoff on 429/5xx/timeouts/malformed replies,
// failover to the next URL, the circuit breaker (driven by the FakeClock), and one recorded outcome per attempt.

let h: TestApp | undefined;
const servers: DevRpcServer[] = [];
afterEach(async () => {
  await h?.close();
  h = undefined;
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

function rpcs(n: number): DevRpcServer[] {
  for (let i = 0; i < n; i++) servers.push(startSolanaRpc({ holders: 50, transactions: 5, seed: "client" }));
  return servers;
}

/** The recorded attempts, in order: written in batches off the call path, so flushed first. */
async function outcomes(h: TestApp): Promise<string[]> {
  await h.ctx.chain.flushRecords();
  const rows = await h.ctx.store.all<{ host: string; method: string; outcome: string; http_status: number | null }>(
    "SELECT host, method, outcome, http_status FROM chain_rpc_calls ORDER BY id",
  );
  return rows.map((r) => `${r.host} ${r.outcome}${r.http_status ? ` ${r.http_status}` : ""}`);
}

const hostOf = (url: string) => new URL(url).host;

describe("retries on one URL", () => {
  test("a 429 is retried after backoff and then succeeds; both attempts are recorded", async () => {
    const [a] = rpcs(1);
    h = await openTestApp({ env: chainEnv(a!) });
    a!.fault({ kind: "429", times: 1 });
    const r = await h.ctx.chain.tokenSupply(a!.fixture.mint);
    expect(r.value.value.amount).toBe(a!.fixture.supply().toString());
    expect(await outcomes(h)).toEqual([`${hostOf(a!.url)} rate_limited 429`, `${hostOf(a!.url)} ok`]);
  });

  test("a 500, a malformed body, a wrongly shaped result and a timeout are each retried", async () => {
    const [a] = rpcs(1);
    h = await openTestApp({ env: chainEnv(a!, [a!.url], { SOLANA_RPC_RETRIES: "4", SOLANA_RPC_TIMEOUT_MS: "300" }) });
    for (const kind of ["500", "malformed", "bad_shape", "timeout"] as const) a!.fault({ kind, times: 1 });
    const r = await h.ctx.chain.lamports(a!.fixture.treasury[0]!.owner);
    expect(BigInt(r.value)).toBe(a!.fixture.treasury[0]!.lamports);
    const host = hostOf(a!.url);
    expect(await outcomes(h)).toEqual([`${host} http_5xx 500`, `${host} malformed`, `${host} malformed`, `${host} timeout`, `${host} ok`]);
  });

  test("a slow reply within the timeout is simply slow", async () => {
    const [a] = rpcs(1);
    h = await openTestApp({ env: chainEnv(a!, [a!.url], { SOLANA_RPC_TIMEOUT_MS: "2000" }) });
    a!.fault({ kind: "slow", delayMs: 150, times: 1 });
    await h.ctx.chain.lamports(a!.fixture.treasury[0]!.owner);
    expect(await outcomes(h)).toEqual([`${hostOf(a!.url)} ok`]);
  });
});

describe("failover", () => {
  test("from a URL that refuses connections to the next one", async () => {
    const [good] = rpcs(1);
    const dead = deadRpcUrl();
    h = await openTestApp({ env: chainEnv(good!, [dead, good!.url], { SOLANA_RPC_RETRIES: "1" }) });
    const r = await h.ctx.chain.tokenSupply(good!.fixture.mint);
    expect(r.host).toBe(hostOf(good!.url));
    expect(await outcomes(h)).toEqual([`${hostOf(dead)} network`, `${hostOf(dead)} network`, `${hostOf(good!.url)} ok`]);
  });

  test("from a URL that answers 500 to the next one, and a snapshot job succeeds through it", async () => {
    const [bad, good] = rpcs(2);
    bad!.fault({ kind: "500" });
    h = await openTestApp({ env: chainEnv(good!, [bad!.url, good!.url]) });
    const run = await h.ctx.jobs.runNow("token-snapshot");
    expect(run.ok).toBe(true);
    const snap = (await h.ctx.store.get<{ rpc_host: string }>("SELECT rpc_host FROM chain_token_snapshots"))!;
    expect(snap.rpc_host).toBe(hostOf(good!.url));
  });

  test("a request-specific RPC error is not retried on the same URL but is tried on the next", async () => {
    const [a, b] = rpcs(2);
    h = await openTestApp({ env: chainEnv(a!, [a!.url, b!.url]) });
    const notAMint = a!.fixture.treasury[0]!.owner;
    const err = await h.ctx.chain.tokenSupply(notAMint).catch((e) => e);
    expect(err).toBeInstanceOf(ChainUnavailableError);
    expect(a!.callsOf("getTokenSupply")).toHaveLength(1);
    expect(b!.callsOf("getTokenSupply")).toHaveLength(1);
    expect(await outcomes(h)).toEqual([`${hostOf(a!.url)} rpc_error`, `${hostOf(b!.url)} rpc_error`]);
    // Not the node's fault: the breakers stay closed.
    expect(h.ctx.chain.health().map((x) => x.state)).toEqual(["closed", "closed"]);
  });

  test("when every URL fails the job fails with the reason, and writes nothing", async () => {
    const [a] = rpcs(1);
    a!.fault({ kind: "500" });
    h = await openTestApp({ env: chainEnv(a!, [a!.url, deadRpcUrl()]) });
    const run = await h.ctx.jobs.runNow("token-snapshot");
    expect(run.ok).toBe(false);
    expect(run.error).toContain("every RPC URL failed");
    expect((await h.ctx.store.get<{ n: number }>("SELECT count(*) AS n FROM chain_token_snapshots"))!.n).toBe(0);
  });
});

describe("circuit breaker", () => {
  test("opens after the threshold, skips the URL while open, lets one trial through after the cooldown", async () => {
    const [bad, good] = rpcs(2);
    bad!.fault({ kind: "500" });
    h = await openTestApp({
      env: chainEnv(good!, [bad!.url, good!.url], { SOLANA_RPC_RETRIES: "3", SOLANA_RPC_BREAKER_THRESHOLD: "2", SOLANA_RPC_BREAKER_COOLDOWN_SECONDS: "30" }),
    });
    const owner = good!.fixture.treasury[0]!.owner;
    await h.ctx.chain.lamports(owner);
    // Two failures opened it: the third and fourth attempts went to the next URL instead.
    expect(bad!.calls).toHaveLength(2);
    expect(h.ctx.chain.health()[0]).toMatchObject({ state: "open", consecutive_failures: 2 });

    await h.ctx.chain.lamports(owner);
    await h.ctx.chain.lamports(owner);
    expect(bad!.calls).toHaveLength(2); // skipped while open
    expect((await outcomes(h)).filter((o) => o.endsWith("breaker_open"))).toHaveLength(2);

    h.clock.advanceSeconds(31);
    expect(h.ctx.chain.health()[0]!.state).toBe("half_open");
    await h.ctx.chain.lamports(owner); // the trial fails: open again
    expect(bad!.calls).toHaveLength(3);
    expect(h.ctx.chain.health()[0]!.state).toBe("open");

    bad!.clearFaults();
    h.clock.advanceSeconds(31);
    await h.ctx.chain.lamports(owner); // the trial succeeds: closed
    expect(bad!.calls).toHaveLength(4);
    expect(h.ctx.chain.health()[0]).toMatchObject({ state: "closed", consecutive_failures: 0 });
  });

  test("with every breaker open, calls fail at once without touching the network", async () => {
    const [a] = rpcs(1);
    a!.fault({ kind: "500" });
    h = await openTestApp({ env: chainEnv(a!, [a!.url], { SOLANA_RPC_BREAKER_THRESHOLD: "1", SOLANA_RPC_RETRIES: "0" }) });
    await h.ctx.chain.lamports(a!.fixture.mint).catch(() => null);
    const before = a!.calls.length;
    const err = await h.ctx.chain.lamports(a!.fixture.mint).catch((e) => e);
    expect(err).toBeInstanceOf(ChainUnavailableError);
    expect(err.message).toContain("circuit breaker is open");
    expect(a!.calls.length).toBe(before);
  });
});

describe("outcomes feed the status checks", () => {
  test("rpcHealth reports calls, failures, error rate and breaker state per host", async () => {
    const [bad, good] = rpcs(2);
    bad!.fault({ kind: "500", times: 2 });
    h = await openTestApp({ env: chainEnv(good!, [bad!.url, good!.url], { SOLANA_RPC_RETRIES: "1" }) });
    await h.ctx.chain.lamports(good!.fixture.mint);
    const health = await rpcHealth(h.ctx, 60);
    expect(health.configured).toBe(true);
    expect(health.hosts[0]).toMatchObject({
      host: hostOf(bad!.url),
      calls: 2,
      failures: 2,
      error_rate_pct: 100,
      breaker: "closed",
      last_outcome: "http_5xx",
      last_success_at: null,
    });
    expect(health.hosts[1]).toMatchObject({ host: hostOf(good!.url), calls: 1, failures: 0, error_rate_pct: 0, last_outcome: "ok" });
    h.clock.advanceSeconds(2 * 3600);
    expect((await rpcHealth(h.ctx, 60)).hosts[0]).toMatchObject({ calls: 0, failures: 0, error_rate_pct: null });
  });

  test("an RPC URL's path, query and credentials (API keys) are never recorded or published", async () => {
    const [a] = rpcs(1);
    a!.fault({ kind: "500" });
    const dead = deadRpcUrl().replace("http://", "http://user:SECRETPW@");
    h = await openTestApp({ env: chainEnv(a!, [`${dead}/SECRETPATH/?api-key=SECRET1`, `${a!.url}/?api-key=SECRET2`]) });
    const run = await h.ctx.jobs.runNow("token-snapshot");
    expect(run.ok).toBe(false);
    await h.ctx.chain.flushRecords();
    const recorded = JSON.stringify(await h.ctx.store.all("SELECT * FROM chain_rpc_calls")) + JSON.stringify(await h.ctx.store.all("SELECT * FROM job_runs"));
    const published =
      JSON.stringify((await h.json("/api/public/public-stats-cache-freshness.json")).body) + JSON.stringify((await h.json("/api/public-stats")).body);
    for (const text of [recorded, published]) expect(text).not.toMatch(/SECRET/);
    expect(published).toContain(`"rpc_host":"${new URL(dead).host}"`); // host and port only
    expect(redactUrls("GET https://u:p@rpc.example.com/v1/KEY?api-key=K failed")).toBe("GET https://rpc.example.com failed");
  });
});
