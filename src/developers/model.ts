import { t } from "elysia";
import { Envelope } from "../http/envelope";
import { named } from "../http/openapi/names";
import { nullable as N } from "../http/routes/declare";

const Endpoint = t.Object({ method: t.String(), path: t.String() });
const Phase = t.Union([t.Literal("announced"), t.Literal("deprecated"), t.Literal("sunset")]);
const Headers = t.Record(t.String(), t.String(), { description: "Deprecation (RFC 9745), Sunset (RFC 8594) and Link" });
/** The notice periods, in the registry's policy and in the playbook's notice. */
const noticeDays = {
  minimum_notice_days: t.Integer(),
  reminder_days_before_sunset: t.Array(t.Integer()),
  webhook_schema_notice_days: t.Array(t.Integer()),
};
const Policy = t.Object({ ...noticeDays, breaking_change_path_prefix: t.String() });

export const DeprecationEntry = named(
  "Deprecation",
  t.Object({
    id: t.String(),
    title: t.String(),
    description: t.String(),
    endpoints: t.Array(Endpoint),
    replacement: N(Endpoint),
    announced_at: t.String(),
    deprecated_at: t.String(),
    sunset_at: t.String(),
    phase: Phase,
    days_until_sunset: t.Integer(),
    reminders: t.Array(t.Object({ days_before_sunset: t.Integer(), at: t.String(), sent: t.Boolean() })),
    migration_guide: t.String(),
    headers: Headers,
  }),
);

/** One deprecation's phase and required action (GET /developers/migration-status.json). */
export const Migration = t.Object({
  id: t.String(),
  title: t.String(),
  phase: Phase,
  endpoints: t.Array(Endpoint),
  replacement: N(Endpoint),
  sunset_at: t.String(),
  days_until_sunset: t.Integer(),
  action_required: t.String(),
  migration_guide: t.String(),
});

const meta = { include_meta: t.Optional(t.String()) };
const Id = t.String({ maxLength: 64, description: "a deprecation id from /developers/deprecations.json" });

export const DevelopersModel = {
  metaQuery: t.Object(meta),
  calendar: named(
    "DeprecationCalendar",
    Envelope({
      generated_at_utc: t.String(),
      registry_version: t.Integer(),
      registry_updated_at: t.String(),
      api_version: t.String(),
      policy: Policy,
      sunsets_scheduled: t.Boolean(),
      summary: t.String({ description: 'a sentence: "No endpoint sunsets are currently scheduled." or the scheduled ones' }),
      count: t.Integer(),
      deprecations: t.Array(DeprecationEntry),
      links: t.Record(t.String(), t.String()),
    }),
  ),
  playbook: Envelope({
    title: t.String(),
    api_version: t.String(),
    versioning: t.Object({ current_version: t.String(), breaking_changes: t.String(), non_breaking_changes: t.String() }),
    notice: t.Object({ ...noticeDays, channels: t.Array(t.String()) }),
    headers: t.Record(t.String(), t.String()),
    steps: t.Array(t.Object({ step: t.Integer(), title: t.String(), detail: t.String() })),
    webhook_schema_practice: t.String(),
    scheduled: t.Array(t.Object({ id: t.String(), title: t.String(), phase: Phase, sunset_at: t.String(), migration_guide: t.String() })),
  }),
  migrationQuery: t.Object({ id: t.Optional(Id), ...meta }),
  migration: Envelope({
    generated_at_utc: t.String(),
    id: N(t.String()),
    count: t.Integer(),
    migrations: t.Array(Migration),
  }),
  simulatorQuery: t.Object({
    id: t.Optional(Id),
    endpoint: t.Optional(t.String({ maxLength: 300, description: 'a path (/api/partner/users) or "METHOD /path"' })),
    ...meta,
  }),
  simulator: Envelope({
    query: t.Object({ id: N(t.String()), endpoint: N(t.String()) }),
    deprecated: t.Boolean(),
    id: N(t.String()),
    phase: N(Phase),
    headers: Headers,
    note: N(t.String()),
  }),
};
