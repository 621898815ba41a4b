// title: Every support and attack across all corpora, by unified type and origin
// requires:
MATCH (r:SchemeNode)
WHERE r:Support OR r:Attack
RETURN r.corpus AS corpus, CASE WHEN r:Support THEN 'Support' ELSE 'Attack' END AS type,
       r.origin AS origin, count(*) AS relations
ORDER BY corpus, type, origin
