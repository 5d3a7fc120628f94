import type { Clock } from "../clock";
import type { Queryable } from "../db/port";
import { queueEmail } from "./store";

export interface EmailMessage {
  to: string;
  subject: string;
  body: string;
}

/**
 * What happened to one message. `sent` is true only when the message left Herald; a sender that merely queues
 * says `queued`, so a claim's `email_sent` never claims a delivery that did not happen.
 */
export interface EmailOutcome {
  sent: boolean;
  status: "sent" | "queued";
  /** The sender's own reference (the outbox row id here). */
  reference: string | null;
}

/**
 * Sends (or records) one message, in the claim's own transaction `t`, so the message exists exactly when the
 * claim does. A sender that talks to the network must therefore not implement this directly (no transaction
 * waits for the network); it drains the outbox in a job instead.
 */
export interface EmailSender {
  send(t: Queryable, message: EmailMessage): Promise<EmailOutcome>;
}

/**
 * The only sender Herald has: there is no SMTP here. It writes the message to `email_outbox` (status queued)
 * for a delivery worker or an operator export to take, and reports `sent: false`.
 */
export function outboxEmailSender(deps: { clock: Clock }): EmailSender {
  return {
    async send(t, message) {
      const id = await queueEmail(t, { ...message, at: deps.clock.now().toISOString() });
      return { sent: false, status: "queued", reference: String(id) };
    },
  };
}
