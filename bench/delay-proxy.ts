// A delaying TCP proxy: "PostgreSQL 0.5 ms away" for the benchmarks. This kernel has no netem (no
// sch_netem module), so the delay is added in user space: the proxy listens on 127.0.0.1:<free port>,
// forwards every connection to --target, and holds each chunk it reads for --delay-ms before writing it on, in each
// direction (0.25 ms each way = 0.5 ms more per round trip). It runs as its own process (bench/engines.ts spawns it)
// so that it shares no event loop with herald or the load generator.
//
//   bun bench/delay-proxy.ts --target 127.0.0.1:5432 --delay-ms 0.25 [--ttl-seconds 3600]
//
// prints one JSON line once it listens ({"port": N, …}); then, on stdin, `stats` prints the holds seen since the
// last `reset` (one JSON line), `reset` starts them over and `delay MS` sets the delay for the chunks read next. It
// exits when stdin closes (its parent is gone), on SIGTERM, or after --ttl-seconds.
//
// Timing, measured here (Bun 1.4.5, 2 vCPUs):
// - Bun's timers round to whole milliseconds: setTimeout(fn, 0.25) fires after ~1.13 ms, Bun.sleep(0.25) returns at
//   once, Bun.sleep(1.5) after ~1.12 ms. Atomics.waitAsync(…, 0.25) is exact (0.254 ms) but spins a core while it
//   waits (CPU time = wall time), as would a setImmediate loop: neither is usable on a 2-core machine shared with the
//   server and the load generator.
// - So a worker thread sleeps in Atomics.wait (a futex wait: sub-millisecond, no spinning) until the next chunk is
//   due and posts a message that wakes the event loop, which writes what is due. Waking the event loop that way takes
//   0.05–0.15 ms (far more when the cores are busy), so the worker is asked to wake early by a lead that adapts (2 µs
//   a wake-up, towards the median wake-up arriving 10 µs early), and the last ≤ 50 µs before a chunk is due are spun
//   out on the spot (at most 100 µs of spinning per wake-up).
// - Bun's clocks (performance.now, process.hrtime) start per thread, so the threads pass durations, never instants
//   (an instant passed across read 70–90 ms off). Notify → 0.25 ms wait → message → event loop: 0.39 ms median, the
//   same through a web Worker or node:worker_threads.
// - Bun's own sockets (Bun.listen / Bun.connect): node:net cost about 30 µs of CPU per chunk here, these about 25.
// Every chunk is due its delay after it was read; one FIFO serves both directions (every chunk gets the same delay,
// so the order on each connection is kept). What the proxy really adds per round trip — the holds, its own extra
// hop and the wake-ups — is measured end to end by measureAddedRtt() below, the holds themselves by `stats`.
// Measured on 2026-11-25 (sequential SELECT 1, the VM shared and busy): the hop alone adds 0.04–0.08 ms; holding
// 0.25 ms each way adds 0.59–0.72 ms (median), not 0.50: the rest is the hop and the wake-ups of processes (client,
// backend) left idle meanwhile. Its CPU: ~25 µs a chunk without a hold; with one, 35–85 µs a chunk under concurrent
// load and ~165 µs at one round trip at a time (every chunk its own wake-ups); the credit benchmark prints it.
import { parseArgs } from "node:util";
import { isMainThread } from "node:worker_threads";
import { SQL, type Socket, type Subprocess } from "bun";

/** Milliseconds on this thread's monotonic clock. Bun's clocks start per thread: never compare times across threads. */
const now = () => performance.now();

// The shared control block: Int32 [0] = sequence (bumped by the event loop with each request), [1] = stop flag;
// Float64 [0] = the request: post a wake-up in this many ms from the bump (times are passed relative, see now()).
const SEQ = 0;
const STOP = 1;

