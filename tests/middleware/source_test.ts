import { assertEquals } from "../support/assert.ts";
import { forwardedAddress, sourceKey, UNKNOWN_SOURCE } from "../../src/middleware/source.ts";

Deno.test("sourceKey() keeps an IPv4 address whole (/32)", () => {
  assertEquals(sourceKey("203.0.113.7"), "203.0.113.7");
});

Deno.test("sourceKey() reduces IPv6 to its /64", () => {
  assertEquals(sourceKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
  assertEquals(sourceKey("2001:db8:1:2::1"), "2001:db8:1:2::/64");
  assertEquals(sourceKey("2001:DB8:1:2:ffff::9"), "2001:db8:1:2::/64");
  assertEquals(sourceKey("[2001:db8:1:2::1]"), "2001:db8:1:2::/64");
  assertEquals(sourceKey("fe80::1%eth0"), "fe80:0:0:0::/64");
  assertEquals(sourceKey("::1"), "0:0:0:0::/64");
});

Deno.test("sourceKey() gives every address of one /64 the same key", () => {
  const keys = new Set(
    Array.from({ length: 50 }, (_, i) => sourceKey(`2001:db8:aa:bb:${i.toString(16)}::${i + 1}`)),
  );
  assertEquals(keys.size, 1);
});

Deno.test("sourceKey() collapses IPv4-mapped IPv6 to IPv4", () => {
  assertEquals(sourceKey("::ffff:198.51.100.4"), "198.51.100.4");
  assertEquals(sourceKey("::ffff:c633:6404"), "198.51.100.4");
  assertEquals(sourceKey("0:0:0:0:0:ffff:198.51.100.4"), "198.51.100.4");
});

Deno.test("sourceKey() maps anything that is not an IP address to one shared key", () => {
  for (
    const bad of [
      undefined,
      "",
      "example.com",
      "1.2.3",
      "01.2.3.4",
      "256.1.1.1",
      "1::2::3",
      "gggg::1",
      "1:2:3:4:5:6:7:8:9",
    ]
  ) {
    assertEquals(sourceKey(bad), UNKNOWN_SOURCE, String(bad));
  }
});

Deno.test("forwardedAddress() ignores forwarding headers unless proxies are trusted", () => {
  const headers = new Headers({ "x-forwarded-for": "192.0.2.1", forwarded: "for=192.0.2.2" });
  assertEquals(forwardedAddress(headers, 0), undefined);
});

Deno.test("forwardedAddress() reads X-Forwarded-For right to left, one entry per proxy", () => {
  const headers = new Headers({ "x-forwarded-for": "6.6.6.6, 192.0.2.1, 10.0.0.2" });
  assertEquals(forwardedAddress(headers, 1), "10.0.0.2");
  assertEquals(forwardedAddress(headers, 2), "192.0.2.1");
  assertEquals(forwardedAddress(headers, 4), undefined);
});

Deno.test("forwardedAddress() reads RFC 7239 Forwarded when configured, stripping ports", () => {
  const headers = new Headers({
    forwarded: 'for=6.6.6.6, for="[2001:db8::1]:4711";proto=https, for=192.0.2.9:80',
    "x-forwarded-for": "1.1.1.1",
  });
  assertEquals(forwardedAddress(headers, 1, "forwarded"), "192.0.2.9");
  assertEquals(forwardedAddress(headers, 2, "forwarded"), "2001:db8::1");
});

Deno.test("forwardedAddress() reads only the configured header, so a client cannot pick one", () => {
  // The proxy appends to X-Forwarded-For and passes the client's own Forwarded header through.
  const spoofed = new Headers({ forwarded: "for=203.0.113.66", "x-forwarded-for": "192.0.2.1" });
  assertEquals(forwardedAddress(spoofed, 1), "192.0.2.1");
  // The proxy writes Forwarded and passes the client's own X-Forwarded-For through.
  const other = new Headers({ forwarded: "for=192.0.2.1", "x-forwarded-for": "203.0.113.66" });
  assertEquals(forwardedAddress(other, 1, "forwarded"), "192.0.2.1");
  // A header that is missing or short falls back to the peer address.
  assertEquals(forwardedAddress(new Headers({ forwarded: "for=1.2.3.4" }), 1), undefined);
});
