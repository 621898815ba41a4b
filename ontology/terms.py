"""Ontology terms generated from ``ontology/argweb.ttl``. Do not edit by hand.

Regenerate with ``python -m ontology.codegen``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

NAMESPACE = "https://w3id.org/argweb/ontology#"


class Label(StrEnum):
    """Neo4j node labels (OWL classes annotated with ``aw:neo4jLabel``)."""

    Annotator = "Annotator"
    Attack = "Attack"
    Claim = "Claim"
    Corpus = "Corpus"
    Dialogue = "Dialogue"
    Discourse = "Discourse"
    DiscourseRelation = "DiscourseRelation"
    Document = "Document"
    Illocution = "Illocution"
    IngestJournal = "IngestJournal"
    Judgement = "Judgement"
    Locution = "Locution"
    Node = "Node"
    NonRelation = "NonRelation"
    PredictionRun = "PredictionRun"
    Premise = "Premise"
    Proposition = "Proposition"
    Relation = "Relation"
    Rephrase = "Rephrase"
    SameUnit = "SameUnit"
    SchemeNode = "SchemeNode"
    Sentence = "Sentence"
    Speaker = "Speaker"
    Support = "Support"
    Transition = "Transition"
    WriteLease = "WriteLease"


class RelType(StrEnum):
    """Neo4j relationship types (``aw:neo4jType``)."""

    AIF_EDGE = "AIF_EDGE"
    IN_SENTENCE = "IN_SENTENCE"
    JUDGED_BY = "JUDGED_BY"
    JUDGES = "JUDGES"
    PART_OF = "PART_OF"
    SPOKEN_BY = "SPOKEN_BY"


class Prop(StrEnum):
    """Neo4j property keys (``aw:neo4jProperty``)."""

    AIF_LOCUTIONS = "aif_locutions"
    AIF_TYPE = "aif_type"
    ANNOTATOR_COUNT = "annotator_count"
    AUDIO_FILE = "audio_file"
    BATCH = "batch"
    CHAR_END = "char_end"
    CHAR_START = "char_start"
    CONFIDENCE = "confidence"
    CORPUS = "corpus"
    COUNTS = "counts"
    CREATED_AT = "created_at"
    DIGEST = "digest"
    DISCOURSE = "discourse"
    EMBEDDING = "embedding"
    EMBEDDING_KEY = "embedding_key"
    EMBEDDING_MODEL = "embedding_model"
    END_TIME = "end_time"
    GOLDEN = "golden"
    HIGHLIGHTS = "highlights"
    ID = "id"
    INGEST_LEASE = "ingest_lease"
    INGEST_OWNER = "ingest_owner"
    INGEST_RUN = "ingest_run"
    INPUT_DIGEST = "input_digest"
    IS_REFERRING = "is_referring"
    JOURNAL_CORPUS = "journal_corpus"
    JOURNAL_KEY = "journal_key"
    JOURNAL_KIND = "journal_kind"
    JOURNAL_LABELS = "journal_labels"
    JOURNAL_OF = "journal_of"
    JOURNAL_RUN = "journal_run"
    JOURNAL_SOURCE = "journal_source"
    JOURNAL_TARGET = "journal_target"
    JOURNAL_TYPE = "journal_type"
    LABEL = "label"
    LAST_WRITE = "last_write"
    LAYOUT_X = "layout_x"
    LAYOUT_Y = "layout_y"
    LOCAL_ID = "local_id"
    MODEL = "model"
    MODEL_VERSION = "model_version"
    NAME = "name"
    ORIGIN = "origin"
    PARAMETERS = "parameters"
    PART = "part"
    PERSON_IDS = "person_ids"
    POSITION = "position"
    REASON = "reason"
    RUN_ID = "run_id"
    SCHEME_CLASS = "scheme_class"
    SCHEME_ID = "scheme_id"
    SCHEME_LABEL = "scheme_label"
    SCORE = "score"
    SENSE = "sense"
    SESSION = "session"
    SOURCE = "source"
    SOURCE_TOKENS = "source_tokens"
    SPANS = "spans"
    SPEAKER = "speaker"
    SPLIT = "split"
    START_TIME = "start_time"
    STATUS = "status"
    TAINTED = "tainted"
    TARGET_TOKENS = "target_tokens"
    TASK = "task"
    TEXT = "text"
    TIMESTAMP = "timestamp"
    TOKENS = "tokens"
    TOPIC = "topic"
    TRUST = "trust"
    VOTE_SHARE = "vote_share"
    VOTES = "votes"
    WRITE_TURNS = "write_turns"


class Sense(StrEnum):
    """Unified SDRT discourse senses."""

    Acknowledgement = "Acknowledgement"
    Alternation = "Alternation"
    Background = "Background"
    ClarificationQuestion = "ClarificationQuestion"
    Comment = "Comment"
    Conditional = "Conditional"
    Continuation = "Continuation"
    Contrast = "Contrast"
    Correction = "Correction"
    Elaboration = "Elaboration"
    Explanation = "Explanation"
    Narration = "Narration"
    Parallel = "Parallel"
    QuestionAnswerPair = "QuestionAnswerPair"
    QuestionElaboration = "QuestionElaboration"
    Result = "Result"


LABEL_IRI: dict[Label, str] = {
    Label.Annotator: "https://w3id.org/argweb/ontology#Annotator",
    Label.Attack: "https://w3id.org/argweb/ontology#Attack",
    Label.Claim: "https://w3id.org/argweb/ontology#Claim",
    Label.Corpus: "https://w3id.org/argweb/ontology#Corpus",
    Label.Dialogue: "https://w3id.org/argweb/ontology#Dialogue",
    Label.Discourse: "https://w3id.org/argweb/ontology#Discourse",
    Label.DiscourseRelation: "https://w3id.org/argweb/ontology#DiscourseRelation",
    Label.Document: "https://w3id.org/argweb/ontology#Document",
    Label.Illocution: "https://w3id.org/argweb/ontology#Illocution",
    Label.IngestJournal: "https://w3id.org/argweb/ontology#IngestJournal",
    Label.Judgement: "https://w3id.org/argweb/ontology#Judgement",
    Label.Locution: "https://w3id.org/argweb/ontology#Locution",
    Label.Node: "https://w3id.org/argweb/ontology#Node",
    Label.NonRelation: "https://w3id.org/argweb/ontology#NonRelation",
    Label.PredictionRun: "https://w3id.org/argweb/ontology#PredictionRun",
    Label.Premise: "https://w3id.org/argweb/ontology#Premise",
    Label.Proposition: "https://w3id.org/argweb/ontology#Proposition",
    Label.Relation: "https://w3id.org/argweb/ontology#Relation",
    Label.Rephrase: "https://w3id.org/argweb/ontology#Rephrase",
    Label.SameUnit: "https://w3id.org/argweb/ontology#SameUnit",
    Label.SchemeNode: "https://w3id.org/argweb/ontology#SchemeNode",
    Label.Sentence: "https://w3id.org/argweb/ontology#Sentence",
    Label.Speaker: "https://w3id.org/argweb/ontology#Speaker",
    Label.Support: "https://w3id.org/argweb/ontology#Support",
    Label.Transition: "https://w3id.org/argweb/ontology#Transition",
    Label.WriteLease: "https://w3id.org/argweb/ontology#WriteLease",
}

REL_TYPE_IRI: dict[RelType, str] = {
    RelType.AIF_EDGE: "https://w3id.org/argweb/ontology#aifEdge",
    RelType.IN_SENTENCE: "https://w3id.org/argweb/ontology#inSentence",
    RelType.JUDGED_BY: "https://w3id.org/argweb/ontology#judgedBy",
    RelType.JUDGES: "https://w3id.org/argweb/ontology#judges",
    RelType.PART_OF: "https://w3id.org/argweb/ontology#partOf",
    RelType.SPOKEN_BY: "https://w3id.org/argweb/ontology#spokenBy",
}

PROP_IRI: dict[Prop, str] = {
    Prop.AIF_LOCUTIONS: "https://w3id.org/argweb/ontology#aifLocutions",
    Prop.AIF_TYPE: "https://w3id.org/argweb/ontology#aifType",
    Prop.ANNOTATOR_COUNT: "https://w3id.org/argweb/ontology#annotatorCount",
    Prop.AUDIO_FILE: "https://w3id.org/argweb/ontology#audioFile",
    Prop.BATCH: "https://w3id.org/argweb/ontology#batch",
    Prop.CHAR_END: "https://w3id.org/argweb/ontology#charEnd",
    Prop.CHAR_START: "https://w3id.org/argweb/ontology#charStart",
    Prop.CONFIDENCE: "https://w3id.org/argweb/ontology#confidence",
    Prop.CORPUS: "https://w3id.org/argweb/ontology#corpus",
    Prop.COUNTS: "https://w3id.org/argweb/ontology#counts",
    Prop.CREATED_AT: "https://w3id.org/argweb/ontology#createdAt",
    Prop.DIGEST: "https://w3id.org/argweb/ontology#digest",
    Prop.DISCOURSE: "https://w3id.org/argweb/ontology#discourse",
    Prop.EMBEDDING: "https://w3id.org/argweb/ontology#embedding",
    Prop.EMBEDDING_KEY: "https://w3id.org/argweb/ontology#embeddingKey",
    Prop.EMBEDDING_MODEL: "https://w3id.org/argweb/ontology#embeddingModel",
    Prop.END_TIME: "https://w3id.org/argweb/ontology#endTime",
    Prop.GOLDEN: "https://w3id.org/argweb/ontology#golden",
    Prop.HIGHLIGHTS: "https://w3id.org/argweb/ontology#highlights",
    Prop.ID: "https://w3id.org/argweb/ontology#id",
    Prop.INGEST_LEASE: "https://w3id.org/argweb/ontology#ingestLease",
    Prop.INGEST_OWNER: "https://w3id.org/argweb/ontology#ingestOwner",
    Prop.INGEST_RUN: "https://w3id.org/argweb/ontology#ingestRun",
    Prop.INPUT_DIGEST: "https://w3id.org/argweb/ontology#inputDigest",
    Prop.IS_REFERRING: "https://w3id.org/argweb/ontology#isReferring",
    Prop.JOURNAL_CORPUS: "https://w3id.org/argweb/ontology#journalCorpus",
    Prop.JOURNAL_KEY: "https://w3id.org/argweb/ontology#journalKey",
    Prop.JOURNAL_KIND: "https://w3id.org/argweb/ontology#journalKind",
    Prop.JOURNAL_LABELS: "https://w3id.org/argweb/ontology#journalLabels",
    Prop.JOURNAL_OF: "https://w3id.org/argweb/ontology#journalOf",
    Prop.JOURNAL_RUN: "https://w3id.org/argweb/ontology#journalRun",
    Prop.JOURNAL_SOURCE: "https://w3id.org/argweb/ontology#journalSource",
    Prop.JOURNAL_TARGET: "https://w3id.org/argweb/ontology#journalTarget",
    Prop.JOURNAL_TYPE: "https://w3id.org/argweb/ontology#journalType",
    Prop.LABEL: "https://w3id.org/argweb/ontology#label",
    Prop.LAST_WRITE: "https://w3id.org/argweb/ontology#lastWrite",
    Prop.LAYOUT_X: "https://w3id.org/argweb/ontology#layoutX",
    Prop.LAYOUT_Y: "https://w3id.org/argweb/ontology#layoutY",
    Prop.LOCAL_ID: "https://w3id.org/argweb/ontology#localId",
    Prop.MODEL: "https://w3id.org/argweb/ontology#model",
    Prop.MODEL_VERSION: "https://w3id.org/argweb/ontology#modelVersion",
    Prop.NAME: "https://w3id.org/argweb/ontology#name",
    Prop.ORIGIN: "https://w3id.org/argweb/ontology#origin",
    Prop.PARAMETERS: "https://w3id.org/argweb/ontology#parameters",
    Prop.PART: "https://w3id.org/argweb/ontology#part",
    Prop.PERSON_IDS: "https://w3id.org/argweb/ontology#personIds",
    Prop.POSITION: "https://w3id.org/argweb/ontology#position",
    Prop.REASON: "https://w3id.org/argweb/ontology#reason",
    Prop.RUN_ID: "https://w3id.org/argweb/ontology#runId",
    Prop.SCHEME_CLASS: "https://w3id.org/argweb/ontology#schemeClass",
    Prop.SCHEME_ID: "https://w3id.org/argweb/ontology#schemeId",
    Prop.SCHEME_LABEL: "https://w3id.org/argweb/ontology#rawLabel",
    Prop.SCORE: "https://w3id.org/argweb/ontology#score",
    Prop.SENSE: "https://w3id.org/argweb/ontology#sense",
    Prop.SESSION: "https://w3id.org/argweb/ontology#session",
    Prop.SOURCE: "https://w3id.org/argweb/ontology#source",
    Prop.SOURCE_TOKENS: "https://w3id.org/argweb/ontology#sourceTokens",
    Prop.SPANS: "https://w3id.org/argweb/ontology#spans",
    Prop.SPEAKER: "https://w3id.org/argweb/ontology#speaker",
    Prop.SPLIT: "https://w3id.org/argweb/ontology#split",
    Prop.START_TIME: "https://w3id.org/argweb/ontology#startTime",
    Prop.STATUS: "https://w3id.org/argweb/ontology#status",
    Prop.TAINTED: "https://w3id.org/argweb/ontology#tainted",
    Prop.TARGET_TOKENS: "https://w3id.org/argweb/ontology#targetTokens",
    Prop.TASK: "https://w3id.org/argweb/ontology#task",
    Prop.TEXT: "https://w3id.org/argweb/ontology#text",
    Prop.TIMESTAMP: "https://w3id.org/argweb/ontology#timestamp",
    Prop.TOKENS: "https://w3id.org/argweb/ontology#tokens",
    Prop.TOPIC: "https://w3id.org/argweb/ontology#topic",
    Prop.TRUST: "https://w3id.org/argweb/ontology#trust",
    Prop.VOTE_SHARE: "https://w3id.org/argweb/ontology#voteShare",
    Prop.VOTES: "https://w3id.org/argweb/ontology#votes",
    Prop.WRITE_TURNS: "https://w3id.org/argweb/ontology#writeTurns",
}

SENSE_IRI: dict[Sense, str] = {
    Sense.Acknowledgement: "https://w3id.org/argweb/ontology#Acknowledgement",
    Sense.Alternation: "https://w3id.org/argweb/ontology#Alternation",
    Sense.Background: "https://w3id.org/argweb/ontology#Background",
    Sense.ClarificationQuestion: "https://w3id.org/argweb/ontology#ClarificationQuestion",
    Sense.Comment: "https://w3id.org/argweb/ontology#Comment",
    Sense.Conditional: "https://w3id.org/argweb/ontology#Conditional",
    Sense.Continuation: "https://w3id.org/argweb/ontology#Continuation",
    Sense.Contrast: "https://w3id.org/argweb/ontology#Contrast",
    Sense.Correction: "https://w3id.org/argweb/ontology#Correction",
    Sense.Elaboration: "https://w3id.org/argweb/ontology#Elaboration",
    Sense.Explanation: "https://w3id.org/argweb/ontology#Explanation",
    Sense.Narration: "https://w3id.org/argweb/ontology#Narration",
    Sense.Parallel: "https://w3id.org/argweb/ontology#Parallel",
    Sense.QuestionAnswerPair: "https://w3id.org/argweb/ontology#QuestionAnswerPair",
    Sense.QuestionElaboration: "https://w3id.org/argweb/ontology#QuestionElaboration",
    Sense.Result: "https://w3id.org/argweb/ontology#Result",
}

# Every unified super-class label of a label, nearest first.
LABEL_ANCESTORS: dict[Label, tuple[Label, ...]] = {
    Label.Annotator: (Label.Node,),
    Label.Attack: (Label.SchemeNode, Label.Relation, Label.Node),
    Label.Claim: (Label.Proposition, Label.Node),
    Label.Corpus: (Label.Node,),
    Label.Dialogue: (Label.Discourse, Label.Node),
    Label.Discourse: (Label.Node,),
    Label.DiscourseRelation: (Label.Transition, Label.SchemeNode, Label.Relation, Label.Node),
    Label.Document: (Label.Discourse, Label.Node),
    Label.Illocution: (Label.SchemeNode, Label.Relation, Label.Node),
    Label.IngestJournal: (),
    Label.Judgement: (Label.Node,),
    Label.Locution: (Label.Node,),
    Label.Node: (),
    Label.NonRelation: (Label.Relation, Label.Node),
    Label.PredictionRun: (Label.Node,),
    Label.Premise: (Label.Proposition, Label.Node),
    Label.Proposition: (Label.Node,),
    Label.Relation: (Label.Node,),
    Label.Rephrase: (Label.SchemeNode, Label.Relation, Label.Node),
    Label.SameUnit: (Label.Relation, Label.Node),
    Label.SchemeNode: (Label.Relation, Label.Node),
    Label.Sentence: (Label.Node,),
    Label.Speaker: (Label.Node,),
    Label.Support: (Label.SchemeNode, Label.Relation, Label.Node),
    Label.Transition: (Label.SchemeNode, Label.Relation, Label.Node),
    Label.WriteLease: (),
}


class SchemeTerm(NamedTuple):
    """A corpus-scheme class and the unified class it is mapped onto."""

    corpus: str
    raw: str
    iri: str
    label: Label
    sense: Sense | None


# Discourse-relation classes of the dialogue corpora, per unified sense: corpus -> (label, class IRI).
_SENSE_CLASSES: dict[Sense, dict[str, tuple[str, str]]] = {
    Sense.Acknowledgement: {"molweni": ("Acknowledgement", "https://w3id.org/argweb/scheme/molweni#Acknowledgement"), "stac": ("Acknowledgement", "https://w3id.org/argweb/scheme/stac#Acknowledgement")},
    Sense.Alternation: {"molweni": ("Alternation", "https://w3id.org/argweb/scheme/molweni#Alternation"), "stac": ("Alternation", "https://w3id.org/argweb/scheme/stac#Alternation")},
    Sense.Background: {"molweni": ("Background", "https://w3id.org/argweb/scheme/molweni#Background"), "stac": ("Background", "https://w3id.org/argweb/scheme/stac#Background")},
    Sense.ClarificationQuestion: {"molweni": ("Clarification_question", "https://w3id.org/argweb/scheme/molweni#Clarification_question"), "stac": ("Clarification_question", "https://w3id.org/argweb/scheme/stac#Clarification_question")},
    Sense.Comment: {"molweni": ("Comment", "https://w3id.org/argweb/scheme/molweni#Comment"), "stac": ("Comment", "https://w3id.org/argweb/scheme/stac#Comment")},
    Sense.Conditional: {"molweni": ("Conditional", "https://w3id.org/argweb/scheme/molweni#Conditional"), "stac": ("Conditional", "https://w3id.org/argweb/scheme/stac#Conditional")},
    Sense.Continuation: {"molweni": ("Continuation", "https://w3id.org/argweb/scheme/molweni#Continuation"), "stac": ("Continuation", "https://w3id.org/argweb/scheme/stac#Continuation")},
    Sense.Contrast: {"molweni": ("Contrast", "https://w3id.org/argweb/scheme/molweni#Contrast"), "stac": ("Contrast", "https://w3id.org/argweb/scheme/stac#Contrast")},
    Sense.Correction: {"molweni": ("Correction", "https://w3id.org/argweb/scheme/molweni#Correction"), "stac": ("Correction", "https://w3id.org/argweb/scheme/stac#Correction")},
    Sense.Elaboration: {"molweni": ("Elaboration", "https://w3id.org/argweb/scheme/molweni#Elaboration"), "stac": ("Elaboration", "https://w3id.org/argweb/scheme/stac#Elaboration")},
    Sense.Explanation: {"molweni": ("Explanation", "https://w3id.org/argweb/scheme/molweni#Explanation"), "stac": ("Explanation", "https://w3id.org/argweb/scheme/stac#Explanation")},
    Sense.Narration: {"molweni": ("Narration", "https://w3id.org/argweb/scheme/molweni#Narration"), "stac": ("Narration", "https://w3id.org/argweb/scheme/stac#Narration")},
    Sense.Parallel: {"molweni": ("Parallel", "https://w3id.org/argweb/scheme/molweni#Parallel"), "stac": ("Parallel", "https://w3id.org/argweb/scheme/stac#Parallel")},
    Sense.QuestionAnswerPair: {"molweni": ("QAP", "https://w3id.org/argweb/scheme/molweni#QAP"), "stac": ("Question-answer_pair", "https://w3id.org/argweb/scheme/stac#Question_answer_pair")},
    Sense.QuestionElaboration: {"molweni": ("Q-Elab", "https://w3id.org/argweb/scheme/molweni#Q_Elab"), "stac": ("Q-Elab", "https://w3id.org/argweb/scheme/stac#Q_Elab")},
    Sense.Result: {"molweni": ("Result", "https://w3id.org/argweb/scheme/molweni#Result"), "stac": ("Result", "https://w3id.org/argweb/scheme/stac#Result")},
}

# Every other scheme class: units, argument relations, non-relations.
_OTHER_SCHEME_TERMS: tuple[SchemeTerm, ...] = (
    SchemeTerm("contextdep", "NonParaphrase", "https://w3id.org/argweb/scheme/contextdep#NonParaphrase", Label.NonRelation, None),
    SchemeTerm("contextdep", "Paraphrase", "https://w3id.org/argweb/scheme/contextdep#Paraphrase", Label.Rephrase, None),
    SchemeTerm("m-arg", "Attack", "https://w3id.org/argweb/scheme/m-arg#Attack", Label.Attack, None),
    SchemeTerm("m-arg", "Neither", "https://w3id.org/argweb/scheme/m-arg#Neither", Label.NonRelation, None),
    SchemeTerm("m-arg", "Support", "https://w3id.org/argweb/scheme/m-arg#Support", Label.Support, None),
    SchemeTerm("qt30", "CA", "https://w3id.org/argweb/scheme/qt30#CA", Label.Attack, None),
    SchemeTerm("qt30", "I", "https://w3id.org/argweb/scheme/qt30#I", Label.Proposition, None),
    SchemeTerm("qt30", "L", "https://w3id.org/argweb/scheme/qt30#L", Label.Locution, None),
    SchemeTerm("qt30", "MA", "https://w3id.org/argweb/scheme/qt30#MA", Label.Rephrase, None),
    SchemeTerm("qt30", "RA", "https://w3id.org/argweb/scheme/qt30#RA", Label.Support, None),
    SchemeTerm("qt30", "TA", "https://w3id.org/argweb/scheme/qt30#TA", Label.Transition, None),
    SchemeTerm("qt30", "YA", "https://w3id.org/argweb/scheme/qt30#YA", Label.Illocution, None),
    SchemeTerm("sciarg", "background_claim", "https://w3id.org/argweb/scheme/sciarg#background_claim", Label.Claim, None),
    SchemeTerm("sciarg", "contradicts", "https://w3id.org/argweb/scheme/sciarg#contradicts", Label.Attack, None),
    SchemeTerm("sciarg", "data", "https://w3id.org/argweb/scheme/sciarg#data", Label.Premise, None),
    SchemeTerm("sciarg", "own_claim", "https://w3id.org/argweb/scheme/sciarg#own_claim", Label.Claim, None),
    SchemeTerm("sciarg", "parts_of_same", "https://w3id.org/argweb/scheme/sciarg#parts_of_same", Label.SameUnit, None),
    SchemeTerm("sciarg", "semantically_same", "https://w3id.org/argweb/scheme/sciarg#semantically_same", Label.Rephrase, None),
    SchemeTerm("sciarg", "supports", "https://w3id.org/argweb/scheme/sciarg#supports", Label.Support, None),
)

SCHEME_TERMS: tuple[SchemeTerm, ...] = tuple(
    sorted(
        [
            *_OTHER_SCHEME_TERMS,
            *(
                SchemeTerm(corpus, raw, iri, Label.DiscourseRelation, sense)
                for sense, by_corpus in _SENSE_CLASSES.items()
                for corpus, (raw, iri) in by_corpus.items()
            ),
        ],
        key=lambda t: (t.corpus, t.raw),
    )
)
