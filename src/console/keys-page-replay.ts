import type { Clock } from "../clock";

// A rotate form submitted twice (a double click, a reload of the answer page) must not rotate twice: the second
// rotation would make the first new secret — never seen, its answer page replaced — the "previous" one and end
// the old secret's overlap at once, so the partner still on the old secret would be cut off. Each rendered rotate
// form carries a random form_id. The first post with it rotates; a repeat within SECRET_TTL_MS gets the same
// answer page (the same secret, to the same session: the second response is the one the browser shows), a later
// repeat is refused. Kept in this process's memory only (the plaintext secret is already cached in memory for
// signature checks: src/auth/keys.ts); nothing reaches a URL, the log or the database.

export interface RotationAnswer {
  keyId: string;
  partner: string;
  mode: string;
  secret: string;
  until: string | null;
  at: string;
}

interface Entry {
  atMs: number;
  answer: RotationAnswer | null;
  /** Taken by a post whose rotation has not answered yet. */
  pending?: boolean;
}

/** How long a repeated form gets the same answer page. */
export const SECRET_TTL_MS = 5 * 60_000;
/** How long a used form_id is remembered (refused after SECRET_TTL_MS). */
const USED_TTL_MS = 60 * 60_000;
const MAX_ENTRIES = 500;

export type Replay = { kind: "new" } | { kind: "replay"; answer: RotationAnswer } | { kind: "used"; at: string } | { kind: "pending"; at: string };

export class RotationForms {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly clock: Clock) {}

  private sweep(nowMs: number): void {
    for (const [k, e] of this.entries) {
      if (nowMs - e.atMs > USED_TTL_MS) this.entries.delete(k);
      else if (nowMs - e.atMs > SECRET_TTL_MS) e.answer = null;
    }
    // Oldest first (Map keeps insertion order): a flood of forms cannot grow memory past MAX_ENTRIES.
    for (const k of this.entries.keys()) {
      if (this.entries.size <= MAX_ENTRIES) break;
      this.entries.delete(k);
    }
  }

  /** What a post of form `formId` by `who` is: a first use, a repeat to answer again, or a stale repeat to refuse. */
  check(who: string, formId: string): Replay {
    const nowMs = this.clock.now().getTime();
    this.sweep(nowMs);
    const e = this.entries.get(`${who}\n${formId}`);
    if (!e) return { kind: "new" };
    if (e.pending) return { kind: "pending", at: new Date(e.atMs).toISOString() };
    return e.answer ? { kind: "replay", answer: e.answer } : { kind: "used", at: new Date(e.atMs).toISOString() };
  }

  /**
   * Takes the form for one post, in the same synchronous step as check(): the rotation awaits the database, and a
   * second post of the form arriving meanwhile must find it taken, not new.
   */
  begin(who: string, formId: string): void {
    this.entries.set(`${who}\n${formId}`, { atMs: this.clock.now().getTime(), answer: null, pending: true });
  }

  /** The rotation failed: the form may be posted again. */
  forget(who: string, formId: string): void {
    this.entries.delete(`${who}\n${formId}`);
  }

  /** The rotation's answer, which a repeat of the form gets for SECRET_TTL_MS. */
  remember(who: string, formId: string, answer: RotationAnswer): void {
    this.entries.set(`${who}\n${formId}`, { atMs: this.clock.now().getTime(), answer });
    this.sweep(this.clock.now().getTime());
  }
}
