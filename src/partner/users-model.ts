import { t } from "elysia";
import { Envelope } from "../http/envelope";
import { ListAnswer, PageQuery, type PageQueryEcho } from "../http/pagination";
import { named } from "../http/openapi/names";
import { nullable } from "../http/routes/declare";
import { SCAN_WINDOW } from "../db/port";

const flag = t.Optional(t.Union([t.Literal("0"), t.Literal("1"), t.Literal("true"), t.Literal("false")], { description: "1|true to include" }));
/** A wallet flag of a link: a boolean, or 1/0 as wallet links show it. */
const bit = (description: string) => t.Optional(t.Union([t.Boolean(), t.Literal(1), t.Literal(0)], { description }));
const statusEnum = t.Union([t.Literal("active"), t.Literal("suspended")]);

// Formats are checked in user-fields.ts (one message per rule); the schemas bound types and lengths and
// describe the rules for the OpenAPI document.
const externalId = t.String({ minLength: 1, maxLength: 128, description: "Your id for the user: 1–128 of A–Z a–z 0–9 . _ : @ -; unique per partner" });
const username = t.String({ minLength: 3, maxLength: 32, description: "3–32 of a–z 0–9 _ . (stored lower-cased; unique per partner, case-insensitively)" });
const displayName = t.String({ minLength: 1, maxLength: 100, description: "≤ 100 characters, no control characters" });
const email = t.String({ minLength: 3, maxLength: 254, description: "An address like name@example.com (stored lower-cased)" });
const walletAddress = t.String({ minLength: 1, maxLength: 128, description: "Solana: base58 of 32 bytes; other chains: 16–128 letters and digits" });
const blockchain = t.String({ minLength: 1, maxLength: 32, description: "Chain name, default solana; 2–32 of a–z 0–9 -" });

export const WalletLink = named(
  "WalletLink",
  t.Object({
    blockchain: t.String(),
    wallet_address: t.String(),
    label: t.String({ description: 'The partner\'s name for the wallet (1–64 characters); "" when none was given' }),
    is_primary: t.Integer({ description: "1 for the user's primary wallet, else 0" }),
    verified: t.Integer({ description: "1 when the partner marked the wallet verified" }),
    verified_at: nullable(t.String({ description: "When it was last verified (ISO 8601 UTC)" })),
    is_hidden: t.Integer({ description: "1 when the partner hid the wallet (wallet-verification's hidden state), else 0" }),
    session_connected_at: nullable(
      t.String({ description: "When the wallet was last reported connected in a live session: by the partner, or a mini-app wallet proof" }),
    ),
  }),
);

export const User = named(
  "User",
  t.Object({
    id: t.Integer(),
    external_id: t.String(),
    username: t.String({ description: '"" when not set' }),
    display_name: t.String({ description: '"" when not set' }),
    email: t.String({ description: '"" when not set' }),
    status: statusEnum,
    is_verified: t.Boolean(),
    wallet_address: t.String({ description: 'The primary wallet\'s address; "" while the user has no wallet' }),
    wallets: t.Optional(t.Array(WalletLink, { description: "Present when include_wallets=1 (always on create and update)" })),
    created_at: t.String(),
    updated_at: t.String(),
  }),
);

const Links = t.Record(t.String(), t.String(), { description: "Relative paths; USER_ID and WALLET_ADDRESS are template tokens" });

const listOf = (filters: Parameters<typeof PageQueryEcho>[0]) => Envelope({ ...ListAnswer("users", t.Array(User), filters), docs_links: Links, links: Links });
/** The filters every user list echoes as applied (q trimmed, null when absent). */
/** `q`: no index holds a substring, so a page looks through a bounded window of users (SCAN_WINDOW). */
const searchTerm = t.Optional(
  t.String({
    maxLength: 200,
    description: `Substring of external_id, username, display_name or email, in any case. A page looks through at most ${SCAN_WINDOW.toLocaleString("en-US")} users (newest first from where it starts): it can be short, even empty, with has_more; follow next_cursor`,
  }),
);
const userFilters = { status: nullable(t.String()), q: nullable(t.String()), include_wallets: t.Boolean() };
const List = listOf(userFilters);
const LookupList = listOf({
  ...userFilters,
  email: nullable(t.String()),
  username: nullable(t.String({ description: "as applied: lower case" })),
  wallet: nullable(t.String()),
});

