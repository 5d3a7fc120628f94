import type { Server } from "bun";
import { ChainFixture, TOKEN_PROGRAM_ID, type FixtureOptions } from "./fixture-data";
import { FixtureRpcError, HANDLERS } from "./fixture-rpc";
import { scanStream } from "./fixture-scan";
import { plantAnomalies, type AnomalyPlan, type Plantable } from "./fixture-anomalies";

// A Solana JSON-RPC server over the deterministic fixture: `herald dev-rpc` for newcomers, and the real HTTP
// peer of the chain tests and the holders benchmark (test/support/solana-rpc.ts). Switches make it misbehave
// the ways RPC providers do: 429, 500, hanging (timeouts), malformed bodies and slow replies.

export type FaultKind = "429" | "500" | "timeout" | "malformed" | "bad_shape" | "slow";

export interface Fault {
  kind: FaultKind;
  /** How many requests it affects (default: all until cleared). */
  times?: number;
  /** Only requests of this method (default: any). */
  method?: string;
  /** Let this many matching requests through first (a failure half way through a job). */
  after?: number;
  /** slow: delay before answering normally (default 200 ms). */
  delayMs?: number;
  /** 429: the Retry-After header to send, in seconds (default none). */
  retryAfterSeconds?: number;
}

export interface RpcCall {
  method: string;
  params: unknown[];
  fault: FaultKind | null;
}

