-- wrk script: history pages (load/size.sh), read with the back end's token. WHICH=filled (the
-- default): GET /v1/policies/{policy}/sessions/fill-{i}/phone/history for a random i below
-- SESSIONS, the policy chosen as load/size.sh's fill chooses it (i mod 7): records spread over
-- the retention, mostly not in memory on a large store. WHICH=active: the sessions of
-- load/workload.lua's users load-{i} (device phone-{i}, policy (i mod 7) + 1) for i below USERS:
-- records written in the last minutes.
--
-- Env: WHICH, SESSIONS, USERS, SERVICE_TOKEN.
local active = os.getenv("WHICH") == "active"
local sessions = tonumber(os.getenv(active and "USERS" or "SESSIONS") or "1000")
local service = os.getenv("SERVICE_TOKEN") or ""
local policies = {
  "kobil-offline-token", "kobil-signed-jwt", "kobil-signed-jwt-hardware", "spendiq", "i360-salesforce",
  "i360-marketsharp", "cross-app-device-sso",
}

function init(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
end

function request()
  local i = math.random(0, sessions - 1)
  local path = active and ("/sessions/load-" .. i .. "/phone-" .. i) or ("/sessions/fill-" .. i .. "/phone")
  return wrk.format("GET", "/v1/policies/" .. policies[(i % 7) + 1] .. path .. "/history",
    { ["Authorization"] = "Bearer " .. service })
end

local bad = 0
function response(status, headers, body)
  if status ~= 200 then
    bad = bad + 1
    if bad <= 3 then io.stderr:write("history: " .. status .. " " .. body:sub(1, 200) .. "\n") end
  end
end
