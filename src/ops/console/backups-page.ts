import { Elysia, t } from "elysia";
import { actorLabel } from "../../auth/actors";
import { backTo, consolePage, csrfField, formAction, formDoc, type Notice, NO_NOTICE, pageDoc, refusingPage, wantsHtml } from "../../auth/console-kit";
import type { Guards } from "../../auth/guards";
import type { OperatorRequest } from "../../auth/session-plugin";
import type { AppContext } from "../../context";
import { AppError } from "../../http/errors";
import { intQuery } from "../../http/params";
import { runBackup } from "../backups/backup";
import { BACKUP_NAME_PATTERN } from "../backups/list";
import { BACKUPS_PATH, backupsBody } from "./backups-view";
import { ignoredMetaQuery } from "../../http/envelope";

// GET /admin/console/backups: the on-demand backups (name, size, when, integrity, sha256), each downloadable
// with the session (GET /admin/backups/{name} takes `operator: "api"`), the keep policy and the newest backup's
// age, what Herald knows of Litestream, and a "Take a backup now" form that runs the same verb as
// POST /admin/backup/run (a consistent VACUUM INTO copy, checked and hashed; audited with the operator's actor).

const PageQuery = t.Object({
  ...ignoredMetaQuery,
  offset: intQuery({ minimum: 0, maximum: 100_000, defaultValue: 0, description: "backups to skip (pagination, newest first)" }),
  done: t.Optional(t.String({ maxLength: 80, description: "set by the form's redirect: the new backup's name" })),
  pruned: t.Optional(t.String({ maxLength: 4, description: "set by the form's redirect: how many old backups were deleted" })),
});
const RunForm = t.Object({ ...csrfField }, { additionalProperties: false });

const BACKUP_NAME = new RegExp(BACKUP_NAME_PATTERN);

/** The result line from the redirect's query; anything that is not what the form itself sets shows nothing. */
function doneOf(name: string | undefined, pruned: string | undefined): string | null {
  if (!name || !BACKUP_NAME.test(name)) return null;
  const n = pruned && /^(0|[1-9]\d{0,3})$/.test(pruned) ? Number(pruned) : 0;
  return `Backup ${name} made and checked.${n > 0 ? ` ${n} older ${n === 1 ? "backup" : "backups"} deleted (BACKUP_KEEP).` : ""}`;
}

async function render(ctx: AppContext, operator: OperatorRequest, offset: number, notice: Notice, status = 200): Promise<Response> {
  const page = await backupsBody(ctx, { offset, who: actorLabel(operator.actor), csrf: operator.csrfToken, notice });
  return consolePage(operator, "Backups", BACKUPS_PATH, page, status);
}

export function backupsPageRoutes(ctx: AppContext, guards: Guards) {
  return new Elysia({ name: "herald:console-backups" })
    .use(guards.operator.plugin)
    .get(BACKUPS_PATH, ({ operator, query }) => render(ctx, operator, query.offset ?? 0, { ...NO_NOTICE, done: doneOf(query.done, query.pruned) }), {
      operator: refusingPage((operator) => (status, error) => render(ctx, operator, 0, { done: null, error }, status)),
      query: PageQuery,
      detail: pageDoc(
        "Backups (HTML page): the on-demand backups with their downloads, sha256 and integrity, the newest one's age, BACKUP_KEEP, Litestream, and a form to take one now",
        BACKUPS_PATH,
      ),
    })
    .post(
      `${BACKUPS_PATH}/run`,
      ({ operator, request }) =>
        formAction(
          request,
          async () => {
            try {
              const { backup, pruned } = await runBackup(ctx, { actor: operator.actor, requestId: operator.requestId });
              return backTo(BACKUPS_PATH, { done: backup.name, pruned: String(pruned.length) });
            } catch (err) {
              // 409 (in-memory database, a run in the same millisecond) is re-rendered by formAction. A copy the
              // disk refused (503) or that failed its check (500, removed) is shown to a person as the page with
              // the error; the log keeps the cause the message points to. A script gets the JSON envelope.
              if (!(err instanceof AppError) || err.status < 500 || !wantsHtml(request)) throw err;
              ctx.log.warn("backup from the console failed", { request_id: operator.requestId, error_code: err.code, internal: err.internal });
              return render(ctx, operator, 0, { done: null, error: `No backup was made: ${err.message}.` }, err.status);
            }
          },
          (status, error) => render(ctx, operator, 0, { done: null, error }, status),
        ),
      {
        operator: "form",
        body: RunForm,
        detail: formDoc("Take a backup now from the backups page (audited as backup.run, as POST /admin/backup/run)", "csrf_token", {
          409: "a backup cannot be taken now (an in-memory database, or a backup of the same name already made this millisecond)",
          500: "the copy failed its integrity check and was removed",
          503: "the copy could not be written (disk full or read-only); the server log has the cause",
        }),
      },
    );
}
