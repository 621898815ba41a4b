"""Sci-Arg argument components: train the tagger, predict ``T`` lines, score the pipeline with BAM.

The split used by ``train``: papers A01-A20 train the tagger, A21-A24 choose the epoch, A25-A32
are held out (scored only). Papers are read with the Sci-Arg loader; texts are sliced exactly as
the loader slices them (raw UTF-8, BOM and ``\\r`` kept), so predicted offsets index the same
characters as gold ones.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from api.services.training import profile_config, write_trained_card
from gnn.bam import BratDocument, Component, Relation, documents_from_records, evaluate
from gnn.modelcard import ModelCard, atomic_write_bytes
from ontology.errors import LoaderError, ModelError
from ontology.formats.common import decode_utf8, read_bytes
from ontology.formats.sciarg import load_paper
from ontology.progress import Progress
from ontology.records import EdgeRecord, NodeRecord

TASK = "components"
MODEL_NAME = "sciarg-component-tagger"
VERSION = "1"
TRAIN = tuple(f"A{i:02d}" for i in range(1, 21))
TUNE = tuple(f"A{i:02d}" for i in range(21, 25))
HELDOUT = tuple(f"A{i:02d}" for i in range(25, 33))

SCIARG_DIR = Path("sciarg") / "compiled_corpus"
Linker = Callable[[Sequence[Component]], list[tuple[str, str, str]]]


def read_papers(directory: Path, names: Sequence[str] | None = None) -> dict[str, tuple[BratDocument, str]]:
    """(document, raw text) of the papers of a brat directory (all, or those named).

    Raises:
        LoaderError: Missing files or annotations the Sci-Arg loader rejects.
    """
    if not directory.is_dir():
        raise LoaderError(f"{directory}: not a directory")
    anns = sorted(directory.glob("*.ann"))
    if names is not None:
        anns = [a for a in anns if a.stem in set(names)]
    if not anns:
        raise LoaderError(f"{directory}: no brat .ann files{' for ' + ', '.join(names) if names else ''}")
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    texts = {}
    for ann in anns:
        txt = ann.with_suffix(".txt")
        if not txt.is_file():
            raise LoaderError(f"{ann}: no {txt.name} next to it")
        load_paper(ann.stem, ann, txt, nodes, edges)
        texts[ann.stem] = decode_utf8(txt, read_bytes(txt), keep_bom=True)
    docs = documents_from_records(nodes, edges)
    return {name: (docs[name], texts[name]) for name in sorted(docs)}


def train(
    corpus: Path,
    out: Path,
    cache_dir: Path | None,
    profile: str = "full",
    seed: int = 13,
    progress: Progress | None = None,
    encoder_dir: Path | None = None,
) -> ModelCard:
    """Train the tagger on A01-A20 (epoch chosen on A21-A24) and score A25-A32 with BAM.

    Args:
        corpus: The Sci-Arg brat directory.
        out: Model directory to write.
        cache_dir: Where the encoder's word vectors of each paper are cached (``None``: not cached).
        profile: ``quick`` or ``full``.
        seed: Random seed.
        progress: Called with (stage, done, total).
        encoder_dir: A local Hugging Face encoder to read the words with (its middle and last
            layers), instead of the packaged MiniLM (layers 3 and 6); recorded in the card.

    Raises:
        UnknownProfileError: Unknown profile. ModelError: An encoder directory that is not one.
        LoaderError: Missing or unreadable papers.
    """
    from gnn.components import PROFILES, TaggerConfig, TokenVectors, nearest_claim_relations, train_tagger
    from gnn.encoder import TextEncoder

    config = profile_config(PROFILES, profile, seed, TaggerConfig, "components")
    encoder = TextEncoder(encoder_dir)
    if encoder_dir is not None:
        config.layers = encoder.middle_and_last()
    train_papers, tune_papers = read_papers(corpus, TRAIN), read_papers(corpus, TUNE)
    vectors = TokenVectors(encoder, config.layers, config.max_length, cache_dir)
    tagger, result = train_tagger(train_papers, tune_papers, config, progress=progress, vectors=vectors)
    metrics: dict[str, Any] = {
        "tune_exact_f1": result.best_score,
        "best_epoch": result.best_epoch,
        "weights_averaged": result.averaged,
    }
    held = read_papers(corpus, HELDOUT) if all((corpus / f"{n}.ann").is_file() for n in HELDOUT) else {}
    if held:
        gold = {name: doc for name, (doc, _) in held.items()}
        pred = {
            name: predicted_document(tagger, doc, text, nearest_claim_relations) for name, (doc, text) in held.items()
        }
        metrics["heldout_bam_nearest_claim_linker"] = evaluate(pred, gold).as_dict()
    card = ModelCard(
        task=TASK,
        model=MODEL_NAME,
        version=VERSION,
        encoder=encoder.name,
        encoder_fingerprint=encoder.fingerprint(),
        encoder_dir=str(encoder.model_dir.resolve()) if encoder_dir is not None else None,
        weights=["components_tagger.safetensors", "components_config.json"],
        data={"corpus": str(corpus), "train": list(TRAIN), "tune": list(TUNE), "heldout": sorted(held)},
        notes=f"BIO tagger per sentence: frozen encoder word vectors (layers {list(config.layers)}) + position "
        "features -> BiLSTM -> CRF; "
        "held-out R here uses the nearest-claim linker (the relation classifier runs in predict sciarg --components).",
    )
    return write_trained_card(out, card, config, profile, result, metrics, tagger.save(out))


def load_tagger(model: Path | None = None) -> Any:
    """The tagger of ``model`` or the shipped one, on the encoder its card names.

    Raises:
        ApiError: ``model`` is not a component tagger's directory.
        ModelError: The shipped tagger is missing or broken, or the encoder is not the one it was
            trained with.
    """
    from api.settings import get_settings
    from gnn.components import ComponentTagger
    from gnn.encoder import card_encoder
    from gnn.registry import resolve_model

    settings = get_settings()
    resolved = resolve_model(TASK, model, settings.models_dir if model is not None else None)
    path = resolved.path
    encoder = card_encoder(path, resolved.card, settings.cache_dir)
    try:
        return ComponentTagger.load(path, encoder)
    except FileNotFoundError as e:
        raise ModelError(str(e)) from e


def predicted_document(tagger: Any, doc: BratDocument, text: str, linker: Linker | None = None) -> BratDocument:
    """A document with the tagger's components (and ``linker``'s relations) on the sentences of ``doc``.

    A component that crosses a line break is cut there (:func:`fragments`), as its brat line will
    be and as gold components are, so that it is scored as it is written.
    """
    components = [
        Component(c.id, c.label, tuple(fragments(text, c.spans)) or c.spans) for c in tagger.predict(doc, text)
    ]
    out = BratDocument(doc.name, list(doc.sentences), list(doc.sentence_texts), {c.id: c for c in components})
    if linker is not None:
        out.relations = [Relation(label, src, tgt) for label, src, tgt in linker(components)]
    return out


_LINE_BREAK = re.compile("[\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+")


def fragments(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` cut at line breaks (a brat line cannot hold one): discontinuous fragments, none empty."""
    out = []
    for s, e in spans:
        start = s
        for m in _LINE_BREAK.finditer(text, s, e):
            if m.start() > start:
                out.append((start, m.start()))
            start = m.end()
        if e > start:
            out.append((start, e))
    return out


