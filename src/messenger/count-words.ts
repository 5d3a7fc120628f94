// Counts of the messenger's game amounts as a person reads them, on the console page, in the readiness checklist and
// in the bot's replies: "1 point", "2 points", "1 free spin", "1,500 missiles" (thousands separated, en-US).

/** `n` and the word for one or for many of it: "1 point", "0 points", "12,000 points". */
export const counted = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

export const pointsText = (n: number) => counted(n, "point");
export const freeSpinsText = (n: number) => counted(n, "free spin");
export const missilesText = (n: number) => counted(n, "missile");
export const playsText = (n: number) => counted(n, "play");
