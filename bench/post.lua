-- wrk script: POST the AdmissionReview in $BENCH_REVIEW to the URL's path.
local f = assert(io.open(os.getenv("BENCH_REVIEW"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
