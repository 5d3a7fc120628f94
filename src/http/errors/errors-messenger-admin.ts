import { type CatalogEntry, entriesOf, entry } from "./error-entry";

const messengerAdmin = entriesOf(["messenger", "admin"]);

/**
 * The messenger admin routes' error codes (src/messenger/admin*; docs/messenger-admin.md): campaigns, audience
 * groups, mission revisions. Part of the one catalog: src/http/errors/errors.ts spreads them into ERROR_CATALOG.
 */
export const MESSENGER_ADMIN_ERRORS = {
  campaign_not_found: messengerAdmin(
    404,
    "Campaign not found",
    "fail_fast",
    "No catalog or wheel campaign has this id or key; list them with GET /api/messenger/admin/games/catalog-campaigns or /wheel-campaigns.",
  ),
  audience_group_not_found: messengerAdmin(
    404,
    "Audience group not found",
    "fail_fast",
    "No audience group has this key; the built-in groups are all, premium, linked and unlinked, the others are listed by GET /api/messenger/admin/games/audience-groups.",
  ),
  campaign_overlap: messengerAdmin(
    409,
    "Campaign window overlaps",
    "fix_and_retry",
    "Another enabled campaign for the same game (or wheel) and audience group covers part of this window (details.conflicting); end it first or choose a window that does not overlap.",
  ),
  promo_cap_below_claims: messengerAdmin(
    409,
    "Promo cap below claims",
    "fix_and_retry",
    "max_claims cannot be set below the claims already made (details.claims); choose a cap at least that high, or disable the promo.",
  ),
  revision_required: messengerAdmin(
    428,
    "Expected revision required",
    "fix_and_retry",
    "Send X-Expected-Revision with the revision you read (GET /api/messenger/admin/missions), so a concurrent edit is never overwritten.",
  ),
  revision_conflict: messengerAdmin(
    409,
    "Revision conflict",
    "fix_and_retry",
    "The mission changed since you read it (details.current_revision); read it again, re-apply your change and send the new revision.",
  ),
  mission_inactive: messengerAdmin(
    409,
    "Mission inactive",
    "fail_fast",
    "The operator has deactivated this mission: it is not in the catalog and takes no enrollments or progress until POST /api/messenger/admin/missions/{mission_key}/activate.",
  ),
  game_not_in_campaign: entry(
    403,
    "Game not open to this player now",
    "fail_fast",
    "The game is limited to catalog campaigns and none open to this player is active now (details.reason); the catalog shows it as unavailable with the same reason.",
    { endpoint_groups: ["messenger"] },
  ),
  player_not_found: messengerAdmin(
    404,
    "Player not found",
    "fail_fast",
    "No messenger player has this Telegram user id; a player exists once they have opened the mini-app (GET /api/messenger/admin/games/user-profiles lists them).",
  ),
} as const satisfies Record<string, CatalogEntry>;
