// `npm run review -- …` and `bun run review …`: package.json's "review" script, plain JavaScript
// so that it starts on either runtime without a build.
//
// - On Node, it builds the npm package when its sources changed (scripts/build_package.mjs,
//   quiet otherwise) and runs the built launcher, which starts the tool under Node's permission
//   model (review/runtime/launch_node.ts).
// - On Bun, which runs TypeScript and has no permission model, it runs the sources' Node entry
//   (review/runtime/node.ts) in this process. `bun run review` uses Bun only where no `node` is
//   on the PATH; `bun run --bun review` chooses Bun everywhere.
import process from "node:process";

if (process.versions.bun !== undefined) {
  // `show` and `next` on a terminal run as a child whose output is paged when long (pager.ts);
  // everything else runs here.
  const { pagerPlan } = await import("./pager.ts");
  const plan = pagerPlan(
    process.argv.slice(2),
    (name) => process.env[name],
    process.stdout.isTTY
      ? { columns: process.stdout.columns, rows: process.stdout.rows }
      : undefined,
  );
  if (plan === undefined) await import("./node.ts");
  else {
    const { runPaged } = await import("./page_node.ts");
    runPaged(process.execPath, [new URL("./node.ts", import.meta.url).pathname], plan, process.env);
  }
} else {
  const { buildPackage } = await import("../../scripts/build_package.mjs");
  buildPackage({ quiet: true });
  await import("../../dist/beacon-review.mjs");
}
