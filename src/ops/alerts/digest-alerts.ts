import type { AppContext } from "../../context";
import type { AlertInput } from "./service";
import { DIGEST_DEFAULTS } from "../digest/findings";
import { buildDigest, type PublicFinding } from "../digest/service";

// The 403 digest as alerts (source `digest`): its findings under default thresholds and the active suppression rules,
// grouped into three alerts as Alertmanager groups by name, so one attack (reported on every dimension at once) is
// one notice, not six; the findings are in the row's details, the strongest first.

/** The window the monitor evaluates: the hour in progress and the one before, so a run of 2 spike hours is sustained. */
export const DIGEST_ALERT_HOURS = 2;
/** Findings kept in an alert row's details (the digest itself lists them all). */
const FINDINGS_KEPT = 10;

export const DIGEST_ALERTS = [
  { name: "403_spike", kinds: ["sustained_spike", "spike"], what: "403 spike" },
  { name: "403_new_path", kinds: ["new_path"], what: "route newly answering 403" },
  { name: "403_new_client", kinds: ["new_client"], what: "client newly answered 403" },
] as const;

/** An ok row's summary in words, so that a resolved notice says what resolved rather than a bare 0. */
function quietSummary(what: string, judged: boolean, suppressed: number): string {
  if (!judged) return `${what}: not judged yet (the request-log rollups do not reach back over the lookback)`;
  const held = suppressed === 0 ? "" : `; ${suppressed} ${suppressed === 1 ? "finding" : "findings"} held back by suppression rules`;
  return `no ${what} in the last ${DIGEST_ALERT_HOURS} hours${held}`;
}

/** A finding as a row's details keep it: everything but its hour count. */
const brief = ({ hours: _, ...f }: PublicFinding) => f;

/**
 * One row per digest alert: `warn` while the digest has a finding of its kinds (value: the strongest finding's
 * 403 count), else `ok` — so a warning has an end, which the link inbox's last_digest_warn window needs. Novelty
 * (new path, new client) is judged only once the rollups reach back over the whole lookback: on a young database
 * every route would be "new".
 */
export async function digestAlerts(ctx: AppContext): Promise<AlertInput[]> {
  const d = await buildDigest(ctx, { ...DIGEST_DEFAULTS, hours: DIGEST_ALERT_HOURS, group_limit: 1 });
  const window = { from_hour: d.window.from_hour, to_hour: d.window.to_hour };
  return DIGEST_ALERTS.map(({ name, kinds, what }) => {
    const novelty = name !== "403_spike";
    const judged = !novelty || d.coverage.lookback_complete;
    const found = judged ? d.findings.filter((f) => (kinds as readonly string[]).includes(f.kind)) : [];
    const suppressed = d.suppressed.filter((f) => (kinds as readonly string[]).includes(f.kind)).length;
    const top = found[0];
    return {
      name,
      status: top ? "warn" : "ok",
      value: top ? top.observed : 0,
      details: {
        summary: top ? top.why : quietSummary(what, judged, suppressed),
        findings_total: found.length,
        findings: found.slice(0, FINDINGS_KEPT).map(brief),
        suppressed,
        window,
        ...(judged ? {} : { note: "novelty not judged: the request-log rollups do not reach back over the lookback yet" }),
      },
    };
  });
}
