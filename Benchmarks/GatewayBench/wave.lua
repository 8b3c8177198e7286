-- The acceptance wave for wrk: each user of a slice accepts the terms once. wrk's threads split
-- the slice between them with no overlap; each thread sends its users' acceptances and stops once
-- every one of them is answered; the last thread to finish ends wrk (SIGINT, as Ctrl-C does), so
-- wrk's run time and Requests/sec are the slice's, not the cap's.
--   wrk -t T -c C -d CAP -s wave.lua URL -- TOKENS FIRST LAST VERSION T DONE_FILE
-- TOKENS holds `user_id token` lines (compass load users --tokens); FIRST and LAST are the
-- slice's line numbers, inclusive; DONE_FILE is a new file's path where the threads sign off.
local count = 0

function setup(thread)
  thread:set("id", count)
  count = count + 1
end

function init(args)
  local file, first, last, version = args[1], tonumber(args[2]), tonumber(args[3]), args[4]
  threads, done_file = tonumber(args[5]), args[6]
  local total = last - first + 1
  local lo = first + math.floor(total * id / threads)
  local hi = first + math.floor(total * (id + 1) / threads) - 1
  local body = '{"tos_version":"' .. version .. '"}'
  requests = {}
  local number = 0
  for line in io.lines(file) do
    number = number + 1
    if number > hi then break end
    if number >= lo then
      local user, token = line:match("^(%S+) (%S+)$")
      requests[#requests + 1] = wrk.format("PUT", "/api/users/" .. user .. "/accept-tos",
        {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}, body)
    end
  end
  sent, answered = 0, 0
  -- wrk (4.x) calls the first thread's request() once right after init to check the request's
  -- shape, and sends nothing of it: that call must not use up a user.
  checking = id == 0
end

function request()
  if checking then
    checking = false
    return requests[1]
  end
  if sent < #requests then
    sent = sent + 1
    return requests[sent]
  end
  -- Every user of this thread has been sent: the connection stays idle while the last answers come.
  return ""
end

function response(status, headers, body)
  answered = answered + 1
  if answered == #requests then
    wrk.thread:stop()
    -- The shell's parent is wrk: once every thread has signed off, end the run. From the
    -- background and repeated: system() ignores SIGINT in wrk until the shell returns, and the
    -- signal must reach wrk's main thread (asleep for the cap) once the threads are gone.
    os.execute(string.format("echo %d >> '%s'; [ $(wc -l < '%s') -ge %d ] && "
      .. "(for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.005; kill -INT $PPID 2>/dev/null || exit 0; done) &",
      id, done_file, done_file, threads))
  end
end