/** The worker thread: sleeps until each requested wake-up is due, then posts it; ends on the stop flag or at `lifetimeMs`. */
function tickerLoop(ctrl: Int32Array, request: Float64Array, lifetimeMs: number): void {
  const end = now() + lifetimeMs;
  let seen = 0; // a fresh block's: a request made before this thread started is still seen
  let due: number | null = null;
  while (Atomics.load(ctrl, STOP) === 0 && now() < end) {
    const seq = Atomics.load(ctrl, SEQ);
    if (seq !== seen) {
      seen = seq;
      due = now() + request[0]!;
    }
    if (due === null) {
      Atomics.wait(ctrl, SEQ, seq, 1000);
      continue;
    }
    const wait = due - now();
    if (wait > 0.002) {
      Atomics.wait(ctrl, SEQ, seq, wait);
      continue;
    }
    due = null;
    postMessage(0);
  }
}

/** The worker thread's marker in its argv (the proxy's own process.argv does not have it). */
const TICKER_ARG = "--delay-proxy-ticker";

/** One side of a proxied connection: its socket (null until connected) and what it could not take yet. */
interface End {
  sock: Socket<Side> | null;
  /** Bytes written to it that its socket did not take yet (sent on drain, in order). */
  backlog: Uint8Array[];
  /** End it once the backlog is sent. */
  ending: boolean;
  closed: boolean;
}
/** What each socket carries: its connection's two ends and which one it is (0 = the client's, 1 = upstream). */
interface Side {
  ends: [End, End];
  me: 0 | 1;
}

interface Held {
  due: number;
  at: number;
  to: End;
  /** null: end the socket (the other side ended), after the chunks before it. */
  chunk: Uint8Array | null;
}

/** Writes to `end` in order: what its socket does not take now waits for its drain. */
function send(end: End, chunk: Uint8Array | null): void {
  if (end.closed) return;
  if (chunk === null) {
    if (end.sock && end.backlog.length === 0) end.sock.end();
    else end.ending = true;
    return;
  }
  if (!end.sock || end.backlog.length) {
    end.backlog.push(chunk);
    return;
  }
  const n = end.sock.write(chunk);
  if (n < chunk.length) end.backlog.push(chunk.subarray(Math.max(0, n)));
}
function drain(end: End): void {
  if (!end.sock || end.closed) return;
  for (let i = 0; i < 10_000 && end.backlog.length; i++) {
    const b = end.backlog[0]!;
    const n = end.sock.write(b);
    if (n < b.length) {
      end.backlog[0] = b.subarray(Math.max(0, n));
      return;
    }
    end.backlog.shift();
  }
  if (end.ending && end.backlog.length === 0) end.sock.end();
}

/** Holds, in 10 µs buckets up to 50 ms (the last bucket takes everything longer). */
class HoldHistogram {
  private readonly buckets = new Float64Array(5001);
  private count = 0;
  private sum = 0;
  private bytes = 0;
  add(ms: number, bytes: number): void {
    this.buckets[Math.min(5000, Math.max(0, Math.round(ms * 100)))]!++;
    this.count++;
    this.sum += ms;
    this.bytes += bytes;
  }
  reset(): void {
    this.buckets.fill(0);
    this.count = this.sum = this.bytes = 0;
  }
  private quantile(q: number): number | null {
    if (this.count === 0) return null;
    let seen = 0;
    for (let i = 0; i < this.buckets.length; i++) if ((seen += this.buckets[i]!) >= q * this.count) return i / 100;
    return 50;
  }
  summary(): ProxyStats {
    return {
      chunks: this.count,
      bytes: this.bytes,
      hold_mean_ms: this.count ? Number((this.sum / this.count).toFixed(3)) : null,
      hold_p50_ms: this.quantile(0.5),
      hold_p99_ms: this.quantile(0.99),
    };
  }
}

