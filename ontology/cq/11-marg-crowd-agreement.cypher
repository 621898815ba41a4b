// title: M-Arg pairs per label with their crowd judgements and how many agree with the label
// requires: m-arg
MATCH (j:Judgement {corpus: 'm-arg'})-[:JUDGES]->(r:Relation)
RETURN r.scheme_label AS label, count(DISTINCT r) AS pairs, count(j) AS judgements,
       sum(CASE WHEN j.label = r.scheme_label THEN 1 ELSE 0 END) AS agreeing
ORDER BY label
