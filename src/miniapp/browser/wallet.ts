// Linking a Solana wallet on the mini-app's page, through the Wallet Standard (github.com/wallet-standard/wallet-standard):
// browser wallets announce themselves by its events; one that can connect and sign a message gets a button.
import { api, clearMessages, inWords, ownMessage, say } from "./api";
import { $, h } from "./dom";
import { t } from "./i18n";

/** What the page needs of a wallet that follows the Wallet Standard (github.com/wallet-standard/wallet-standard). */
interface WalletAccount {
  address: string;
}
interface StandardWallet {
  name: string;
  features: {
    "standard:connect"?: { connect(): Promise<{ accounts: readonly WalletAccount[] }> };
    "solana:signMessage"?: { signMessage(...inputs: Array<{ account: WalletAccount; message: Uint8Array }>): Promise<Array<{ signature: Uint8Array }>> };
  };
}

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Base58 (Bitcoin's alphabet), as Solana writes keys and signatures: each leading zero byte is a "1". */
function base58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  const digits: number[] = []; // base-58 digits, least significant first
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i]!;
    for (let j = 0; j < digits.length; j++) {
      carry += digits[j]! << 8;
      digits[j] = carry % 58;
      carry = Math.floor(carry / 58);
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = Math.floor(carry / 58);
    }
  }
  return "1".repeat(zeros) + Array.from(digits.reverse(), (d) => BASE58[d]).join("");
}

/** The Solana wallets in this browser that can connect and sign a message, by the Wallet Standard's events. */
const wallets: StandardWallet[] = [];
function register(...found: StandardWallet[]): () => void {
  for (const w of found) if (w.features["standard:connect"] && w.features["solana:signMessage"] && !wallets.includes(w)) wallets.push(w);
  showWallets();
  return () => undefined;
}
export function discoverWallets(): void {
  window.addEventListener("wallet-standard:register-wallet", (event) =>
    (event as CustomEvent<(api: { register: typeof register }) => void>).detail({ register }),
  );
  window.dispatchEvent(new CustomEvent("wallet-standard:app-ready", { detail: { register } }));
}

function showWallets(): void {
  const list = $("wallets");
  list.replaceChildren(
    ...wallets.map((w, i) =>
      h("button", {
        type: "button",
        className: "secondary",
        id: `wallet-${i}`,
        textContent: t("wallet.link", { wallet: w.name }),
        onclick: () => void linkWallet(w),
      }),
    ),
  );
  $("wallets-none").hidden = wallets.length > 0;
}

/**
 * Sign-In-With-Solana: the wallet connects, Herald issues a challenge for its address, the wallet signs the message
 * as given (its UTF-8 bytes), and Herald checks the signature (docs/messenger.md, "Wallet proof").
 */
async function linkWallet(w: StandardWallet): Promise<void> {
  clearMessages();
  try {
    let accounts: readonly WalletAccount[];
    try {
      accounts = (await w.features["standard:connect"]!.connect()).accounts;
    } catch {
      throw ownMessage(t("wallet.no_connect", { wallet: w.name }));
    }
    const account = accounts[0];
    if (!account) throw ownMessage(t("wallet.no_account", { wallet: w.name }));
    const { challenge } = await api("/api/messenger/wallet-proof/challenge", { address: account.address });
    let signature: Uint8Array;
    try {
      const [signed] = await w.features["solana:signMessage"]!.signMessage({ account, message: new TextEncoder().encode(challenge.message) });
      signature = signed!.signature;
    } catch {
      throw ownMessage(t("wallet.no_sign", { wallet: w.name }));
    }
    await api("/api/messenger/wallet-claim/verify", {
      address: account.address,
      nonce: challenge.nonce,
      message: challenge.message,
      signature: base58(signature),
    });
    say("wallet-msg", t("wallet.linked", { address: account.address }), "good");
  } catch (err) {
    say("wallet-msg", inWords(err), "bad");
  }
}