export interface DevRpcOptions extends FixtureOptions {
  port?: number;
  hostname?: string;
  fixture?: ChainFixture;
  /** Plant these audit anomalies (src/chain/fixture-anomalies.ts). */
  plant?: readonly Plantable[];
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/** Waits until the client gives up (its abort closes the request) or a minute passes. */
function hang(request: Request): Promise<Response> {
  return new Promise((resolve) => {
    const done = () => resolve(new Response("", { status: 504 }));
    const timer = setTimeout(done, 60_000);
    request.signal.addEventListener("abort", () => {
      clearTimeout(timer);
      done();
    });
  });
}

function scanParams(fixture: ChainFixture, params: unknown[]) {
  if (params[0] !== TOKEN_PROGRAM_ID) throw new FixtureRpcError(-32602, "Invalid params: the fixture serves the SPL Token program only");
  const o = (params[1] ?? {}) as { encoding?: string; filters?: unknown[]; dataSlice?: { offset: number; length: number }; withContext?: boolean };
  if (o.encoding !== "base64") throw new FixtureRpcError(-32602, "Invalid params: the fixture answers getProgramAccounts in base64 only");
  let empty = false;
  for (const f of o.filters ?? []) {
    const filter = f as { dataSize?: number; memcmp?: { offset: number; bytes: string } };
    if (filter.dataSize !== undefined) empty ||= filter.dataSize !== 165;
    else if (filter.memcmp) empty ||= !(filter.memcmp.offset === 0 && filter.memcmp.bytes === fixture.mint);
    else throw new FixtureRpcError(-32602, "Invalid params: unsupported filter");
  }
  const slice = o.dataSlice;
  if (
    slice &&
    (!Number.isInteger(slice.offset) || !Number.isInteger(slice.length) || slice.offset < 0 || slice.length < 0 || slice.offset + slice.length > 165)
  ) {
    throw new FixtureRpcError(-32602, "Invalid params: dataSlice out of range");
  }
  return { dataSlice: slice ?? null, withContext: o.withContext === true, empty };
}

type ActiveFault = Fault & { left: number; skip: number };

function takeFault(faults: ActiveFault[], method: string): Fault | null {
  const f = faults.find((x) => x.left > 0 && (!x.method || x.method === method));
  if (!f) return null;
  if (f.skip > 0) {
    f.skip -= 1;
    return null;
  }
  f.left -= 1;
  return f;
}

/** One JSON-RPC request: record it, apply the first matching fault, then answer from the fixture. */
async function answer(fixture: ChainFixture, faults: ActiveFault[], calls: RpcCall[], request: Request, plan: AnomalyPlan | null): Promise<Response> {
  let body: { id?: unknown; method?: unknown; params?: unknown };
  try {
    body = (await request.json()) as typeof body;
  } catch {
    return json({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
  }
  const method = typeof body.method === "string" ? body.method : "";
  const params = Array.isArray(body.params) ? body.params : [];
  const fault = takeFault(faults, method);
  calls.push({ method, params, fault: fault?.kind ?? null });
  if (calls.length > 10_000) calls.splice(0, 1000); // a long-running dev-rpc keeps only recent history
  if (fault?.kind === "429")
    return json(
      { jsonrpc: "2.0", id: body.id, error: { code: 429, message: "Too many requests" } },
      429,
      fault.retryAfterSeconds === undefined ? {} : { "retry-after": String(fault.retryAfterSeconds) },
    );
  if (fault?.kind === "500") return new Response("upstream exploded", { status: 500 });
  if (fault?.kind === "timeout") return hang(request);
  if (fault?.kind === "slow") await Bun.sleep(fault.delayMs ?? 200);
  try {
    if (method === "getProgramAccounts") {
      const p = scanParams(fixture, params);
      const truncateAfter = fault?.kind === "malformed" ? Math.floor(fixture.holderCount / 2) : null;
      return new Response(scanStream(fixture, { id: body.id, ...p, truncateAfter }), { headers: { "content-type": "application/json" } });
    }
    if (fault?.kind === "malformed")
      return new Response(`{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":{"cont`, { headers: { "content-type": "application/json" } });
    if (fault?.kind === "bad_shape") return json({ jsonrpc: "2.0", id: body.id, result: { context: "yesterday", value: [{ nonsense: true }] } });
    const handler = HANDLERS[method];
    if (!handler) throw new FixtureRpcError(-32601, `Method not found: ${method}`);
    const result = handler(fixture, params);
    plan?.afterCall(method, params); // after the answer is computed: the call that starts act 2 still sees act 1
    return json({ jsonrpc: "2.0", id: body.id, result });
  } catch (err) {
    if (err instanceof FixtureRpcError) return json({ jsonrpc: "2.0", id: body.id, error: { code: err.code, message: err.message } });
    throw err;
  }
}

export type DevRpcServer = ReturnType<typeof startDevRpc>;

export function startDevRpc(opts: DevRpcOptions = {}) {
  const fixture = opts.fixture ?? new ChainFixture(opts);
  const plan = opts.plant?.length ? plantAnomalies(fixture, opts.plant) : null;
  const faults: ActiveFault[] = [];
  const calls: RpcCall[] = [];
  // A GET shows what the fixture is (and is the benchmark harness's readiness probe).
  const handle = (request: Request) =>
    request.method === "GET"
      ? json({
          ok: true,
          ...fixture.describe(`http://${server.hostname}:${server.port}`),
          ...(plan ? { plant: { act: plan.act, env: plan.env, cases: plan.cases } } : {}),
        })
      : answer(fixture, faults, calls, request, plan);

  const server: Server<undefined> = Bun.serve({
    hostname: opts.hostname ?? "127.0.0.1",
    port: opts.port ?? 0,
    idleTimeout: 120,
    fetch: handle,
  });
  return {
    url: `http://${server.hostname}:${server.port}`,
    port: server.port!,
    fixture,
    /** The planted audit anomalies (`--plant`), or null. */
    plan,
    /** Every request received, in order (method, params and the fault applied). */
    calls,
    fault: (f: Fault) => void faults.push({ ...f, left: f.times ?? Number.POSITIVE_INFINITY, skip: f.after ?? 0 }),
    clearFaults: () => void faults.splice(0),
    callsOf: (method: string) => calls.filter((c) => c.method === method),
    stop: () => server.stop(true),
  };
}
