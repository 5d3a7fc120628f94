// The typed configuration Herald runs with: built once by src/config/index.ts from the environment, frozen, passed in.
// Its shape, field names and types follow from the declarations in src/config/vars.ts (ConfigOf); only what
// loadConfig() works out from the variables taken together is written here.
import type { ConfigOf } from "./var-spec";
import type { CONFIG_SCHEMA } from "./vars";

/** The fields no single variable declares. */
interface Derived {
  /** nodeEnv is production. */
  readonly isProduction: boolean;
  readonly database: {
    /** postgres when DATABASE_URL is set; else sqlite, the file at dbPath. */
    readonly engine: "sqlite" | "postgres";
  };
  /** Every variable as `herald config` shows it (secrets masked), for the operators' config page. */
  readonly described: ReadonlyArray<ConfigRow>;
  /** Retired variables the environment still sets (src/config/vars-instances.ts RETIRED_VARS): warned about at start. */
  readonly retired: ReadonlyArray<{ readonly name: string; readonly note: string }>;
}

export type Config = ConfigOf<typeof CONFIG_SCHEMA> & Derived;

// A type alias, not an interface: the CLI prints rows as plain records.
export type ConfigRow = {
  name: string;
  value: string;
  source: "env" | "default";
  doc: string;
  /** Set in the environment to something other than the default (secrets: set at all). */
  differs: boolean;
  secret: boolean;
};
