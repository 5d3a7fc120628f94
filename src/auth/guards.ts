import type { AppContext } from "../context";
import type { RequestStates } from "../http/core";
import { adminAuth } from "./admin-plugin";
import { partnerAuth } from "./partner-plugin";
import { adminSessionAuth } from "./session-plugin";

/**
 * The locks on the front door, built once per app and handed to every domain's routes: partner signatures, the
 * admin bearer token, and operator pages (bearer token or the browser session of /admin/sign-in).
 */
export function buildGuards(ctx: AppContext, states: RequestStates) {
  const admin = adminAuth(ctx, states);
  return { partner: partnerAuth(ctx, states), admin, operator: adminSessionAuth(ctx, states, admin) };
}

export type Guards = ReturnType<typeof buildGuards>;
