-- wrk script: stateful events for many users, each with its own token (load/tokens.py).
-- Every request is a `launch` of one user's session; users rotate per request.
local tokens = {}
for line in io.lines(os.getenv("TOKENS") or "tokens.txt") do
  local user, token = line:match("(%S+) (%S+)")
  tokens[#tokens + 1] = { user, token }
end
local policy = os.getenv("POLICY") or "spendiq"
local n = 0
-- Dated now: the server refuses events far from its clock (`clock.skew`, `clock.max.delay`).
local body = '{"event":{"type":"launch","time":"' .. os.date("!%Y-%m-%dT%H:%M:%SZ") .. '","network":"online"}}'

request = function()
  n = n + 1
  local t = tokens[(n % #tokens) + 1]
  return wrk.format("POST", "/v1/policies/" .. policy .. "/sessions/" .. t[1] .. "/phone/events",
    { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. t[2] }, body)
end
