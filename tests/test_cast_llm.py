"""The LLM pass over a real book against a fake chat endpoint (real HTTP on a loopback port):
the protocol, labels laid over the rules, the book's text untouched, and every way an answer can
fail falling back to the rules."""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import httpx
import pytest

from omni_web.book import load_book
from omni_web.cast import Cast, book_quote_style, chapter_dialogue, find_characters
from omni_web.cast.labeller import book_windows, label_book, parse_labels
from omni_web.cast.labels import relabelled, verbatim_runs
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.errors import LlmError, LlmUnreachable, LlmUnusableAnswer
from omni_web.llm import ChatClient, chat_url
from omni_web.pipeline import ConvertRequest, plan_conversion
from omni_web.settings import Settings
from tests.conftest import DATA_DIR
from tests.fakes.fake_chat import FakeChat, asked_quotes, labels_answer, serve_fake_chat

ALICE = DATA_DIR / "pg11-alice.epub"
MODEL = "qwen3_tts_0_6b_customvoice"


@pytest.fixture(scope="module")
def alice():
    book = load_book(ALICE)
    names = [c.name for c in find_characters(book)][:12]
    return book, names


def test_chat_url_takes_a_root_a_v1_or_the_full_path() -> None:
    for typed in ("http://gpu:8000", "http://gpu:8000/", "http://gpu:8000/v1", "http://gpu:8000/v1/chat/completions"):
        assert chat_url(typed) == "http://gpu:8000/v1/chat/completions"


def test_protocol_key_model_json_answer_and_cost() -> None:
    fake = FakeChat(answer=lambda user: '{"labels": []}', api_key="sk-test")
    with serve_fake_chat(fake) as url:
        answer = ChatClient(url, model="qwen2.5-7b", api_key="sk-test").complete("sys", "Say hi")
        with pytest.raises(LlmError, match="HTTP 401.*Invalid API key.*API key in Settings") as refused:
            ChatClient(url, model="qwen2.5-7b", api_key="wrong").complete("sys", "Say hi")
    assert refused.value.status == 401
    body = fake.received[0]
    assert body["model"] == "qwen2.5-7b" and body["response_format"] == {"type": "json_object"}
    assert [m["role"] for m in body["messages"]] == ["system", "user"] and body["temperature"] == 0
    assert answer.text == '{"labels": []}' and answer.usage.requests == 1
    assert answer.usage.prompt_tokens == 3 and answer.usage.completion_tokens == 2
    assert "1 request, 5 tokens" in answer.usage.summary


def test_a_server_refusing_response_format_is_asked_again_without_it() -> None:
    fake = FakeChat(answer=lambda user: "{}", refuse_response_format=True)
    with serve_fake_chat(fake) as url:
        assert ChatClient(url).complete("sys", "hi").text == "{}"
    assert "response_format" in fake.received[0] and "response_format" not in fake.received[1]


def test_nothing_listening_and_a_timeout_are_unreachable() -> None:
    with serve_fake_chat(FakeChat(answer=lambda user: "{}")) as url:
        pass  # stopped: nothing listens there now
    with pytest.raises(LlmUnreachable, match="Cannot reach the chat endpoint"):
        ChatClient(url, timeout_s=5).complete("sys", "hi")
    fake = FakeChat(answer=lambda user: "{}", hold=threading.Event())
    with serve_fake_chat(fake) as url, pytest.raises(LlmUnreachable, match="did not answer within"):
        ChatClient(url, timeout_s=0.5).complete("sys", "hi")


def test_labels_only_for_asked_quotes_and_known_characters(alice) -> None:
    book, names = alice
    window = book_windows(book)[0]
    asked = window.asked[0]
    answer = json.dumps({"labels": [
        {"quote": asked, "speaker": "C2", "confidence": 1.4, "delivery": "Whispered"},
        {"quote": asked + 10_000, "speaker": "C1"},  # not asked
        {"quote": window.asked[-1], "speaker": "Cheshire Moon"},  # not a listed character
        "nonsense",
    ]})
    labels = parse_labels("Here you go:\n```json\n" + answer + "\n```", window, names)
    assert [(lab.quote, lab.speaker, lab.confidence, lab.delivery) for lab in labels] == [
        (asked, names[1], 1.0, "whispered")]
    for broken in ("I think the Hatter says it.", '{"speakers": {}}', '{"labels": [{"quote": "x"}]}', ""):
        with pytest.raises(LlmUnusableAnswer):
            parse_labels(broken, window, names)


