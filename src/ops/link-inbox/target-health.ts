import type { AppContext } from "../../context";
import { checkTargetUrl, targetPolicyOf } from "../../webhooks/service";
import { type LinkTarget, linkTargets } from "./notify";
import { deadMessages, failuresAfter, lastSuccessAt, latestAttempt, newestMessage } from "./store-reads";

// Is each configured link-inbox target able to reach a person? A target the SSRF policy refuses (loopback,
// metadata, private addresses in any spelling: 127.1, 0x7f000001, [::1] …) never receives anything. One function
// says it for the start-up log, the targets API, the link-inbox page, the readiness verdict and /metrics.

type Deps = Pick<AppContext, "config">;

/** The static check of a configured chat-webhook target by the partner webhooks' target policy (the messenger bot posts to its own API base). */
export const policyProblemOf = (ctx: Deps, t: { url: string; messengerChatId?: string }): string | null =>
  t.messengerChatId ? null : checkTargetUrl(t.url, targetPolicyOf(ctx.config));

/** One warning line per refused target when the link inbox starts (the URL itself is a secret: only its label). */
export function warnRefusedLinkTargets(ctx: Pick<AppContext, "config" | "log">): void {
  for (const t of linkTargets(ctx)) {
    const problem = policyProblemOf(ctx, t);
    if (!problem) continue;
    ctx.log.warn("link-inbox target refused by the target policy: nothing will be delivered to it", {
      target: t.label,
      problem,
      hint: "use a public https URL (WEBHOOK_ALLOW_PRIVATE_TARGETS=1 is for tests and development only)",
    });
  }
}

/**
 * One target's health. down: refused by the policy, or its newest attempt failed (a target not used yet is up).
 * dead: refused, or its newest message was given up on: it will not reach anyone until someone acts.
 */
async function healthOf(ctx: Pick<AppContext, "config" | "store">, t: LinkTarget) {
  const policy = policyProblemOf(ctx, t);
  const last = await latestAttempt(ctx.store, t.label);
  const success = await lastSuccessAt(ctx.store, t.label);
  const failing = await failuresAfter(ctx.store, t.label, success ?? "");
  const message = await newestMessage(ctx.store, t.label);
  const failed = last !== null && last.status_code_family !== "2xx";
  const reason = policy
    ? `refused by the target policy: ${policy}`
    : failed
      ? (last.error ?? `last attempt: ${last.status_code_family}`)
      : message?.status === "dead"
        ? `newest message given up on: ${message.last_error ?? "dead"}`
        : null;
  return {
    target: t.label,
    state: policy !== null || failed ? ("down" as const) : ("up" as const),
    dead: policy !== null || message?.status === "dead",
    reason,
    policy_problem: policy,
    last_attempt_at: last?.at ?? null,
    last_success_at: success,
    last_error: failed ? last.error : null,
    // Failed attempts since the newest 2xx (all of them when none succeeded).
    failing_streak: failing,
    dead_messages: await deadMessages(ctx.store, t.label),
  };
}

export type LinkTargetHealth = Awaited<ReturnType<typeof healthOf>>;

/** Every configured target's health, in configuration order. */
export async function linkTargetHealth(ctx: Pick<AppContext, "config" | "store">): Promise<LinkTargetHealth[]> {
  const out: LinkTargetHealth[] = [];
  for (const t of linkTargets(ctx)) out.push(await healthOf(ctx, t));
  return out;
}
