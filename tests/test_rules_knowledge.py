"""Table tests for the knowledge app's pure rules (knowledge/rules.py; no database): what L1
approves by itself and which material is regulated.  Anything not positively allowed waits."""

from __future__ import annotations

from decimal import Decimal

import pytest

from knowledge import rules

# --- the L1 rule ------------------------------------------------------------------------------

T = Decimal("0.7")


@pytest.mark.parametrize(
    "origin, source, version, confidence, regulated, contradicts, expected, reasons",
    [
        (rules.Origin.OWNER, True, True, Decimal("1"), False, False, rules.L1Result.APPROVE, ()),
        (rules.Origin.OWNER, True, True, Decimal("0.7"), False, False, rules.L1Result.APPROVE, ()),
        (rules.Origin.OWNER, True, True, Decimal("0.699"), False, False, rules.L1Result.PENDING, ("low_confidence",)),
        (rules.Origin.OWNER, False, True, Decimal("1"), False, False, rules.L1Result.PENDING, ("no_source",)),
        (rules.Origin.OWNER, True, False, Decimal("1"), False, False, rules.L1Result.PENDING, ("no_source_version",)),
        (rules.Origin.OWNER, True, True, Decimal("1"), True, False, rules.L1Result.PENDING, ("regulated",)),
        (rules.Origin.OWNER, True, True, Decimal("1"), False, True, rules.L1Result.PENDING, ("contradicts_approved",)),
        (
            rules.Origin.CUSTOMER,
            True,
            True,
            Decimal("1"),
            False,
            False,
            rules.L1Result.PENDING,
            ("customer_candidate",),
        ),
        (rules.Origin.REVIEW, True, True, Decimal("1"), False, False, rules.L1Result.PENDING, ("from_review",)),
        (rules.Origin.OBSERVE, True, True, Decimal("1"), False, False, rules.L1Result.PENDING, ("from_observe",)),
        (
            rules.Origin.CUSTOMER,
            False,
            False,
            Decimal("0"),
            True,
            True,
            rules.L1Result.PENDING,
            (
                "customer_candidate",
                "no_source",
                "no_source_version",
                "low_confidence",
                "regulated",
                "contradicts_approved",
            ),
        ),
    ],
)
def test_l1_rule(
    origin: rules.Origin,
    source: bool,
    version: bool,
    confidence: Decimal,
    regulated: bool,
    contradicts: bool,
    expected: rules.L1Result,
    reasons: tuple[str, ...],
) -> None:
    decision = rules.l1_decide(rules.EntryFacts(origin, source, version, confidence, T, regulated, contradicts))
    assert decision.result is expected and decision.reasons == reasons


@pytest.mark.parametrize("lesson", [False, True])
@pytest.mark.parametrize("origin", list(rules.Origin))
def test_what_a_model_wrote_always_waits(origin: rules.Origin, lesson: bool) -> None:
    """Issue 28 §1: L1 approves only what the owner did themselves; owner material a model wrote
    (the owner chat's tools) waits, however confident, sourced and harmless it is."""
    facts = rules.EntryFacts(origin, True, True, Decimal("1"), T, False, False, lesson=lesson, model_written=True)
    decision = rules.l1_decide(facts)
    assert decision.result is rules.L1Result.PENDING and "written_by_model" in decision.reasons


@pytest.mark.parametrize(
    "text, categories",
    [
        ("Our VAT rate is 19%", ["tax"]),
        ("我们可以开具增值税发票", ["tax"]),
        ("German packaging law requires registration", ["law"]),
        ("符合包装法的要求", ["law"]),
        ("Take two tablets; dosage depends on weight", ["medical"]),
        ("锂电池不能空运", ["safety"]),
        ("We ship within Europe", []),
        ("The vatican museum gift shop", []),  # whole words only for English
        ("Our invitation to the law-abiding", ["law"]),
    ],
)
def test_regulated_categories(text: str, categories: list[str]) -> None:
    assert rules.regulated_categories(text) == categories


@pytest.mark.parametrize(
    "text, extra, categories",
    [
        ("Prices of Pfandflaschen", [("pfandflaschen", "law")], ["law"]),
        ("平台抽成规则", [("抽成", "finance")], ["finance"]),
        ("Prices of Pfandflaschen", [("  Pfandflaschen ", "law")], ["law"]),  # trimmed, any case
        ("Our VAT rate", [("rate", "finance")], ["finance", "tax"]),  # added to the built-in ones, sorted
        ("Our opening hours", [("", "law"), ("   ", "law")], []),  # a blank term matches nothing
        ("Pfandflaschenpfand", [("pfandflaschen", "law")], []),  # whole words for English terms
    ],
)
def test_owner_terms_extend_the_regulated_list(text: str, extra: list[tuple[str, str]], categories: list[str]) -> None:
    assert rules.regulated_categories(text, extra) == categories
