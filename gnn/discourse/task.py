"""The discourse task on the contract (:class:`gnn.task.Task`): the dialogue parser of Molweni/STAC files.

An example is one EDU of a dialogue with its gold attachment: the sense linking it to its nearest
gold parent (``none``: no parent, as the first EDU). Training, evaluation and cross-validation
still read whole dialogues (each example carries its own): the parser attaches every EDU of a
dialogue at once, and its figures are the micro link F1 and link & relation F1 over the EDUs
asked about (in percent); predicted against gold per label is the sense of each EDU's best
predicted attachment against its gold one.

Groups are chat sessions (Molweni: dialogues sharing an EDU text of 20+ characters; the dialogue
``id`` numbers a window, not its session) and games (STAC: the dialogue id), per file
(:func:`gnn.discourse.data.session_groups`). One model trains on every file at once.

Over the graph (:meth:`DiscourseTask.predict_scope`) the task reads the ``dialogues`` records of
:mod:`graphstore.scopes` and writes each predicted link between the EDUs' graph ids.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gnn.discourse.data import DOMAINS, Dialogue, dialogues_from_bundle, session_groups, split_by_groups
from gnn.discourse.train import (
    MODEL_NAME,
    PROFILES,
    DiscourseModel,
    LinkPrediction,
    ParserConfig,
    load_model,
    save_model,
    schedule,
    train_parser,
)
from gnn.discourse.train import (
    TASK as NAME,
)
from gnn.metrics import discourse_scores
from gnn.modelcard import ModelCard, read_card
from gnn.protocol import Fold, FoldOutcome, Pooled, cross_validate
from gnn.task import (
    CardVersion,
    CVReport,
    Decoding,
    EvalReport,
    Fitted,
    LabelTally,
    PredictedRelation,
    Recipes,
    Resources,
    ScopePrediction,
    Task,
    TextPair,
    TrainReport,
)
from ontology.errors import ApiError, LoaderError
from ontology.records import (
    CorpusBundle,
    DiscourseRecord,
    LocutionRecord,
    RelationRecord,
    prediction_score,
)
from ontology.records import PredictedRelation as GraphRelation
from ontology.scope import Scope, ScopeRecords
from ontology.terms import RelType, Sense

if TYPE_CHECKING:
    from gnn.encoder import TextEncoder
    from gnn.trainer import Progress

NONE = "none"
"""The label of an EDU attached to no earlier one."""
SCHEMES = DOMAINS
TUNE_SHARE = 0.1
TEST_SHARE = {"molweni": 0.2, "stac": 0.15}
"""Held-out share of a file's EDUs in :meth:`DiscourseTask.train`, per scheme (a tenth tunes)."""
VERSION = 1
OPTIONS = ("scheme",)
"""Decoding options of a graph prediction: ``scheme`` spells the labels of dialogues of other corpora."""


@dataclass(frozen=True)
class DiscourseExample:
    """One EDU of a dialogue and its gold attachment.

    Attributes:
        dialogue: The whole dialogue (what the parser reads).
        index: The EDU's position in it.
        group: The session / game the dialogue belongs to.
        source: The text of its nearest gold parent (empty: none).
        target: The EDU's text.
        label: The sense of that attachment, or :data:`NONE`.
    """

    dialogue: Dialogue
    index: int
    group: str
    source: str
    target: str
    label: str

    @property
    def file(self) -> str:
        """The file the dialogue was read from (its key's prefix)."""
        return self.dialogue.key.rpartition("#")[0]


def dialogue_groups(dialogues: Sequence[Dialogue]) -> list[str]:
    """The session (Molweni) / game (STAC) group of each dialogue, named by its first dialogue's key."""
    out = [""] * len(dialogues)
    for members in session_groups(dialogues):
        for i in members:
            out[i] = dialogues[members[0]].key
    return out


def tally_senses(
    pooled: Pooled, dialogues: Sequence[Dialogue], predicted: Sequence[Iterable[tuple[int, int, str]]]
) -> None:
    """Add gold against predicted relations per sense to ``pooled``: a predicted ``(x, y, sense)`` of
    dialogue ``k`` is right when gold links ``x`` to ``y`` in that dialogue with that sense."""
    pooled.add_pairs(
        [((k, x, y), s) for k, d in enumerate(dialogues) for x, y, s in d.links()],
        [((k, x, y), s) for k, links in enumerate(predicted) for x, y, s in links],
    )


