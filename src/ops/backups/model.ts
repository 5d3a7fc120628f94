import { t } from "elysia";
import { Envelope } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, OffsetQueryEcho, PaginationSchema } from "../../http/pagination";
import { intQuery } from "../../http/params";
import { BACKUP_NAME_PATTERN } from "./list";

const sha256 = t.String({ pattern: "^[0-9a-f]{64}$", description: "sha256 of the file, lower-case hex" });

const PrunedBackup = named(
  "PrunedBackup",
  t.Object({ name: t.String(), size_bytes: t.Integer(), created_at: t.String({ format: "date-time" }) }, { description: "A backup deleted by BACKUP_KEEP" }),
);

const BackupListItem = named(
  "Backup",
  t.Object({
    name: t.String({ description: "File name in <db dir>/backups; GET /admin/backups/{name} downloads it" }),
    size: t.Integer({ description: "Bytes of the file (the same as size_bytes)" }),
    size_bytes: t.Integer(),
    sha256,
    created_at: t.String({ format: "date-time" }),
    integrity: t.Union([t.Literal("ok"), t.Literal("unknown")], {
      description: "PRAGMA integrity_check as recorded when the backup was made; unknown for a file found without a manifest",
    }),
  }),
);

export const OpsModel = {
  run: Envelope({
    backup: named(
      "BackupRun",
      t.Object({
        name: t.String(),
        path: t.String(),
        size_bytes: t.Integer(),
        sha256,
        created_at: t.String({ format: "date-time" }),
        integrity: t.Literal("ok"),
      }),
    ),
    pruned: t.Array(PrunedBackup, { description: "Older backups deleted because more than BACKUP_KEEP existed" }),
  }),
  listQuery: t.Object({
    limit: intQuery({ minimum: 1, maximum: MAX_LIMIT, defaultValue: DEFAULT_LIMIT, description: "backups per page" }),
    offset: intQuery({ minimum: 0, maximum: MAX_OFFSET, defaultValue: 0, description: "backups to skip" }),
    include_meta: t.Optional(t.String()),
  }),
  list: Envelope({
    count: t.Integer(),
    total: t.Integer({ description: "backups in the folder" }),
    keep: t.Integer({ description: "BACKUP_KEEP: how many a successful run leaves" }),
    backups: t.Array(BackupListItem, { description: "Newest first" }),
    query: OffsetQueryEcho(),
    pagination: PaginationSchema,
  }),
  nameParams: t.Object({
    name: t.String({ pattern: BACKUP_NAME_PATTERN, maxLength: 64, description: "A backup name as listed, e.g. herald-2026-01-01T00-00-00-000Z.db" }),
  }),
};
