-- wrk script for paylink: each connection alternates between obtaining a
-- transaction token and spending it on a card purchase, as a merchant
-- integration does. Set PAYLINK_API_KEY and PAYLINK_COMPANY_TOKEN.
--
--   wrk -t2 -c64 -d15s -s docs/load/purchase.lua http://127.0.0.1:18090
--
-- Send load only to a paylink you run yourself on this machine.

local key = os.getenv("PAYLINK_API_KEY")
local company = os.getenv("PAYLINK_COMPANY_TOKEN")
local headers = {["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json"}
local token_body = '{"company_token":"' .. company .. '"}'
local tokens = {}

-- per-thread counters, read by done() through thread:get
purchases = 0
errors = 0

local function purchase_body(tok)
  return '{"token":{"company_token":"' .. company .. '","transaction_token":"' .. tok .. '"},' ..
    '"customer":{"ip_address":"203.0.113.7","timezone":"UTC"},' ..
    '"card":{"number":"4111111111111111","expiry_month":"12","expiry_year":"40","cvc":"123"},' ..
    '"purchase":{"amount":"10.00","currency":"AUD","should_service_apply_surcharge":true}}'
end

function request()
  local tok = table.remove(tokens)
  if tok then
    return wrk.format("POST", "/v5/purchase", headers, purchase_body(tok))
  end
  return wrk.format("POST", "/v5/transaction_token", headers, token_body)
end

function response(status, _, body)
  local tok = body:match('"transaction_token":"(%w+)"')
  if tok then
    table.insert(tokens, tok)
  elseif status == 200 and body:find('"status":"APPROVED"', 1, true) then
    purchases = purchases + 1
  else
    errors = errors + 1
  end
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function done(summary)
  local p, e = 0, 0
  for _, t in ipairs(threads) do
    p = p + t:get("purchases")
    e = e + t:get("errors")
  end
  io.write(string.format("approved purchases: %d (%.0f/s), errors: %d\n", p, p / (summary.duration / 1e6), e))
end
