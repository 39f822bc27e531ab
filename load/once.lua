-- wrk script: GET each user's session with that user's own token (load/tokens.py), the tokens
-- split between the threads, each once; after its last token a thread repeats the first
-- (load/token-cache.sh stops wrk once every token was sent). What a verified-token cache sees
-- from many distinct users.
local tokens = {}
for line in io.lines(os.getenv("TOKENS") or "tokens.txt") do
  local user, token = line:match("(%S+) (%S+)")
  tokens[#tokens + 1] = { user, token }
end
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end

function init(args)
  step = tonumber(os.getenv("THREADS") or "2")
  n = id + 1
end

request = function()
  local t = tokens[n]
  if t == nil then t = tokens[1] end
  n = n + step
  return wrk.format("GET", "/v1/policies/spendiq/sessions/" .. t[1] .. "/phone", { ["Authorization"] = "Bearer " .. t[2] })
end
