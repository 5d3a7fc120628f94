// UTC hours as the request log's rollups and summaries key them: `YYYY-MM-DDTHH`.

/** `YYYY-MM-DDTHH` of an ISO timestamp (request_log.at is always `…Z` UTC). */
export const hourOf = (iso: string) => iso.slice(0, 13);

/** The first instant of an hour and of the next one, as request_log.at compares them (ISO text). */
export const hourStartIso = (hour: string) => `${hour}:00:00.000Z`;
export const nextHour = (hour: string) => new Date(Date.parse(`${hour}:00:00.000Z`) + 3_600_000).toISOString().slice(0, 13);

/** Code-unit order of two texts (the order ISO hours and route templates sort in), for sorting rows alike on every instance. */
export const compareText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
