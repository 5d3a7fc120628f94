import type { AppContext } from "../context";
import type { RequestStates } from "../http/core";
import { adminAuth, type AdminAuth } from "./admin-plugin";
import { partnerAuth, type PartnerAuth } from "./partner-plugin";

/** The two locks on the front door, built once per app and handed to every domain's routes. */
export interface Guards {
  partner: PartnerAuth;
  admin: AdminAuth;
}

export function buildGuards(ctx: AppContext, states: RequestStates): Guards {
  return { partner: partnerAuth(ctx, states), admin: adminAuth(ctx, states) };
}
