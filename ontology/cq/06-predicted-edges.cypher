// title: Predicted edges with a model score of at least 0.8, with the model and run that predicted them
// requires:
MATCH (s:Node)-[:AIF_EDGE]->(r:Relation)-[:AIF_EDGE]->(t:Node)
WHERE r.origin = 'predicted' AND r.score >= 0.8
RETURN r.id AS relation, r.model AS model, r.model_version AS version, r.score AS score,
       r.run_id AS run, r.created_at AS created, s.id AS source, t.id AS target
ORDER BY relation, source, target
