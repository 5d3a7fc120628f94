import { type AppContext, slot, stateOf } from "../context";
import type { Queryable } from "../db/port";
import { epochMs } from "../clock";
import { AppError, found, NotFoundError, problemsOrThrow, ValidationError } from "../http/errors/errors";
import { type KeyPageRequest, keyPageOf } from "../http/pagination";
import { schemaView } from "../http/schema-view";
import { AuthModel } from "./model";
import type { Actor } from "./actors";
import { recordAudit } from "./audit";
import { parseAllowList } from "./ip-allow";
import { KEY_PREFIX, parseScopes, SCOPES, type KeyMode, type Scope } from "./scopes";
import * as store from "./store/keys";

export const MAX_ROTATION_OVERLAP_HOURS = 24;
/** The cursor of GET /admin/partners/keys: the last key's created_at and key_id. */
export const KEY_LIST_CURSOR = ["text", "text"] as const;

/** A partner_keys row (src/auth/store/keys.ts), its enums narrowed. */
export type KeyRow = Omit<store.KeyRow, "mode" | "status"> & { mode: KeyMode; status: "active" | "disabled" };

export type PartnerKeyView = ReturnType<typeof toKeyView>;

export const toKeyView = (r: KeyRow) =>
  schemaView(AuthModel.key, r, {
    scopes: r.scopes ? (r.scopes.split(",") as Scope[]) : [],
    allowed_ips: r.allowed_ips ? r.allowed_ips.split(",") : [],
  });

type KeyFilter = { partner?: string; mode?: KeyMode; status?: "active" | "disabled" };
const storeFilter = (f: KeyFilter) => ({ partner: f.partner ?? null, mode: f.mode ?? null, status: f.status ?? null });

export interface CreateKeyInput {
  partner: string;
  mode: KeyMode;
  scopes: string[] | string;
  allowedIps?: string[] | string;
}

/** Checks and normalises key input; every problem reported at once. */
function validateKeyInput(input: CreateKeyInput): { partner: string; mode: KeyMode; scopes: Scope[]; ips: string[] } {
  const problems: Array<{ field: string; problem: string }> = [];
  const partner = input.partner.trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/.test(partner))
    problems.push({ field: "partner", problem: "must be 1–64 letters, digits, spaces, dots, dashes or underscores" });
  if (input.mode !== "sandbox" && input.mode !== "live") problems.push({ field: "mode", problem: "must be sandbox or live" });
  const { scopes, unknown } = parseScopes(Array.isArray(input.scopes) ? input.scopes.join(",") : input.scopes);
  if (unknown.length) problems.push({ field: "scopes", problem: `unknown scope(s) ${unknown.join(", ")}; known: ${SCOPES.join(", ")}` });
  if (!scopes.length) problems.push({ field: "scopes", problem: `at least one of ${SCOPES.join(", ")}` });
  const ipList = Array.isArray(input.allowedIps) ? input.allowedIps.join(",") : (input.allowedIps ?? "");
  const { canonical, invalid } = parseAllowList(ipList);
  if (invalid.length) problems.push({ field: "allowed_ips", problem: `not an IP address or CIDR range: ${invalid.join(", ")}` });
  problemsOrThrow("key settings", problems);
  return { partner, mode: input.mode, scopes, ips: canonical };
}

const ROW_CACHE_MAX = 10_000;

/**
 * How often a process re-reads partner_keys_version to notice changes made by ANOTHER process (`herald keys
 * disable` run beside the server, a second instance). Changes made through PartnerKeys in this process are
 * seen by the very next request.
 */
export const KEY_CHANGE_POLL_MS = 1000;

/** Key rows in memory, shared by every PartnerKeys of one context (the guard's, the CLI's, the console's). */
interface KeyRowCache {
  rows: Map<string, Readonly<KeyRow>>;
  /** partner_keys_version when `rows` was started, and when (ctx.clock ms) it was last read. */
  version: number;
  checkedAtMs: number;
}

const ROW_CACHE = slot("partner key rows", (): KeyRowCache => ({ rows: new Map(), version: -1, checkedAtMs: -Infinity }));

export class PartnerKeys {
  private readonly plainCache = new Map<string, string>();
  private readonly cache: KeyRowCache;
  /** Key rows being read now, with the keys version they were asked under (see find). */
  private readonly reading = new Map<string, { version: number; row: Promise<Readonly<KeyRow> | null> }>();
  private readonly lastUsedMs = new Map<string, number>();

  constructor(private readonly ctx: AppContext) {
    this.cache = stateOf(ctx, ROW_CACHE);
  }

