import { commaList } from "../config/parse";

// The share-channel registry: where each channel's share intent lives, what it can carry and how long the
// message may be. channels.json serves it as is; build and preview render from it. Templates use
// {url}, {text}, {title} and {message} (= text + " " + url), each percent-encoded.

export type ChannelKind = "microblog" | "messenger" | "email" | "workspace_chat" | "social" | "copy";

export interface Channel {
  id: string;
  label: string;
  kind: ChannelKind;
  /** Share intent URL; null = the link itself is what is shared (pasted into the app, which unfurls it). */
  template: string | null;
  /** Longest message (text + link) the channel accepts, in characters; null = no practical limit. */
  max_message_length: number | null;
  /** How many characters a link costs in the message (the microblog wraps every link to 23); null = its length. */
  link_length: number | null;
  capabilities: {
    text: boolean;
    title: boolean;
    link_preview: boolean;
    intent_url: boolean;
  };
  aliases: string[];
}

const caps = (text: boolean, title: boolean, link_preview: boolean, intent_url: boolean) => ({ text, title, link_preview, intent_url });

export const CHANNELS: readonly Channel[] = [
  {
    id: "x",
    label: "X (microblog)",
    kind: "microblog",
    template: "https://x.com/intent/post?text={text}&url={url}",
    max_message_length: 280,
    link_length: 23,
    capabilities: caps(true, false, true, true),
    aliases: ["twitter", "microblog"],
  },
  {
    id: "bluesky",
    label: "Bluesky",
    kind: "microblog",
    template: "https://bsky.app/intent/compose?text={message}",
    max_message_length: 300,
    link_length: null,
    capabilities: caps(true, false, true, true),
    aliases: ["bsky"],
  },
  {
    id: "telegram",
    label: "Telegram (messenger)",
    kind: "messenger",
    template: "https://t.me/share/url?url={url}&text={text}",
    max_message_length: 4096,
    link_length: null,
    capabilities: caps(true, false, true, true),
    aliases: ["tg", "messenger"],
  },
  {
    id: "whatsapp",
    label: "WhatsApp",
    kind: "messenger",
    template: "https://wa.me/?text={message}",
    max_message_length: 65_536,
    link_length: null,
    capabilities: caps(true, false, true, true),
    aliases: ["wa"],
  },
  {
    id: "email",
    label: "Email (mailto)",
    kind: "email",
    template: "mailto:?subject={title}&body={message}",
    max_message_length: 1800,
    link_length: null,
    capabilities: caps(true, true, false, true),
    aliases: ["mail", "mailto"],
  },
  {
    id: "slack",
    label: "Slack (workspace chat)",
    kind: "workspace_chat",
    template: null,
    max_message_length: 40_000,
    link_length: null,
    capabilities: caps(true, true, true, false),
    aliases: ["workspace-chat", "workspace_chat"],
  },
  {
    id: "teams",
    label: "Microsoft Teams (workspace chat)",
    kind: "workspace_chat",
    template: "https://teams.microsoft.com/share?href={url}&msgText={text}",
    max_message_length: 28_000,
    link_length: null,
    capabilities: caps(true, false, true, true),
    aliases: ["msteams"],
  },
  {
    id: "facebook",
    label: "Facebook",
    kind: "social",
    template: "https://www.facebook.com/sharer/sharer.php?u={url}",
    max_message_length: null,
    link_length: null,
    capabilities: caps(false, false, true, true),
    aliases: ["fb"],
  },
  {
    id: "linkedin",
    label: "LinkedIn",
    kind: "social",
    template: "https://www.linkedin.com/sharing/share-offsite/?url={url}",
    max_message_length: null,
    link_length: null,
    capabilities: caps(false, false, true, true),
    aliases: [],
  },
  {
    id: "reddit",
    label: "Reddit",
    kind: "social",
    template: "https://www.reddit.com/submit?url={url}&title={title}",
    max_message_length: null,
    link_length: null,
    capabilities: caps(false, true, true, true),
    aliases: [],
  },
  {
    id: "copy-link",
    label: "Copy link",
    kind: "copy",
    template: null,
    max_message_length: null,
    link_length: null,
    capabilities: caps(false, false, true, false),
    aliases: ["copy", "copy_link", "link"],
  },
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

export interface RenderedShare {
  channel: string;
  kind: ChannelKind;
  share_url: string;
  message: string;
  /** Characters the channel counts for the message (links counted as the channel counts them). */
  length: number;
  limit: number | null;
  truncated: boolean;
}

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
