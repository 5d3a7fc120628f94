import type { HeldFixtures } from "../auth/partner-mount";
import type { FixtureRecord } from "./store";

// What a sandbox mutation uses for the fields a call leaves out: the sandbox is for trying a route before writing
// the integration, so its credit, debit and donation claim answer with only the headers the spec names
// (Idempotency-Key, a nonce when required). Each default is a fixture value, documented in docs/sandbox.md; a field
// given is validated as on the live route.

export const SANDBOX_ENTRY_DEFAULTS = { amount: 1, reason: "sandbox_test", source: "sandbox" } as const;
export const SANDBOX_CLAIM_DEFAULTS = {
  campaign_id: "sandbox-campaign",
  amount: "10",
  recipient: { email: "recipient@sandbox.example.com" },
} as const;

/** The first fixture user (fx-alice: active, verified, with a positive balance): the default user of a sandbox call. */
export const defaultSandboxUser = (fixtures: FixtureRecord): string => String((JSON.parse(fixtures.user_ids) as number[])[0]);

type Entry = ReturnType<HeldFixtures["entry"]>;

export function entryWithDefaults(body: Partial<Entry> | undefined, fixtures: FixtureRecord): Entry {
  return {
    user_id: body?.user_id ?? defaultSandboxUser(fixtures),
    amount: body?.amount ?? SANDBOX_ENTRY_DEFAULTS.amount,
    reason: body?.reason ?? SANDBOX_ENTRY_DEFAULTS.reason,
    source: body?.source ?? SANDBOX_ENTRY_DEFAULTS.source,
  };
}
