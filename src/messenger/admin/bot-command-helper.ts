// GET /api/messenger/admin/bot/command-helper: the commands the webhook answers and the setMyCommands call that
// shows them in Telegram's menu. Built from BOT_COMMANDS, the table botReplies and /help use, so the menu can
// never list a command the bot does not answer.
import type { AppContext } from "../../context";
import { BOT_COMMANDS } from "../bot/commands";
import { botApiCall } from "./bot-readiness";

/** Telegram's limits for setMyCommands (core.telegram.org/bots/api#botcommand). */
const COMMAND_NAME = /^[a-z0-9_]{1,32}$/;
const MAX_DESCRIPTION = 256;

export function botCommandHelper(ctx: AppContext) {
  const commands = BOT_COMMANDS.map((c) => ({
    command: c.command,
    description: c.description,
    valid_for_telegram: COMMAND_NAME.test(c.command) && c.description.length >= 1 && c.description.length <= MAX_DESCRIPTION,
  }));
  const payload = { commands: BOT_COMMANDS.map((c) => ({ command: c.command, description: c.description })) };
  return {
    commands,
    unknown_command_reply: 'Any other /command gets "Unknown command" and this list.',
    set_my_commands: botApiCall(ctx, "setMyCommands", payload),
  };
}
