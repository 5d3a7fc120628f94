import type { AppContext } from "../context";
import type { Registry } from "./registry";
import { entryView, published } from "./service";

// The deprecation playbook: one structure, served as JSON and rendered as Markdown, so the two never drift.
// Its steps are the spec's (Versioning), in its order.

const STEPS: ReadonlyArray<readonly [title: string, detail: string]> = [
  ["Confirm the new paths and auth", "Read the entry's replacement and the OpenAPI document (/api/openapi.yaml); check the scopes your key needs."],
  [
    "Validate the signing format",
    "Sign a request to the new path exactly as before (METHOD, path and query, timestamp, nonce, sha256 of the body); compare with the test vectors in the docs.",
  ],
  [
    "Test with a new key and idempotency headers",
    "Use a sandbox key; send Idempotency-Key on every mutation and check that a retry replays instead of repeating.",
  ],
  [
    "Roll out with monitoring and a rollback plan",
    "Ship behind a switch, watch your error rate and /api/partner/status, keep the old path callable until you are sure, and know how to switch back before the sunset date.",
  ],
];

export function playbook(ctx: AppContext, reg: Registry) {
  const p = reg.policy;
  return {
    title: "Herald deprecation and migration playbook",
    api_version: "v1",
    versioning: {
      current_version: "v1 (implicit; paths are unversioned)",
      breaking_changes: `recorded in the changelog and rolled out under a new path prefix such as ${p.breaking_change_path_prefix}`,
      non_breaking_changes: "new fields and endpoints ship without a version change: ignore fields you do not know",
    },
    notice: {
      minimum_notice_days: p.minimum_notice_days,
      reminder_days_before_sunset: p.reminder_days_before_sunset,
      webhook_schema_notice_days: p.webhook_schema_notice_days,
      channels: ["/developers/deprecations.json", "/developers/deprecations.rss", "Deprecation, Sunset and Link response headers on the affected endpoints"],
    },
    headers: {
      Deprecation: "RFC 9745: @<unix seconds> — when the endpoint is (or will be) deprecated",
      Sunset: "RFC 8594: HTTP-date after which the endpoint stops answering",
      Link: 'rel="deprecation" → the registry entry; rel="sunset" → the migration guide',
      simulator: "/api/public/deprecations/header-simulator?id=<id>&endpoint=<path>",
    },
    steps: STEPS.map(([title, detail], i) => ({ step: i + 1, title, detail })),
    webhook_schema_practice: `dual-support window before a field is removed, with notices ${p.webhook_schema_notice_days.join(", ")} days before`,
    scheduled: published(ctx, reg)
      .map((d) => entryView(ctx, reg, d))
      .map((e) => ({ id: e.id, title: e.title, phase: e.phase, sunset_at: e.sunset_at, migration_guide: e.migration_guide })),
  };
}

export function playbookMarkdown(ctx: AppContext, reg: Registry): string {
  const pb = playbook(ctx, reg);
  const lines = [
    `# ${pb.title}`,
    "",
    `API version: ${pb.versioning.current_version}. Breaking changes are ${pb.versioning.breaking_changes}. Non-breaking changes: ${pb.versioning.non_breaking_changes}.`,
    "",
    "## Notice",
    "",
    `- At least ${pb.notice.minimum_notice_days} days between the announcement and the sunset.`,
    `- Reminders ${pb.notice.reminder_days_before_sunset.join(" and ")} day(s) before the sunset.`,
    `- Webhook schema changes: ${pb.webhook_schema_practice}.`,
    `- Where: ${pb.notice.channels.join("; ")}.`,
    "",
    "## Headers on a deprecated endpoint",
    "",
    ...Object.entries(pb.headers).map(([k, v]) => `- \`${k}\`: ${v}`),
    "",
    "## Migration steps",
    "",
    ...pb.steps.map((s) => `${s.step}. **${s.title}.** ${s.detail}`),
    "",
    "## Scheduled",
    "",
    ...(pb.scheduled.length
      ? pb.scheduled.map((s) => `- \`${s.id}\` (${s.phase}, sunset ${s.sunset_at}): ${s.title} — ${s.migration_guide}`)
      : ["No endpoint sunsets are currently scheduled."]),
    "",
  ];
  return lines.join("\n");
}
