-- wrk script for bench/run.ts: POST bodies of an exact size, each one different.
--
-- Unique bodies matter: the Beacon stores every accepted submission, and a server that saw the
-- same bytes again could take shortcuts (or a cache could) that real traffic never allows.
-- Every load generator run gets a fresh nonce, so ids never repeat across warm-up and rounds.
--
-- Arguments (after `--`): kind size nonce
--   kind  "json"  an A2A SendMessage JSON-RPC request with a unique messageId and id
--         "text"  a plain text submission starting with a unique id
--         "fixed" one body of `size` bytes sent on every request (the 413 scenario, where the
--                 server must refuse by Content-Length before it reads a byte of the body)
--   size  total body bytes (the padding adapts to the length of the unique id)
--   nonce distinguishes this run from every other one
--
-- bench/lib/payload.ts builds the same bodies for the one-off probes; keep the two in step.
-- done() prints one line "BENCH_RESULT {json}" that bench/lib/load.ts parses.

local UNIT = "Benchmark message for asynchronous human review. "

local kind, size, nonce, fixed, filler
local counter = 0
local threads_started = 0

function setup(thread)
  threads_started = threads_started + 1
  thread:set("thread_no", threads_started)
end

local function padded(head, tail)
  local room = size - #head - #tail
  if room < 0 then room = 0 end
  return head .. string.sub(filler, 1, room) .. tail
end

function init(args)
  kind = args[1] or "json"
  size = tonumber(args[2] or "600")
  nonce = args[3] or "run"
  filler = string.rep(UNIT, math.floor(size / #UNIT) + 1)
  if kind == "fixed" then
    fixed = wrk.format("POST", nil, nil, string.sub(filler, 1, size))
  end
end

function request()
  if fixed then return fixed end
  counter = counter + 1
  local id = nonce .. "-" .. thread_no .. "-" .. counter
  local body
  if kind == "json" then
    body = padded(
      '{"jsonrpc":"2.0","id":' .. counter ..
        ',"method":"SendMessage","params":{"message":{"messageId":"' .. id ..
        '","role":"ROLE_USER","parts":[{"text":"' .. id .. ' ',
      '"}]}}}')
  else
    body = padded(id .. " ", "")
  end
  return wrk.format("POST", nil, nil, body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,' ..
      '"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,' ..
      '"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean))
end
