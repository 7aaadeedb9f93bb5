/**
 * Refusals a developer can act on, through the real HTTP server: the native 422 lists every
 * violation in `error.fields`, the 400 says the byte offset, the 413 says the limit, and the
 * A2A -32602 carries a `google.rpc.BadRequest` with the same list. None repeats a submitted
 * value or member name.
 */
import { assert, assertEquals, assertStrictEquals } from "../support/assert.ts";
import { serveBeacon } from "../support/in_process.ts";

const MARKER = `MARK${crypto.randomUUID().replaceAll("-", "")}`;
/** Three schema problems and two unknown members, with the marker as names and values. */
const BROKEN = {
  beacon: "0.1",
  subject: "",
  body: "Hello",
  intent: MARKER,
  sender: { name: "A", [MARKER]: MARKER },
  [MARKER]: MARKER,
};
const EXPECTED_FIELDS = [
  { field: "subject", description: "must not be empty" },
  {
    field: "intent",
    description:
      "must be one of: introduction, information, question, request, report, feedback, other",
  },
  {
    field: "sender",
    description: "has an unknown member, the 2nd (beacon/0.1 is a closed format)",
  },
  { field: "", description: "has an unknown member, the 6th (beacon/0.1 is a closed format)" },
];

Deno.test("refusals name their fields, offset or limit, and echo nothing", async (t) => {
  const served = await serveBeacon();
  const submit = (body: BodyInit, type = "application/json") =>
    fetch(served.url + "/beacon/0.1/submissions", {
      method: "POST",
      headers: { "content-type": type },
      body,
    });
  try {
    await t.step("422 invalid_message lists every violation in error.fields", async () => {
      const response = await submit(JSON.stringify(BROKEN));
      const text = await response.text();
      assertStrictEquals(response.status, 422);
      const { error } = JSON.parse(text);
      assertStrictEquals(error.code, "invalid_message");
      assertStrictEquals(error.message, "Field subject must not be empty");
      assertEquals(error.fields, EXPECTED_FIELDS);
      assert(!text.includes(MARKER), text);
    });

    await t.step("400 invalid_json gives the byte offset of the first error", async () => {
      const body = `{"subject":"héllo ${MARKER}",,}`;
      const response = await submit(body);
      const text = await response.text();
      assertStrictEquals(response.status, 400);
      const { error } = JSON.parse(text);
      assertStrictEquals(error.code, "invalid_json");
      // The second comma; "é" is two bytes.
      assertStrictEquals(error.offset, new TextEncoder().encode(body).indexOf(0x2c, 20) + 1);
      assertStrictEquals(new TextEncoder().encode(body)[error.offset], 0x2c);
      assert(!text.includes(MARKER));
    });

    await t.step("413 too_large states maxBodyBytes", async () => {
      const response = await submit(new Uint8Array(65_537), "text/plain");
      assertStrictEquals(response.status, 413);
      assertEquals(await response.json(), {
        error: {
          code: "too_large",
          message: "The body exceeds the size limit",
          maxBodyBytes: 65_536,
        },
      });
    });

    await t.step("A2A -32602 carries a google.rpc.BadRequest with every violation", async () => {
      const response = await fetch(served.url + "/a2a/v1", {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 5,
          method: "SendMessage",
          params: {
            message: { messageId: "m-1", role: "ROLE_USER", parts: [{ data: BROKEN }] },
          },
        }),
      });
      const text = await response.text();
      const { error } = JSON.parse(text);
      assertStrictEquals(error.code, -32602);
      assertStrictEquals(error.data.length, 2);
      assertEquals(error.data[0].metadata, { field: "message.parts[0].data.subject" });
      assertEquals(error.data[1], {
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        fieldViolations: EXPECTED_FIELDS.map(({ field, description }) => ({
          field: "message.parts[0].data" + (field === "" ? "" : `.${field}`),
          description,
        })),
      });
      assert(!text.includes(MARKER), text);
    });

    await t.step("A2A -32700 says the byte offset too", async () => {
      const response = await fetch(served.url + "/a2a/v1", {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body: '{"jsonrpc":"2.0","id":1,]',
      });
      const { error } = await response.json();
      assertStrictEquals(error.code, -32700);
      assertEquals(error.data[0].metadata, { offset: "24" });
    });
    assertStrictEquals(await served.count(), 0, "no refusal stored anything");
  } finally {
    await served.close();
  }
});