def edu_examples(dialogues: Sequence[Dialogue]) -> list[DiscourseExample]:
    """Every EDU of ``dialogues`` with its gold attachment, grouped by session / game per file."""
    files: dict[str, list[Dialogue]] = {}
    for d in dialogues:
        files.setdefault(d.key.rpartition("#")[0], []).append(d)
    group_of = {d.key: g for ds in files.values() for d, g in zip(ds, dialogue_groups(ds), strict=True)}
    out = []
    for d in dialogues:
        parents: dict[int, tuple[int, Sense]] = {}
        for x, y, sense in sorted(d.relations, key=lambda r: (r[1], r[0], r[2].value)):
            parents[y] = (x, sense)  # the nearest parent: the largest x comes last
        for y, text in enumerate(d.texts):
            parent = parents.get(y)
            source, label = (d.texts[parent[0]], parent[1].value) if parent else ("", NONE)
            out.append(DiscourseExample(d, y, group_of[d.key], source, text, label))
    return out


def dialogues_of(examples: Iterable[DiscourseExample]) -> list[Dialogue]:
    """The dialogues of ``examples``, once each, in order of their first example."""
    seen: dict[str, Dialogue] = {}
    for e in examples:
        seen.setdefault(e.dialogue.key, e.dialogue)
    return list(seen.values())


def dialogues_from_scope(records: ScopeRecords, scheme: str | None) -> list[Dialogue]:
    """The dialogues of a scope read back from the graph (``dialogues`` records), with their gold relations.

    EDUs keep the records' order; a dialogue is parsed in the style of its corpus, or of ``scheme``.

    Raises:
        ApiError: A dialogue of a corpus that is neither Molweni nor STAC, and no ``scheme``.
    """
    edus: dict[str, list[LocutionRecord]] = {}
    relations: dict[str, list[RelationRecord]] = {}
    corpus_of: dict[str, str] = {}
    for node in records.nodes:
        if isinstance(node, DiscourseRecord):
            corpus_of[node.id] = node.corpus
            edus.setdefault(node.id, [])
        elif isinstance(node, LocutionRecord) and node.discourse is not None:
            edus.setdefault(node.discourse, []).append(node)
        elif isinstance(node, RelationRecord) and node.discourse is not None and node.sense is not None:
            relations.setdefault(node.discourse, []).append(node)
    into: dict[str, list[str]] = {}
    out_of: dict[str, list[str]] = {}
    for e in records.edges:
        if e.type is RelType.AIF_EDGE:
            into.setdefault(e.target, []).append(e.source)
            out_of.setdefault(e.source, []).append(e.target)
    dialogues = []
    for k, did in enumerate(records.scope.ids):
        units = edus.get(did, [])
        domain = scheme or corpus_of.get(did) or records.scope.corpus
        if domain not in SCHEMES:
            raise ApiError(
                f"dialogue {did} is from corpus {corpus_of.get(did)!r}; give --scheme molweni or stac to parse it"
            )
        index = {u.id: i for i, u in enumerate(units)}
        links = [
            (index[s], index[t], Sense(rel.sense))
            for rel in relations.get(did, ())
            if rel.sense is not None
            for s in sorted(into.get(rel.id, ()))
            for t in sorted(out_of.get(rel.id, ()))
            if s in index and t in index
        ]
        dialogues.append(
            Dialogue(
                key=f"{did}#{k}",
                local_id=did,
                domain=domain,
                texts=[u.text or "" for u in units],
                speakers=[u.speaker or u.speaker_id or "" for u in units],
                relations=links,
                unit_ids=[u.id for u in units],
                graph_id=did,
            )
        )
    return dialogues


def _best(links: Iterable[LinkPrediction]) -> dict[int, str]:
    """Per EDU, the sense of its best-scored predicted attachment."""
    best: dict[int, LinkPrediction] = {}
    for p in links:
        if p.y not in best or p.score > best[p.y].score:
            best[p.y] = p
    return {y: p.sense.value for y, p in best.items()}


@dataclass(frozen=True)
class Scored:
    """A model's figures on some EDUs: the scores, per-label tally and per-file scores."""

    scores: dict[str, float]
    tally: Pooled
    files: dict[str, dict[str, Any]]
    seconds: float