export const UsersModel = {
  createBody: t.Object(
    {
      external_id: externalId,
      username: t.Optional(username),
      display_name: t.Optional(displayName),
      email: t.Optional(email),
      wallet_address: t.Optional(walletAddress),
      blockchain: t.Optional(blockchain),
      status: t.Optional(statusEnum),
      is_verified: t.Optional(t.Boolean({ description: "default false" })),
    },
    { additionalProperties: false },
  ),
  created: Envelope({ external_id: t.String(), user: User }),
  patchBody: t.Object(
    {
      username: t.Optional(nullable(username)),
      display_name: t.Optional(nullable(displayName)),
      email: t.Optional(nullable(email)),
      status: t.Optional(statusEnum),
      is_verified: t.Optional(t.Boolean()),
    },
    { additionalProperties: false, description: "Partial: send only the fields to change; null clears username, display_name or email" },
  ),
  updated: Envelope({ user: User }),
  idParams: t.Object({ user_id: t.String({ description: "The Herald user id" }) }),
  getQuery: t.Object({ include_wallets: flag, include_meta: t.Optional(t.String()) }),
  one: Envelope({ user: User, docs_links: Links, links: Links }),
  listQuery: t.Object({
    ...PageQuery,
    status: t.Optional(statusEnum),
    q: searchTerm,
    include_wallets: flag,
  }),
  lookupQuery: t.Object({
    ...PageQuery,
    q: searchTerm,
    email: t.Optional(t.String({ maxLength: 254, description: "Exact, case-insensitive" })),
    username: t.Optional(t.String({ maxLength: 32, description: "Exact, case-insensitive" })),
    wallet: t.Optional(t.String({ maxLength: 128, description: "Exact address of any linked wallet" })),
    status: t.Optional(statusEnum),
    include_wallets: flag,
  }),
  list: List,
  lookupList: LookupList,
  linkBody: t.Object(
    {
      wallet_address: walletAddress,
      blockchain: t.Optional(blockchain),
      label: t.Optional(nullable(t.String({ maxLength: 64 }))),
      is_primary: bit("true (or 1, as wallet links show it) makes it the primary (the old one is demoted); false (0) never demotes"),
      verified: bit("true (or 1) records a verification now; false (0) clears it"),
      is_hidden: bit("true (or 1) hides the wallet from display; false (0) shows it"),
      connected_session: bit("true (or 1) records that the wallet is connected in a live session now; false (0) clears it"),
    },
    { additionalProperties: false },
  ),
  wallets: Envelope({ wallets: t.Array(WalletLink) }),
  verificationParams: t.Object({ wallet_address: t.String() }),
  verificationQuery: t.Object({ blockchain: t.Optional(t.String({ maxLength: 32, description: "default solana" })), include_meta: t.Optional(t.String()) }),
  verification: named(
    "WalletVerification",
    Envelope({
      wallet: t.String(),
      blockchain: t.String(),
      wallet_states: t.Object({
        linked: t.Boolean(),
        connected_session: t.Boolean(),
        verified: t.Boolean(),
        stale_verification: t.Boolean(),
        hidden: t.Boolean(),
      }),
      verification: t.Object({
        verified: t.Boolean(),
        verified_at_utc: nullable(t.String()),
        verification_age_days: t.Integer({ description: "whole days since verified_at_utc; 0 when unverified" }),
        freshness: t.Union([t.Literal("fresh"), t.Literal("stale"), t.Literal("unverified")]),
        status_text: t.String(),
        reverify_days: t.Integer(),
      }),
      owner: t.Union([t.Object({ user_id: t.Integer(), external_id: t.String(), is_primary: t.Boolean(), is_hidden: t.Boolean() }), t.Null()], {
        description: "Your user the wallet is linked to; null when it is linked to none of your users (wallet_states.linked false)",
      }),
      state_model: t.Array(t.String()),
    }),
  ),
};
