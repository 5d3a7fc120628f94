// The refusals a player can meet, each in the words of the player's catalog (messages-en.ts, messages-ru.ts). Which
// codes there are is the server's: MessengerErrorCode is taken from its error catalog (src/http/errors/errors.ts, a type
// only: the bundle carries none of it), so advice for a code the messenger's routes do not answer fails to compile.
// test/miniapp/refusals.test.ts holds the other direction: every code the page's routes can answer has words here
// or falls to the generic message for a reason it names.
import type { ERROR_CATALOG } from "../../http/errors/errors";
import type { MessageKey } from "./messages-en";

type ErrorCatalog = typeof ERROR_CATALOG;
/** The codes the catalog says the messenger's routes answer (endpoint group "messenger"). */
export type MessengerErrorCode = {
  [C in keyof ErrorCatalog]: "messenger" extends ErrorCatalog[C]["endpoint_groups"][number] ? C : never;
}[keyof ErrorCatalog];
/** The page's own: no answer in time, no connection, or an answer without Herald's error body (a proxy's page). */
export type PageErrorCode = "timeout" | "network" | "error";
export type RefusalCode = MessengerErrorCode | PageErrorCode;

/** Each code's words; {wait} is filled from Retry-After, and a balance's numbers from the details (inWords in api.ts). */
export const REFUSALS: Partial<Record<RefusalCode, MessageKey>> = {
  init_data_missing: "error.init_data_missing",
  init_data_malformed: "error.init_data",
  init_data_signature_invalid: "error.init_data",
  init_data_expired: "error.init_data",
  init_data_future_dated: "error.clock",
  messenger_not_configured: "error.not_configured",
  game_balance_insufficient: "error.need_spins",
  game_cooldown: "error.cooldown",
  game_state_conflict: "error.changed",
  conflict: "error.changed",
  request_id_reused: "error.changed",
  rate_limited: "error.rate_limited",
  db_unavailable: "error.busy",
  service_unavailable: "error.busy",
  request_timeout: "error.timeout",
  timeout: "error.timeout",
  network: "error.network",
  promo_not_found: "error.promo_not_found",
  promo_expired: "error.promo_expired",
  promo_exhausted: "error.promo_exhausted",
  promo_already_claimed: "error.promo_already_claimed",
  promo_not_eligible: "error.promo_not_eligible",
  mission_not_found: "error.mission_gone",
  mission_inactive: "error.mission_gone",
  mission_not_enrolled: "error.mission_not_joined",
  wallet_nonce_unknown: "error.wallet_expired",
  wallet_nonce_expired: "error.wallet_expired",
  wallet_nonce_used: "error.wallet_expired",
  wallet_signature_invalid: "error.wallet_invalid",
  wallet_message_mismatch: "error.wallet_invalid",
  game_not_found: "error.game_not_found",
  // A game's campaign ended between the catalog the page drew and the play: it is no longer on offer to this player.
  game_not_in_campaign: "error.game_not_found",
};
