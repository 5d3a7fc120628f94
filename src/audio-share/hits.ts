import { type AppContext, slot, stateOf } from "../context";
import { epochMs } from "../clock";
import { errorFields } from "../log";
import { clientHash, dailySalt } from "./signing";
import { type FlushBucket, writeHits } from "./store/hits";

// Redirect hits on /s/audio/<code>, counted the way Dub does: HEADs and bots apart from people, and a person's click
// once per client per link per UTC hour (plus every click in `clicks`). The redirect never waits on a write: hits
// are buffered and written in one transaction about once a second. Exact with several instances: each writes only
// increments (store/hits.ts), and the "seen" dedupe lives in the database.

/** Link-preview fetchers, crawlers and HTTP libraries; matched case-insensitively anywhere in User-Agent. */
export const BOT_USER_AGENTS = [
  "bot",
  "crawler",
  "spider",
  "slurp",
  "facebookexternalhit",
  "facebot",
  "meta-externalagent",
  "twitterbot",
  "slackbot",
  "slack-imgproxy",
  "discordbot",
  "telegrambot",
  "whatsapp",
  "linkedinbot",
  "embedly",
  "skypeuripreview",
  "applebot",
  "googlebot",
  "bingbot",
  "bingpreview",
  "yandex",
  "baiduspider",
  "duckduckbot",
  "pinterest",
  "redditbot",
  "mastodon",
  "vkshare",
  "iframely",
  "outbrain",
  "quora link preview",
  "snapchat",
  "viber",
  "line/",
  "kakaotalk",
  "zoominfo",
  "headlesschrome",
  "phantomjs",
  "lighthouse",
  "curl/",
  "wget/",
  "python-requests",
  "python-urllib",
  "aiohttp",
  "go-http-client",
  "okhttp",
  "java/",
  "node-fetch",
  "undici",
  "axios/",
  "libwww-perl",
  "httpclient",
  "postmanruntime",
] as const;
const BOT_RE = new RegExp(BOT_USER_AGENTS.map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|"), "i");

export type HitKind = "click" | "bot" | "head";

/** User agents remembered by HitRecorder.classify before it starts again. */
const MAX_AGENT_KINDS = 1000;

/** A missing User-Agent is never a person's browser, so it counts as a bot. */
export function classifyHit(method: string, userAgent: string | null): HitKind {
  if (method === "HEAD") return "head";
  if (!userAgent || BOT_RE.test(userAgent)) return "bot";
  return "click";
}

/** A link-hour's buffered counts, keyed by `bucketKey`. */
interface Bucket extends FlushBucket {
  key: number;
}

/**
 * A bucket's key: the link id and the hour (hours since 1970) in one safe integer. Buckets are written about
 * once a second, so two hours a million apart never meet in the buffer.
 */
const bucketKey = (linkId: number, hourIndex: number): number => linkId * 1_000_000 + (hourIndex % 1_000_000);

const MAX_SEEN_IN_MEMORY = 100_000;
const MAX_PLAIN_AGENT = 512;
const FLUSH_INTERVAL_MS = 1000;
const BUFFER_MAX_BUCKETS = 50_000;

export class HitRecorder {
  /** Keyed by `bucketKey`: a number, so the redirect path builds no string to find its bucket. */
  private buckets = new Map<number, Bucket>();
  /** link id → client address → user agents (or their hash when oversized) counted this hour by this process. */
  private seen = new Map<number, Map<string, Set<string>>>();
  private seenCount = 0;
  private seenHour = "";
  private hourCache: { startMs: number; index: number; hour: string; day: string; salt: string } | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  /** The flush in progress: the next one waits for it, so that awaiting flush() covers every hit recorded before. */
  private flushing: Promise<number> | null = null;
  private failures = 0;
  /** User agents already classified (browsers repeat a few strings): the bot pattern is ~0.25 µs a test. Bounded. */
  private readonly agentKinds = new Map<string, HitKind>();
  dropped = 0;

  constructor(private readonly ctx: AppContext) {}

  /** classifyHit, remembered per user agent. */
  classify(method: string, userAgent: string | null): HitKind {
    if (method === "HEAD" || !userAgent) return classifyHit(method, userAgent);
    let kind = this.agentKinds.get(userAgent);
    if (kind === undefined) {
      kind = classifyHit(method, userAgent);
      if (this.agentKinds.size >= MAX_AGENT_KINDS) this.agentKinds.clear();
      this.agentKinds.set(userAgent, kind);
    }
    return kind;
  }

  /** Called on the redirect path: a few map operations and, for a client's first click in the hour, one SHA-256. */
  record(linkId: number, kind: HitKind, ip: string, userAgent: string | null, nowMs: number = epochMs(this.ctx.clock)): void {
    const { hour, salt, index } = this.clockFor(nowMs);
    const key = bucketKey(linkId, index);
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= BUFFER_MAX_BUCKETS) {
        this.dropped++;
        return;
      }
      b = { key, linkId, hour, clicks: 0, bot: 0, head: 0, candidates: [] };
      this.buckets.set(key, b);
    }
    if (kind === "head") b.head++;
    else if (kind === "bot") b.bot++;
    else {
      b.clicks++;
      if (this.seenHour !== hour || this.seenCount >= MAX_SEEN_IN_MEMORY) {
        this.seen = new Map();
        this.seenCount = 0;
        this.seenHour = hour;
      }
      // A repeat click of a client already seen this hour costs three lookups, not a SHA-256. Clients are kept
      // by link, address and user agent in process memory for at most the hour (never written anywhere); an
      // oversized user agent is hashed first so that one entry stays small.
      const agent = userAgent ?? "";
      let byIp = this.seen.get(linkId);
      if (!byIp) this.seen.set(linkId, (byIp = new Map()));
      let agents = byIp.get(ip);
      if (!agents) byIp.set(ip, (agents = new Set()));
      const hashed = agent.length <= MAX_PLAIN_AGENT ? null : clientHash(salt, ip, agent);
      const seenAgent = hashed ?? agent;
      if (!agents.has(seenAgent)) {
        agents.add(seenAgent);
        this.seenCount++;
        b.candidates.push(hashed ?? clientHash(salt, ip, agent));
      }
    }
    this.startTimer();
  }

  /** The UTC hour label and the day's salt, recomputed only when the hour changes. */
  private clockFor(ms: number): { hour: string; salt: string; index: number } {
    const c = this.hourCache;
    if (c && ms >= c.startMs && ms < c.startMs + 3_600_000) return c;
    const startMs = ms - (ms % 3_600_000);
    const iso = new Date(startMs).toISOString();
    const day = iso.slice(0, 10);
    const salt = this.hourCache?.day === day ? this.hourCache.salt : dailySalt(this.ctx, day).toString("hex");
    this.hourCache = { startMs, index: startMs / 3_600_000, hour: `${iso.slice(0, 13)}:00:00Z`, day, salt };
    return this.hourCache;
  }

  get pending(): number {
    return this.buckets.size;
  }

  /**
   * Writes every buffered bucket in one transaction; on failure they are kept for the next try. Never rejects.
   * Flushes run one after the other: a caller that awaits this (the stats route, shutdown) sees every hit recorded
   * before its call in the database, also those a timer's flush had already taken.
   */
  async flush(): Promise<number> {
    const previous = this.flushing;
    const mine = (async () => {
      if (previous) await previous;
      return this.flushOnce();
    })();
    this.flushing = mine;
    try {
      return await mine;
    } finally {
      if (this.flushing === mine) this.flushing = null;
    }
  }

  private async flushOnce(): Promise<number> {
    if (this.buckets.size === 0) {
      this.stopTimer();
      return 0;
    }
    const buckets = [...this.buckets.values()];
    this.buckets = new Map();
    try {
      await this.ctx.store.tx((t) => writeHits(t, buckets));
      this.failures = 0;
      return buckets.length;
    } catch (err) {
      // Kept for the next try (a busy database, a lost PostgreSQL connection: the transaction was rolled back whole,
      // so nothing counts twice), but not forever: a closed or broken database would otherwise keep the timer
      // failing once a second.
      if (++this.failures >= 10) {
        this.dropped += buckets.length;
        this.stopTimer();
        this.ctx.log.error("audio-share hits dropped after repeated flush failures", { buckets: buckets.length, ...errorFields(err) });
        return 0;
      }
      for (const b of buckets) {
        const newer = this.buckets.get(b.key);
        if (!newer) this.buckets.set(b.key, b);
        else {
          newer.clicks += b.clicks;
          newer.bot += b.bot;
          newer.head += b.head;
          newer.candidates.push(...b.candidates);
        }
      }
      this.ctx.log.warn("audio-share hit flush failed", errorFields(err));
      return 0;
    }
  }

  async stop(): Promise<void> {
    this.stopTimer();
    await this.flush();
  }

  // The timer runs only while there is something to write, so an idle app (or a closed test app) holds none.
  private startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref?.();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

const RECORDER = slot("audio-share hit recorder", (ctx) => new HitRecorder(ctx));

export function hitRecorder(ctx: AppContext): HitRecorder {
  return stateOf(ctx, RECORDER);
}

/** Shutdown: write what is buffered (serve awaits this before the database closes). */
export async function flushAudioShareHits(ctx: AppContext): Promise<void> {
  await ctx.state.peek(RECORDER)?.stop();
}