/** What `stats` prints: the chunks forwarded (both directions) and how long each was held, since the last reset. */
export interface ProxyStats {
  chunks: number;
  bytes: number;
  hold_mean_ms: number | null;
  hold_p50_ms: number | null;
  hold_p99_ms: number | null;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: { target: { type: "string" }, "delay-ms": { type: "string" }, "ttl-seconds": { type: "string" } },
  });
  const [host, portText] = (values.target ?? "").split(":");
  const targetPort = Number(portText);
  let delay = Number(values["delay-ms"] ?? "0.25");
  const ttlSeconds = Number(values["ttl-seconds"] ?? "3600");
  if (!host || !Number.isInteger(targetPort) || !(delay >= 0 && delay <= 10) || !(ttlSeconds > 0 && ttlSeconds <= 86_400))
    throw new Error("usage: bun bench/delay-proxy.ts --target HOST:PORT [--delay-ms 0.25 (0–10, each way)] [--ttl-seconds 3600]");

  const ctrlBuf = new SharedArrayBuffer(8);
  const requestBuf = new SharedArrayBuffer(8);
  const ctrl = new Int32Array(ctrlBuf);
  const request = new Float64Array(requestBuf);
  const ticker = new Worker(new URL(import.meta.url).href, { argv: [TICKER_ARG] });
  ticker.postMessage({ ctrlBuf, requestBuf, lifetimeMs: ttlSeconds * 1000 });

  const holds = new HoldHistogram();
  const queue: Held[] = [];
  let head = 0;
  let armed = false;
  /** When the chunk the worker was last asked to wake us for is due. */
  let armedDue = 0;
  /** How early the worker wakes before a chunk is due; adapted so that the wake-up comes just before it is due. */
  let lead = Math.min(0.1, delay * 0.8);
  /**
   * A chunk due this soon (ms) is waited for on the spot, spinning: cheaper and more exact than another wake-up (a
   * wake-up takes 0.05–0.15 ms here), at most SPIN_BUDGET per flush so that reading never stops for long.
   */
  const SPIN_MAX = 0.05;
  const SPIN_BUDGET = 0.1;
  /** Where the lead aims: wake-ups this much early, so that a late one is rare and the rest spin a little. */
  const AIM_EARLY = 0.01;
  /** Chunks due within this much of the first one go with it (one wake-up writes a burst). */
  const EPS = 0.01;

  const write = (h: Held, t: number) => {
    holds.add(t - h.at, h.chunk?.length ?? 0);
    send(h.to, h.chunk);
  };
  const arm = () => {
    if (armed || head >= queue.length) return;
    armed = true;
    armedDue = queue[head]!.due;
    request[0] = Math.max(0, armedDue - lead - now());
    Atomics.add(ctrl, SEQ, 1);
    Atomics.notify(ctrl, SEQ);
  };
  const flush = (woken: boolean) => {
    let t = now();
    if (woken) {
      // Each wake-up moves the lead by 2 µs, within [0, 0.8 × delay], so that most come AIM_EARLY before the chunk
      // they were asked for is due (even if data arriving meanwhile already sent it): the median, not the mean,
      // which preempted wake-ups on a busy machine would drag far too early.
      lead = Math.min(delay * 0.8, Math.max(0, lead + (armedDue - t < AIM_EARLY ? 0.002 : -0.002)));
    }
    const spinUntil = t + SPIN_BUDGET;
    while (head < queue.length) {
      const due = queue[head]!.due;
      if (due > t + EPS) {
        if (due - t > SPIN_MAX || due > spinUntil) break;
        for (let i = 0; i < 1_000_000 && t < due; i++) t = now();
      }
      write(queue[head++]!, t);
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
  };
  ticker.onmessage = () => {
    armed = false;
    flush(true);
    arm();
  };
  ticker.onerror = (err) => {
    process.stderr.write(`delay-proxy: ticker failed: ${err.message}\n`);
    process.exit(1);
  };

  const forward = (to: End, chunk: Uint8Array | null) => {
    flush(false);
    if (delay === 0 && head >= queue.length) return write({ due: 0, at: now(), to, chunk }, now());
    const t = now();
    // A copy: the chunk outlives this callback.
    queue.push({ due: t + delay, at: t, to, chunk: chunk && new Uint8Array(chunk) });
    arm();
  };

  // Bun's own sockets (see the top of this file).
  const peer = (s: Socket<Side>) => s.data.ends[1 - s.data.me]!;
  const handlers = {
    data: (s: Socket<Side>, chunk: Uint8Array) => forward(peer(s), chunk),
    drain: (s: Socket<Side>) => drain(s.data.ends[s.data.me]),
    end: (s: Socket<Side>) => forward(peer(s), null),
    close: (s: Socket<Side>) => {
      s.data.ends[s.data.me].closed = true;
      forward(peer(s), null);
    },
    error: (s: Socket<Side>) => void s.end(),
  };
  const server = Bun.listen<Side>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      ...handlers,
      open(client) {
        const ends: [End, End] = [
          { sock: client, backlog: [], ending: false, closed: false },
          { sock: null, backlog: [], ending: false, closed: false },
        ];
        client.data = { ends, me: 0 };
        client.setNoDelay(true);
        Bun.connect<Side>({
          hostname: host,
          port: targetPort,
          data: { ends, me: 1 },
          socket: {
            ...handlers,
            open(upstream) {
              upstream.setNoDelay(true);
              ends[1].sock = upstream;
              drain(ends[1]);
            },
            connectError() {
              ends[1].closed = true;
              client.end();
            },
          },
        }).catch(() => {});
      },
    },
  });
  const stop = () => {
    Atomics.store(ctrl, STOP, 1);
    Atomics.add(ctrl, SEQ, 1);
    Atomics.notify(ctrl, SEQ);
    server.stop(true);
    ticker.terminate();
    setTimeout(() => process.exit(0), 50);
  };
  setTimeout(stop, ttlSeconds * 1000).unref();
  process.on("SIGTERM", stop);
  let pending = "";
  process.stdin.on("data", (data: Buffer) => {
    pending += data.toString("utf8");
    for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
      const cmd = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (cmd === "reset") holds.reset();
      else if (cmd.startsWith("delay ")) {
        const ms = Number(cmd.slice(6));
        // A chunk read later never leaves before one read earlier (the FIFO), so a shorter delay reorders nothing.
        if (ms >= 0 && ms <= 10) delay = ms;
        lead = Math.min(lead, delay * 0.8);
      } else if (cmd === "stats") process.stdout.write(JSON.stringify({ ...holds.summary(), lead_ms: Number(lead.toFixed(3)) }) + "\n");
    }
  });
  process.stdin.on("end", stop);
  process.stdout.write(JSON.stringify({ port: server.port, target: `${host}:${targetPort}`, delay_ms: delay }) + "\n");
}

