import { t } from "elysia";
import { Envelope } from "../http/envelope";

const Check = t.Object({ ok: t.Boolean(), detail: t.String() });

const CatalogEntry = t.Object({
  error_code: t.String(),
  title: t.String(),
  category: t.String(),
  http_status: t.Integer(),
  retry_class: t.String(),
  retry_behavior: t.String(),
  retry_after_seconds: t.Integer(),
  available_in_modes: t.Array(t.String()),
  endpoint_groups: t.Array(t.String()),
  recovery_links: t.Record(t.String(), t.String()),
});

export const SystemModel = {
  health: Envelope({ status: t.Literal("up"), version: t.String(), uptime_seconds: t.Number() }),
  ready: Envelope({ ready: t.Boolean(), checks: t.Record(t.String(), Check) }),
  errors: Envelope({ count: t.Integer(), entries: t.Array(CatalogEntry) }),
  errorsByCode: Envelope({ count: t.Integer(), entries: t.Array(CatalogEntry), by_code: t.Record(t.String(), CatalogEntry) }),
  includeMeta: t.Object({ include_meta: t.Optional(t.String()) }),
};
