-- wrk script: POST /v1/step with the SPEC section 4 worked example's state
-- (target toy, draft biased, width 3, seed 1, empty prefix).
dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "report.lua")
wrk.method = "POST"
wrk.path = "/v1/step"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"config": {"target": "toy", "draft": "biased", "width": 3, "seed": 1}}'
