// Telegram's Mini App API (core.telegram.org/bots/webapps), used only where it is there: a plain browser has no
// window.Telegram and an older client lacks the newer parts, so every call is feature-detected.
import { applyTheme } from "./theme";

interface BottomButton {
  setText?(text: string): unknown;
  show?(): unknown;
  hide?(): unknown;
  enable?(): unknown;
  disable?(): unknown;
  showProgress?(leaveActive?: boolean): unknown;
  hideProgress?(): unknown;
  onClick?(cb: () => void): unknown;
}
const SIDES = ["top", "bottom", "left", "right"] as const;
type Insets = Partial<Record<(typeof SIDES)[number], number>>;
export interface TelegramWebApp {
  initData?: string;
  initDataUnsafe?: { user?: { language_code?: string } };
  version?: string;
  colorScheme?: "light" | "dark";
  themeParams?: Record<string, string>;
  safeAreaInset?: Insets;
  contentSafeAreaInset?: Insets;
  ready?(): void;
  expand?(): void;
  isVersionAtLeast?(version: string): boolean;
  onEvent?(event: string, cb: () => void): void;
  enableClosingConfirmation?(): void;
  disableClosingConfirmation?(): void;
  HapticFeedback?: {
    impactOccurred?(style: "light" | "medium" | "heavy" | "rigid" | "soft"): unknown;
    notificationOccurred?(type: "error" | "success" | "warning"): unknown;
    selectionChanged?(): unknown;
  };
  MainButton?: BottomButton;
  BackButton?: { show?(): unknown; hide?(): unknown; onClick?(cb: () => void): unknown };
}
declare global {
  interface Window {
    Telegram?: { WebApp?: TelegramWebApp };
  }
}

export const webApp = (): TelegramWebApp | undefined => window.Telegram?.WebApp;

/** Whether the client supports a feature that came with Bot API `version` (true when it does not say). */
const since = (version: string) => webApp()?.isVersionAtLeast?.(version) ?? true;

/** Telegram's safe-area insets as the CSS variables its own script sets (also set here for older scripts). */
function applyInsets(): void {
  const tg = webApp();
  const root = document.documentElement.style;
  for (const [prefix, insets] of [
    ["--tg-safe-area-inset", tg?.safeAreaInset],
    ["--tg-content-safe-area-inset", tg?.contentSafeAreaInset],
  ] as const) {
    for (const side of SIDES) {
      const v = insets?.[side];
      if (typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 500) root.setProperty(`${prefix}-${side}`, `${Math.round(v)}px`);
    }
  }
}

let setUp = false;
/** Once Telegram's object is there: ready, expand, the theme and insets (and their changes). */
export function setUpTelegram(): void {
  const tg = webApp();
  if (!tg || setUp) return;
  setUp = true;
  tg.ready?.();
  tg.expand?.();
  applyTheme(tg);
  applyInsets();
  tg.onEvent?.("themeChanged", () => applyTheme(tg));
  tg.onEvent?.("safeAreaChanged", applyInsets);
  tg.onEvent?.("contentSafeAreaChanged", applyInsets);
}

/**
 * Inside Telegram without its script yet (the page opened with #tgWebAppData…, or a page of the game opened after
 * one that was): load it, from Telegram only (the page's Content-Security-Policy allows that one script), then set up.
 */
export function loadTelegram(onReady: () => void): void {
  if (webApp()) {
    setUpTelegram();
    onReady();
    return;
  }
  applyTheme(undefined);
  const inTelegram = location.hash.includes("tgWebAppData") || sessionStorage.getItem("herald-in-telegram") === "1";
  if (!inTelegram) return;
  sessionStorage.setItem("herald-in-telegram", "1");
  const script = document.createElement("script");
  script.src = "https://telegram.org/js/telegram-web-app.js";
  script.onload = () => {
    setUpTelegram();
    onReady();
  };
  // Without Telegram's script (blocked, offline) the page works as in a plain browser.
  script.onerror = onReady;
  document.head.append(script);
}

export const haptic = {
  tap: () => since("6.1") && webApp()?.HapticFeedback?.impactOccurred?.("light"),
  spin: () => since("6.1") && webApp()?.HapticFeedback?.impactOccurred?.("medium"),
  select: () => since("6.1") && webApp()?.HapticFeedback?.selectionChanged?.(),
  success: () => since("6.1") && webApp()?.HapticFeedback?.notificationOccurred?.("success"),
  outcome: (won: boolean) => since("6.1") && webApp()?.HapticFeedback?.notificationOccurred?.(won ? "success" : "warning"),
  error: () => since("6.1") && webApp()?.HapticFeedback?.notificationOccurred?.("error"),
};

let inFlight = 0;
/**
 * Runs a play with Telegram's closing confirmation on (closing the mini-app mid-play asks first), off again when the
 * last play in flight has its answer.
 */
export async function whilePlaying<T>(play: () => Promise<T>): Promise<T> {
  if (inFlight++ === 0 && since("6.2")) webApp()?.enableClosingConfirmation?.();
  try {
    return await play();
  } finally {
    if (--inFlight === 0 && since("6.2")) webApp()?.disableClosingConfirmation?.();
  }
}

let mainClick: (() => void) | null = null;
/** Telegram's main button as the page's primary action (text, enabled, busy); hidden with null. */
export function mainButton(state: { text: string; enabled: boolean; busy: boolean; onClick: () => void } | null): void {
  const b = webApp()?.MainButton;
  if (!b) return;
  if (!state) {
    b.hide?.();
    return;
  }
  if (!mainClick) b.onClick?.(() => mainClick?.());
  mainClick = state.onClick;
  b.setText?.(state.text);
  if (state.busy) b.showProgress?.(false);
  else b.hideProgress?.();
  if (state.enabled && !state.busy) b.enable?.();
  else b.disable?.();
  b.show?.();
}

/** Telegram's back button: shown with what it does, hidden with null. */
export function backButton(onBack: (() => void) | null): void {
  const b = webApp()?.BackButton;
  if (!b || !since("6.1")) return;
  if (!onBack) {
    b.hide?.();
    return;
  }
  b.onClick?.(onBack);
  b.show?.();
}
