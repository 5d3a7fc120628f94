// Operator audience groups (GET/POST /api/messenger/admin/games/audience-groups): made and replaced by key, each
// change audited in its own transaction; the built-in groups are listed first and cannot be redefined.
import type { Static } from "elysia";
import type { AdminRequest } from "../../auth/admin-plugin";
import { actorLabel } from "../../auth/actors";
import type { AppContext } from "../../context";
import type { Queryable } from "../../db/port";
import { AppError } from "../../http/errors/errors";
import { badCursor, parseKeyPage } from "../../http/pagination";
import { audienceGroupByKey, audienceGroupExists, audienceGroupsPage, countAudienceGroups, insertAudienceGroup, updateAudienceGroup } from "../store/config";
import { type AudienceRule, BUILTIN_AUDIENCE_GROUPS, BUILTIN_DESCRIPTIONS, type BuiltinAudienceGroup, isBuiltinGroup } from "./audience-rule";
import { type AudienceGroupRow, writeGamesConfig } from "./cache";
import { adminListAnswer, badField, isoOrThrow, type PageInput, paged } from "./inputs";
import type { GamesConfigModel } from "./model";

const groupView = (g: AudienceGroupRow) => ({
  group_key: g.group_key,
  title: g.title,
  builtin: false,
  description: null,
  rule: JSON.parse(g.rule) as AudienceRule,
  created_by: g.created_by as string | null,
  created_at: g.created_at as string | null,
});

const builtinView = (key: (typeof BUILTIN_AUDIENCE_GROUPS)[number]) => ({
  group_key: key,
  title: key,
  builtin: true,
  description: BUILTIN_DESCRIPTIONS[key] as string | null,
  rule: null,
  created_by: null,
  created_at: null,
});

/**
 * Refuses a group nobody defined, naming the request field that named it (404 audience_group_not_found).
 * Reads the table, not the cached snapshot: a write must see a group made a moment ago by another process.
 */
export async function requireAudienceGroup(q: Queryable, key: string, field: string): Promise<void> {
  if (isBuiltinGroup(key)) return;
  if (await audienceGroupExists(q, key)) return;
  throw new AppError("audience_group_not_found", `${field}: no audience group ${JSON.stringify(key)}; built in are ${BUILTIN_AUDIENCE_GROUPS.join(", ")}`, {
    details: [{ field, problem: `no audience group ${JSON.stringify(key)}` }],
  });
}

/**
 * Built-in groups first (in their fixed order), then the operator groups by key. A cursor holds [0, built-in key]
 * or [1, operator key]: the position is the key itself, so groups added before it do not shift the next page.
 */
export async function listAudienceGroups(ctx: AppContext, input: PageInput) {
  const page = parseKeyPage(input, ["integer", "text"]);
  const after = page.after as [number, string] | null;
  if (after && after[0] !== 0 && after[0] !== 1) throw badCursor();
  let builtinFrom = after === null ? page.offset : BUILTIN_AUDIENCE_GROUPS.length;
  if (after?.[0] === 0) {
    builtinFrom = BUILTIN_AUDIENCE_GROUPS.indexOf(after[1] as BuiltinAudienceGroup) + 1;
    if (builtinFrom === 0) throw badCursor();
  }
  const builtins = BUILTIN_AUDIENCE_GROUPS.slice(builtinFrom, builtinFrom + page.limit + 1).map(builtinView);
  const customOffset = after === null ? Math.max(0, page.offset - BUILTIN_AUDIENCE_GROUPS.length) : 0;
  const rows = await audienceGroupsPage(ctx.store, after?.[0] === 1 ? after[1] : null, page.limit + 1 - builtins.length, customOffset);
  const total = (await countAudienceGroups(ctx.store)) + BUILTIN_AUDIENCE_GROUPS.length;
  const p = paged([...builtins, ...rows.map(groupView)], page, (g) => [g.builtin ? 0 : 1, g.group_key]);
  return adminListAnswer("audience_groups", p, {}, { total });
}

function checkRule(rule: AudienceRule): AudienceRule {
  if (Object.keys(rule).length === 0) throw badField("body.rule", "must state at least one condition (an empty rule would be the built-in group all)");
  const out: AudienceRule = { ...rule };
  if (rule.created_after !== undefined) out.created_after = isoOrThrow(rule.created_after, "body.rule.created_after");
  if (rule.created_before !== undefined) out.created_before = isoOrThrow(rule.created_before, "body.rule.created_before");
  if (out.created_after && out.created_before && out.created_after >= out.created_before)
    throw badField("body.rule.created_before", "must be after created_after");
  if (rule.telegram_user_ids) out.telegram_user_ids = [...new Set(rule.telegram_user_ids)];
  if (rule.language_codes) out.language_codes = [...new Set(rule.language_codes.map((l) => l.toLowerCase()))];
  return out;
}

/**
 * Creates a group, or with update: true changes an existing group's title and/or rule (omitted ones keep their
 * value; the key is the identity, and every campaign, promo and mission naming it follows the new rule).
 */
export async function saveAudienceGroup(ctx: AppContext, admin: AdminRequest, input: Static<typeof GamesConfigModel.groupBody>) {
  if (isBuiltinGroup(input.group_key)) throw badField("body.group_key", `${JSON.stringify(input.group_key)} is a built-in group and cannot be redefined`);
  if (!input.update && input.title === undefined) throw badField("body.title", "is required when creating an audience group");
  if (!input.update && input.rule === undefined) throw badField("body.rule", "is required when creating an audience group");
  const rule = input.rule === undefined ? undefined : checkRule(input.rule);
  const audit = { action: "messenger.audience_group", target: (g: AudienceGroupRow) => g.group_key, view: groupView };
  const { view, created } = await writeGamesConfig(ctx, admin, audit, async (t, now) => {
    const before = await audienceGroupByKey(t, input.group_key);
    if (before && !input.update)
      throw new AppError("conflict", `body.group_key: the audience group ${input.group_key} exists; send update: true to replace its title and rule`, {
        details: [{ field: "body.group_key", problem: "already exists" }],
      });
    if (!before && input.update) await requireAudienceGroup(t, input.group_key, "body.group_key");
    const row = before
      ? await updateAudienceGroup(t, input.group_key, input.title ?? before.title, rule ? JSON.stringify(rule) : before.rule)
      : await insertAudienceGroup(t, {
          group_key: input.group_key,
          title: input.title!,
          rule: JSON.stringify(rule),
          created_by: actorLabel(admin.actor),
          created_at: now,
        });
    return { before, row };
  });
  return { audience_group: view, created };
}
