"""Settings links: a link names its person and chat, works until it expires and not a second
after, and acts for nobody once any part of it is changed or signed with another key."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.settings import LinkClaim, SettingsLinks, derived_key
from bot.core.settings.links import EXPIRED, INVALID

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


def links(now: list[datetime], key: bytes = b"k" * 32) -> SettingsLinks:
    return SettingsLinks(key, "https://kindred.example/", clock=lambda: now[0])


def test_a_link_names_its_person_and_chat_until_it_expires() -> None:
    now = [NOW]
    issued = links(now)
    url = issued.link("telegram:42", "telegram:42")
    token = url.removeprefix("https://kindred.example/s/")
    assert url.startswith("https://kindred.example/s/") and issued.minutes == 15
    assert issued.read(token) == LinkClaim("telegram:42", "telegram:42", NOW + timedelta(minutes=15))
    now[0] = NOW + timedelta(minutes=14, seconds=59)
    assert isinstance(issued.read(token), LinkClaim)
    now[0] = NOW + timedelta(minutes=15)
    assert issued.read(token) == EXPIRED


def forged(claim: object, signature: str) -> str:
    payload = base64.urlsafe_b64encode(json.dumps(claim).encode()).rstrip(b"=").decode()
    return f"{payload}.{signature}"


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),  # the signature
        lambda t: ("A" if t[0] != "A" else "B") + t[1:],  # the claim
        lambda t: t.replace(".", ".."),
        lambda t: t + "=",
        lambda t: t.split(".")[0],
        lambda t: "",
        lambda t: t * 3,
        lambda t: forged({"p": "telegram:7", "c": "telegram:7", "e": 2**40}, t.split(".")[1]),
    ],
)
def test_a_changed_token_is_invalid(change: object) -> None:
    issued = links([NOW])
    token = issued.token("telegram:42", "telegram:42")
    assert callable(change)
    assert issued.read(change(token)) == INVALID


def test_another_key_or_a_well_signed_odd_claim_is_invalid() -> None:
    now = [NOW]
    ours, theirs = links(now), links(now, key=b"x" * 32)
    assert ours.read(theirs.token("telegram:42", "telegram:42")) == INVALID
    # A claim this key signed but of the wrong shape (a float expiry, a missing chat) is refused too.
    for claim in ({"p": "a", "c": "b", "e": 1.5e12}, {"p": "a", "e": 2**40}, ["a", "b", 2**40]):
        payload = base64.urlsafe_b64encode(json.dumps(claim).encode()).rstrip(b"=").decode()
        assert ours.read(f"{payload}.{ours._signature(payload)}") == INVALID


def test_the_key_is_derived_apart_from_the_secret_it_comes_from() -> None:
    assert derived_key("s3cret") == derived_key("s3cret") != derived_key("s3cret!")
    assert b"s3cret" not in derived_key("s3cret") and len(derived_key("s3cret")) == 32
