/**
 * The conformance suite against a deployment of your choice (docs/deploy.md, "Checking a
 * deployment"):
 *
 * ```sh
 * BEACON_CONFORMANCE_URL=https://beacon-staging.example.com \
 *   deno test -A tests/conformance/url_test.ts
 * ```
 *
 * `BEACON_CONFORMANCE_SOURCES=forwarded` gives every request its own `X-Forwarded-For` source,
 * for a deployment that trusts one proxy hop. `BEACON_CONFORMANCE_PUBLIC_URL` names the public
 * URL when it differs from the URL tested. Without `BEACON_CONFORMANCE_URL` the test is reported
 * as ignored; the runtimes themselves are always checked by runtimes_test.ts.
 */
import { runConformance } from "./suite.ts";

const url = Deno.env.get("BEACON_CONFORMANCE_URL");

Deno.test({
  name: "conformance: the deployment at BEACON_CONFORMANCE_URL",
  ignore: url === undefined || url === "",
  async fn(t) {
    await runConformance(t, url!, {
      distinctSources: Deno.env.get("BEACON_CONFORMANCE_SOURCES") === "forwarded",
      publicUrl: Deno.env.get("BEACON_CONFORMANCE_PUBLIC_URL") || undefined,
    });
  },
});