def score(model: DiscourseModel, examples: Sequence[DiscourseExample], progress: Progress | None = None) -> Scored:
    """Link and link & relation F1 (percent) of ``model`` over the EDUs of ``examples``, and the per-EDU tally."""
    dialogues = dialogues_of(examples)
    t0 = time.perf_counter()
    predicted = model.predict(dialogues, progress or False)
    seconds = time.perf_counter() - t0
    asked: dict[str, set[int]] = {}
    for e in examples:
        asked.setdefault(e.dialogue.key, set()).add(e.index)
    gold = [{link for link in d.links() if link[1] in asked[d.key]} for d in dialogues]
    found = [
        {(p.x, p.y, p.sense.value) for p in ps if p.y in asked[d.key]}
        for d, ps in zip(dialogues, predicted, strict=True)
    ]
    best = {d.key: _best(ps) for d, ps in zip(dialogues, predicted, strict=True)}
    tally = Pooled()
    tally.add_pairs(
        [(n, e.label) for n, e in enumerate(examples)],
        [(n, best[e.dialogue.key].get(e.index, NONE)) for n, e in enumerate(examples)],
    )
    s = discourse_scores(gold, found).as_dict()
    files: dict[str, dict[str, Any]] = {}
    for k, d in enumerate(dialogues):
        files.setdefault(d.key.rpartition("#")[0], {"gold": [], "found": [], "dialogues": 0})
        part = files[d.key.rpartition("#")[0]]
        part["gold"].append(gold[k])
        part["found"].append(found[k])
        part["dialogues"] += 1
    per_file = {
        name: {**discourse_scores(part["gold"], part["found"]).as_dict(), "dialogues": part["dialogues"]}
        for name, part in files.items()
    }
    return Scored({"link_f1": s["link_f1"], "link_rel_f1": s["link_rel_f1"]}, tally, per_file, seconds)


@dataclass(frozen=True)
class FileScores:
    """A model's figures on whole dialogues (a corpus file).

    Attributes:
        scores: Micro link and link & relation precision, recall and F1 (percent), dialogues, EDUs.
        senses: Gold against predicted relations per sense (:func:`tally_senses`).
        seconds: Time of the parse.
    """

    scores: dict[str, Any]
    senses: Pooled
    seconds: float


def file_scores(model: DiscourseModel, dialogues: Sequence[Dialogue], progress: Progress | None = None) -> FileScores:
    """Score ``model`` on every relation of ``dialogues``; ``progress`` hears the encoding and the parse."""
    t0 = time.perf_counter()
    predicted = model.predict(dialogues, progress or False)
    seconds = time.perf_counter() - t0
    found = [[(p.x, p.y, p.sense.value) for p in links] for links in predicted]
    scores = discourse_scores([d.links() for d in dialogues], [set(links) for links in found]).as_dict()
    # Per sense: whether rare senses are predicted at all.
    senses = Pooled()
    tally_senses(senses, dialogues, found)
    return FileScores(scores, senses, seconds)


def _pair_probabilities(model: DiscourseModel, pairs: Sequence[TextPair]) -> list[dict[str, float]]:
    """Each pair read as a two-EDU dialogue: the probability of each sense linking them, and of :data:`NONE`."""
    import torch

    from gnn.discourse.graphs import SENSES
    from gnn.discourse.train import _collate, probabilities

    dialogues = [
        Dialogue(f"pair#{n}", str(n), "molweni", [p.source, p.target], ["A", "B"]) for n, p in enumerate(pairs)
    ]
    if not dialogues:
        return []
    data = model.graphs(dialogues)
    out = []
    for net in model.nets:
        net.eval()
    with torch.inference_mode():
        for start in range(0, len(dialogues), 32):
            idx = list(range(start, min(start + 32, len(dialogues))))
            batch = _collate(data, idx, model.device)
            link, sense = probabilities(model.nets, batch)
            ptr = batch.ptr.tolist()
            for g in range(len(idx)):
                node = ptr[g] + 1
                attached = float(link[node, 1])
                row = {s.value: attached * float(sense[node, 1, i]) for i, s in enumerate(SENSES)}
                out.append({**row, NONE: 1.0 - attached})
    return out


