// What the benchmarks import: the harness core (options, wrk, report) and the servers under test.
export * from "./support-core";
export * from "./processes";
