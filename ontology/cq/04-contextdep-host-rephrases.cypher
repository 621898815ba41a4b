// title: Host rephrases of guest statements with a vote share of at least 0.5 (ContextDeP)
// requires: contextdep
MATCH (g:Locution)-[:AIF_EDGE]->(r:Rephrase {corpus: 'contextdep'})-[:AIF_EDGE]->(h:Locution)
WHERE r.vote_share >= 0.5
RETURN g.id AS guest, h.id AS host, r.vote_share AS vote_share, r.votes AS votes
ORDER BY guest, host
