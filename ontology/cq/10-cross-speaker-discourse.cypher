// title: Discourse relations between different speakers versus within one speaker, per corpus and sense
// requires: molweni
MATCH (x:Locution)-[:AIF_EDGE]->(r:DiscourseRelation)-[:AIF_EDGE]->(y:Locution)
MATCH (x)-[:SPOKEN_BY]->(sx:Speaker), (y)-[:SPOKEN_BY]->(sy:Speaker)
RETURN r.corpus AS corpus, r.sense AS sense,
       sum(CASE WHEN sx <> sy THEN 1 ELSE 0 END) AS cross_speaker,
       sum(CASE WHEN sx = sy THEN 1 ELSE 0 END) AS same_speaker
ORDER BY corpus, sense
