import type { Database } from "bun:sqlite";
import type { Clock } from "../clock";

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
 * Sends (or records) one message. Synchronous on purpose: claims call it inside their write transaction, so
 * the message exists exactly when the claim does. A sender that talks to the network must therefore not
 * implement this directly; it drains the outbox in a job instead.
 */
export interface EmailSender {
  send(message: EmailMessage): EmailOutcome;
}

/**
 * The only sender Herald has: there is no SMTP here. It writes the message to `email_outbox` (status queued)
 * for a delivery worker or an operator export to take, and reports `sent: false`.
 */
export function outboxEmailSender(deps: { sqlite: Database; clock: Clock }): EmailSender {
  const insert = deps.sqlite.prepare("INSERT INTO email_outbox (to_address, subject, body, status, created_at) VALUES (?, ?, ?, 'queued', ?) RETURNING id");
  return {
    send(message) {
      const { id } = insert.get(message.to, message.subject, message.body, deps.clock.now().toISOString()) as { id: number };
      return { sent: false, status: "queued", reference: String(id) };
    },
  };
}
