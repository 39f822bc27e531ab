-- wrk script: traffic that looks like real use (issue 12). Many users, each with a device, on
-- every shipped policy; each session goes through IdP logins, launches online and offline,
-- resumes, backgrounding, biometric prompts with failures, refreshes (some failing), server
-- signals, logouts and an occasional clock set back, its time advancing across the policies'
-- boundaries (minutes, hours, days, sometimes weeks).
--
-- Env:
--   MODE      stateful (default): POST .../sessions/{user}/{device}/events, with the user's token
--             for what a device reports and SERVICE_TOKEN for logins and refreshes;
--             stateless: POST .../evaluate with a state drawn to match the session;
--             batch: POST .../evaluate/batch with BATCH items of the stateless kind.
--   TOKENS    file of `user token` lines (load/tokens.py); one session per line.
--   SERVICE_TOKEN  the back end's token (stateful mode).
--   POLICIES  comma-separated policy names (default: the seven shipped ones).
--   BATCH     items per batch request (default 100).
--   START_DAYS  how many days before now the sessions' clocks start (default 300); the server
--             must accept events that late (`--clock-max-delay 400d`).
--   SCRIPT_START  the wall-clock second the whole load run began (realistic.sh sets it), and
--   SPEED     simulated seconds per real second (default 600): a session's time is a function of
--             the wall clock, so it keeps moving forward across wrk runs and the server's stored
--             state stays in step: base + (now - SCRIPT_START) * SPEED + the session's away
--             time (in each 5 s period: 10% an absence of hours, 4% of days, 1% of weeks; at
--             most 90 days in all), which carries sessions across the policies' windows.
--   FIRST     1 for a server's first run (sessions start signed out, so their first event is a
--             login); otherwise they are taken to be signed in from earlier runs.
--
-- Each wrk thread owns every THREADS-th session and visits its sessions in turn, so two events
-- of one session are never in flight at once and arrive in order.