  /**
   * The key row, served from memory: the signature check then runs no SQL at all (one statement cost a signed
   * GET about a sixth of its throughput, bench/README.md). Every change to partner_keys, from any connection
   * or process, bumps partner_keys_version by trigger (migration 0008); this process re-reads that integer at
   * most every KEY_CHANGE_POLL_MS and drops every cached row when it moved. Writes through PartnerKeys drop
   * them at once. Unknown ids are not cached, so guessing ids cannot fill memory.
   */
  async find(keyId: string, nowMs: number = epochMs(this.ctx.clock)): Promise<Readonly<KeyRow> | null> {
    const c = this.cache;
    if (!this.checkedRecently(nowMs)) {
      // Marked checked before the read: requests arriving meanwhile use the rows they have, not a read each.
      c.checkedAtMs = nowMs;
      const version = (await store.keysVersion(this.ctx.store)) ?? -2;
      if (version !== c.version) {
        c.rows = new Map();
        c.version = version;
      }
    }
    const cached = c.rows.get(keyId);
    if (cached) return cached;
    // One read per key at a time: requests arriving together after a key change (or a start) share it.
    // A read begun before the version last changed is not joined: it may have read the row before the change.
    const joined = this.reading.get(keyId);
    if (joined && joined.version === c.version) return joined.row;
    const reading = { version: c.version, row: this.readRow(keyId) };
    this.reading.set(keyId, reading);
    void reading.row
      .finally(() => {
        if (this.reading.get(keyId) === reading) this.reading.delete(keyId);
      })
      .catch(() => {});
    return reading.row;
  }

  private async readRow(keyId: string): Promise<Readonly<KeyRow> | null> {
    const row = (await store.keyById(this.ctx.store, keyId)) as KeyRow | null;
    if (!row) return null;
    const c = this.cache;
    if (c.rows.size >= ROW_CACHE_MAX) c.rows.clear();
    c.rows.set(keyId, Object.freeze(row));
    return row;
  }

  /**
   * `find` without a promise when it would answer from memory (the cache checked within KEY_CHANGE_POLL_MS and
   * holding the row); undefined when `find` has a read to make. The partner guard's every request: an await it
   * need not make.
   */
  cached(keyId: string, nowMs: number): Readonly<KeyRow> | undefined {
    return this.checkedRecently(nowMs) ? this.cache.rows.get(keyId) : undefined;
  }

  /** Whether the keys' version was checked within KEY_CHANGE_POLL_MS (else find reads it before answering). */
  private checkedRecently(nowMs: number): boolean {
    return Math.abs(nowMs - this.cache.checkedAtMs) < KEY_CHANGE_POLL_MS;
  }

  /** Whether markUsed would write (last_used_at is written at most once a minute per key). */
  usedWithinMinute(row: Readonly<KeyRow>, nowMs: number): boolean {
    let last = this.lastUsedMs.get(row.key_id);
    if (last === undefined) last = row.last_used_at ? Date.parse(row.last_used_at) : -Infinity;
    return nowMs - last < 60_000;
  }

  /** After a write through this class: the next find reads the database again. */
  private changed(): void {
    this.cache.rows = new Map();
    this.cache.checkedAtMs = -Infinity;
  }

  /**
   * last_used_at is written at most once a minute per key, so a busy key does not add a write per request. The
   * time of this process's last write per key is kept in memory, so the check costs no date parsing.
   */
  async markUsed(row: Readonly<KeyRow>, nowMs: number): Promise<void> {
    if (this.usedWithinMinute(row, nowMs)) return;
    if (this.lastUsedMs.size >= ROW_CACHE_MAX) this.lastUsedMs.clear();
    this.lastUsedMs.set(row.key_id, nowMs);
    await store.touchKey(this.ctx.store, row.key_id, new Date(nowMs).toISOString());
    this.changed();
  }

  /**
   * The key's secrets, decrypted: the current one, and the previous one with the end of its rotation overlap
   * (ms; it verifies signatures only before then), or null when there is none.
   */
  secretsOf(row: Readonly<KeyRow>): { current: string; previous: { secret: string; validUntilMs: number } | null } {
    const current = this.open(row.secret_ciphertext, row.key_id);
    if (!row.previous_secret_ciphertext || !row.previous_secret_valid_until) return { current, previous: null };
    return { current, previous: { secret: this.open(row.previous_secret_ciphertext, row.key_id), validUntilMs: Date.parse(row.previous_secret_valid_until) } };
  }

  /**
   * Decryption is cached by ciphertext: a rotated or changed secret has a new ciphertext, so the cache can never
   * serve a stale secret.
   */
  private open(ciphertext: string, keyId: string): string {
    let plain = this.plainCache.get(ciphertext);
    if (plain === undefined) {
      plain = this.ctx.secrets.open(ciphertext, keyId);
      if (this.plainCache.size >= 10_000) this.plainCache.clear();
      this.plainCache.set(ciphertext, plain);
    }
    return plain;
  }

