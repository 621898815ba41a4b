// title: Question-answer pairs per Molweni dialogue
// requires: molweni
MATCH (r:DiscourseRelation {corpus: 'molweni', sense: 'QuestionAnswerPair'})-[:PART_OF]->(d:Dialogue)
RETURN d.id AS dialogue, count(r) AS pairs
ORDER BY dialogue