def test_whole_book_labelled_keeps_every_chapter_byte_identical(alice) -> None:
    book, names = alice
    fake = FakeChat(answer=labels_answer("C1", delivery="sad"))
    with serve_fake_chat(fake) as url:
        run = label_book(book, ChatClient(url, model="fake"), names, concurrency=3)
    asked = sum(len(asked_quotes(body["messages"][1]["content"])) for body in fake.received)
    assert run.windows == len(fake.received) >= 10 and run.fell_back == 0
    assert len(run.labels.labels) == asked > 50  # the quotes the rules leave under the floor
    assert run.usage.requests == run.windows and run.usage.prompt_tokens > 0
    style = book_quote_style(book)
    changed = 0
    for chapter in book.chapters:
        before = chapter_dialogue(chapter, style)
        after = relabelled(before, run.labels.for_chapter(chapter.index))
        runs = after.segments()
        verbatim_runs(chapter, runs)  # raises when a run is not the book's text
        for index, pieces in runs.items():
            assert "".join(text for _, text in pieces) == chapter.blocks[index].text
        changed += sum(a != b for a, b in zip(before.quotes(), after.quotes(), strict=True))
        assert [q.text for q in before.quotes()] == [q.text for q in after.quotes()]
    assert changed == asked  # every asked quote now speaks as C1, and only those
    assert {q.attribution.speaker for c in book.chapters
            for q in relabelled(chapter_dialogue(c, style), run.labels.for_chapter(c.index)).quotes()
            if q.attribution.evidence == "labelled by llm"} == {names[0]}


def _thinking(answer, *, opened: bool = True):
    """``answer`` after the reasoning a thinking model writes into its answer when its server has
    no reasoning parser: drafts with braces of their own, the opening tag left in the prompt by
    some chat templates."""

    def think(user: str) -> str:
        drafts = 'Quote 3: {"speaker": "C2"? } no, {the Hatter}.'
        return ("<think>\n" if opened else "") + drafts + "\n</think>\n\n" + answer(user)

    return think


@pytest.mark.parametrize("opened", [True, False], ids=["think-tags", "closing-tag-only"])
def test_a_thinking_models_reasoning_is_read_past(alice, opened) -> None:
    book, names = alice
    fake = FakeChat(answer=_thinking(labels_answer("C1"), opened=opened))
    with serve_fake_chat(fake) as url:
        run = label_book(book, ChatClient(url), names, concurrency=2)
    asked = sum(len(asked_quotes(body["messages"][1]["content"])) for body in fake.received)
    assert run.fell_back == 0 and len(run.labels.labels) == asked > 50
    assert {label.speaker for label in run.labels.labels} == {names[0]}


def test_reasoning_cut_off_before_the_answer_is_said_so() -> None:
    """The Settings test and the labeller read past a thinking model's reasoning, and say what to
    do when its answer is nothing but reasoning (cut off by its token limit)."""
    ok = FakeChat(answer=_thinking(lambda user: '{"ok": true}', opened=False))
    with serve_fake_chat(ok) as url:
        assert ChatClient(url, model="qwen3-8b").probe().startswith("qwen3-8b answered in")
    cut = FakeChat(answer=lambda user: '<think>\nThe user wants {"ok": true}. So I should')
    with serve_fake_chat(cut) as url, pytest.raises(LlmUnusableAnswer, match="all reasoning.*thinking off"):
        ChatClient(url).probe()
    wrong = FakeChat(answer=lambda user: '{"ok": false}')
    with serve_fake_chat(wrong) as url, pytest.raises(LlmUnusableAnswer, match="wrong JSON"):
        ChatClient(url).probe()


@pytest.mark.parametrize("answer", [
    lambda user: "Sorry, I cannot help with that.",
    lambda user: '{"labels": "C1 everywhere"}',
    lambda user: json.dumps({"labels": [{"quote": n, "speaker": "C99"} for n in asked_quotes(user)]}),
    lambda user: "",
], ids=["prose", "no-list", "unknown-ids", "empty"])
def test_a_malformed_answer_changes_nothing(alice, answer) -> None:
    book, names = alice
    with serve_fake_chat(FakeChat(answer=answer)) as url:
        run = label_book(book, ChatClient(url), names, concurrency=2)
    assert run.labels.labels == () and run.fell_back == run.windows > 0 and run.usage.failures == run.windows
    entry = get_entry(MODEL)
    cast = Cast.of(dialogue=VoiceChoice.speaker("Ryan"), characters={names[0]: VoiceChoice.speaker("Eric")})
    base = ConvertRequest(book_path=ALICE, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"), chapters=(12,
                                                                                                           ))
    rules = plan_conversion(book, replace(base, cast=cast), entry, Settings())
    labelled = plan_conversion(book, replace(base, cast=replace(cast, labels=run.labels)), entry, Settings())
    assert [i.key for i in rules.items] == [i.key for i in labelled.items]