  /** `alongside` runs in the key's own transaction (an audit row of the caller's that must commit with the key). */
  async create(
    input: CreateKeyInput,
    actor: Actor,
    requestId: string | null = null,
    alongside?: (t: Queryable, keyId: string) => Promise<void>,
  ): Promise<PartnerKeyView & { secret: string }> {
    const v = validateKeyInput(input);
    const keyId = KEY_PREFIX[v.mode] + Buffer.from(this.ctx.rng.bytes(12)).toString("hex");
    const secret = this.newSecret(v.mode);
    const now = this.ctx.clock.now().toISOString();
    const secretCiphertext = this.ctx.secrets.seal(secret, keyId);
    await this.ctx.store.tx(async (t) => {
      await store.insertKey(t, { keyId, partner: v.partner, mode: v.mode, scopes: v.scopes.join(","), allowedIps: v.ips.join(","), secretCiphertext, at: now });
      await recordAudit(t, {
        at: now,
        actor,
        action: "partner_key.create",
        target: keyId,
        details: { partner: v.partner, mode: v.mode, scopes: v.scopes, allowed_ips: v.ips },
        requestId,
      });
      if (alongside) await alongside(t, keyId);
    });
    this.changed();
    return { ...toKeyView((await this.find(keyId))!), secret };
  }

  private newSecret(mode: KeyMode): string {
    return `hsk_${mode === "live" ? "live" : "test"}_` + Buffer.from(this.ctx.rng.bytes(30)).toString("base64url");
  }

  async list(filter: KeyFilter = {}): Promise<PartnerKeyView[]> {
    return ((await store.listKeys(this.ctx.store, storeFilter(filter))) as KeyRow[]).map(toKeyView);
  }

  /** A page of GET /admin/partners/keys (oldest first, then by id), paged by offset or by a KEY_LIST_CURSOR cursor. */
  async page(filter: KeyFilter, page: KeyPageRequest) {
    const [createdAt, keyId] = page.after ?? [];
    const after = typeof createdAt === "string" && typeof keyId === "string" ? { createdAt, keyId } : null;
    const rows = await store.keysPage(this.ctx.store, storeFilter(filter), { after, limit: page.limit + 1, offset: page.offset });
    const p = keyPageOf(rows, page, (r) => [r.created_at, r.key_id]);
    return { ...p, items: p.items.map(toKeyView) };
  }

  async getOrThrow(keyId: string): Promise<Readonly<KeyRow>> {
    return found(await this.find(keyId), "partner key", keyId);
  }

  /** Disabling a disabled key changes nothing and is not audited again. */
  async disable(keyId: string, reason: string, actor: Actor, requestId: string | null = null): Promise<PartnerKeyView> {
    await this.getOrThrow(keyId);
    const now = this.ctx.clock.now().toISOString();
    await this.ctx.store.tx(async (t) => {
      if (await store.disableKey(t, keyId, reason, now)) {
        await recordAudit(t, { at: now, actor, action: "partner_key.disable", target: keyId, details: { reason }, requestId });
      }
    });
    this.changed();
    return toKeyView(await this.getOrThrow(keyId));
  }

  /**
   * Issues a new secret; the old one keeps working for `overlapHours` (at most 24) so a partner can deploy the
   * new secret without downtime. A rotation during an overlap ends the older overlap.
   */
  async rotate(keyId: string, overlapHours: number, actor: Actor, requestId: string | null = null): Promise<PartnerKeyView & { secret: string }> {
    if (!Number.isInteger(overlapHours) || overlapHours < 0 || overlapHours > MAX_ROTATION_OVERLAP_HOURS) {
      throw new ValidationError(`overlap_hours must be an integer from 0 to ${MAX_ROTATION_OVERLAP_HOURS}`, [
        { field: "overlap_hours", problem: `must be 0–${MAX_ROTATION_OVERLAP_HOURS}` },
      ]);
    }
    const now = this.ctx.clock.now();
    const validUntil = overlapHours > 0 ? new Date(now.getTime() + overlapHours * 3_600_000).toISOString() : null;
    const secret = await this.ctx.store.tx(async (t) => {
      // Read inside the transaction (not the cache): the secret kept as "previous" must be the current one.
      const row = (await store.keyById(t, keyId)) as KeyRow | null;
      if (!row) throw new NotFoundError("partner key", keyId);
      if (row.status !== "active") throw new AppError("conflict", `Key ${keyId} is disabled; create a new key instead of rotating it`);
      const fresh = this.newSecret(row.mode);
      const rotated = await store.rotateKey(t, {
        keyId,
        expectedCiphertext: row.secret_ciphertext,
        secretCiphertext: this.ctx.secrets.seal(fresh, keyId),
        previousCiphertext: validUntil ? row.secret_ciphertext : null,
        previousValidUntil: validUntil,
        at: now.toISOString(),
      });
      if (!rotated) throw new AppError("conflict", `Key ${keyId} changed while it was being rotated; read it again and retry`);
      await recordAudit(t, { at: now.toISOString(), actor, action: "partner_key.rotate", target: keyId, details: { overlap_hours: overlapHours }, requestId });
      return fresh;
    });
    this.changed();
    return { ...toKeyView(await this.getOrThrow(keyId)), secret };
  }

  count(): Promise<number> {
    return store.countKeys(this.ctx.store);
  }
}
