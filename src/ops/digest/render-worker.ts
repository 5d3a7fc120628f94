// placeholder: replaced by the worker of this name (see src/workers/spawn.ts)
export {};
