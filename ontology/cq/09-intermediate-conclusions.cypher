// title: Intermediate conclusions: propositions supported by one argument and supporting another
// requires:
MATCH (:Support)-[:AIF_EDGE]->(p:Proposition)-[:AIF_EDGE]->(:Support)
RETURN p.corpus AS corpus, count(DISTINCT p) AS propositions
ORDER BY corpus
