import type { ReservedSQL, SQL } from "bun";
import type { StoreHealth } from "./health";
import { oneByOne } from "./postgres-one-by-one";
import { Apart, CALM_AFTER_REDO, type Member, mayRunTogether, nextBatch, type Outcome, retryPauseMs, type Slot, TX_ATTEMPTS } from "./postgres-batch-parts";
import { type Param, SerializationFailure } from "./port";
import { CAUGHT_FAILURE, type Cancellable, CANCEL_ANSWER_MS, deadlineError, handleOf, mapped, outcomeOf, prepared, rolledBackAt } from "./postgres-wire";

export type { Member } from "./postgres-batch-parts";

// How the PostgreSQL engine runs transactions (src/db/postgres-engine.ts holds the pool, the deadlines of single
// statements and the outage gate): each on a connection of its own, its statements sent without waiting for the
// answers before them (pipelined), and — for short request transactions given a group key — several in one
// COMMIT, each in a SAVEPOINT (group commit). docs/postgres.md "Speed".

/** What the runner needs of its store. */
export interface BatchHost {
  readonly health: StoreHealth;
  readonly acquireTimeoutMs: number;
  /** The pool now (it is replaced when a connection is found wedged). */
  sql(): SQL;
  translate(text: string): string;
  cancel(q: Cancellable): void;
  watchCancelled(q: Promise<unknown>, wedgedMs: number, wedged: () => void): void;
  reached(outcome: "answered" | "unreached" | "deadline", reason?: string): void;
  closed(): boolean;
}

export class BatchRunner {
  /** Where grouped transactions wait for their batch: one batch runs per slot at a time (see pump). */
  private readonly slots: Slot[];
  /** Which slot each key's transactions go to while one of them waits or runs there. */
  private readonly keyed = new Map<string, Slot>();
  /** Keys whose transactions run in batches of their own for now (Apart). */
  private readonly apart = new Apart();

  constructor(
    private readonly host: BatchHost,
    poolMax: number,
    batchSlots: number,
  ) {
    // Grouped batches leave a connection for lone transactions and statements outside one (reads, the jobs). Few
    // slots, so that under load a batch gathers many transactions: 50 players' plays at once took ~240 µs of CPU a
    // play (herald and PostgreSQL) in batches of 3 slots, ~340 µs in 9 (bench/README.md "Different players' plays
    // together"), since a batch's BEGIN, COMMIT, round trips and wake-ups are shared by all of its members.
    this.slots = Array.from({ length: Math.max(1, Math.min(batchSlots, poolMax - 1)) }, () => ({
      waiting: [],
      running: false,
      keys: new Map<string, number>(),
      held: null,
      calm: 0,
    }));
  }

  /** Refuses every grouped transaction still waiting (the store is closing). */
  refuseWaiting(error: Error): void {
    for (const m of this.slots.flatMap((slot) => slot.waiting.splice(0))) m.reject(error);
    for (const slot of this.slots) if (!slot.running) this.letGo(slot);
  }

  /** Hands a slot's kept connection back to the pool. */
  private letGo(slot: Slot): void {
    const held = slot.held;
    if (!held) return;
    slot.held = null;
    this.host.health.pool!.busy--;
    held.conn.release().catch(() => {});
  }

  /**
   * A transaction to run: alone at once, or (with a group key) in the batch slot its key maps to — at once if the
   * slot is idle, else in the slot's next batch.
   */
  start(m: Member): void {
    const key = m.group;
    if (key === null) {
      void this.runBatch([m]);
      return;
    }
    const slot = this.keyed.get(key) ?? this.freestSlot();
    this.keyed.set(key, slot);
    slot.keys.set(key, (slot.keys.get(key) ?? 0) + 1);
    slot.waiting.push(m);
    if (!slot.running) this.pump(slot);
  }

  /** An idle slot if there is one, else the one with the fewest transactions waiting. */
  private freestSlot(): Slot {
    let best = this.slots[0]!;
    for (const slot of this.slots) {
      if (!slot.running && slot.waiting.length === 0) return slot;
      if (slot.waiting.length < best.waiting.length) best = slot;
    }
    return best;
  }

