/** Every event type Herald emits. Webhooks subscribe to one; creating one for another type is a 400. */
export const EVENT_TYPES = {
  "salutes.credit": "Salutes were credited to a user (data: user_id, delta, balance, ledger_entry_id, reason, source)",
  "salutes.debit": "Salutes were debited from a user (data: user_id, delta (negative), balance, ledger_entry_id, reason, source)",
  "donation.claim": "A donation claim was issued (data: claim_code, campaign_id, amount, recipient {email, wallet_address}, user_id)",
  "donation.claimed": "A donation claim was accepted by its recipient",
  "donation.claim_redeemed": "A donation claim was redeemed (data: claim_code, campaign_id, amount, redeemed_at, redeemed_by)",
  "users.updated": "A partner user or one of their wallets changed (data: user_id, external_id, changes)",
  "webhook.delivery_failed":
    "A delivery to another of your webhooks was dead-lettered (data: delivery_id, event_id, event_type, webhook_id, reason_tag, last_error)",
  "webhook.disabled": "Herald disabled one of your webhooks (data: webhook_id, reason)",
  "webhook.test": "A test delivery requested with POST /api/partner/webhooks/{id}/test",
} as const;

export type EventType = keyof typeof EVENT_TYPES;
export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES) as EventType[];

export function isEventType(s: string): s is EventType {
  return Object.hasOwn(EVENT_TYPES, s);
}

export function eventTypeCatalog() {
  return EVENT_TYPE_NAMES.map((type) => ({ event_type: type, description: EVENT_TYPES[type] }));
}
