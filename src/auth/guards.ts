import type { AppContext } from "../context";
import type { RequestStates } from "../http/core";
import { adminAuth, type AdminAuth } from "./admin-plugin";
import { partnerAuth, type PartnerAuth } from "./partner-plugin";
import { adminSessionAuth, type AdminSessionAuth } from "./session-plugin";

/**
 * The locks on the front door, built once per app and handed to every domain's routes: partner signatures, the
 * admin bearer token, and operator pages (bearer token or the browser session of /admin/sign-in).
 */
export interface Guards {
  partner: PartnerAuth;
  admin: AdminAuth;
  operator: AdminSessionAuth;
}

export function buildGuards(ctx: AppContext, states: RequestStates): Guards {
  const admin = adminAuth(ctx, states);
  return { partner: partnerAuth(ctx, states), admin, operator: adminSessionAuth(ctx, states, admin) };
}
