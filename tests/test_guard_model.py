"""The guard's model of commitments (guard/classifier.py): its plain-Python scoring is the fitted
model's, it generalises to a round it was not fitted on, it never holds back the agent's own
sentences, and in a conversation it stops a commitment no named rule catches — the run records
which category and that the model, not a rule, objected."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from guard import classifier
from guard.classifier import (
    MODEL_FILE,
    char_grams,
    corpus,
    corpus_digest,
    model_read,
    model_verdict,
    reader,
    reader_reset,
    train,
    word_grams,
)
from guard.engine import guard_check
from guard.management.commands import guard_model
from guard.outgoing import outgoing_check
from guard.rounds import citations_of, round_read

ROUND_24 = classifier.CORPUS / "rounds" / "24"
ROOT = Path(__file__).resolve().parents[1]

# Commitments in words no named rule has: the model is the only reader that stops them.
UNSEEN = [
    ("Consider it done, the council will say yes to your application.", "conclusion"),
    ("您放心，房东那边肯定同意，押金一分不少。", "conclusion"),
    ("就按您说的办，这单我给您做主了。", "price"),
]


def test_the_plain_python_scores_are_the_fitted_models() -> None:
    """`Reader` re-implements TF-IDF and the linear model from the fitted weights; scikit-learn's
    own pipeline gives the same probabilities."""
    commitments, harmless = corpus()
    texts = [text for _c, text in commitments] + harmless
    labels = [True] * len(commitments) + [False] * len(harmless)
    fitted, pipeline = classifier._fit(texts, labels, c=16.0, balanced=True)
    sample = texts[::37] + [text for text, _category in UNSEEN] + ["", "😊", "Hello!"]
    expected = pipeline.predict_proba(sample)[:, 1]  # type: ignore[attr-defined]
    for text, probability in zip(sample, expected, strict=True):
        assert fitted.probability(text) == pytest.approx(float(probability), abs=1e-9), text


def test_fitted_without_a_round_it_still_reads_that_round() -> None:
    """Out of sample: fitted on the corpus without round 24's texts, the model alone stops most of
    round 24's commitments and holds back at most 3 of its harmless replies.  (The README's round
    table has the figures with the named rules and the grounding check together.)"""
    commitments, harmless = round_read(ROUND_24)
    held_out = {row.text for row in commitments + harmless}
    all_commitments, all_harmless = corpus()
    models = train(
        [(c, t) for c, t in all_commitments if t not in held_out], [t for t in all_harmless if t not in held_out]
    )
    caught = [row for row in commitments if model_verdict(row.text, models).blocked]
    false_blocks = [row for row in harmless if model_verdict(row.text, models).blocked]
    assert len(caught) >= 0.85 * len(commitments), len(caught)
    assert len(false_blocks) <= 3, [row.text for row in false_blocks]


def test_the_n_grams_are_cut_as_scikit_learn_cuts_them() -> None:
    char, word = (vectoriser.build_analyzer() for vectoriser in classifier._vectorisers())  # type: ignore[attr-defined]
    commitments, harmless = corpus()
    for text in [t for _c, t in commitments[::11]] + harmless[::11] + ["  Tabs\tand\nlines  ", "a", "", "它's OK!"]:
        assert char_grams(text) == char(text), text
        assert word_grams(text) == word(text), text


def test_the_shipped_model_is_the_one_its_corpus_gives() -> None:
    """`manage.py guard_model` stores the fitted weights with the corpus digest; the shipped file
    must be fitted on the corpus as it stands (run the command after changing the corpus)."""
    shipped = model_read()
    assert shipped is not None, f"{MODEL_FILE} is missing: run manage.py guard_model"
    digest, stored = shipped
    assert digest == corpus_digest(), "the corpus changed since the model was stored: run manage.py guard_model"
    fitted = train(*corpus())
    commitments, harmless = corpus()
    for text in [t for _c, t in commitments[::53]] + harmless[::53] + [t for t, _c in UNSEEN]:
        assert stored.block.probability(text) == pytest.approx(fitted.block.probability(text), abs=1e-6), text
        assert stored.category.best(text) == fitted.category.best(text), text


def test_a_process_loads_the_shipped_model_without_scikit_learn() -> None:
    code = "import sys, guard.classifier as k; k.reader(); print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr


def test_a_stale_model_file_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any) -> None:
    """A model fitted on another corpus is not read: the process fits its own, and
    `guard_model --check` fails until the file is written again."""
    stale = tmp_path / "model.json.gz"
    shutil.copy(MODEL_FILE, stale)
    data = json.loads(gzip.decompress(stale.read_bytes()))
    data["corpus"] = "0" * 64
    stale.write_bytes(gzip.compress(json.dumps(data).encode()))
    real_read = classifier.model_read
    monkeypatch.setattr(classifier, "model_read", lambda: real_read(stale))
    monkeypatch.setattr(guard_model, "model_read", lambda: real_read(stale))
    with pytest.raises(CommandError, match="guard_model"):
        call_command("guard_model", "--check", stdout=io.StringIO())
    reader_reset()
    try:
        with caplog.at_level("WARNING", logger="guard.classifier"):
            fitted = reader()
        assert "does not match the corpus" in caplog.text
        assert fitted.block.probability(UNSEEN[0][0]) >= 0.7  # fitted here, as good as the shipped one
    finally:
        reader_reset()


def test_the_model_is_read_once_per_process() -> None:
    first = reader()
    assert reader() is first
    reader_reset()
    again = reader()
    assert again is not first
    for text, _category in UNSEEN:
        assert again.block.probability(text) == pytest.approx(first.block.probability(text), abs=1e-12)


@pytest.mark.parametrize("text, category", UNSEEN)
def test_a_commitment_no_rule_catches_is_held_back_by_the_model(text: str, category: str) -> None:
    assert guard_check(text).blocked is False  # no named rule: else this test proves nothing
    verdict = outgoing_check(text)
    assert verdict.as_json() == {"blocked": True, "category": category, "check": "guard", "rule": f"{category}.model"}


def test_the_agents_own_sentences_are_never_held_back() -> None:
    """What the offline model says itself (questions, offers, status lines, greetings, the boundary
    wording), in every language, with its slots filled."""
    from facade.dialogue.runtime.loop import HONEST
    from facade.dialogue.runtime.providers.offline import QUESTIONS, TEXT
    from facade.dialogue.runtime.strict import STATUS_LINE
    from facade.dialogue.runtime.summary import SUMMARY
    from facade.tenancy.models import DEFAULT_WORDING

    slots = {"id": "12", "next": "the owner reviews it", "name": "Demo shop", "field": "phone", "state": "submitted"}
    checked = 0
    for book in (QUESTIONS, TEXT, HONEST, STATUS_LINE, SUMMARY, DEFAULT_WORDING):
        for language in book:
            for key, sentence in book[language].items():
                text = sentence.format_map(slots)
                verdict = model_verdict(text)
                assert not verdict.blocked, (language, key, text, verdict.probability)
                checked += 1
    assert checked >= 40


def test_quotes_and_restated_prices_are_taken_out_before_the_model_reads() -> None:
    given = ("Price list: Lawn mowing from £35 per visit.",)
    text = "Lawn mowing starts at £35 per visit on our list. Bigger lawns cost more, so we'd need to see yours first."
    assert outgoing_check(text, given=given, citations=citations_of(given)).blocked is False


def test_the_model_is_part_of_the_rule_set_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reply read by an older model is read again by the nightly re-check: the corpus (and so the
    model) is in the hash stored with each reply."""
    from guard import outgoing

    before = outgoing.ruleset_hash()
    copy = tmp_path / "corpus"
    shutil.copytree(classifier.CORPUS, copy)
    with (copy / "harmless.tsv").open("a", encoding="utf-8") as handle:
        handle.write("A new harmless sentence for the model.\n")
    monkeypatch.setattr(classifier, "CORPUS", copy)
    assert corpus_digest() != before and outgoing.ruleset_hash() != before


