import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import { auditOperator } from "../../auth/audit";
import type { AppContext } from "../../context";
import { AppError, found, problemsOrThrow } from "../../http/errors/errors";
import { pageOf, type PageRequest } from "../../http/pagination";
import { endProblem, globToRegExp } from "../digest/suppressions";
import { expireSilenceRow, insertSilence, silenceById, type SilenceRow, silencesInForce, silencesPage } from "./store";

// Alert silences, as Alertmanager operators know them: a matcher over alert keys (`*` for any characters) ending at a
// set time (at most MAX_SILENCE_DAYS ahead, so a forgotten one cannot hide an alert for ever) or earlier by hand. It
// holds back notices only: the alert still fires. Creating and expiring are audited in the change's transaction.

export const MAX_SILENCE_DAYS = 30;

export type SilenceState = "active" | "expired";
export type Silence = SilenceRow & { state: SilenceState };

export interface SilenceInput {
  matcher: string;
  reason: string;
  ends_at: string;
}

/** Ended by hand, or past its end: either way no longer holding anything back. */
const stateOf = (r: SilenceRow, nowIso: string): SilenceState => (r.expired_at !== null || r.ends_at <= nowIso ? "expired" : "active");
const view = (r: SilenceRow, nowIso: string): Silence => ({ ...r, state: stateOf(r, nowIso) });

function validate(ctx: AppContext, input: SilenceInput) {
  const problems: Array<{ field: string; problem: string }> = [];
  const matcher = input.matcher.trim();
  if (!/^[\x21-\x7e]+$/.test(matcher)) problems.push({ field: "body.matcher", problem: "must be an alert key or a pattern of visible ASCII characters" });
  const now = ctx.clock.now();
  const ends = endProblem(input.ends_at, now, MAX_SILENCE_DAYS);
  if (ends) problems.push({ field: "body.ends_at", problem: ends });
  problemsOrThrow("silence", problems);
  return { matcher, endsAt: new Date(input.ends_at).toISOString(), nowIso: now.toISOString() };
}

export async function createSilence(ctx: AppContext, who: AdminRequest, input: SilenceInput): Promise<Silence> {
  const v = validate(ctx, input);
  const row = await ctx.store.tx(async (t) => {
    const r = (await insertSilence(t, {
      matcher: v.matcher,
      reason: input.reason,
      created_by: actorLabel(who.actor),
      created_at: v.nowIso,
      ends_at: v.endsAt,
    }))!;
    await auditOperator(t, who, v.nowIso, "ops.alert_silence.create", `ops_alert_silence:${r.id}`, {
      matcher: r.matcher,
      reason: r.reason,
      ends_at: r.ends_at,
    });
    return r;
  });
  return view(row, v.nowIso);
}

export async function expireSilence(ctx: AppContext, who: AdminRequest, id: number): Promise<Silence> {
  const nowIso = ctx.clock.now().toISOString();
  const ended = (r: SilenceRow) =>
    new AppError("conflict", `Silence ${id} already ended at ${r.expired_at ?? r.ends_at}${r.expired_by ? ` (expired by ${r.expired_by})` : ""}`);
  const row = await ctx.store.tx(async (t) => {
    const r = found(await silenceById(t, id), "silence", id);
    if (stateOf(r, nowIso) === "expired") throw ended(r);
    // Conditional: of two operators ending it at once (on two instances), one wins and the other gets the 409.
    const updated = await expireSilenceRow(t, id, nowIso, actorLabel(who.actor));
    if (!updated) throw ended((await silenceById(t, id)) ?? r);
    await auditOperator(t, who, nowIso, "ops.alert_silence.expire", `ops_alert_silence:${id}`, { matcher: r.matcher, ends_at: r.ends_at });
    return updated;
  });
  return view(row, nowIso);
}

export async function listSilences(ctx: AppContext, page: PageRequest, state?: SilenceState) {
  const nowIso = ctx.clock.now().toISOString();
  const rows = await silencesPage(ctx.store, { after: page.after, limit: page.limit + 1, offset: page.offset }, state ?? null, nowIso);
  const p = pageOf(rows, page, (r) => r.id);
  return { ...p, items: p.items.map((r) => view(r, nowIso)) };
}

export interface ActiveSilences {
  /** The silence holding back this key (the one ending last; lowest id on a tie), or null. */
  of(alertKey: string): Silence | null;
}

export async function activeSilences(ctx: Pick<AppContext, "store">, nowIso: string): Promise<ActiveSilences> {
  const rows = await silencesInForce(ctx.store, nowIso);
  const compiled = rows.map((r) => ({ r, re: globToRegExp(r.matcher) }));
  return {
    of(alertKey) {
      const hit = compiled.find((c) => c.re.test(alertKey));
      return hit ? view(hit.r, nowIso) : null;
    },
  };
}
