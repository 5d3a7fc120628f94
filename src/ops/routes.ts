import { Elysia, t } from "elysia";
import { writeAudit } from "../auth/audit";
import type { Guards } from "../auth/guards";
import type { AppContext } from "../context";
import { Envelope, ErrorBody } from "../http/envelope";
import { runBackup } from "./backup";

const Backup = Envelope({
  backup: t.Object({ path: t.String(), size_bytes: t.Integer(), sha256: t.String(), created_at: t.String(), integrity: t.Literal("ok") }),
});

/** Operator operations: POST /admin/backup/run. */
export function opsRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:ops" }).use(guards.admin.plugin).post(
    "/admin/backup/run",
    ({ admin }) => {
      const backup = runBackup(ctx);
      writeAudit(ctx.db.sqlite, {
        at: backup.created_at,
        actor: admin.actor,
        action: "backup.run",
        target: backup.path,
        details: { sha256: backup.sha256, size_bytes: backup.size_bytes },
        requestId: admin.requestId,
      });
      return { success: true as const, backup };
    },
    {
      admin: true,
      response: { 200: Backup, 403: ErrorBody, 409: ErrorBody, 503: ErrorBody },
      detail: { summary: "Consistent snapshot (VACUUM INTO) with its path, size and sha256" },
    },
  );
}
