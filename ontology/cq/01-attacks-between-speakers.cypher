// title: Attacks between different speakers, per corpus and topic
// requires:
// Each attack links two propositions; each proposition is anchored in the locution that asserts it
// by an Illocution (AIF YA) node, and each locution is SPOKEN_BY a speaker.
MATCH (l1:Locution)-[:AIF_EDGE]->(:Illocution)-[:AIF_EDGE]->(p1:Proposition)-[:AIF_EDGE]->(a:Attack)
      -[:AIF_EDGE]->(p2:Proposition)<-[:AIF_EDGE]-(:Illocution)<-[:AIF_EDGE]-(l2:Locution)
MATCH (l1)-[:SPOKEN_BY]->(s1:Speaker), (l2)-[:SPOKEN_BY]->(s2:Speaker)
WHERE s1 <> s2
RETURN a.corpus AS corpus, a.topic AS topic, count(DISTINCT a) AS attacks
ORDER BY corpus, topic
