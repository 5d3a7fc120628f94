// Audience groups: the four built in, and the rule language of the operator-made ones (docs/messenger-admin-games.md
// "Audience groups"). A rule is a conjunction: a player is in the group when every condition it states holds.
import type { Static } from "elysia";
import type { PlayerRow } from "../store/players";
import type { GamesConfigModel } from "./model";

export const BUILTIN_AUDIENCE_GROUPS = ["all", "premium", "linked", "unlinked"] as const;
export type BuiltinAudienceGroup = (typeof BUILTIN_AUDIENCE_GROUPS)[number];
export const isBuiltinGroup = (key: string): key is BuiltinAudienceGroup => (BUILTIN_AUDIENCE_GROUPS as readonly string[]).includes(key);

/** What a rule can look at: the player row's profile and link, never its balances (those change on every play). */
export type AudiencePlayer = Pick<PlayerRow, "telegram_user_id" | "is_premium" | "linked_user_id" | "language_code" | "points_earned" | "created_at">;

/** A rule as stored: the schema's (model.ts), which bounds it. */
export type AudienceRule = NonNullable<Static<typeof GamesConfigModel.groupBody>["rule"]>;

/** A rule prepared for matching on the hot path: the id list as a set, language tags lower-cased. */
export interface CompiledRule {
  rule: AudienceRule;
  userIds: Set<number> | null;
  languages: string[] | null;
  createdAfterMs: number | null;
  createdBeforeMs: number | null;
}

export function compileRule(rule: AudienceRule): CompiledRule {
  return {
    rule,
    userIds: rule.telegram_user_ids ? new Set(rule.telegram_user_ids) : null,
    languages: rule.language_codes ? rule.language_codes.map((l) => l.toLowerCase()) : null,
    createdAfterMs: rule.created_after ? Date.parse(rule.created_after) : null,
    createdBeforeMs: rule.created_before ? Date.parse(rule.created_before) : null,
  };
}

/** Tags as Telegram sends them, case-insensitive: "en" also matches "en-GB", "pt-br" only "pt-br". */
const languageMatches = (wanted: string, actual: string) => actual === wanted || (!wanted.includes("-") && actual.startsWith(`${wanted}-`));

/** The conditions of the rule this player fails, by name (empty: the player is in the group). */
export function failedConditions(c: CompiledRule, p: AudiencePlayer): string[] {
  const failed: string[] = [];
  const r = c.rule;
  if (r.premium !== undefined && (p.is_premium === 1) !== r.premium) failed.push("premium");
  if (r.linked !== undefined && (p.linked_user_id !== null) !== r.linked) failed.push("linked");
  if (c.languages) {
    const lang = p.language_code?.toLowerCase() ?? null;
    if (lang === null || !c.languages.some((w) => languageMatches(w, lang))) failed.push("language_codes");
  }
  if (r.min_points_earned !== undefined && p.points_earned < r.min_points_earned) failed.push("min_points_earned");
  if (c.userIds && !c.userIds.has(p.telegram_user_id)) failed.push("telegram_user_ids");
  const created = Date.parse(p.created_at);
  if (c.createdAfterMs !== null && !(created >= c.createdAfterMs)) failed.push("created_after");
  if (c.createdBeforeMs !== null && !(created < c.createdBeforeMs)) failed.push("created_before");
  return failed;
}

export const ruleMatches = (c: CompiledRule, p: AudiencePlayer): boolean => failedConditions(c, p).length === 0;

export function builtinMatches(group: BuiltinAudienceGroup, p: Pick<AudiencePlayer, "is_premium" | "linked_user_id">): boolean {
  switch (group) {
    case "all":
      return true;
    case "premium":
      return p.is_premium === 1;
    case "linked":
      return p.linked_user_id !== null;
    case "unlinked":
      return p.linked_user_id === null;
  }
}

/** What each built-in group means, for the list and the preview. */
export const BUILTIN_DESCRIPTIONS: Record<BuiltinAudienceGroup, string> = {
  all: "every player",
  premium: "players with Telegram Premium",
  linked: "players linked to a MESSENGER_SALUTES_PARTNER user",
  unlinked: "players not linked",
};