def test_an_endpoint_that_never_answers_falls_back_per_window(alice) -> None:
    book, names = alice
    fake = FakeChat(answer=labels_answer(), hold=threading.Event())
    windows = len(book_windows(book))
    with serve_fake_chat(fake) as url:
        run = label_book(book, ChatClient(url, timeout_s=0.3), names, concurrency=8)
    assert run.labels.labels == () and run.fell_back == windows
    assert any("did not answer within" in e for e in run.errors)


def test_mock_transport_seam() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={"choices": []}))
    with pytest.raises(LlmUnusableAnswer, match="not with a chat completion"):
        ChatClient("http://x", transport=transport).complete("s", "u")


def test_pass_saved_review_list_and_one_click_fix_rerenders_only_that_quote(alice, tmp_path) -> None:
    from omni_web.cast import CastFile, VoiceSpec, saved_cast, saved_cast_path
    from omni_web.cast.review import assign_quote, book_labels, review_list, run_llm_pass
    from omni_web.paths import DataPaths
    from omni_web.voices import VoiceLibrary

    book, names = alice
    paths = DataPaths(tmp_path)
    CastFile(
        book="Alice",
        dialogue=VoiceSpec(name="Ryan"),
        characters={"Alice": VoiceSpec(name="Serena"), "Hatter": VoiceSpec(name="Eric")},
    ).save(saved_cast_path(paths, book))
    unsure = review_list(paths, book, limit=10_000)

    def half(user: str) -> str:  # a cautious labeller: sure of every other quote only
        asked = asked_quotes(user)
        return json.dumps(
            {
                "labels": [
                    {"quote": n, "speaker": "C1", "confidence": 0.9 if k % 2 else 0.3}
                    for k, n in enumerate(asked)
                ]
            }
        )

    with serve_fake_chat(FakeChat(answer=half)) as url:
        run = run_llm_pass(paths, book, Settings(llm_url=url, llm_concurrency=2))
    assert book_labels(paths, book) == run.labels and len(run.labels.labels) == len(unsure)
    left = review_list(paths, book, limit=10_000)
    assert 0 < len(left) < len(unsure) and len(left) == sum(
        1 for lab in run.labels.labels if lab.confidence < 0.6
    )
    entry = get_entry(MODEL)
    cast = saved_cast(paths, book, entry, VoiceLibrary(paths))
    assert cast is not None and cast.labels == run.labels
    target = next(q for q in left if q.chapter_number == 12)
    request = ConvertRequest(
        book_path=ALICE, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"), chapters=(12,)
    )
    before = plan_conversion(book, replace(request, cast=cast), entry, Settings())
    assign_quote(paths, book, target.chapter, target.quote, "Hatter")
    assert target.key not in {q.key for q in review_list(paths, book, limit=10_000)}
    after = plan_conversion(
        book, replace(request, cast=saved_cast(paths, book, entry, VoiceLibrary(paths))), entry, Settings()
    )
    changed = [
        (a.text, b.voice.name) for a, b in zip(before.items, after.items, strict=True) if a.key != b.key
    ]
    assert len(before.items) == len(after.items) and len(changed) == 1, changed
    # The chunk holds the quote in spoken form (straight apostrophes).
    assert changed[0][1] == "Eric" and target.text.strip('“”"')[:12].replace("’", "'") in changed[0][
        0
    ].replace('"', "")
    # The LLM's next pass never undoes a person's label.
    with serve_fake_chat(FakeChat(answer=labels_answer("C2"))) as url:
        run_llm_pass(paths, book, Settings(llm_url=url))
    mine = book_labels(paths, book).for_chapter(target.chapter)[target.quote]
    assert (mine.speaker, mine.source) == ("Hatter", "user")


def test_a_preset_keeps_the_casts_voices_not_the_books_labels() -> None:
    from omni_web.cast import BookLabels, QuoteLabel
    from omni_web.library.presets import Preset

    labels = BookLabels((QuoteLabel(3, 0, "abc", "Alice", 0.9),))
    cast = Cast.of(dialogue=VoiceChoice.speaker("Ryan"), labels=labels, delivery=True)
    request = ConvertRequest(book_path=ALICE, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"), cast=cast)
    assert ConvertRequest.from_dict(request.to_dict()).cast == cast  # the job keeps them
    kept = Preset.from_request("cast", request).cast
    assert (
        kept is not None and "labels" not in kept and kept["dialogue"]["name"] == "Ryan" and kept["delivery"]
    )
