"""The guard's second reader: a statistical model of commitments, beside the named rules.

The named rules (`engine.py`) say why they fire, and they catch what they were written for; each
fresh out-of-sample round still found commitments in words no rule had seen (recall 84-88% on
rounds 20-23, README *Out-of-sample rounds*).  A model that weighs every word and every run of
characters against all the commitments and harmless replies the project has collected
(`guard/corpus/`, both languages) generalises where the rules do not: trained only on what came
before each round, it stopped 87-95% of that round's commitments with 0-4 false blocks, and what
it catches is largely what the rules miss.  So the outgoing check asks it after the rules and the
grounding check: a reply the rules and the grounding check pass is still held back when the model
gives it a probability of committing of at least `THRESHOLD`.

It is no language model and nothing is downloaded: a logistic regression over TF-IDF character
2-5-grams and word 1-2-grams, fitted with scikit-learn by `manage.py guard_model` on the corpus
that ships with the code and stored beside it (`guard/corpus/model.json.gz`, with the corpus's
digest; a test keeps the two in step) — the same data gives the same model, so a verdict can be
replayed.  Scoring is done here in plain Python from the stored weights (a dictionary look-up per
n-gram), with the n-grams cut as scikit-learn cuts them; tests hold both to scikit-learn's own.
A second, multinomial model over the commitments alone names the category (price, deadline,
conclusion, outcome) that the verdict reports as ``<category>.model``.

The model reads the reply as the rules do — with the attributed quotes and restated prices of the
entries the run cited taken out — and is told nothing else: not the given texts, not the customer.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import logging
import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = [
    "CORPUS",
    "MIN_WORDS",
    "MODEL_FILE",
    "THRESHOLD",
    "Reader",
    "char_grams",
    "corpus_digest",
    "model_read",
    "model_write",
    "word_grams",
    "model_verdict",
    "reader",
    "reader_reset",
    "train",
    "warm",
]

logger = logging.getLogger(__name__)
CORPUS: Final = Path(__file__).with_name("corpus")
# Chosen on rounds 19-22, each scored by a model fitted only on what came before it.
THRESHOLD: Final = 0.7
_C: Final = 16.0  # the inverse regularisation of the block model, chosen with the threshold


def _rows(name: str) -> list[list[str]]:
    _header, *lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    return [line.split("\t") for line in lines if line.strip()]


def _files() -> list[str]:
    """The corpus files, relative to `CORPUS`: the sentences, then every folded round."""
    rounds = sorted(CORPUS.glob("rounds/*/*.tsv"), key=lambda path: (int(path.parent.name), path.name))
    return ["commitments.tsv", "harmless.tsv", *(str(path.relative_to(CORPUS)) for path in rounds)]


def corpus() -> tuple[list[tuple[str, str]], list[str]]:
    """The corpus: (category, text) commitments and harmless texts — the corpus sentences and the
    folded rounds (whose harmless replies include published figures, said with what the model was
    given), each text once."""
    commitments: dict[str, str] = {}
    harmless: dict[str, None] = {}
    for name in _files():
        for row in _rows(name):
            if name.endswith("commitments.tsv"):
                commitments.setdefault(row[-1], row[0])
            else:
                harmless.setdefault(row[-1])
    return [(category, text) for text, category in commitments.items()], [t for t in harmless if t not in commitments]


def corpus_digest() -> str:
    """SHA-256 of the corpus files: part of the rule-set hash, so a reply read by an older model is
    read again by the nightly re-check."""
    digest = hashlib.sha256()
    for name in _files():
        digest.update(name.encode() + b"\0" + (CORPUS / name).read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class _Part:
    """One TF-IDF vectoriser of the union, as weights: n-gram -> (idf, one coefficient per class)."""

    kind: str  # "char_wb" or "word"
    analyse: Callable[[str], list[str]]
    weights: dict[str, tuple[float, tuple[float, ...]]]


@dataclass(frozen=True)
class Reader:
    """A fitted linear model over the union of the vectorisers' l2-normalised, sublinear-tf
    TF-IDF vectors: per class, the intercept plus each part's dot product."""

    parts: tuple[_Part, ...]
    intercepts: tuple[float, ...]
    classes: tuple[str, ...]

    def scores(self, text: str) -> list[float]:
        totals = list(self.intercepts)
        for part in self.parts:
            found = [
                ((1.0 + math.log(n)) * part.weights[gram][0], part.weights[gram][1])
                for gram, n in Counter(part.analyse(text)).items()
                if gram in part.weights
            ]
            norm = math.sqrt(sum(value * value for value, _coefficients in found))
            for value, coefficients in found:
                for index, coefficient in enumerate(coefficients):
                    totals[index] += value / norm * coefficient
        return totals

    def probability(self, text: str) -> float:
        """The probability of the second class (binary model: "commitment")."""
        (score,) = self.scores(text)
        return 1.0 / (1.0 + math.exp(-score))

    def best(self, text: str) -> str:
        """The most likely class (multinomial model)."""
        scores = self.scores(text)
        return self.classes[max(range(len(scores)), key=scores.__getitem__)]


