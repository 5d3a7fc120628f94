// The languages of the mini-app's message catalog, by the code a Telegram language_code starts with. English is in
// the page's script; each other language is a script of its own (catalog-<lang>.ts, served beside the page's and
// named in the page's data-messages-<lang> attribute), loaded only for a player who speaks it. A language is added
// here and with its two files (test/miniapp/messages.test.ts checks it has every key).
import { en, type Message, type MessageKey } from "./messages-en";

export type Catalog = Record<MessageKey, Message>;
export const LANGUAGES = ["en", "ru"] as const;
export const CATALOGS: Record<string, Catalog> = { en };
