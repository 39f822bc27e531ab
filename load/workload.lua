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
--   START_DAYS  how many days before now the sessions start (default 300); the server must
--             accept events that late (`--clock-max-delay 400d`).
--
-- Each wrk thread owns every THREADS-th session and visits its sessions in turn, so two events
-- of one session are never in flight at once and arrive in order.

local mode = os.getenv("MODE") or "stateful"
local service = os.getenv("SERVICE_TOKEN") or ""
local batch = tonumber(os.getenv("BATCH") or "100")
local start_days = tonumber(os.getenv("START_DAYS") or "300")
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

function init(args)
  local tid = tonumber(tid) or 0
  local total = tonumber(os.getenv("THREADS") or "2")
  math.randomseed(1000 + tid)
  local i = 0
  for line in io.lines(os.getenv("TOKENS") or "tokens.txt") do
    if i % total == tid then
      local user, token = line:match("(%S+) (%S+)")
      sessions[#sessions + 1] = {
        user = user, token = token, device = "phone-" .. i, policy = policies[(i % #policies) + 1],
        t = now - start_days * 86400 + math.random(0, 86400), signed_in = false, mode = modes[(i % #modes) + 1],
        last_login = nil, last_online = nil, restart = 0,
      }
    end
    i = i + 1
  end
end

-- How far the session's clock moves before its next event.
local function advance()
  local r = math.random()
  if r < 0.60 then return math.random(60, 7200) end           -- minutes to two hours
  if r < 0.90 then return math.random(7200, 86400) end        -- hours to a day
  if r < 0.98 then return math.random(86400, 7 * 86400) end   -- days
  return math.random(7 * 86400, 40 * 86400)                   -- weeks: past offline windows
end

-- The next event of session `s` as (kind, json fields, needs the service token).
local function next_event(s)
  s.t = s.t + advance()
  if s.t > now then
    -- The session reached today: it starts over on a new device, far back again.
    s.restart = s.restart + 1
    s.device = s.device:gsub("%-r%d+$", "") .. "-r" .. s.restart
    s.t = now - start_days * 86400 + math.random(0, 86400)
    s.signed_in = false
  end
  if not s.signed_in then
    s.signed_in = true
    s.last_login = s.t
    s.last_online = s.t
    return '"type":"idp_login_succeeded","user":"' .. s.user .. '","auth_mode":"' .. s.mode .. '","network":"online"', true
  end
  local r = math.random()
  if r < 0.28 then return '"type":"launch","network":"offline"', false end
  if r < 0.40 then return '"type":"launch","network":"online"', false end
  if r < 0.48 then return '"type":"resume","network":"offline"', false end
  if r < 0.62 then return '"type":"background"', false end
  if r < 0.69 then return '"type":"biometric_succeeded"', false end
  if r < 0.73 then return '"type":"biometric_failed"', false end
  if r < 0.81 then s.last_online = s.t; return '"type":"token_refreshed"', true end
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
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status >= 400 and (statuses[status] <= 3) then
    io.stderr:write("status " .. status .. ": " .. body:sub(1, 300) .. "\n")
  end
end

function done(summary, latency, requests)
  io.write(string.format("errors: connect %d, read %d, write %d, status %d, timeout %d\n",
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout))
end
