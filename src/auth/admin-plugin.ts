import { Elysia } from "elysia";
import type { AppContext } from "../context";
import type { RequestStates } from "../http/core";
import { AppError } from "../http/errors/errors";
import type { Actor } from "./actors";
import { AdminTokens, BEARER } from "./admin";

export interface AdminRequest {
  actor: Extract<Actor, { kind: "admin" }>;
  requestId: string;
}

/**
 * `admin: true` on a route: `Authorization: Bearer <token>` with an operator token. Absent, wrong or a partner
 * credential → 403 forbidden (the spec's answer for admin routes), and the message never says which.
 */
export function adminAuth(ctx: AppContext, states: RequestStates) {
  const tokens = new AdminTokens(ctx);
  const resolved = new WeakMap<Request, AdminRequest>();

  async function authenticate(request: Request): Promise<AdminRequest> {
    const header = request.headers.get("authorization") ?? "";
    // The scheme is case-insensitive (RFC 9110 §11.1): "Bearer", "bearer" and "BEARER" are the same.
    const match = BEARER.exec(header);
    const actor = match ? await tokens.verify(match[1]!) : null;
    if (!actor) throw new AppError("forbidden", "This route is for operators: send Authorization: Bearer <admin token>");
    return { actor, requestId: states.get(request)?.id ?? "unknown" };
  }

  return {
    tokens,
    authenticate,
    plugin: new Elysia({ name: "herald:admin-auth" }).macro({
      admin: (enabled: boolean) => ({
        async transform({ request }: { request: Request }) {
          if (enabled) resolved.set(request, await authenticate(request));
        },
        resolve({ request }: { request: Request }) {
          return { admin: resolved.get(request)! };
        },
        detail: { security: [{ AdminBearer: [] }], tags: ["admin"] },
      }),
    }),
  };
}

export type AdminAuth = ReturnType<typeof adminAuth>;
