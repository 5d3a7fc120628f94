import { flagOn } from "../http/envelope";
import type { AppContext } from "../context";
import { AppError } from "../http/errors/errors";
import { warningOf, type Finding } from "./catalogs";
import { parseChannels, renderShare, type Channel, type RenderedShare } from "./channels";
import { checkDestination, type HostPolicy } from "./host-policy";
import type { AudioShareModel } from "./model";
import { linkStore, shortUrlOf, expiresUnixOf } from "./short-links";
import { tokenOf } from "./signing";

// The link-building verbs: choose the destination, check it against the host policy, render each channel's
// share URL, and (use_short=1 / token_mode=signed) issue a short link. validate and preview run the same
// steps without writing anything.

type DestinationInput = Omit<typeof AudioShareModel.validateQuery.static, "include_meta">;
type ShareInput = typeof AudioShareModel.previewQuery.static;
type BuildInput = typeof AudioShareModel.buildQuery.static;

interface Chosen {
  raw: string | null;
  field: "track_url" | "file_url";
  source: "track" | "file";
  warnings: Finding[];
}

/** track_url unless prefer=file names a file_url; the choice is reported as a warning when it is not obvious. */
function chooseDestination(input: DestinationInput): Chosen {
  const track = input.track_url?.trim() ? input.track_url : undefined;
  const file = input.file_url?.trim() ? input.file_url : undefined;
  if (input.prefer === "file") {
    if (file !== undefined) return { raw: file, field: "file_url", source: "file", warnings: [] };
    return {
      raw: track ?? null,
      field: "track_url",
      source: "track",
      warnings: [warningOf("prefer_file_without_file_url", "prefer=file was asked but no file_url was given; track_url is shared", { field: "prefer" })],
    };
  }
  if (track !== undefined) {
    const ignored = warningOf("file_url_ignored", "Both track_url and file_url were given; the track page is shared (send prefer=file for the file)", {
      field: "file_url",
    });
    return { raw: track, field: "track_url", source: "track", warnings: file === undefined ? [] : [ignored] };
  }
  return { raw: file ?? null, field: "file_url", source: "file", warnings: [] };
}

export type Evaluation = ReturnType<typeof evaluate>;

/** Every check, collected rather than thrown: what /validate and each batch item report. */
export function evaluate(policy: HostPolicy, input: DestinationInput) {
  const chosen = chooseDestination(input);
  const errors: Finding[] = [];
  const warnings = [...chosen.warnings];
  const { channels, unknown } = parseChannels(input.channels);
  if (unknown.length) errors.push({ code: "channel_unknown", message: `Unknown channel(s): ${unknown.join(", ")}; see channels.json`, field: "channels" });
  let destination: string | null = null;
  let host: string | null = null;
  if (chosen.raw === null) {
    errors.push({ code: "destination_invalid", message: "Give track_url (a track page) or file_url (an audio file)", field: "track_url" });
  } else {
    const check = checkDestination(policy, chosen.raw, chosen.field);
    warnings.push(...check.warnings);
    if (check.ok) {
      destination = check.url.href;
      host = check.host;
    } else {
      errors.push(check.error);
      host = check.error.host ?? null;
    }
  }
  return { valid: errors.length === 0, destination_url: destination, host, source: chosen.source, channels, errors, warnings };
}

/** The first error of an evaluation as the AppError the build and preview routes answer with. */
function throwFirstError(e: Evaluation): never {
  const { code, message, ...fields } = e.errors[0]!;
  // The denied host is named at the top level of the body as well, beside request_id (the spec's payload).
  const extra = code === "destination_host_denied" ? { host: fields.host ?? null, reason: fields.reason } : undefined;
  throw new AppError(code as "destination_host_denied" | "destination_invalid" | "channel_unknown", message, {
    details: { ...fields, errors: e.errors },
    extra,
  });
}

