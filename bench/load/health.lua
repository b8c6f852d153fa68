-- wrk script: GET /health (liveness, the baseline of the comparison).
dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "report.lua")
wrk.method = "GET"
wrk.path = "/health"