  /**
   * Runs a slot's waiting transactions as one batch (nextBatch), then the ones left or arrived meanwhile; no wait is
   * ever added to gather a group, so under light load each runs at once alone. A key stays with the slot that has
   * a transaction of it waiting or running (else it goes to an idle slot): transactions with one key never run in
   * two batches at once, so a hot row never holds one batch behind another's lock; within a batch they run in key
   * order, so two batches (of this instance or another) that lock rows of several keys take them in one order and
   * never deadlock (PostgreSQL would break a deadlock only after deadlock_timeout, 1 s by default).
   */
  private pump(slot: Slot): void {
    const batch = nextBatch(slot.waiting, this.apart);
    if (!batch.length) {
      this.letGo(slot);
      return;
    }
    if (batch.length > 1) batch.sort((a, b) => (a.group! < b.group! ? -1 : a.group! > b.group! ? 1 : 0));
    slot.running = true;
    void this.runBatch(batch, slot).finally(() => {
      for (const m of batch) {
        const left = (slot.keys.get(m.group!) ?? 1) - 1;
        if (left > 0) slot.keys.set(m.group!, left);
        else {
          slot.keys.delete(m.group!);
          if (this.keyed.get(m.group!) === slot) this.keyed.delete(m.group!);
        }
      }
      slot.running = false;
      this.pump(slot);
    });
  }