// ------------------------------------------------------------------------------------------- from the harness

/** A running proxy (a child process of the harness). */
export interface DelayProxy {
  readonly port: number;
  /** Its delay each way (the last asked). */
  readonly delayMs: number;
  /** Sets the delay each way for the chunks read from now on. */
  setDelay(ms: number): void;
  readonly proc: Subprocess;
  /** `url` (a postgres:// URL on 127.0.0.1) with its port replaced by the proxy's. */
  via(url: string): string;
  /** The holds since the last reset() (null if the proxy did not answer within 2 s). */
  stats(): Promise<ProxyStats | null>;
  reset(): void;
  stop(): Promise<void>;
}

/** Starts the proxy in front of 127.0.0.1:`targetPort`, holding each chunk `delayMs` each way. */
export async function startDelayProxy(targetPort: number, delayMs: number, onSpawn?: (proc: Subprocess) => void): Promise<DelayProxy> {
  const proc = Bun.spawn([process.execPath, import.meta.path, "--target", `127.0.0.1:${targetPort}`, "--delay-ms", String(delayMs)], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  onSpawn?.(proc);
  const reader = proc.stdout.getReader();
  let buffered = "";
  const decoder = new TextDecoder();
  const nextLine = async (timeoutMs: number): Promise<string | null> => {
    const until = Date.now() + timeoutMs;
    for (let i = 0; i < 1000 && Date.now() < until; i++) {
      const nl = buffered.indexOf("\n");
      if (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        return line;
      }
      const r = await Promise.race([reader.read(), Bun.sleep(until - Date.now()).then(() => null)]);
      if (r === null || r.done) return null;
      buffered += decoder.decode(r.value, { stream: true });
    }
    return null;
  };
  const first = await nextLine(10_000);
  if (first === null) {
    proc.kill("SIGKILL");
    throw new Error("bench/delay-proxy.ts did not report its port within 10 s");
  }
  const { port } = JSON.parse(first) as { port: number };
  let asking: Promise<unknown> = Promise.resolve();
  let delay = delayMs;
  return {
    port,
    get delayMs() {
      return delay;
    },
    setDelay(ms) {
      delay = ms;
      proc.stdin.write(`delay ${ms}\n`);
      proc.stdin.flush();
    },
    proc,
    via(url) {
      const u = new URL(url);
      u.port = String(port);
      return u.toString();
    },
    stats() {
      const answer = asking.then(async () => {
        proc.stdin.write("stats\n");
        proc.stdin.flush();
        const line = await nextLine(2000);
        return line === null ? null : (JSON.parse(line) as ProxyStats);
      });
      asking = answer.catch(() => {});
      return answer;
    },
    reset() {
      proc.stdin.write("reset\n");
      proc.stdin.flush();
    },
    async stop() {
      proc.kill("SIGTERM");
      const gone = await Promise.race([proc.exited.then(() => true), Bun.sleep(3000).then(() => false)]);
      if (!gone) proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}

/** What the proxy adds per round trip, measured: sequential `SELECT 1`s direct and through it, alternating blocks. */
export interface AddedRtt {
  queries: number;
  direct_p50_ms: number;
  proxied_p50_ms: number;
  direct_mean_ms: number;
  proxied_mean_ms: number;
  /** proxied − direct, medians. */
  added_p50_ms: number;
  /** proxied − direct, means. */
  added_mean_ms: number;
}

export async function measureAddedRtt(directUrl: string, proxiedUrl: string, queries = 2000): Promise<AddedRtt> {
  const direct = new SQL({ url: directUrl, max: 1 });
  const proxied = new SQL({ url: proxiedUrl, max: 1 });
  const times = { direct: [] as number[], proxied: [] as number[] };
  try {
    for (const sql of [direct, proxied]) for (let i = 0; i < 50; i++) await sql`SELECT 1`; // connect, prepare
    const block = 250;
    for (let done = 0; done < queries; done += block) {
      for (const [sql, into] of [
        [direct, times.direct],
        [proxied, times.proxied],
      ] as const) {
        for (let i = 0; i < Math.min(block, queries - done); i++) {
          const t = performance.now();
          await sql`SELECT 1`;
          into.push(performance.now() - t);
        }
      }
    }
  } finally {
    await direct.close();
    await proxied.close();
  }
  const p50 = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const r = (x: number) => Number(x.toFixed(3));
  return {
    queries,
    direct_p50_ms: r(p50(times.direct)),
    proxied_p50_ms: r(p50(times.proxied)),
    direct_mean_ms: r(mean(times.direct)),
    proxied_mean_ms: r(mean(times.proxied)),
    added_p50_ms: r(p50(times.proxied) - p50(times.direct)),
    added_mean_ms: r(mean(times.proxied) - mean(times.direct)),
  };
}

if (!isMainThread && process.argv.includes(TICKER_ARG)) {
  addEventListener(
    "message",
    (e) => {
      const d = (e as MessageEvent<{ ctrlBuf: SharedArrayBuffer; requestBuf: SharedArrayBuffer; lifetimeMs: number }>).data;
      tickerLoop(new Int32Array(d.ctrlBuf), new Float64Array(d.requestBuf), d.lifetimeMs);
    },
    { once: true },
  );
} else if (isMainThread && import.meta.main) {
  await main();
}
