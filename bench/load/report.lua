-- Shared by health.lua and step.lua: at the end of a wrk run, print one line
--   RESULT {"requests": n, "seconds": s, "rps": r, "p50_ms": a, "p99_ms": b, "errors": e, "non_2xx": m}
-- that run.sh parses. wrk's latency figures are in microseconds.
function done(summary, latency, requests)
   local seconds = summary.duration / 1e6
   local e = summary.errors
   io.write(string.format(
      'RESULT {"requests": %d, "seconds": %.3f, "rps": %.1f, "p50_ms": %.3f, "p99_ms": %.3f, "errors": %d, "non_2xx": %d}\n',
      summary.requests, seconds, summary.requests / seconds,
      latency:percentile(50) / 1000, latency:percentile(99) / 1000,
      e.connect + e.read + e.write + e.timeout, e.status))
end
