import { AppError } from "../../http/errors/errors";
import { startWorker } from "../../worker-entry";
import type { ChartJob, RenderAnswer, RenderRequest } from "./render-worker";

// The PNG charts (the digest's trend, the export-usage bars) are drawn in one long-lived worker thread
// (src/ops/digest/render-worker.ts): drawing and deflating a raster held the serving thread 0.3–2.3 s a chart. Renders
// run one at a time; a few may wait, and past that a request is refused at once (503 service_unavailable with
// Retry-After) rather than queued without end behind an operator's burst of large charts. A render not done by its
// deadline is refused too, and its worker ended (a render cannot be interrupted otherwise) and started anew.

/** Renders waiting for the worker beyond the one it draws; the next one is refused. */
export const RENDER_MAX_WAITING = 8;
/** The longest a chart may take, waiting included, before its request is answered 503. */
export const RENDER_DEADLINE_MS = 10_000;
/** What a refused request is told to wait before it asks again. */
const RETRY_AFTER_SECONDS = 2;

interface Render {
  id: number;
  job: ChartJob;
  resolve: (png: Uint8Array) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

const busy = (internal: string) =>
  new AppError("service_unavailable", "The chart renderer is busy; retry in a few seconds", {
    headers: { "retry-after": String(RETRY_AFTER_SECONDS) },
    internal,
  });

export interface ChartRendererOptions {
  maxWaiting?: number;
  deadlineMs?: number;
  /** The worker's file under src/ (tests point it elsewhere). */
  entry?: string;
}

/** One renderer thread, started on first use, and the renders waiting for it. */
export class ChartRenderer {
  private worker: Worker | null = null;
  private running: Render | null = null;
  private readonly waiting: Render[] = [];
  private nextId = 1;
  private readonly maxWaiting: number;
  private readonly deadlineMs: number;
  private readonly entry: string;
  /** Workers started so far (a deadline or a crash ends one): for tests. */
  started = 0;

  constructor(opts: ChartRendererOptions = {}) {
    this.maxWaiting = opts.maxWaiting ?? RENDER_MAX_WAITING;
    this.deadlineMs = opts.deadlineMs ?? RENDER_DEADLINE_MS;
    this.entry = opts.entry ?? "ops/digest/render-worker.ts";
  }

  /** The chart's PNG bytes; rejects with a 503 AppError when too many wait or the deadline passes. */
  render(job: ChartJob): Promise<Uint8Array> {
    if (this.running && this.waiting.length >= this.maxWaiting) {
      return Promise.reject(busy(`${this.waiting.length} chart renders already wait for the renderer`));
    }
    return new Promise<Uint8Array>((resolve, reject) => {
      const id = this.nextId++;
      const timer = setTimeout(() => this.expired(id), this.deadlineMs);
      timer.unref?.();
      this.waiting.push({ id, job, resolve, reject, timer });
      this.next();
    });
  }

  /** Ends the worker and refuses what waits (the next render starts a fresh one). */
  close(): void {
    this.endWorker();
    const all = [...(this.running ? [this.running] : []), ...this.waiting.splice(0)];
    this.running = null;
    for (const r of all) this.settle(r, busy("the chart renderer was closed"));
  }

  private next(): void {
    if (this.running) return;
    const r = this.waiting.shift();
    if (!r) {
      // Idle: the worker stays for the next chart but does not hold the process open.
      this.worker?.unref();
      return;
    }
    this.running = r;
    try {
      const w = this.workerNow();
      w.ref();
      w.postMessage({ id: r.id, job: r.job } satisfies RenderRequest);
    } catch (err) {
      this.failed(`the chart renderer could not start: ${(err as Error).message ?? err}`);
    }
  }

  private workerNow(): Worker {
    if (this.worker) return this.worker;
    const w = startWorker(this.entry);
    this.started++;
    w.onmessage = (e: MessageEvent<RenderAnswer>) => this.answered(e.data);
    w.onerror = (e: ErrorEvent) => this.failed(`the chart renderer failed: ${e.message}`);
    this.worker = w;
    return w;
  }

  private answered(a: RenderAnswer): void {
    const r = this.running;
    if (!r || r.id !== a.id) return;
    this.running = null;
    if ("png" in a) this.settle(r, null, new Uint8Array(a.png));
    else this.settle(r, new Error(`chart render failed: ${a.error}`));
    this.next();
  }

  /** The worker broke (or could not start): the render it had is refused, the next gets a fresh worker. */
  private failed(internal: string): void {
    this.endWorker();
    const r = this.running;
    this.running = null;
    if (r) this.settle(r, busy(internal));
    this.next();
  }

  private expired(id: number): void {
    const at = this.waiting.findIndex((r) => r.id === id);
    if (at !== -1) {
      const [r] = this.waiting.splice(at, 1);
      return this.settle(r!, busy(`a chart render waited ${this.deadlineMs} ms for the renderer`));
    }
    if (this.running?.id !== id) return;
    // The render cannot be stopped inside the worker: end the worker with it.
    this.failed(`a chart render took longer than ${this.deadlineMs} ms`);
  }

  private settle(r: Render, err: Error | null, png?: Uint8Array): void {
    clearTimeout(r.timer);
    if (err) r.reject(err);
    else r.resolve(png!);
  }

  private endWorker(): void {
    const w = this.worker;
    this.worker = null;
    void w?.terminate();
  }
}

/** The process's renderer: the charts of every app in it share one thread. */
export const chartRenderer = new ChartRenderer();

export const renderPng = (job: ChartJob): Promise<Uint8Array> => chartRenderer.render(job);
