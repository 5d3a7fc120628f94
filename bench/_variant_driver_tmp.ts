import { join } from "node:path";
import { signRequest } from "../src/client/sign";
import { heraldLaunch, ROOT, runHeraldCli, runWrk, startHerald, startHeraldLike, tempDir } from "./support";
const launch = heraldLaunch("source");
const dir = tempDir("variants");
const ENV = { RATE_LIMIT_PARTNER_PER_MIN: "0" };
const out = JSON.parse(await runHeraldCli(dir.path, launch, ["keys", "create", "--partner", "Bench", "--mode", "live", "--scopes", "read", "--json"], ENV));
const headers = () => Object.fromEntries(Object.entries(signRequest({ keyId: out.key_id, secret: out.secret, method: "GET", target: "/api/partner/capabilities" }).headers)) as Record<string, string>;
const o = { durationSeconds: 6, connections: 50, threads: 2 };
const res: Record<string, number[]> = {};
for (let round = 0; round < 2; round++) {
  for (const v of ["herald", "unsigned", "stubmacro", "find", "hmac", "inline"]) {
    const s = v === "herald" ? await startHerald(dir.path, launch, ENV) : await startHeraldLike(v, join(ROOT, "bench", "_variant_tmp.ts"), dir.path, "/api/partner/capabilities", { ...ENV, BENCH_VARIANT: v, BENCH_KEY_ID: out.key_id });
    await runWrk(s.baseUrl + "/api/partner/capabilities", { ...o, durationSeconds: 2 }, headers());
    const r = await runWrk(s.baseUrl + "/api/partner/capabilities", o, headers());
    await s.stop();
    (res[v] ??= []).push(r.server_cpu_us_per_request!);
    console.log(round, v.padEnd(10), Math.round(r.requests_per_sec), "req/s", r.server_cpu_us_per_request, "µs cpu/req", "non2xx", r.non_2xx, "other", r.other_cpu_share);
  }
}
dir.remove();
