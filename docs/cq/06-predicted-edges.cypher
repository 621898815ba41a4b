// title: Predicted edges with a confidence of at least 0.8, with the model that predicted them
// requires:
MATCH (s:Node)-[:AIF_EDGE]->(r:Relation)-[:AIF_EDGE]->(t:Node)
WHERE r.origin = 'predicted' AND r.confidence >= 0.8
RETURN r.id AS relation, r.model AS model, r.model_version AS version, r.confidence AS confidence,
       r.created_at AS created, s.id AS source, t.id AS target
ORDER BY relation, source, target
