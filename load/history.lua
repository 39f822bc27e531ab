-- wrk script: history pages of filled sessions (load/size.sh). Each request reads
-- GET /v1/policies/{policy}/sessions/fill-{i}/phone/history for a random i below SESSIONS with the
-- back end's token, the policy chosen as load/size.sh's fill chooses it (i mod 7).
--
-- Env: SESSIONS (the filled sessions), SERVICE_TOKEN.
local sessions = tonumber(os.getenv("SESSIONS") or "1000")
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
  return wrk.format("GET", "/v1/policies/" .. policies[(i % 7) + 1] .. "/sessions/fill-" .. i .. "/phone/history",
    { ["Authorization"] = "Bearer " .. service })
end

local bad = 0
function response(status, headers, body)
  if status ~= 200 then
    bad = bad + 1
    if bad <= 3 then io.stderr:write("history: " .. status .. " " .. body:sub(1, 200) .. "\n") end
  end
end
