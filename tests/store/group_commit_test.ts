/**
 * GroupCommitter: concurrent writes share commits, a bad item fails alone, and every commit runs
 * inside the call of a writer whose item it carries (the property Cloudflare Workers needs: work
 * that outlives the request that started it is cancelled there). The last one is observed with
 * AsyncLocalStorage, which follows the same causal chain workerd uses for request contexts.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { GroupCommitter } from "../../src/store/group_commit.ts";

Deno.test("GroupCommitter commits concurrent writes together, each inside a carrying writer's call", async () => {
  const caller = new AsyncLocalStorage<number>();
  const batches: number[][] = [];
  const committer = new GroupCommitter<number>(async (items) => {
    const who = caller.getStore();
    assert(
      who !== undefined && items.includes(who),
      `commit of ${items} ran outside its writers (in ${who})`,
    );
    batches.push([...items]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    return items.map(() => undefined);
  });
  const writes = Array.from({ length: 50 }, (_, i) => caller.run(i, () => committer.write(i)));
  await Promise.all(writes);
  // A second wave while nothing is running, then overlapping waves.
  for (let wave = 0; wave < 3; wave++) {
    await Promise.all(Array.from({ length: 20 }, (_, i) => {
      const id = 100 + wave * 20 + i;
      return new Promise((resolve) => setTimeout(resolve, i)).then(() =>
        caller.run(id, () => committer.write(id))
      );
    }));
  }
  await committer.idle();
  committer.close();
  assertEquals(batches.flat().sort((a, b) => a - b).length, 110);
  assert(batches.length < 110, "writes shared commits");
  assertEquals(committer.counters.writes, 110);
});

Deno.test("GroupCommitter fails only the item that cannot be committed", async () => {
  const committer = new GroupCommitter<number>(async (items) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (items.includes(7)) throw new Error("constraint");
    return items.map(() => undefined);
  });
  const results = await Promise.allSettled(
    Array.from({ length: 12 }, (_, i) => committer.write(i)),
  );
  assertEquals(
    results.map((r) => r.status === "fulfilled"),
    Array.from({ length: 12 }, (_, i) => i !== 7),
  );
  await assertRejects(() => committer.write(7));
  await committer.write(8);
  await committer.idle();
  committer.close();
});

Deno.test("GroupCommitter hands each writer the result the commit reported for its item", async () => {
  const committer = new GroupCommitter<number, string>(async (items) => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return items.map((item) => `result of ${item}`);
  });
  const results = await Promise.all(Array.from({ length: 30 }, (_, i) => committer.write(i)));
  assertEquals(results, Array.from({ length: 30 }, (_, i) => `result of ${i}`));
  assert(committer.counters.commits < 30, "writes shared commits");
  await committer.idle();
  committer.close();
});
