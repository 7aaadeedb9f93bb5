// The npm package's build (`npm run build`, also run by `npm start` and `npm pack`): tsdown 0.21
// (the last line that runs on Node 20) bundles the TypeScript sources into ES modules and one
// bundled declaration file per entry in dist/. README.md ("Node") says why this tool. tsdown is
// installed in tools/build/, not beside this file, so the options are a plain object (tsdown's
// `defineConfig` only returns its argument).
export default {
  entry: {
    mod: "mod.ts",
    node: "src/adapter/node/node.ts",
    bun: "src/adapter/bun/bun.ts",
    workers: "src/adapter/workers/workers.ts",
    server: "src/adapter/node/server.ts",
    // Loaded by URL at run time by src/store/connection/embedded/writer_thread.ts, so it is an
    // entry of its own.
    writer_worker: "src/store/connection/embedded/writer_worker.ts",
    // The reviewer's tool (review/): the `beacon-review` bin is its launcher, which runs
    // review.mjs under Node's permission model.
    "beacon-review": "review/runtime/launch_node.ts",
    review: "review/runtime/node.ts",
  },
  // The console's script and stylesheet, read at run time from `./static/` beside the module
  // that serves them (review/console/serve.ts), which is bundled into dist/.
  copy: [{ from: "review/console/static/*", to: "dist/static" }],
  format: "esm",
  platform: "node",
  target: "node20",
  outDir: "dist",
  dts: true,
  clean: true,
  // Runtime dependencies stay imports resolved from node_modules (the native libSQL binding).
  deps: {
    neverBundle: [
      /^@libsql\//,
      /^libsql$/,
      /^@noble\//,
      /^valibot$/,
      /^@valibot\//,
      /^get-east-asian-width$/,
      /^unhomoglyph(\/|$)/, // its data.json, imported by review/search/fold.ts
    ],
  },
  // Rolldown warns when plugins took much of the build's time (its `checks.pluginTimings`), which
  // on a busy machine the declaration bundling always does: advice for the tool's users, noise in
  // the first `npm start`'s output.
  inputOptions: { checks: { pluginTimings: false } },
  // Shared chunks sit beside the entries (the worker URL above is relative to its chunk).
  outputOptions: { chunkFileNames: "beacon-[hash].mjs" },
  // The writer thread's worker is referenced as "./writer_worker.ts" next to its module; in
  // dist/ it is writer_worker.mjs beside the chunk that references it.
  plugins: [{
    name: "beacon-writer-worker-url",
    transform(code: string, id: string) {
      if (!id.endsWith("/src/store/connection/embedded/writer_thread.ts")) return null;
      return code.replace('"./writer_worker.ts"', '"./writer_worker.mjs"');
    },
  }],
};