_TOKEN: Final = re.compile(r"(?u)\b\w[\w']*\b")


def char_grams(text: str) -> list[str]:
    """Character 2-5-grams inside word boundaries, each word padded with a space — what
    scikit-learn's ``analyzer="char_wb"`` gives for a lower-cased text (a test holds them equal)."""
    grams: list[str] = []
    for word in text.lower().split():
        padded = f" {word} "
        for n in range(2, 6):
            offset = 0
            grams.append(padded[offset : offset + n])
            while offset + n < len(padded):
                offset += 1
                grams.append(padded[offset : offset + n])
            if offset == 0:  # a word shorter than n is counted once
                break
    return grams


def word_grams(text: str) -> list[str]:
    """Words and pairs of words — scikit-learn's ``analyzer="word"``, ``ngram_range=(1, 2)``."""
    tokens = _TOKEN.findall(text.lower())
    return tokens + [" ".join(tokens[i : i + 2]) for i in range(len(tokens) - 1)]


_ANALYSERS: Final = {"char_wb": char_grams, "word": word_grams}


def _vectorisers() -> list[object]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    return [
        TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2),
        TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True, token_pattern=_TOKEN.pattern),
    ]


def _fit(texts: Sequence[str], labels: Sequence[object], *, c: float, balanced: bool) -> tuple[Reader, object]:
    """A fitted scikit-learn pipeline and the same model as a `Reader`."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline, make_union

    union = make_union(*_vectorisers())
    model = LogisticRegression(C=c, max_iter=5000, class_weight="balanced" if balanced else None)
    pipeline = make_pipeline(union, model).fit(list(texts), list(labels))
    coefficients = model.coef_
    classes = tuple(str(label) for label in model.classes_)
    parts, offset = [], 0
    for _name, vectoriser in union.transformer_list:
        vocabulary = vectoriser.vocabulary_
        idf = vectoriser.idf_
        weights = {
            gram: (float(idf[column]), tuple(float(row[offset + column]) for row in coefficients))
            for gram, column in vocabulary.items()
        }
        parts.append(_Part(kind=vectoriser.analyzer, analyse=_ANALYSERS[vectoriser.analyzer], weights=weights))
        offset += len(vocabulary)
    reader = Reader(parts=tuple(parts), intercepts=tuple(float(b) for b in model.intercept_), classes=classes)
    return reader, pipeline


@dataclass(frozen=True)
class Models:
    block: Reader  # commitment or not
    category: Reader  # which commitment


def train(commitments: Sequence[tuple[str, str]], harmless: Sequence[str]) -> Models:
    """The two models fitted on `commitments` ((category, text)) and `harmless` texts."""
    texts = [text for _category, text in commitments] + list(harmless)
    # Classes are sorted (False, True): the score is that of True, "commits".
    labels = [True] * len(commitments) + [False] * len(harmless)
    block, _ = _fit(texts, labels, c=_C, balanced=True)
    category, _ = _fit([text for _c, text in commitments], [c for c, _t in commitments], c=_C, balanced=False)
    return Models(block=block, category=category)


# The fitted models as shipped: fitting takes seconds of CPU (far more on a loaded machine), so
# `manage.py guard_model` fits them once and writes their weights here, with the digest of the
# corpus they were fitted on; a process loads them in a fraction of a second, without scikit-learn.
MODEL_FILE: Final = CORPUS / "model.json.gz"
_FORMAT: Final = 1


def _as_data(reader: Reader) -> dict[str, Any]:
    return {
        "intercepts": list(reader.intercepts),
        "classes": list(reader.classes),
        "parts": [
            {
                "kind": part.kind,
                "weights": {
                    gram: [float(f"{idf:.9g}"), [float(f"{c:.9g}") for c in coefficients]]
                    for gram, (idf, coefficients) in part.weights.items()
                },
            }
            for part in reader.parts
        ],
    }


def _from_data(data: Mapping[str, Any]) -> Reader:
    parts = tuple(
        _Part(
            kind=part["kind"],
            analyse=_ANALYSERS[part["kind"]],
            weights={gram: (float(idf), tuple(float(c) for c in cs)) for gram, (idf, cs) in part["weights"].items()},
        )
        for part in data["parts"]
    )
    return Reader(parts=parts, intercepts=tuple(data["intercepts"]), classes=tuple(data["classes"]))


def model_write(models: Models, path: Path = MODEL_FILE) -> str:
    """Write the fitted models with the corpus digest; returns the digest."""
    digest = corpus_digest()
    data = {"format": _FORMAT, "corpus": digest, "block": _as_data(models.block), "category": _as_data(models.category)}
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    path.write_bytes(gzip.compress(text.encode(), mtime=0))
    return digest


def model_read(path: Path = MODEL_FILE) -> tuple[str, Models] | None:
    """The shipped models and the digest of the corpus they were fitted on, if the file is there."""
    if not path.is_file():
        return None
    data = json.loads(gzip.decompress(path.read_bytes()))
    if data.get("format") != _FORMAT:
        return None
    return str(data["corpus"]), Models(block=_from_data(data["block"]), category=_from_data(data["category"]))


_LOCK: Final = threading.Lock()


@functools.lru_cache(maxsize=1)
def _fitted() -> Models:
    shipped = model_read()
    if shipped is not None and shipped[0] == corpus_digest():
        return shipped[1]
    # The corpus changed and nobody ran `manage.py guard_model`: fit here, and say so (a test
    # keeps the shipped file in step with the corpus).
    logger.warning("guard: %s does not match the corpus; fitting the model in this process", MODEL_FILE.name)
    return train(*corpus())


def reader() -> Models:
    """The models fitted on the shipped corpus, once per process (a second caller waits for the
    first rather than fitting them again)."""
    with _LOCK:
        return _fitted()


def reader_reset() -> None:
    """Forget the fitted models: the next reply fits them again from the corpus."""
    with _LOCK:
        _fitted.cache_clear()


def warm() -> threading.Thread:
    """Fit the models in a background thread (a server calls this when it starts); a reply that
    needs them first waits for it."""
    thread = threading.Thread(target=reader, name="guard-model", daemon=True)
    thread.start()
    return thread


@dataclass(frozen=True)
class ModelVerdict:
    probability: float
    category: str | None  # set when the probability reaches THRESHOLD

    @property
    def blocked(self) -> bool:
        return self.category is not None


# The model reads replies of a sentence or more, like those it was fitted on; a reply of a few
# words ("Fine.", "It's cheap!") gives it too little to weigh, and it reads those far too surely.
# They are left to the named rules.
MIN_WORDS: Final = 6
_WORD: Final = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_CJK: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def words_in(text: str) -> float:
    """About how many words `text` has: Latin words, and Chinese characters two to a word."""
    chinese = len(_CJK.findall(text))
    latin = sum(1 for word in _WORD.findall(_CJK.sub(" ", text)))
    return latin + chinese / 2


def model_verdict(text: str, models: Models | None = None) -> ModelVerdict:
    """The model's reading of a reply (with its quotes already taken out)."""
    if words_in(text) < MIN_WORDS:
        return ModelVerdict(probability=0.0, category=None)
    models = models or reader()
    probability = models.block.probability(text)
    if probability < THRESHOLD:
        return ModelVerdict(probability=probability, category=None)
    return ModelVerdict(probability=probability, category=models.category.best(text))
