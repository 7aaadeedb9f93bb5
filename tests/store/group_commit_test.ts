/**
 * GroupCommitter: concurrent writes share commits, a bad item fails alone, and every commit runs
 * inside the call of a writer whose item it carries (the property Cloudflare Workers needs: work
 * that outlives the request that started it is cancelled there). The last one is observed with
 * AsyncLocalStorage, which follows the same causal chain workerd uses for request contexts.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { GroupCommitter } from "../../src/store/group_commit.ts";
import { DeadlineError, IndeterminateError } from "../../src/store/faults.ts";

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

Deno.test("GroupCommitter: a sent write without an answer is indeterminate, the stuck call is abandoned, and the writes behind it go out on a new call", async () => {
  const sent: number[][] = [];
  const stuck = Promise.withResolvers<void[]>();
  let abandoned = 0;
  const committer = new GroupCommitter<number>((items) => {
    sent.push([...items]);
    // The first call never answers (a black-holed socket); later ones answer at once.
    return sent.length === 1 ? stuck.promise : Promise.resolve(items.map(() => undefined));
  }, { timeoutMs: 300, onAbandon: () => abandoned++ });
  const first = committer.write(1);
  await new Promise((resolve) => setTimeout(resolve, 150));
  const behind = committer.write(2); // queued behind the stuck call
  const results = await Promise.allSettled([first, behind]);
  assert(results[0].status === "rejected" && results[0].reason instanceof IndeterminateError);
  assertEquals(results[1].status, "fulfilled", "not held by the stuck call");
  assertEquals(abandoned, 1, "the stuck call's connection was dropped");
  assertEquals(sent, [[1], [2]]);
  stuck.resolve([undefined]); // a late answer of the abandoned call is reported to nobody
  await committer.idle();
  committer.close();
});

Deno.test("GroupCommitter never sends a write after its deadline, and answers one that could not lead in time as never sent", async () => {
  const late: number[] = [];
  const committer = new GroupCommitter<number>(async (items) => {
    for (const arrival of items) if (Date.now() >= arrival + 200) late.push(arrival);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Then blocks the thread past every queued deadline (a synchronous fsync that stalls), so
    // the deadline timer cannot run before the lead passes on.
    const until = Date.now() + 500;
    while (Date.now() < until) { /* stalled */ }
    return items.map(() => undefined);
  }, { timeoutMs: 200 });
  const writes = [committer.write(Date.now())];
  await new Promise((resolve) => setTimeout(resolve, 10));
  writes.push(committer.write(Date.now()), committer.write(Date.now()));
  const results = await Promise.allSettled(writes);
  assertEquals(late, [], "no write went out after its deadline");
  for (const result of results.slice(1)) {
    assert(
      result.status === "rejected" && result.reason instanceof DeadlineError,
      "a write the stalled thread kept queued past its deadline was never sent",
    );
  }
  await committer.idle();
  committer.close();
});

Deno.test("GroupCommitter: writes of an abandoned call that are still within their deadline get its late answer", async () => {
  const calls: PromiseWithResolvers<void[]>[] = [];
  const committer = new GroupCommitter<number>((items) => {
    const call = Promise.withResolvers<void[]>();
    calls.push(call);
    if (calls.length > 1) call.resolve(items.map(() => undefined));
    return call.promise;
  }, { timeoutMs: 400 });
  const early = committer.write(1);
  const settled = early.then(() => "committed", (error) => error);
  await new Promise((resolve) => setTimeout(resolve, 600));
  assert((await settled) instanceof IndeterminateError, "no answer by the deadline");
  calls[0].resolve([undefined]);
  assertEquals(await committer.write(2), undefined);
  assertEquals(committer.counters.writes, 2, "the late commit still counts: it happened");
  await committer.idle();
  committer.close();
});