  /**
   * One run of transactions on a connection of their own: BEGIN, each body (in a SAVEPOINT when there are several:
   * one that throws is rolled back to it alone), one COMMIT; none is answered before that COMMIT. Statements are
   * sent as soon as a body asks, without waiting for the answers before them (Bun's client pipelines prepared
   * statements on the connection; those without parameters are sent prepared too: `prepared`), so BEGIN, SAVEPOINT
   * and RELEASE ride with a body's first statements and cost no round trip of their own; a body that sends independent statements together (Promise.all) pays one round trip for them.
   *
   * Whole within the earliest deadline of its members: waiting for the connection, the bodies, the COMMIT. At the
   * deadline the statement in flight is cancelled on the server and the connection closed (never returned to the
   * pool: it may be wedged, or mid-transaction); the members get StoreUnavailable. Whether a commit that was in
   * flight took effect is then unknown to Herald — the partner's retry with its Idempotency-Key answers from what
   * was stored, or does the work once. A member that lost a race (deadlock, serialization failure) runs again.
   */
  private async runBatch(members: Member[], slot?: Slot): Promise<void> {
    const grouped = members.length > 1;
    const now = performance.now();
    const live = members.filter((m) => {
      if (m.deadline > now) return true;
      this.host.health.counts.deadlines++;
      this.settle(m, { ok: false, error: deadlineError("a transaction", m.ms, "DATABASE_TRANSACTION_TIMEOUT_MS") });
      return false;
    });
    if (!live.length) return;
    const first = live.reduce((a, b) => (b.deadline < a.deadline ? b : a));
    const deadline = first.deadline;
    const from = this.host.sql();
    const conn = this.kept(slot, from) ?? (await this.reserve(live, deadline, first.ms));
    if (!conn) return;
    const pool = this.host.health.pool!;
    const counts = this.host.health.counts;
    const state = { inFlight: null as Cancellable | null, expired: false, unanswered: 0, ended: false };
    // TxOptions.lastAnsweredWithCommit: once every body has resolved, COMMIT goes out with their last statements.
    let commit = null as Promise<unknown> | null;
    const sendCommit = () => {
      commit = send("COMMIT", []);
      commit.catch(() => {});
    };
    // That COMMIT after a body failed: true once it answers ROLLBACK; false if it committed (rolledBackAt).
    const rolledBack = async () => rolledBackAt(await Promise.race([commit!, expired]));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => {
          state.expired = true;
          counts.deadlines++;
          counts.discarded++;
          // The deadline's error first: closing the connection rejects the statements too, with a vaguer one.
          reject(deadlineError("a transaction", first.ms, "DATABASE_TRANSACTION_TIMEOUT_MS"));
          const inFlight = state.inFlight;
          if (inFlight) this.host.cancel(inFlight);
          // Was the server there? The statement in flight answers its cancellation if it was (watchCancelled). The
          // connection is closed either way: it may be mid-transaction, and a frozen one would never come back.
          if (inFlight) this.host.watchCancelled(inFlight, CANCEL_ANSWER_MS, () => {});
          conn.close({ timeout: 0 }).catch(() => {});
        },
        Math.max(1, deadline - performance.now()),
      );
    });
    expired.catch(() => {});
    const send = (text: string, params: readonly Param[]): Promise<unknown> => {
      if (state.expired) throw deadlineError("a transaction", first.ms, "DATABASE_TRANSACTION_TIMEOUT_MS");
      if (commit) throw new Error("a statement was sent after its transaction's COMMIT (TxOptions.lastAnsweredWithCommit)");
      counts.statements++;
      if (state.unanswered++ === 0) counts.roundTrips++;
      const sql = this.host.translate(text);
      const q = (params.length ? conn.unsafe(sql, params as Param[]) : conn(prepared(sql))) as unknown as Cancellable;
      state.inFlight = q;
      return q.then(
        (r) => {
          state.unanswered--;
          return r;
        },
        (err: unknown) => {
          state.unanswered--;
          throw mapped(err);
        },
      );
    };
    // BEGIN, SAVEPOINT, RELEASE: sent, not waited for; one that failed fails the statements after it and the COMMIT.
    const control = (text: string) => send(text, []).catch(() => {});
    let outcomes: Outcome[] = [];
    try {
      void control("BEGIN");
      // Together when every body may (TxOptions.together), unless the slot is calming down after a redo (one batch less).
      let redone = false;
      const calming = grouped && slot!.calm > 0;
      if (calming) slot!.calm--;
      // A batch that failed run together or in a row is rolled back, and runs again one body at a time in savepoints.
      // A COMMIT sent already ended the transaction (it answered ROLLBACK): then the redo only begins a new one.
      const redo = () => {
        counts.redone++;
        slot!.calm = CALM_AFTER_REDO;
        if (commit) commit = null;
        else void control("ROLLBACK");
        void control("BEGIN");
      };
      if (grouped && !calming && mayRunTogether(live, this.apart)) {
        // Every body at once, no SAVEPOINT: their statements share round trips. All succeeded, or none is answered
        // from this run — one failed (or a failed statement aborted the transaction for all): rolled back, and the
        // batch runs again below, one body at a time.
        counts.together++;
        let resolved = 0;
        const early = live.every((m) => m.withCommit) ? () => ++resolved === live.length && sendCommit() : undefined;
        outcomes = await Promise.all(live.map((m) => this.runBody(m, send, expired, early)));
        if (!outcomes.every((o) => o.ok)) {
          if (commit && !(await rolledBack())) return this.committedAnyway(live, outcomes, state);
          outcomes = [];
          redone = true;
          redo();
        }
      }
      if (!outcomes.length) {
        const run = (savepoints: boolean) =>
          oneByOne(
            live,
            grouped,
            (m, resolved) => this.runBody(m, send, expired, resolved),
            (text) => void control(text),
            sendCommit,
            savepoints,
          );
        // Bodies that may run together but share a key (one player's plays) run one after another without savepoints
        // (oneByOne): should one fail, the batch is rolled back and runs again with them, and the slot calms down.
        const inRow = grouped && !calming && !redone && live.every((m) => m.together && !this.apart.has(m.group));
        outcomes = await run(!inRow);
        // In a row the run stops at the first failure (its outcome last).
        if (inRow && !outcomes.every((o) => o.ok)) {
          redo();
          outcomes = await run(true);
        }
        this.apart.note(live, outcomes);
        // A redo of a batch run together that found the body that failed keeps its key apart: the slot's next batches
        // may run together at once. (After a batch of one key run in a row, the slot calms down: its key may fail again.)
        if (redone && live.some((m, i) => m.together === "beside other keys" && !outcomes[i]!.ok)) slot!.calm = 0;
      }
      if (!grouped && !outcomes[0]!.ok) {
        // Its COMMIT, if sent with the last statements, answers ROLLBACK: the failed statement had aborted it.
        if (!commit) await Promise.race([send("ROLLBACK", []), expired]);
        else if (!(await rolledBack())) return this.committedAnyway(live, outcomes, state);
        state.ended = true;
        this.finish(live, outcomes);
        return;
      }
      const committed = await Promise.race([commit ?? send("COMMIT", []), expired]);
      state.ended = true;
      // A transaction the server had aborted (a statement failed that no body reported) answers COMMIT with ROLLBACK.
      if (rolledBackAt(committed)) throw new Error("PostgreSQL rolled the transaction back at COMMIT: one of its statements had failed");
      counts.commits++;
      counts.transactions += outcomes.filter((o) => o.ok).length;
      this.finish(live, outcomes);
    } catch (err) {
      const e = state.expired ? deadlineError("a transaction", first.ms, "DATABASE_TRANSACTION_TIMEOUT_MS") : mapped(err);
      for (const m of live) this.settle(m, { ok: false, error: e });
    } finally {
      clearTimeout(timer);
      if (state.ended && !state.expired && slot?.waiting.length && !this.host.closed()) {
        // The slot's next batch is waiting: it runs on this connection (pool.busy still counts it).
        slot.held = { conn, from };
      } else if (state.expired) {
        pool.busy--;
        // closed by the deadline
      } else if (state.ended) {
        pool.busy--;
        conn.release().catch(() => {});
      } else {
        // Left mid-transaction by an error of its own: never handed to someone else like that.
        pool.busy--;
        counts.discarded++;
        conn.close({ timeout: 0 }).catch(() => {});
      }
    }
  }

  /**
   * A body on the batch's connection; its outcome once every statement it sent has answered (one it did not wait
   * for, or whose failure it caught, still decides: on PostgreSQL a failed statement has aborted the transaction).
   */
  private async runBody(
    m: Member,
    send: (text: string, params: readonly Param[]) => Promise<unknown>,
    expired: Promise<never>,
    resolved?: () => void,
  ): Promise<Outcome> {
    const sent: Array<Promise<unknown>> = [];
    let failure: { error: unknown } | null = null;
    const handle = handleOf((text, params) => {
      const p = send(text, params);
      p.catch((error: unknown) => (failure ??= { error }));
      sent.push(p);
      return p;
    });
    try {
      const value = await Promise.race([m.fn(handle), expired]);
      // TxOptions.lastAnsweredWithCommit: the COMMIT may go out now, before the answers waited for below.
      resolved?.();
      if (sent.length) await Promise.race([Promise.allSettled(sent), expired]);
      return failure ? { ok: false, error: (failure as { error: unknown }).error } : { ok: true, value };
    } catch (err) {
      if (sent.length) await Promise.race([Promise.allSettled(sent), expired]);
      return { ok: false, error: mapped(err) };
    }
  }

  /** The connection the slot's last batch left it, when it came from the pool in service (else it is released). */
  private kept(slot: Slot | undefined, from: SQL): ReservedSQL | null {
    const held = slot?.held;
    if (!held) return null;
    slot!.held = null;
    if (held.from === from) return held.conn;
    this.host.health.pool!.busy--;
    held.conn.release().catch(() => {});
    return null;
  }

  /** A pooled connection for a batch, within its deadline; null when none came (its members are answered). */
  private async reserve(members: Member[], deadline: number, ms: number): Promise<ReservedSQL | null> {
    const left = Math.max(1, Math.floor(deadline - performance.now()));
    const waitMs = Math.min(this.host.acquireTimeoutMs, left);
    const pool = this.host.health.pool!;
    pool.busy++;
    try {
      return await this.host.sql().reserve({ signal: AbortSignal.timeout(waitMs) });
    } catch (err) {
      pool.busy--;
      let e = mapped(err);
      if ((err as { name?: string })?.name === "TimeoutError") {
        this.host.health.counts.deadlines++;
        if (waitMs !== this.host.acquireTimeoutMs) e = deadlineError("a transaction", ms, "DATABASE_TRANSACTION_TIMEOUT_MS");
        else {
          this.host.health.counts.exhausted++;
          e = deadlineError("with a free connection", waitMs, "DATABASE_ACQUIRE_TIMEOUT_MS; DATABASE_POOL_MAX connections were all busy");
        }
      }
      for (const m of members) this.settle(m, { ok: false, error: e });
      return null;
    }
  }

  /** A batch whose COMMIT committed although a body failed (see rolledBackAt): no redo; the failed ones refused. */
  private committedAnyway(members: Member[], outcomes: Outcome[], state: { ended: boolean }): void {
    state.ended = true;
    this.host.health.counts.commits++;
    this.finish(
      members,
      outcomes.map((o) => (o.ok ? o : { ok: false, error: new Error(CAUGHT_FAILURE) })),
    );
  }

  /** Answers the members of a committed batch (or of a lone one rolled back). */
  private finish(members: Member[], outcomes: Outcome[]): void {
    members.forEach((m, i) => this.settle(m, outcomes[i]!));
  }

  /** A member's answer, or another run after a lost race while its deadline leaves time. */
  private settle(m: Member, o: Outcome): void {
    if (o.ok) {
      this.host.reached("answered");
      m.resolve(o.value);
      return;
    }
    const e = o.error;
    const pause = retryPauseMs(m.attempt);
    if (e instanceof SerializationFailure && m.attempt < TX_ATTEMPTS && performance.now() + pause < m.deadline - 50 && !this.host.closed()) {
      this.host.health.counts.retries++;
      m.attempt++;
      setTimeout(() => this.start(m), pause);
      return;
    }
    this.host.reached(outcomeOf(e), (e as Error).message);
    m.reject(e);
  }
}
