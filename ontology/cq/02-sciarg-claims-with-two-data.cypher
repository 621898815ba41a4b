// title: Sci-Arg claims supported by at least two data components
// requires: sciarg
MATCH (d:Premise {corpus: 'sciarg'})-[:AIF_EDGE]->(:Support)-[:AIF_EDGE]->(c:Claim)
WITH c, count(DISTINCT d) AS data
WHERE data >= 2
RETURN c.id AS claim, c.scheme_label AS kind, data
ORDER BY claim
