import type { AppContext } from "../context";

export const MAX_WEBHOOK_ROTATION_OVERLAP_HOURS = 24;

/** Webhook secrets at rest are AES-256-GCM under the master key, bound to the webhook id (as AAD). */
export class WebhookSecrets {
  private readonly cache = new Map<string, string>();
  constructor(private readonly ctx: Pick<AppContext, "rng" | "secrets">) {}

  newSecret(): string {
    return "whsec_" + Buffer.from(this.ctx.rng.bytes(24)).toString("base64url");
  }

  seal(secret: string, webhookId: number): string {
    return this.ctx.secrets.seal(secret, `webhook:${webhookId}`);
  }

  open(ciphertext: string, webhookId: number): string {
    let plain = this.cache.get(ciphertext);
    if (plain === undefined) {
      plain = this.ctx.secrets.open(ciphertext, `webhook:${webhookId}`);
      if (this.cache.size >= 10_000) this.cache.clear();
      this.cache.set(ciphertext, plain);
    }
    return plain;
  }

  /** The current secret, and the previous one while its rotation overlap lasts. */
  forSigning(
    w: { webhook_id: number; secret_ciphertext: string; previous_secret_ciphertext: string | null; previous_secret_valid_until: string | null },
    now: Date,
  ): { current: string; previous: string | null } {
    const current = this.open(w.secret_ciphertext, w.webhook_id);
    const overlap = w.previous_secret_ciphertext && w.previous_secret_valid_until && Date.parse(w.previous_secret_valid_until) > now.getTime();
    return { current, previous: overlap ? this.open(w.previous_secret_ciphertext!, w.webhook_id) : null };
  }
}
