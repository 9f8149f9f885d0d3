-- A hosted page's 3-D Secure attempt stored its return address with the
-- link's page token in it ({base}/pay/{token}/3ds), in clear, where the
-- token is otherwise kept only hashed and sealed. New attempts return to
-- {base}/checkout/return/{link id}; this rewrites the stored ones the
-- same way. A page token is 32 characters, so the old path is the last
-- 41 characters of the address ("/pay/" + token + "/3ds").
UPDATE transactions
SET details = jsonb_set(details::jsonb, '{threeds,redirect_url}',
    to_jsonb(left(details::jsonb #>> '{threeds,redirect_url}', -41) || '/checkout/return/' || payment_link_id))::text
WHERE payment_link_id <> ''
  AND details::jsonb #>> '{threeds,redirect_url}' LIKE '%/3ds'
  AND substr(details::jsonb #>> '{threeds,redirect_url}',
             length(details::jsonb #>> '{threeds,redirect_url}') - 40, 5) = '/pay/';