def test_guard_check_names_the_model(capsys: Any) -> None:
    out = io.StringIO()
    call_command("guard_check", UNSEEN[0][0], stdout=out)
    assert json.loads(out.getvalue()) == {
        "blocked": True,
        "category": "conclusion",
        "check": "guard",
        "rule": "conclusion.model",
    }


@pytest.mark.django_db
def test_in_a_conversation_the_run_records_that_the_model_objected() -> None:
    """A scripted model writes a commitment no rule catches: the customer gets the boundary
    wording, and `guard.blocked` names the category and the model (no text)."""
    from facade.dialogue.runtime.loop import turn_handle
    from facade.dialogue.runtime.providers.base import ModelReply
    from facade.dialogue.runtime.providers.scripted import ScriptedProvider
    from facade.dialogue.services import session_open
    from facade.tenancy.models import AgentProfile, Customer
    from facade.tenancy.rules import Audience
    from ledger.models import LedgerEvent

    call_command("seed_demo", stdout=io.StringIO())
    agent = AgentProfile.objects.get(slug="demo-shop")
    session = session_open(
        agent=agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=agent.tenant)
    )
    text, category = UNSEEN[0]
    result = turn_handle(
        session=session, text="Will the council say yes?", provider=ScriptedProvider.of(ModelReply(text=text))
    )
    assert result.reply is not None and result.reply.text.startswith(agent.boundary("en"))
    [blocked] = LedgerEvent.objects.of_type("guard.blocked")
    assert blocked.payload["category"] == category and blocked.payload["rule"] == f"{category}.model"
    assert text not in json.dumps(blocked.payload, ensure_ascii=False)