function renderAll(channels: Channel[], url: string, title: string, text: string, warnings: Finding[]): RenderedShare[] {
  return channels.map((c) => {
    const r = renderShare(c, { url, title, text });
    if (r.truncated) warnings.push(warningOf("text_truncated", `The text was shortened to fit ${c.label} (${r.limit} characters)`, { channel: c.id }));
    if (text && !c.capabilities.text && c.kind !== "copy")
      warnings.push(warningOf("text_not_supported", `${c.label} takes only the link; text is not sent`, { channel: c.id }));
    return r;
  });
}

export function previewShare(policy: HostPolicy, input: ShareInput) {
  const e = evaluate(policy, input);
  if (!e.valid) throwFirstError(e);
  const title = input.title ?? "";
  const text = input.text ?? "";
  const warnings = [...e.warnings];
  const shares = renderAll(e.channels, e.destination_url!, title, text, warnings);
  return {
    destination_url: e.destination_url!,
    source: e.source,
    card: { url: e.destination_url!, host: e.host!, title: input.title ?? null, description: input.text ?? null },
    shares,
    warnings,
  };
}

/**
 * GET (root): the share URLs, and with use_short=1 or token_mode=signed a short link (a write). `issue` false (a
 * HEAD, which must not change anything) checks and renders everything but issues no link.
 */
export async function buildShare(ctx: AppContext, policy: HostPolicy, input: BuildInput, issue = true) {
  const e = evaluate(policy, input);
  if (!e.valid) throwFirstError(e);
  const warnings = [...e.warnings];
  const signed = input.token_mode === "signed";
  const asked = flagOn(input.use_short);
  const short = asked || signed;
  if (signed && !asked)
    warnings.push(warningOf("signed_implies_short", "token_mode=signed builds a short link; send use_short=1 with it", { field: "use_short" }));
  if (!short && input.expires_in !== undefined)
    warnings.push(warningOf("expires_in_ignored", "expires_in applies to short links only (use_short=1)", { field: "expires_in" }));
  const destination = e.destination_url!;
  const link =
    short && issue
      ? await linkStore(ctx).create({
          destination,
          source: e.source,
          channel: e.channels.length === 1 ? e.channels[0]!.id : null,
          title: input.title ?? null,
          signed,
          expiresInSeconds: input.expires_in ?? ctx.config.audioShare.defaultExpiresSeconds,
        })
      : null;
  const shared = link ? shortUrlOf(ctx, link.code) : destination;
  const shares = renderAll(e.channels, shared, input.title ?? "", input.text ?? "", warnings);
  return {
    destination_url: destination,
    source: e.source,
    title: input.title ?? null,
    text: input.text ?? null,
    channels: e.channels.map((c) => c.id),
    share_urls: Object.fromEntries(shares.map((s) => [s.channel, s.share_url])),
    shares,
    short_url: link ? shortUrlOf(ctx, link.code) : null,
    short_code: link?.code ?? null,
    signed: link ? link.signed === 1 : false,
    expires_at: link?.expires_at ?? null,
    token: link?.signature ? tokenOf(link.code, expiresUnixOf(link), link.signature) : null,
    warnings,
  };
}

export function validateShare(policy: HostPolicy, input: DestinationInput) {
  const e = evaluate(policy, input);
  // Every field of the evaluation, in its order; the channels by id.
  return { ...e, channels: e.channels.map((c) => c.id) };
}

/** Channels in a JSON body: the query's comma list, or the same names as an array. */
const channelList = (c: string | string[] | undefined): string | undefined => (Array.isArray(c) ? c.join(",") : c);

/** POST /validate/batch: each item on its own; one bad item never fails the others. */
export function validateBatch(policy: HostPolicy, input: typeof AudioShareModel.batchBody.static) {
  const results = input.items.map((item, index) => ({
    index,
    ...validateShare(policy, { ...item, prefer: item.prefer ?? input.defaults?.prefer, channels: channelList(item.channels ?? input.defaults?.channels) }),
  }));
  const valid = results.filter((r) => r.valid).length;
  return { count: results.length, valid_count: valid, invalid_count: results.length - valid, results };
}
