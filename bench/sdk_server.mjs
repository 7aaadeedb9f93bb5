// Reference A2A 1.0 JSON-RPC server built only from the documented API of @a2a-js/sdk 1.x
// (AgentExecutor, DefaultRequestHandler, InMemoryTaskStore, the Express jsonRpcHandler and
// agentCardHandler). bench/run.ts loads it with the same SendMessage as the Beacon, so the
// Beacon's numbers can be compared with what the official SDK does on its home runtime, Node.
//
// Run: PORT=8123 HOSTNAME=127.0.0.1 node bench/sdk_server.mjs
// Dependencies live in bench/sdk/ (own package.json and lock) so the Deno project stays free of a
// node_modules tree; createRequire anchored there resolves them from this file's directory.

import { createRequire } from "node:module";

const require = createRequire(new URL("./sdk/package.json", import.meta.url));
const express = require("express");
const { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } = require("@a2a-js/sdk/server");
const { agentCardHandler, jsonRpcHandler, UserBuilder } = require("@a2a-js/sdk/server/express");
const { TaskState } = require("@a2a-js/sdk");

const port = Number(process.env.PORT ?? "8124");
const hostname = process.env.HOSTNAME ?? "127.0.0.1";
const origin = `http://${hostname}:${port}`;

/** The same promise as the Beacon's: one task per message, acknowledged as submitted. */
const agentCard = {
  name: "SDK reference intake",
  description: "Stores a message and acknowledges it as a submitted task (benchmark reference).",
  supportedInterfaces: [
    { url: `${origin}/a2a/v1`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
  ],
  provider: undefined,
  version: "0.1.0",
  capabilities: { streaming: false, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["application/json"],
  skills: [
    {
      id: "submit",
      name: "Submit",
      description: "Accepts a message for later review.",
      tags: ["intake"],
      examples: [],
      inputModes: ["text/plain"],
      outputModes: ["application/json"],
      securityRequirements: [],
    },
  ],
  signatures: [],
};

/**
 * Publishes one Task in TASK_STATE_SUBMITTED and ends: the SDK's documented pattern for an agent
 * that only acknowledges (the first event must be a task or a message).
 */
const executor = {
  execute(requestContext, eventBus) {
    eventBus.publish(AgentEvent.task({
      id: requestContext.taskId,
      contextId: requestContext.contextId,
      status: {
        state: TaskState.TASK_STATE_SUBMITTED,
        message: undefined,
        timestamp: new Date().toISOString(),
      },
      artifacts: [],
      history: [],
      metadata: undefined,
    }));
    eventBus.finished();
    return Promise.resolve();
  },
  cancelTask(_taskId, eventBus) {
    eventBus.finished();
    return Promise.resolve();
  },
};

const requestHandler = new DefaultRequestHandler(agentCard, new InMemoryTaskStore(), executor);

const app = express();
app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: requestHandler }));
app.use(
  "/a2a/v1",
  jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }),
);

const server = app.listen(port, hostname, () => {
  process.stdout.write(JSON.stringify({ event: "listening", port, hostname }) + "\n");
});

// bench/run.ts stops servers with SIGTERM; exit promptly so the harness never has to SIGKILL.
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections?.();
});
