-- wrk driver for bench/run.py.
--   wrk ... -s bench/scenario.lua URL -- MODE COOKIE ORIGIN THREADS [PARAMS...]
-- MODE:
--   get PATH                      the same GET every time
--   detail MAX                    GET /api/incidents/<random 1..MAX>
--   detail_page MAX               GET /incidents/<random 1..MAX> (the incident page)
--   create SITE_ID OCCURRED_AT RUN
--                                 POST /api/incidents (clientId unique per RUN, thread and request;
--                                 rotating type and severity)
--   update MAX                    PATCH /api/incidents/<random 1..MAX> with a new title
--   transition FILE               POST /api/incidents/<n>/transitions {"to": "investigation"},
--                                 each request a different closed incident listed in FILE
-- done() prints one line "BENCH_JSON {...}" with the figures bench/run.py reads.

local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

local TYPES = {"near_miss", "hazard", "injury", "illness", "property_damage", "environmental"}
local SEVERITIES = {"low", "medium", "low", "medium", "high", "low", "critical", "medium"}

function init(args)
  mode = args[1]
  nthreads = tonumber(args[4])
  p1, p2, p3 = args[5], args[6], args[7]
  statuses = {}
  counter = 0
  calls = 0
  math.randomseed(1009 + 7919 * tid)
  wrk.headers["Cookie"] = "service_session=" .. args[2]
  wrk.headers["Origin"] = args[3]
  wrk.headers["Accept"] = "application/json"
  if mode == "create" or mode == "update" or mode == "transition" then
    wrk.headers["Content-Type"] = "application/json"
  end
  if mode == "transition" then
    pool = {}
    local i = 0
    for line in io.lines(p1) do
      if i % nthreads == tid then table.insert(pool, line) end
      i = i + 1
    end
    cursor = 0
  end
end

local function uuid()
  -- Unique per run (first group), thread and request (last group).
  return string.format("%08x-%04x-4%03x-8%03x-%04x%08x", tonumber(p3), math.random(0, 65535),
                       math.random(0, 4095), math.random(0, 4095), tid, counter)
end

function request()
  calls = calls + 1
  -- wrk calls request() once on thread 0 before the run to inspect it; that
  -- call must not use up an incident.
  local dry = (tid == 0 and calls == 1)
  if not dry then counter = counter + 1 end
  if mode == "get" then
    return wrk.format("GET", p1)
  elseif mode == "detail" then
    return wrk.format("GET", "/api/incidents/" .. math.random(1, tonumber(p1)))
  elseif mode == "detail_page" then
    return wrk.format("GET", "/incidents/" .. math.random(1, tonumber(p1)))
  elseif mode == "create" then
    local body = string.format(
      '{"title":"Bench report %d-%d","type":"%s","severity":"%s","occurredAt":"%s","siteId":%s,' ..
      '"locationDetail":"Bay %d","description":"Filed by the benchmark.",' ..
      '"immediateAction":"Area checked.","anonymous":false,"clientId":"%s"}',
      tid, counter, TYPES[counter % #TYPES + 1], SEVERITIES[counter % #SEVERITIES + 1], p2, p1,
      counter % 40, uuid())
    return wrk.format("POST", "/api/incidents", nil, body)
  elseif mode == "update" then
    local body = string.format('{"title":"Updated by the benchmark %d-%d"}', tid, counter)
    return wrk.format("PATCH", "/api/incidents/" .. math.random(1, tonumber(p1)), nil, body)
  elseif mode == "transition" then
    local index = dry and 1 or (cursor % #pool) + 1
    if not dry then cursor = cursor + 1 end
    return wrk.format("POST", "/api/incidents/" .. pool[index] .. "/transitions", nil,
                      '{"to":"investigation","note":"Reopened by the benchmark"}')
  end
end

function response(status, headers, body)
  local key = tostring(status)
  statuses[key] = (statuses[key] or 0) + 1
end

function done(summary, latency, requests)
  local merged = {}
  for _, thread in ipairs(threads) do
    local counts = thread:get("statuses")
    for key, value in pairs(counts) do
      merged[key] = (merged[key] or 0) + value
    end
  end
  local parts = {}
  for key, value in pairs(merged) do
    table.insert(parts, string.format('"%s":%d', key, value))
  end
  local errors = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p95_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"mean_us":%.1f,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"statuses":{%s}}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95),
    latency:percentile(99), latency.max, latency.mean, errors.connect, errors.read, errors.write,
    errors.status, errors.timeout, table.concat(parts, ",")))
end
