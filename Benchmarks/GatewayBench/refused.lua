-- The gateway's cost of an acceptance before its bus call, for wrk: every request is a real
-- accept-tos with a valid session token and body, sent for another user's id, so the gateway
-- checks the token (from its verified-token cache once the wave has shown it), reads the body and
-- answers 403 without calling Accounts. wrk's threads start at different users and cycle.
--   wrk -t T -c C -d SECONDS -s refused.lua URL -- TOKENS VERSION
-- TOKENS holds `user_id token` lines (compass load users --tokens).
local count = 0

function setup(thread)
  thread:set("id", count)
  count = count + 1
end

function init(args)
  local body = '{"tos_version":"' .. args[2] .. '"}'
  local users, tokens = {}, {}
  for line in io.lines(args[1]) do
    local user, token = line:match("^(%S+) (%S+)$")
    users[#users + 1] = user
    tokens[#tokens + 1] = token
  end
  requests = {}
  for i = 1, #users do
    requests[i] = wrk.format("PUT", "/api/users/" .. users[(i % #users) + 1] .. "/accept-tos",
      {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. tokens[i]}, body)
  end
  next_index = math.floor(#requests * id / 8)
end

function request()
  next_index = next_index % #requests + 1
  return requests[next_index]
end
