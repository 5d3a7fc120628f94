import { commaList } from "../config/parse";
import type { Channel as ChannelSchema, Share } from "./model";

// The share-channel registry: where each channel's share intent lives, what it can carry and how long the
// message may be. channels.json serves it as is; build and preview render from it. Templates use
// {url}, {text}, {title} and {message} (= text + " " + url), each percent-encoded.

export type ChannelKind = "microblog" | "messenger" | "email" | "workspace_chat" | "social" | "copy";

export type Channel = typeof ChannelSchema.static;

const caps = (text: boolean, title: boolean, link_preview: boolean, intent_url: boolean) => ({ text, title, link_preview, intent_url });
const channel = (
  id: string,
  label: string,
  kind: ChannelKind,
  template: string | null,
  max_message_length: number | null,
  link_length: number | null,
  capabilities: Channel["capabilities"],
  aliases: string[],
): Channel => ({ id, label, kind, template, max_message_length, link_length, capabilities, aliases });

// id, label, kind, share intent, max_message_length, link_length, capabilities (text, title, link_preview, intent_url), aliases.
export const CHANNELS: readonly Channel[] = [
  channel("x", "X (microblog)", "microblog", "https://x.com/intent/post?text={text}&url={url}", 280, 23, caps(true, false, true, true), [
    "twitter",
    "microblog",
  ]),
  channel("bluesky", "Bluesky", "microblog", "https://bsky.app/intent/compose?text={message}", 300, null, caps(true, false, true, true), ["bsky"]),
  channel("telegram", "Telegram (messenger)", "messenger", "https://t.me/share/url?url={url}&text={text}", 4096, null, caps(true, false, true, true), [
    "tg",
    "messenger",
  ]),
  channel("whatsapp", "WhatsApp", "messenger", "https://wa.me/?text={message}", 65_536, null, caps(true, false, true, true), ["wa"]),
  channel("email", "Email (mailto)", "email", "mailto:?subject={title}&body={message}", 1800, null, caps(true, true, false, true), ["mail", "mailto"]),
  channel("slack", "Slack (workspace chat)", "workspace_chat", null, 40_000, null, caps(true, true, true, false), ["workspace-chat", "workspace_chat"]),
  channel(
    "teams",
    "Microsoft Teams (workspace chat)",
    "workspace_chat",
    "https://teams.microsoft.com/share?href={url}&msgText={text}",
    28_000,
    null,
    caps(true, false, true, true),
    ["msteams"],
  ),
  channel("facebook", "Facebook", "social", "https://www.facebook.com/sharer/sharer.php?u={url}", null, null, caps(false, false, true, true), ["fb"]),
  channel("linkedin", "LinkedIn", "social", "https://www.linkedin.com/sharing/share-offsite/?url={url}", null, null, caps(false, false, true, true), []),
  channel("reddit", "Reddit", "social", "https://www.reddit.com/submit?url={url}&title={title}", null, null, caps(false, true, true, true), []),
  channel("copy-link", "Copy link", "copy", null, null, null, caps(false, false, true, false), ["copy", "copy_link", "link"]),
];

const BY_NAME = new Map<string, Channel>();
for (const c of CHANNELS) for (const name of [c.id, ...c.aliases]) BY_NAME.set(name, c);

export const channelById = (name: string): Channel | undefined => BY_NAME.get(name.trim().toLowerCase());

/** Splits `channels=x,telegram` into known channels (deduplicated, aliases resolved) and unknown names. */
export function parseChannels(list: string | undefined | null): { channels: Channel[]; unknown: string[] } {
  if (list === undefined || list === null || list.trim() === "") return { channels: [...CHANNELS], unknown: [] };
  const channels: Channel[] = [];
  const unknown: string[] = [];
  for (const name of commaList(list)) {
    const c = channelById(name);
    if (!c) unknown.push(name);
    else if (!channels.includes(c)) channels.push(c);
  }
  return { channels, unknown };
}

/** `length`: the characters the channel counts for the message (links counted as the channel counts them). */
export type RenderedShare = typeof Share.static;

/** Cuts text (on a word boundary where possible) so that text + link fit the channel; "…" marks the cut. */
function fitText(text: string, room: number): { text: string; truncated: boolean } {
  const chars = [...text];
  if (chars.length <= room) return { text, truncated: false };
  if (room <= 1) return { text: "", truncated: true };
  const cut = chars.slice(0, room - 1).join("");
  const space = cut.lastIndexOf(" ");
  return { text: (space > room / 2 ? cut.slice(0, space) : cut).trimEnd() + "…", truncated: true };
}

/** One channel's share URL and message for a link, title and text. */
export function renderShare(channel: Channel, input: { url: string; title: string; text: string }): RenderedShare {
  const linkCost = channel.link_length ?? [...input.url].length;
  const wanted = channel.capabilities.text ? input.text || input.title : "";
  const limit = channel.max_message_length;
  const room = limit === null ? Infinity : limit - linkCost - (wanted ? 1 : 0);
  const fitted = room === Infinity ? { text: wanted, truncated: false } : fitText(wanted, Math.max(0, room));
  const text = fitted.text;
  const message =
    channel.id === "slack"
      ? `<${input.url}|${input.title || input.url}>${text && text !== input.title ? ` ${text}` : ""}`
      : text
        ? `${text} ${input.url}`
        : input.url;
  const fill = (tpl: string) =>
    tpl
      .replaceAll("{url}", encodeURIComponent(input.url))
      .replaceAll("{text}", encodeURIComponent(text))
      .replaceAll("{title}", encodeURIComponent(input.title))
      .replaceAll("{message}", encodeURIComponent(message));
  const length = (text ? [...text].length + 1 : 0) + linkCost;
  return {
    channel: channel.id,
    kind: channel.kind,
    share_url: channel.template ? fill(channel.template) : input.url,
    message,
    length,
    limit,
    truncated: fitted.truncated,
  };
}

/** channels.json */
export function describeChannels(channels: readonly Channel[] = CHANNELS) {
  return channels.map((c) => ({ ...c, capabilities: { ...c.capabilities }, aliases: [...c.aliases] }));
}