def ann_text(doc: BratDocument, text: str) -> str:
    """brat lines of a predicted document: ``T`` lines with the sliced text, then ``R`` lines.

    A component that crosses a line break is written as discontinuous fragments (``s1 e1;s2 e2``,
    text joined by one space), the form the Sci-Arg loader reads back.
    """
    lines = []
    for comp in doc.components.values():
        parts = fragments(text, comp.spans) or list(comp.spans)
        spans = ";".join(f"{s} {e}" for s, e in parts)
        lines.append(f"{comp.id}\t{comp.label} {spans}\t{' '.join(text[s:e] for s, e in parts)}")
    for k, rel in enumerate(doc.relations, start=1):
        lines.append(f"R{k}\t{rel.label} Arg1:{rel.source} Arg2:{rel.target}\t")
    return "".join(line + "\n" for line in lines)


def component_lines(txt: Path, model: Path | None = None, tagger: Any = None) -> list[str]:
    """Predicted ``T`` lines for one Sci-Arg text (for ``predict sciarg --components``).

    Sentences come from the Sci-Arg loader's splitter, so the tagger sees what it was trained on.
    """
    from ontology.formats.sciarg import _text_start, split_sentences

    text = decode_utf8(txt, read_bytes(txt), keep_bom=True)
    spans = split_sentences(text, _text_start(text))
    doc = BratDocument(txt.stem, spans, [text[s:e] for s, e in spans])
    tagger = tagger or load_tagger(model)
    return [line for line in ann_text(predicted_document(tagger, doc, text), text).split("\n") if line]


def predict_dir(source: Path, target: Path, model: Path | None = None, link: bool = True) -> dict[str, Any]:
    """Write predicted ``.ann`` files (components, and nearest-claim relations when ``link``) plus the texts.

    Raises:
        LoaderError: ``source`` holds no ``.txt`` files.
    """
    from gnn.components import nearest_claim_relations

    txts = sorted(source.glob("*.txt")) if source.is_dir() else []
    if not txts:
        raise LoaderError(f"{source}: no Sci-Arg .txt files")
    tagger = load_tagger(model)
    counts = {"papers": 0, "components": 0, "relations": 0}
    for txt in txts:
        lines = component_lines(txt, tagger=tagger)
        comps = [_component(line) for line in lines]
        if link:
            lines += [
                f"R{k}\t{lab} Arg1:{s} Arg2:{t}\t" for k, (lab, s, t) in enumerate(nearest_claim_relations(comps), 1)
            ]
        atomic_write_bytes(target / f"{txt.stem}.ann", "".join(f"{line}\n" for line in lines).encode("utf-8"))
        shutil.copyfile(txt, target / txt.name)
        counts["papers"] += 1
        counts["components"] += len(comps)
        counts["relations"] += len(lines) - len(comps)
    return counts | {"out": str(target)}


def _component(line: str) -> Component:
    key, rest, _ = line.split("\t", 2)
    label, _, raw = rest.partition(" ")
    spans = tuple((int(a), int(b)) for a, b in (f.split() for f in raw.split(";")))
    return Component(key, label, spans)
