// title: Question-answer pairs in every dialogue corpus, asked through the STAC class
// requires: molweni
MATCH (r:DiscourseRelation {sense: 'QuestionAnswerPair'})
RETURN r.corpus AS corpus, collect(DISTINCT r.scheme_label)[0] AS label, count(*) AS pairs
ORDER BY corpus
