"""The mini-apps' core: classification, rules specs for every kind, facts from memories, the
schema checker, follow-up edits and the model's pass (which may never fail a build)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import date
from typing import Any

import pytest

from bench.apps import REQUESTS  # one request of each kind, as people ask: measured there
from bot.core.errors import InferenceTimeout
from bot.core.miniapps.edits import edit_for
from bot.core.miniapps.facts import Facts, facts_from
from bot.core.miniapps.kinds import KINDS, SCHEMAS, classify
from bot.core.miniapps.model_pass import first_json_object, model_spec
from bot.core.miniapps.schema import problems
from bot.core.miniapps.specs import rule_spec, title_of
from bot.core.models import ChatMessage, StreamEnd
from tests.support.fakes import ScriptedInference

TODAY = date(2026, 12, 1)


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_is_classified_and_its_rules_spec_meets_its_schema(kind: str) -> None:
    request = REQUESTS[kind]
    assert classify(request).kind == kind
    spec = rule_spec(classify(request).kind, request, Facts(), TODAY)
    assert problems(spec, SCHEMAS[kind]) == []


def test_a_request_with_no_cue_is_a_checklist() -> None:
    assert classify("something nice").kind == "checklist"
    assert classify("").kind == "checklist"


def test_the_persons_facts_fill_the_spec() -> None:
    facts = facts_from(["I live in Lisbon", "My dog is called Rex", "my birthday is on 3 May"])
    assert facts == Facts("Lisbon", ("dog", "Rex"), (5, 3))
    cities = rule_spec("ranking", REQUESTS["ranking"], facts, TODAY)
    assert cities["rows"][0] == ["Lisbon", ""]
    packing = rule_spec("checklist", REQUESTS["checklist"], facts, TODAY)
    assert any("Rex" in item["text"] for item in packing["items"])
    birthday = rule_spec("countdown", "countdown to my birthday", facts, TODAY)
    assert birthday["target"] == "2027-05-03"


def test_facts_take_the_newest_statement_and_ignore_lookalikes() -> None:
    assert facts_from(["I moved to Porto", "I live in Lisbon"]).city == "Porto"
    assert facts_from(["my dog is hungry", "I live in a flat"]) == Facts()
    assert facts_from(["my birthday is on 31 February"]).birthday is None


def test_titles_are_tidied_and_bounded() -> None:
    assert title_of("Please make me a packing list!", "checklist") == "Packing list"
    assert title_of("", "quiz") == "Flashcards"
    assert len(title_of("x" * 500, "notes")) == 60


def test_hostile_text_stays_text_in_a_spec_that_meets_the_schema() -> None:
    spec = rule_spec("checklist", '<script>alert(1)</script> " onload=x', Facts(), TODAY)
    assert spec["title"].startswith("<script>")  # kept as the person wrote it; the renderer escapes it
    assert problems(spec, SCHEMAS["checklist"]) == []


def test_the_schema_checker_refuses_what_the_schema_forbids() -> None:
    schema = SCHEMAS["checklist"]
    good: dict[str, Any] = {"title": "T", "theme": "auto", "items": [{"text": "a"}]}
    assert problems(good, schema) == []
    assert problems({**good, "theme": "neon"}, schema)
    assert problems({**good, "items": []}, schema)
    assert problems({**good, "items": [{"text": "a", "onclick": "x"}]}, schema)
    assert problems({**good, "items": [{"text": "a" * 121}]}, schema)
    assert problems({**good, "extra": 1}, schema)
    assert problems({"title": "T", "theme": "auto"}, schema)
    assert problems({**good, "items": [{"text": 5}]}, schema)
    assert problems(True, SCHEMAS["timer"]["properties"]["rounds"])  # a boolean is no integer
    assert problems({**good, "items": [{"text": "a"}] * 101}, schema)


def test_follow_ups_make_whole_specs() -> None:
    table = rule_spec("ranking", REQUESTS["ranking"], Facts(), TODAY)
    dark = edit_for("make it dark")
    column = edit_for("add a column for price")
    assert dark is not None and column is not None
    assert dark.apply("ranking", table) == {**table, "theme": "dark"}
    wider = column.apply("ranking", table)
    assert wider is not None and wider["columns"][-1] == "Price"
    assert all(len(row) == 3 for row in wider["rows"]) and problems(wider, SCHEMAS["ranking"]) == []
    assert table["columns"] == ["City", "High (°C)"]  # the old version is untouched
    assert column.apply("timer", rule_spec("timer", "timer", Facts(), TODAY)) is None and column.explicit
    assert edit_for("a packing list for Rome") is None
    milk = edit_for("add milk")
    assert milk is not None and not milk.explicit and milk.apply("timer", {}) is None


def test_the_first_json_object_is_found_in_chatter() -> None:
    assert first_json_object('Sure! {"items": [1]} hope that helps {"x": 2}') == {"items": [1]}
    assert first_json_object('{not json} then {"a": 1}') == {"a": 1}
    assert first_json_object("no json here") is None


@pytest.mark.parametrize(
    "reply",
    ["I think a checklist is a great idea!", '{"items": "not a list"}', '{"items": []}', '{"title": 3'],
)
async def test_a_model_that_writes_unusable_json_leaves_the_rules_spec(reply: str) -> None:
    spec = rule_spec("checklist", REQUESTS["checklist"], Facts(), TODAY)
    assert await model_spec(ScriptedInference(reply), "checklist", REQUESTS["checklist"], spec, 5.0) is None


async def test_a_failing_model_leaves_the_rules_spec() -> None:
    spec = rule_spec("quiz", REQUESTS["quiz"], Facts(), TODAY)
    failing = ScriptedInference(fail_with=InferenceTimeout("slow"))
    assert await model_spec(failing, "quiz", REQUESTS["quiz"], spec, 5.0) is None


async def test_a_model_that_writes_a_valid_spec_improves_it_but_keeps_title_and_theme() -> None:
    spec = rule_spec("checklist", REQUESTS["checklist"], Facts(), TODAY)
    reply = 'Here: {"title": "<b>", "theme": "dark", "items": [{"text": "Snorkel"}, {"text": "Hat"}]}'
    better = await model_spec(ScriptedInference(reply), "checklist", REQUESTS["checklist"], spec, 5.0)
    assert better == {**spec, "items": [{"text": "Snorkel"}, {"text": "Hat"}]}


class _CountingModel(ScriptedInference):
    """ScriptedInference that counts the chunks the caller actually pulled."""

    pulled = 0

    async def stream(  # type: ignore[override]
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[str]:
        chunks = super().stream(messages, max_tokens=max_tokens, adapter=adapter, ending=ending, seed=seed)
        async for chunk in chunks:
            self.pulled += 1
            yield chunk


async def test_the_model_pass_stops_at_the_first_whole_object() -> None:
    spec = rule_spec("checklist", REQUESTS["checklist"], Facts(), TODAY)
    words = '{"items": [{"text": "Snorkel"}, {"text": "Fins"}]} ' + "and more chatter " * 40
    model = _CountingModel(words)
    better = await model_spec(model, "checklist", REQUESTS["checklist"], spec, 5.0)
    assert better is not None and better["items"] == [{"text": "Snorkel"}, {"text": "Fins"}]
    assert model.pulled == 5  # the object's five words, none of the chatter after it