class DiscourseTask(Task[ParserConfig, DiscourseExample, DiscourseModel]):
    """The dialogue discourse parser: each EDU's parent(s) among earlier EDUs and the SDRT sense of each link."""

    name = NAME
    model_name = MODEL_NAME
    version = VERSION
    reads = "dialogues"
    default_files = (("molweni", "DP", "dev.json"), ("stac", "train.json"))
    """The files the shipped model trains on, under a corpora directory (those present are read)."""
    recipes = Recipes(
        {name: ParserConfig(**kw) for name, kw in PROFILES.items()},
        "full",
        lambda c: schedule(c, c.seed),
    )
    graph_corpora = ("molweni", "stac")

    # What the task reads.

    def examples(self, records: CorpusBundle, config: ParserConfig) -> list[DiscourseExample]:
        """Every EDU of the dialogues of ``records`` (:func:`ontology.formats.dialogue_json.load_dialogue_files`).

        Raises:
            LoaderError: No EDU in the records.
        """
        found = edu_examples(dialogues_from_bundle(records, per_file=True))
        if not found:
            raise LoaderError(f"{records.origin}: no EDU to learn from")
        return found

    def group(self, example: DiscourseExample) -> str:
        return example.group

    def gold(self, example: DiscourseExample) -> str:
        return example.label

    def inputs(self, example: DiscourseExample) -> TextPair:
        return TextPair(example.source, example.target)

    # Training and loading.

    def fit(
        self,
        train: Sequence[DiscourseExample],
        tune: Sequence[DiscourseExample],
        config: ParserConfig,
        resources: Resources,
    ) -> Fitted[DiscourseModel]:
        """A parser trained on the dialogues of ``train``, each member's epoch and the thresholds chosen on ``tune``."""
        own = replace(config, thresholds=dict(config.thresholds))
        encoder = resources.encoder(None)
        model, history = train_parser(
            dialogues_of(train), dialogues_of(tune), encoder, own, device=resources.device, log=resources.log
        )
        epochs = {int(r.get("member", 0)): int(r["epoch"]) for r in history if r.get("selected")}
        chosen = {"thresholds": dict(own.thresholds), "epochs": [epochs[m] for m in sorted(epochs)]}
        return Fitted(model, chosen)

    def train(
        self,
        examples: Sequence[DiscourseExample],
        out: Path,
        config: ParserConfig,
        profile: str,
        resources: Resources,
    ) -> TrainReport:
        """:func:`train_model` on the files of ``examples``."""
        return train_model(self, examples, out, config, profile, resources)

    def load(self, model_dir: Path, *, encoder: TextEncoder | None, device: str | None) -> DiscourseModel:
        return load_model(model_dir, encoder=encoder, device=device)

    def predict(self, loaded: DiscourseModel, records: Sequence[TextPair]) -> list[PredictedRelation]:
        """Each pair as a two-EDU dialogue: the sense linking the target to the source (or :data:`NONE`)."""
        out = []
        for pair, probs in zip(records, _pair_probabilities(loaded, records), strict=True):
            label = max(probs, key=lambda k: (probs[k], k))
            out.append(PredictedRelation(pair.source, pair.target, label, probs[label], probs))
        return out

    # Evaluation and cross-validation: whole dialogues.

    def describe(self, loaded: DiscourseModel) -> str:
        return f"{self.model_name} ({loaded.config.members} network(s))"

    def evaluate(
        self, loaded: DiscourseModel, examples: Sequence[DiscourseExample], resources: Resources
    ) -> EvalReport:
        """Micro link F1 and link & relation F1 over the EDUs of ``examples``; the sense of each EDU's attachment."""
        scored = score(loaded, examples)
        edus = len(examples)
        details = {
            "dialogues": len(dialogues_of(examples)),
            "edus": edus,
            "edus_per_second": round(edus / max(scored.seconds, 1e-9), 1),
            "files": scored.files,
        }
        return EvalReport(self.name, self.describe(loaded), scored.scores, LabelTally.table(scored.tally), details)

    def protocol(self, examples: Sequence[DiscourseExample]) -> str:
        files = sorted({e.file for e in examples})
        return (
            f"{len(examples)} EDUs of {len(dialogues_of(examples))} dialogues ({', '.join(files)}) grouped by chat "
            "session (Molweni: dialogues sharing an EDU text of 20+ characters) / game (STAC: the dialogue id); one "
            "model per fold trained on the other folds of every file, about 1/10 of them (whole groups) choosing each "
            "member's epoch and the extra-parent thresholds; micro F1 (percent) of the held-out fold's EDUs"
        )

    def encoder_name(self, config: ParserConfig, resources: Resources) -> str | None:
        return resources.encoder(None).name

    def cross_validate(
        self,
        examples: Sequence[DiscourseExample],
        config: ParserConfig,
        resources: Resources,
        *,
        folds: int = 5,
        seed: int = 13,
        profile: str = "",
    ) -> CVReport:
        """Out-of-fold figures of ``config`` through :func:`gnn.protocol.cross_validate`, grouped by session / game.

        Raises:
            ApiError: Fewer groups than folds.
        """

        def run_fold(fold: Fold) -> FoldOutcome:
            fitted = self.fit([examples[i] for i in fold.train], [examples[i] for i in fold.tune], config, resources)
            scored = score(fitted.model, [examples[i] for i in fold.test])
            return FoldOutcome(scored.scores, {"": scored.tally}, dict(fitted.chosen), {"files": scored.files})

        groups = [e.group for e in examples]
        if len(set(groups)) < folds:
            raise ApiError(f"{len(set(groups))} session/game group(s) of dialogues cannot fill {folds} folds")
        summary = cross_validate(
            groups, run_fold, folds, seed, self.protocol(examples), log=resources.log, what="discourse cross-validation"
        )
        return CVReport.of(self.name, profile, self.encoder_name(config, resources), summary)

    # Over dialogues stored in the graph.

    def scope_read(self, corpus: str) -> str:
        return "dialogues"

    def decoding(self, loaded: DiscourseModel, model_dir: Path, scope: Scope, options: Mapping[str, str]) -> Decoding:
        """The run id parts: the task, model, version, model directory, scheme, corpus, dialogue, dialogue ids.

        A corpus is named for a whole corpus, a dialogue (its graph id) for one dialogue.

        Raises:
            ApiError: An option other than ``scheme``, or a scheme that is not molweni or stac.
        """
        scheme = _scheme(options)
        card = read_card(model_dir, task=self.name)
        corpus = scope.corpus if scope.dialogue is None else None
        # The parts the discourse service gave before the task was on the contract (run ids unchanged).
        parts = (
            self.name,
            card.model,
            card.written_version,
            model_dir.resolve(),
            scheme,
            corpus,
            scope.dialogue,
            *scope.ids,
        )
        return Decoding(parts, {"model_dir": str(model_dir), "corpus": corpus, "dialogue": scope.dialogue})

    def predict_scope(
        self, loaded: DiscourseModel, records: ScopeRecords, options: Mapping[str, str]
    ) -> ScopePrediction:
        """The parser's links between the EDUs of each dialogue, scored against the gold relations in scope.

        Raises:
            ApiError: A dialogue of another corpus than Molweni/STAC and no ``scheme``; a bad option.
        """
        from ontology.formats.dialogue_json import scheme_label
        from ontology.labels import RelationLabel

        dialogues = dialogues_from_scope(records, _scheme(options))
        predicted = loaded.predict(dialogues)
        rows = []
        for d, links in zip(dialogues, predicted, strict=True):
            assert d.unit_ids is not None
            for p in links:
                rows.append(
                    GraphRelation(
                        source=d.unit_ids[p.x],
                        target=d.unit_ids[p.y],
                        label=RelationLabel(p.sense.value),
                        score=prediction_score(p.score),
                        scheme_label=scheme_label(d.domain, p.sense),
                    )
                )
        gold = scores = None
        if any(d.relations for d in dialogues):
            found = [{(p.x, p.y, p.sense.value) for p in ps} for ps in predicted]
            scores = discourse_scores([d.links() for d in dialogues], found).as_dict()
            gold = sum(len(d.relations) for d in dialogues)
        return ScopePrediction(tuple(rows), len(dialogues), gold, scores, "predicted discourse relations")