local mode = os.getenv("MODE") or "stateful"
local service = os.getenv("SERVICE_TOKEN") or ""
local batch = tonumber(os.getenv("BATCH") or "100")
local start_days = tonumber(os.getenv("START_DAYS") or "300")
local script_start = tonumber(os.getenv("SCRIPT_START") or tostring(os.time()))
local speed = tonumber(os.getenv("SPEED") or "600")
local first_run = os.getenv("FIRST") == "1"
local period = 5
local policies = {}
for p in string.gmatch(os.getenv("POLICIES") or
    "kobil-offline-token,kobil-signed-jwt,kobil-signed-jwt-hardware,spendiq,i360-salesforce,i360-marketsharp,cross-app-device-sso",
    "[^,]+") do
  policies[#policies + 1] = p
end

local threads = {}
local thread_count = 0

function setup(thread)
  thread:set("tid", thread_count)
  thread_count = thread_count + 1
  threads[#threads + 1] = thread
end

local sessions = {}
local next_session = 1
local now = os.time()
local counter = 0

local function iso(t)
  return os.date("!%Y-%m-%dT%H:%M:%SZ", t)
end

local modes = { "biometric", "none", "pin", "password" }

-- A number in [0, 1) that depends only on (a, b): the same in every wrk run.
function unit(a, b)
  local x = (a * 7919 + b * 104729 + 1) % 2147483647
  for _ = 1, 3 do x = (x * 48271) % 2147483647 end
  return x / 2147483647
end

-- The away time of session i in its first k periods.
local function away(i, k)
  local g = 0
  for j = 0, k - 1 do
    local r = unit(i, j + 11)
    if r < 0.10 then g = g + 3600 + unit(j, i + 13) * 82800
    elseif r < 0.14 then g = g + 86400 + unit(j, i + 17) * 6 * 86400
    elseif r < 0.15 then g = g + 7 * 86400 + unit(j, i + 19) * 33 * 86400 end
  end
  return math.min(g, 90 * 86400)
end

-- Moves session s's clock to now: never back within a run.
local function tick(s)
  local w = os.time()
  local t = s.base + (w - script_start) * speed + away(s.index, math.floor((w - script_start) / period)) + math.random(0, 59)
  if t <= s.t then t = s.t + math.random(1, 60) end
  s.t = math.min(t, now + (w - now))
end

local by_user = {}

function init(args)
  local tid = tonumber(tid) or 0
  local total = tonumber(os.getenv("THREADS") or "2")
  math.randomseed(1000 + tid)
  local i = 0
  for line in io.lines(os.getenv("TOKENS") or "tokens.txt") do
    if i % total == tid then
      local user, token = line:match("(%S+) (%S+)")
      sessions[#sessions + 1] = {
        index = i, user = user, token = token, device = "phone-" .. i, policy = policies[(i % #policies) + 1],
        base = now - start_days * 86400 + math.floor(unit(i, 7) * 200 * 86400), t = 0,
        signed_in = not first_run, mode = modes[(i % #modes) + 1], last_login = nil, last_online = nil,
      }
      by_user[user] = sessions[#sessions]
    end
    i = i + 1
  end
end

-- The licence facts i360-marketsharp's rules read at a login or refresh: mostly a named
-- licence, sometimes none, revoked or a legacy company format.
local function licence(s)
  if s.policy ~= "i360-marketsharp" then return "" end
  local r = math.random()
  local format = r < 0.02 and "legacy" or "named"
  local license = r < 0.04 and "none" or (r < 0.06 and "revoked" or "assigned")
  return ',"attributes":{"company_license_format":"' .. format .. '","license":"' .. license .. '"}'
end

-- The next event of session `s` as (json fields, needs the service token).
local function next_event(s)
  tick(s)
  if not s.signed_in then
    s.signed_in = true
    s.last_login = s.t
    s.last_online = s.t
    return '"type":"idp_login_succeeded","user":"' .. s.user .. '","auth_mode":"' .. s.mode .. '","network":"online"' ..
        licence(s), true
  end
  local r = math.random()
  if r < 0.28 then return '"type":"launch","network":"offline"', false end
  if r < 0.40 then return '"type":"launch","network":"online"', false end
  if r < 0.48 then return '"type":"resume","network":"offline"', false end
  if r < 0.62 then return '"type":"background"', false end
  if r < 0.69 then return '"type":"biometric_succeeded"', false end
  if r < 0.73 then return '"type":"biometric_failed"', false end
  if r < 0.81 then s.last_online = s.t; return '"type":"token_refreshed"' .. licence(s), true end
  if r < 0.84 then return '"type":"refresh_failed","cause":"network"', false end
  if r < 0.85 then return '"type":"refresh_failed","cause":"invalid_token"', false end
  if r < 0.87 then return '"type":"offline_login_failed"', false end
  if r < 0.88 then return '"type":"license_revoked"', false end
  if r < 0.885 then return '"type":"tokens_revoked"', false end
  if r < 0.90 then return '"type":"biometric_enrollment_changed"', false end
  if r < 0.93 then s.signed_in = false; return '"type":"logout"', false end
  if r < 0.95 then return '"type":"idp_login_failed"', false end
  -- The device clock set back two hours (a rollback beyond any tolerance).
  return '"type":"launch","network":"offline","__back":true', false
end

local function event_json(s)
  local fields, trusted = next_event(s)
  local t = s.t
  if fields:find('"__back":true', 1, true) then
    fields = fields:gsub(',"__back":true', "")
    t = s.t - 7200
  end
  return '{' .. fields .. ',"time":"' .. iso(t) .. '"}', trusted
end

-- A state for stateless evaluation, drawn around the session's clocks.
local function state_json(s)
  local login = s.last_login or (s.t - 86400)
  local online = s.last_online or login
  local states = { "suspended", "suspended", "active", "awaiting_biometric", "signed_out" }
  return '{"state":"' .. states[math.random(#states)] .. '","user":"' .. s.user .. '","device":"' .. s.device ..
      '","auth_mode":"' .. s.mode .. '","last_idp_login":"' .. iso(login) .. '","last_online":"' .. iso(online) ..
      '","last_activity":"' .. iso(math.max(online, s.t - math.random(60, 86400))) ..
      '","highest_time":"' .. iso(math.max(online, s.t - 60)) .. '"}'
end

local function take()
  local s = sessions[next_session]
  next_session = next_session % #sessions + 1
  return s
end

function request()
  if mode == "stateless" then
    local s = take()
    local event = event_json(s)
    return wrk.format("POST", "/v1/policies/" .. s.policy .. "/evaluate", { ["Content-Type"] = "application/json" },
      '{"state":' .. state_json(s) .. ',"event":' .. event .. '}')
  elseif mode == "batch" then
    local first = take()
    local items = {}
    for k = 1, batch do
      local s = take()
      local event = event_json(s)
      items[k] = '{"state":' .. state_json(s) .. ',"event":' .. event .. '}'
    end
    return wrk.format("POST", "/v1/policies/" .. first.policy .. "/evaluate/batch", { ["Content-Type"] = "application/json" },
      '{"items":[' .. table.concat(items, ",") .. ']}')
  end
  local s = take()
  local event, trusted = event_json(s)
  local token = trusted and service or s.token
  return wrk.format("POST", "/v1/policies/" .. s.policy .. "/sessions/" .. s.user .. "/" .. s.device .. "/events",
    { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token }, '{"event":' .. event .. '}')
end

local statuses = {}
-- The app does what the server said (stateful mode): after `idp_login` or `wipe` its user signs
-- in at the IdP, so the session's next event is the login the back end reports. The session is
-- found by the user the stored state names (a wipe's cleared state names none: the app is then
-- signed out, and its next launch hears `idp_login` and signs in).
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if mode == "stateful" and status == 200 then
    local decision = body:match('"decision":"([%a_]+)"')
    if decision == "idp_login" or decision == "wipe" then
      -- `user` is the state's last key, and `transition` follows the state.
      local user = body:match('"user":"([^"]+)"},"transition"')
      local s = user and by_user[user]
      if s then s.signed_in = false end
    end
  end
  if status >= 400 and (statuses[status] <= 3) then
    io.stderr:write("status " .. status .. ": " .. body:sub(1, 300) .. "\n")
  end
end

function done(summary, latency, requests)
  io.write(string.format("errors: connect %d, read %d, write %d, status %d, timeout %d\n",
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout))
end
