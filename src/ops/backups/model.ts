import { t } from "elysia";
import { Envelope, includeMetaQuery } from "../../http/envelope";
import { named } from "../../http/openapi/names";
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET_PARSED, OffsetListAnswer } from "../../http/pagination";
import { intQuery } from "../../http/params";
import { nullable } from "../../http/routes/declare";
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

// The worker's phases (BACKUP_PHASES, src/ops/backups/worker-protocol.ts), in their order.
const BackupPhase = t.Union([t.Literal("snapshot"), t.Literal("integrity_check"), t.Literal("checksum")], {
  description: "snapshot (VACUUM INTO a temp file), integrity_check (PRAGMA integrity_check of the copy), checksum (its sha256)",
});

export const RunningBackup = named(
  "RunningBackup",
  t.Object(
    {
      id: t.String({ description: "The run's id, as the 202 and a 409 backup_in_progress name it" }),
      phase: BackupPhase,
      percent: t.Integer({
        minimum: 0,
        maximum: 100,
        description:
          "Of the current phase. snapshot: the temp copy's size against the database's pages in use (an estimate; SQLite reports none); integrity_check: 0 until it ends (SQLite reports none); checksum: bytes hashed",
      }),
      started_at: t.String({ format: "date-time" }),
    },
    { description: "The backup running on this instance (one at a time)" },
  ),
);

export const FinishedBackup = named(
  "FinishedBackup",
  t.Object(
    {
      id: t.String(),
      outcome: t.Union([t.Literal("ok"), t.Literal("failed")]),
      started_at: t.String({ format: "date-time" }),
      finished_at: t.String({ format: "date-time" }),
      duration_ms: t.Integer({ minimum: 0 }),
      name: nullable(t.String({ description: "The backup made (GET /admin/backups/{name}); null when it failed" })),
      error: nullable(t.String({ description: "Why it failed (the server log has the cause); null when it was made" })),
    },
    { description: "The last backup that ended on this instance since it started (memory only: after a restart, GET /admin/backups lists the files)" },
  ),
);

export const BackupRun = named(
  "BackupRun",
  t.Object({ name: t.String(), path: t.String(), size_bytes: t.Integer(), sha256, created_at: t.String({ format: "date-time" }), integrity: t.Literal("ok") }),
);

export const OpsModel = {
  runQuery: t.Object({
    ...includeMetaQuery,
    wait: t.Optional(
      t.Boolean({
        description:
          "true (default): answer when the backup is made, with it (200). false: answer 202 at once with its id and where to follow it; the backup goes on in the background",
      }),
    ),
  }),
  runAccepted: Envelope(
    {
      backup_id: t.String(),
      status_url: t.String({ description: "GET it (admin) to follow the backup: /admin/backup/status" }),
    },
    "The backup has begun (wait=false); GET status_url until running is null, then read last",
  ),
  statusQuery: t.Object({ ...includeMetaQuery }),
  status: Envelope({
    running: nullable(RunningBackup),
    last: nullable(FinishedBackup),
  }),
  run: Envelope({
    backup: BackupRun,
    pruned: t.Array(PrunedBackup, { description: "Older backups deleted because more than BACKUP_KEEP existed" }),
  }),
  listQuery: t.Object({
    limit: intQuery({ minimum: 1, maximum: MAX_LIMIT, defaultValue: DEFAULT_LIMIT, description: "backups per page" }),
    offset: intQuery({ minimum: 0, maximum: MAX_OFFSET_PARSED, defaultValue: 0, description: "backups to skip" }),
    include_meta: t.Optional(t.String()),
  }),
  list: Envelope(
    OffsetListAnswer(
      "backups",
      t.Array(BackupListItem, { description: "Newest first" }),
      {},
      {
        total: t.Integer({ description: "backups in the folder" }),
        keep: t.Integer({ description: "BACKUP_KEEP: how many a successful run leaves" }),
      },
    ),
  ),
  nameParams: t.Object({
    name: t.String({ pattern: BACKUP_NAME_PATTERN, maxLength: 64, description: "A backup name as listed, e.g. herald-2026-01-01T00-00-00-000Z.db" }),
  }),
};