def _scheme(options: Mapping[str, str]) -> str | None:
    """The ``scheme`` option (``None``: each dialogue's own corpus).

    Raises:
        ApiError: Another option, or an unknown scheme.
    """
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ApiError(f"unknown discourse option(s) {unknown}; expected {list(OPTIONS)}")
    scheme = options.get("scheme") or None
    if scheme is not None and scheme not in SCHEMES:
        raise ApiError(f"unknown scheme {scheme!r}; expected one of {SCHEMES}")
    return scheme


def train_model(
    task: DiscourseTask,
    examples: Sequence[DiscourseExample],
    out: Path,
    config: ParserConfig,
    profile: str,
    resources: Resources,
    progress: Progress | None = None,
) -> TrainReport:
    """Train the parser on the dialogues of ``examples`` and write a model directory with its card.

    Each file is split by session / game groups into train, tune (early stopping, extra-parent
    thresholds) and held-out test parts; the card records the held-out scores per file and the
    positions of the held-out dialogues.

    Args:
        task: The task.
        examples: EDUs of the training files (:meth:`DiscourseTask.examples`).
        out: The model directory.
        config: The recipe (``config.seed`` also seeds the splits).
        profile: Its profile name.
        resources: The encoder chosen, the cache, the log, the files read.
        progress: Hears the encoding and each network's epochs.
    """
    started = time.perf_counter()
    seed = config.seed
    paths = {p.name: p for p in resources.data_files}
    files: dict[str, list[Dialogue]] = {}
    for d in dialogues_of(examples):
        files.setdefault(d.key.rpartition("#")[0], []).append(d)
    train_d: list[Dialogue] = []
    tune_d: list[Dialogue] = []
    tests: dict[str, list[Dialogue]] = {}
    split_info: dict[str, Any] = {}
    for name, dialogues in files.items():
        scheme = dialogues[0].domain
        parts = split_by_groups(dialogues, [TUNE_SHARE, TEST_SHARE[scheme]], seed=seed)
        train_d += [dialogues[i] for i in parts[0]]
        tune_d += [dialogues[i] for i in parts[1]]
        tests[name] = [dialogues[i] for i in parts[2]]
        sizes = {part: len(idx) for part, idx in zip(("train", "tune", "test"), parts, strict=True)}
        where = str(paths.get(name, name))
        split_info[name] = {"path": where, "scheme": scheme, "dialogues": len(dialogues), **sizes}
        split_info[name] |= {"test_positions": parts[2], "tune_positions": parts[1]}
        resources.log(f"{name}: {len(parts[0])} train / {len(parts[1])} tune / {len(parts[2])} test dialogues")
    own = replace(config, thresholds=dict(config.thresholds))
    encoder = resources.encoder(None)
    model, history = train_parser(train_d, tune_d, encoder, own, progress=progress, log=resources.log)
    seconds = time.perf_counter() - started
    metrics: dict[str, Any] = {}
    for name, dialogues in tests.items():
        t0 = time.perf_counter()
        scores = model.evaluate(dialogues)
        elapsed = time.perf_counter() - t0
        metrics[f"{name}:held-out"] = {
            **scores.as_dict(),
            "edus_per_second": round(sum(len(d) for d in dialogues) / max(elapsed, 1e-9), 1),
        }
        resources.log(
            f"{name} held-out: link F1 {100 * scores.link.f1:.1f}, link&rel F1 {100 * scores.link_rel.f1:.1f}"
        )
    card = ModelCard(
        task=task.name,
        model=MODEL_NAME,
        version=str(task.version),
        weights=[],
        encoder=encoder.name,
        encoder_fingerprint=encoder.fingerprint(),
        encoder_dir=str(encoder.model_dir.resolve()) if resources.encoder_dir is not None else None,
        data={"files": split_info, "split": "per file, by session groups (shared EDU text; STAC: same id)"},
        metrics={**metrics, "history": history},
        training_seconds=round(seconds, 1),
        notes=(
            "Frozen all-MiniLM-L6-v2 EDU embeddings + trainable word bag, BiGRU over the dialogue, relational "
            "message passing over speaker/turn/mention edges, pairwise link scorer over the previous K EDUs "
            "and a sense classifier; a second structure-aware pass over the predicted links typed by sense. "
            f"An ensemble of {own.members} such network(s) (seeds {seed}..{seed + own.members - 1}, "
            "probabilities averaged). "
            f"Profile {profile}; per-member, per-epoch tuning scores in metrics.history."
        ),
    )
    save_model(model, out, card)
    held = ", ".join(
        f"{name} link F1 {m['link_f1']:.2f}, link&rel F1 {m['link_rel_f1']:.2f}" for name, m in metrics.items()
    )
    return TrainReport(task.name, out, card, CardVersion.of(card), f"discourse model -> {out} (held-out: {held})")


TASK = DiscourseTask()
"""The registered discourse task."""
