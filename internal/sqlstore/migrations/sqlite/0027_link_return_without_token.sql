-- A hosted page's 3-D Secure attempt stored its return address with the
-- link's page token in it ({base}/pay/{token}/3ds), in clear, where the
-- token is otherwise kept only hashed and sealed. New attempts return to
-- {base}/checkout/return/{link id}; this rewrites the stored ones the
-- same way. A page token is 32 characters, so the old path is the last
-- 41 characters of the address ("/pay/" + token + "/3ds").
UPDATE transactions
SET details = json_set(details, '$.threeds.redirect_url',
    substr(json_extract(details, '$.threeds.redirect_url'), 1,
           length(json_extract(details, '$.threeds.redirect_url')) - 41)
    || '/checkout/return/' || payment_link_id)
WHERE payment_link_id <> ''
  AND json_extract(details, '$.threeds.redirect_url') LIKE '%/3ds'
  AND substr(json_extract(details, '$.threeds.redirect_url'),
             length(json_extract(details, '$.threeds.redirect_url')) - 40, 5) = '/pay/';
