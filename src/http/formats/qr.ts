import QRCode from "qrcode";

// QR codes (the `qrcode` package): of short links, and of the mini-app's address on the messenger console page.
// Error correction M survives a scuffed print or a logo sticker over ~15% of the symbol; the 2-module quiet zone is
// the least scanners reliably need.

const OPTIONS = { errorCorrectionLevel: "M", margin: 2 } as const;

export const QR_PNG_DEFAULT_SIZE = 256;
export const QR_PNG_MIN_SIZE = 64;
export const QR_PNG_MAX_SIZE = 1024;

export function qrSvg(text: string): Promise<string> {
  return QRCode.toString(text, { ...OPTIONS, type: "svg" });
}

/** `size` is the image width and height in pixels. */
export function qrPng(text: string, size = QR_PNG_DEFAULT_SIZE): Promise<Buffer> {
  return QRCode.toBuffer(text, { ...OPTIONS, type: "png", width: size });
}
