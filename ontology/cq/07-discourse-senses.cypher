// title: Discourse relations per corpus and unified SDRT sense
// requires: molweni
MATCH (r:DiscourseRelation)
RETURN r.corpus AS corpus, r.sense AS sense, count(*) AS relations
ORDER BY corpus, sense
