import type { AppContext } from "../../context";
import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import { NotFoundError } from "../../http/errors/errors";
import { utcOrThrow } from "./declarations";
import { listAnswer, offsetPage, type PageRequest } from "../../http/pagination";
import { operatorChange } from "../state";
import { triageCounts, triageOf, triagePage, upsertTriage, type TriageRow } from "../store/operators";
import { flaggedByCompleteRun } from "../store/rows";
import { bumpState } from "../store/state";
import { TRIAGE_STATUSES } from "../tables";

// Triage: an operator's status per anomalous signature (open, investigating, resolved, false_positive) with an
// owner and an ETA. Only a signature that a complete run flagged can be triaged; each change is audited in the
// same transaction. An anomaly without a triage row is untriaged (triage.json lists only what operators set).

export { TRIAGE_STATUSES };
export type TriageStatus = (typeof TRIAGE_STATUSES)[number];

export async function listTriage(ctx: AppContext, status: TriageStatus | undefined, page: PageRequest) {
  // Keyset on the rowid is not available for a text key: pages by offset, ordered by signature.
  const rows = await triagePage(ctx.store, status, page.limit + 1, page.offset);
  const counts = await triageCounts(ctx.store);
  return {
    status: status ?? null,
    counts: Object.fromEntries(TRIAGE_STATUSES.map((s) => [s, counts.find((c) => c.status === s)?.n ?? 0])) as Record<TriageStatus, number>,
    // The applied filters, as every list echoes them (the status is also at the top, where it always was).
    ...listAnswer("rows", offsetPage(rows, page.limit, page.offset), { status: status ?? null }),
  };
}

export type TriageInput = Pick<TriageRow, "status" | "owner"> & Partial<Pick<TriageRow, "eta_utc" | "note">>;

export async function setTriage(ctx: AppContext, admin: AdminRequest, signature: string, input: TriageInput): Promise<TriageRow> {
  if (!(await flaggedByCompleteRun(ctx.store, signature))) throw new NotFoundError("anomaly", signature);
  const eta = input.eta_utc ? utcOrThrow(input.eta_utc, "eta_utc", "") : null;
  const now = ctx.clock.now().toISOString();
  const row: TriageRow = {
    signature,
    status: input.status,
    owner: input.owner,
    eta_utc: eta,
    note: input.note ?? null,
    updated_at: now,
    updated_by: actorLabel(admin.actor),
  };
  await operatorChange(ctx, admin, now, async (t, audit) => {
    // The bump first: its row lock serialises two operators' triage (PostgreSQL), so `before` is what this one replaced.
    await bumpState(t, now);
    const current = await triageOf(t, signature);
    const before = current ? { status: current.status, owner: current.owner, eta_utc: current.eta_utc, note: current.note } : null;
    await upsertTriage(t, row);
    await audit("transparency.triage.set", signature, { before, after: { status: input.status, owner: input.owner, eta_utc: eta, note: input.note ?? null } });
  });
  return row;
}
