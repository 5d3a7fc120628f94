import type { AppContext } from "../context";
import { NotFoundError } from "../http/errors";
import type { Owner } from "./outbox";

/** One webhook row as stored. Its own module so that the service and the delivery records both read it. */
export interface WebhookRow {
  id: number;
  partner: string;
  mode: "sandbox" | "live";
  event_type: string;
  target_url: string;
  description: string | null;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_valid_until: string | null;
  is_active: number;
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** A webhook of this owner (partner and mode); another partner's webhook is "not found", never "forbidden". */
export function getWebhookOrThrow(ctx: AppContext, owner: Owner, id: number): WebhookRow {
  const row = ctx.db.sqlite
    .query("SELECT * FROM webhooks WHERE id = ? AND partner = ? AND mode = ? AND deleted_at IS NULL")
    .get(id, owner.partner, owner.mode) as WebhookRow | null;
  if (!row) throw new NotFoundError("webhook", id);
  return row;
}
