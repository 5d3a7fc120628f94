import type { Static } from "elysia";
import { worst, type CheckBase, type Level } from "./checks/types";
import { FRESHNESS_CHECK_NAMES } from "./checks/chain";
import type { Component, Incident } from "./model";

// The components a status-page reader thinks in (Statuspage, Gatus): each groups a few checks, and its status
// is the worst of its configured checks. A component whose checks are all not configured (the chain data of a
// deployment without TOKEN_MINT) is "not_configured": shown grey and left out of the overall, like its checks.
// Operator incidents name the components they affect by these ids. Ids are stable (published, and stored in
// incidents); every check belongs to exactly one component (test/status/components.test.ts holds this).

export const COMPONENTS = [
  {
    id: "api",
    name: "API",
    description: "Partner and public HTTP API: the database behind it and the share of requests answered with 5xx",
    checks: ["database", "request_errors"],
  },
  { id: "webhooks", name: "Webhooks", description: "Delivery of partner webhooks: backlog and dead letters", checks: ["webhooks"] },
  {
    id: "chain_data",
    name: "Chain data",
    description: "Solana RPC, the public freshness proofs, the mint-authority review and the audit of treasury movements",
    checks: ["chain_rpc", ...FRESHNESS_CHECK_NAMES, "mint_authority", "audit_anomalies"],
  },
  { id: "jobs", name: "Background jobs", description: "Scheduled jobs: their last runs, staleness and reliability", checks: ["jobs", "reliability"] },
] as const satisfies ReadonlyArray<{ id: string; name: string; description: string; checks: readonly string[] }>;

export type ComponentId = (typeof COMPONENTS)[number]["id"];
export const COMPONENT_IDS: readonly ComponentId[] = COMPONENTS.map((c) => c.id);
export type ComponentStatus = Level | "not_configured";

const BY_CHECK = new Map<string, ComponentId>(COMPONENTS.flatMap((c) => c.checks.map((check) => [check, c.id] as const)));

/** The component a check belongs to (null for a check no component claims, which the tests forbid). */
export const componentOfCheck = (check: string): ComponentId | null => BY_CHECK.get(check) ?? null;

/** The components involved in a set of checks, in display order. */
export const componentsOfChecks = (checks: Iterable<string>): ComponentId[] => {
  const ids = new Set([...checks].map(componentOfCheck).filter((c): c is ComponentId => c !== null));
  return COMPONENT_IDS.filter((id) => ids.has(id));
};

/** A component as the status answers it: its status from the checks only (what the snapshots and uptime measure). */
export type ComponentView = Static<typeof Component>;

type OpenIncidentLike = Pick<Static<typeof Incident>, "id" | "source" | "components" | "current_severity" | "severity">;

/** Each component's status from the evaluated checks: the worst configured one, or not_configured. */
export function componentViews(checks: Record<string, Pick<CheckBase, "status" | "configured">>, open: readonly OpenIncidentLike[] = []): ComponentView[] {
  return COMPONENTS.map((c) => {
    const present = c.checks.filter((name) => checks[name] !== undefined);
    // A not-configured check still counts when the policy raised it above ok (freshness.not_configured: warn).
    const counted = present.filter((name) => checks[name]!.configured !== false || checks[name]!.status !== "ok");
    const status: ComponentStatus = present.length > 0 && counted.length === 0 ? "not_configured" : worst(counted.map((name) => checks[name]!.status));
    const involved = open.filter((i) => i.components.includes(c.id));
    const reported = involved.filter((i) => i.source === "operator").map((i) => i.current_severity ?? i.severity);
    return {
      id: c.id,
      name: c.name,
      description: c.description,
      status,
      checks: [...c.checks],
      open_incident_ids: involved.map((i) => i.id),
      reported_severity: reported.length ? (worst(reported) as "warn" | "bad") : null,
    };
  });
}
