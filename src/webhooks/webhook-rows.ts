import { NotFoundError } from "../http/errors/errors";
import type { WebhookContext } from "./deps";
import type { Owner } from "./outbox";
import { webhookOf, type WebhookRow } from "./store";

export type { WebhookRow } from "./store";

/** A webhook of this owner (partner and mode); another partner's webhook is "not found", never "forbidden". */
export async function getWebhookOrThrow(ctx: Pick<WebhookContext, "store">, owner: Owner, id: number): Promise<WebhookRow> {
  const row = await webhookOf(ctx.store, owner, id);
  if (!row) throw new NotFoundError("webhook", id);
  return row;
}
