// The Russian catalog as a script of its own (the page loads it only for a Russian-speaking player: i18n.ts).
import { ru } from "./messages-ru";

const g = globalThis as unknown as { heraldMessages?: Record<string, unknown> };
g.heraldMessages = { ...g.heraldMessages, ru };
