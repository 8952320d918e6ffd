"""The LLM's aliases on a real book, against a fake chat endpoint over real HTTP: the prompt, the
strict reading of its groups, the merges saved with the cast (voices following), the user's
choices winning, and every failure leaving the cast as it was."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from omni_web.book import load_book
from omni_web.cast import CastFile, VoiceSpec, find_characters, saved_cast_path
from omni_web.cast.alias_llm import MAX_LISTED, alias_prompt, join_aliases, parse_aliases
from omni_web.cast.characters import Character
from omni_web.cast.edits import CastEdits
from omni_web.cast.review import run_llm_pass
from omni_web.cast.store import edit_characters, load_cast_file
from omni_web.errors import LlmUnusableAnswer
from omni_web.llm import ChatClient
from omni_web.paths import DataPaths
from omni_web.settings import Settings
from tests.conftest import DATA_DIR
from tests.fakes.fake_chat import FakeChat, alias_groups, labels_answer, serve_fake_chat

ALICE = DATA_DIR / "pg11-alice.epub"


@pytest.fixture(scope="module")
def alice():
    book = load_book(ALICE)
    return book, find_characters(book)


def _aliases_then_labels(*groups: tuple[str, ...]) -> Callable[[str], str]:
    """Names ``groups`` when asked about characters listed twice; knows no speaker when asked to label."""
    unknown = labels_answer("UNKNOWN")
    return lambda user: unknown(user) if "Label these quotes" in user else alias_groups(user, *groups)


def test_the_prompt_lists_each_character_with_names_gender_lines_and_first_mention(alice) -> None:
    book, people = alice
    system, user = alias_prompt(book, people)
    assert '{"same": [["C2", "C9"]]}' in system and "married name" in system
    assert user.startswith("Book: Alice's Adventures in Wonderland by Lewis Carroll")
    rabbit = next(n for n, p in enumerate(people, start=1) if p.name == "White Rabbit")
    line = next(line for line in user.splitlines() if line.startswith(f"C{rabbit}: "))
    assert line.startswith(f"C{rabbit}: White Rabbit; also called Rabbit; female; 39 lines")
    # Where the book first names the Rabbit, in its own words.
    assert "first named: " in user.split(f"C{rabbit}: ")[1].split("\nC")[0]
    assert "Rabbit" in user.split(f"C{rabbit}: ")[1].split("first named: ")[1].splitlines()[0]
    assert len(re.findall(r"^C\d+: ", user, flags=re.M)) == len(people)
    # The rules' hints go with it, by id: the Footman may be the Frog-Footman.
    ids = {p.name: f"C{n}" for n, p in enumerate(people, start=1)}
    assert f"{ids['Footman']}: Footman; male; 12 lines; may be {ids['Frog-Footman']}\n" in user


def test_groups_are_read_strictly(alice) -> None:
    _, people = alice
    answer = '{"same": [["C16", "c24", "C999"], ["C1"], ["C2", "C3"], ["C3", "C4"], "C5", ["Alice"]]}'
    names = [[p.name for p in group] for group in parse_aliases(f"```json\n{answer}\n```", people)]
    # Ids off the list, groups of one and a character in two groups (C3) are dropped.
    assert names == [[people[15].name, people[23].name]] == [["Footman", "Frog-Footman"]]
    # Some models answer with the names as listed; a name not listed is dropped.
    answer = '{"same": [["footman", "Frog-Footman", "The Footman"]]}'
    groups = parse_aliases(answer, people)
    assert [[p.name for p in group] for group in groups] == [["Footman", "Frog-Footman"]]
    for bad in ("no JSON here", '{"labels": []}', '{"same": "C1 C2"}', "{not json}"):
        with pytest.raises(LlmUnusableAnswer):
            parse_aliases(bad, people)


def test_merges_saved_voices_follow_and_a_man_and_a_woman_are_never_joined(alice, tmp_path) -> None:
    book, _ = alice
    paths = DataPaths(tmp_path)
    path = saved_cast_path(paths, book)
    CastFile(book="Alice", characters={"Frog-Footman": VoiceSpec(name="Eric")}).save(path)
    fake = FakeChat(answer=_aliases_then_labels(("Footman", "Frog-Footman"), ("King", "Queen")))
    with serve_fake_chat(fake) as url:
        run = run_llm_pass(paths, book, Settings(llm_url=url))
    assert run.joined == (("Frog-Footman", "Footman"),)  # the one with more lines keeps the name
    cast = load_cast_file(path)
    assert dict(cast.edits.merges) == {"Frog-Footman": "Footman"}
    assert cast.characters == {"Footman": VoiceSpec(name="Eric")}  # the voice went with the name
    people = {p.name: p for p in find_characters(book, edits=cast.edits)}
    assert "Frog-Footman" not in people and "Frog-Footman" in people["Footman"].aliases
    assert people["Footman"].quotes == 12 + 2
    assert "King" in people and "Queen" in people  # "he" and "she": the group is refused
    assert run.usage.requests == 1 + run.windows and not run.errors
    # The labeller was then asked with the merged cast: no "Frog-Footman" on its list.
    asked = [m["content"] for body in fake.received for m in body["messages"]]
    label_prompts = [text for text in asked if "Label these" in text]
    assert label_prompts and not any(": Frog-Footman\n" in p for p in label_prompts)


def test_the_users_choices_win_over_the_pass(alice, tmp_path) -> None:
    book, people = alice
    mine = CastEdits().split("Frog-Footman")
    with serve_fake_chat(FakeChat(answer=_aliases_then_labels(("Footman", "Frog-Footman")))) as url:
        run = join_aliases(book, ChatClient(url), people, mine)
    assert run.joined == () and run.edits == mine
    # A book never cast before: the merges make its cast file, named after the book.
    paths = DataPaths(tmp_path / "fresh")
    with serve_fake_chat(FakeChat(answer=_aliases_then_labels(("Footman", "Frog-Footman")))) as url:
        run_llm_pass(paths, book, Settings(llm_url=url))
    fresh = load_cast_file(saved_cast_path(paths, book))
    assert fresh.book == "Alice's Adventures in Wonderland"
    assert dict(fresh.edits.merges) == {"Frog-Footman": "Footman"}
    # A character the user merged into keeps its name, though another in the group has more lines.
    mine = CastEdits().merge(["Crab"], "Eaglet")
    people = find_characters(book, edits=mine)
    lines = {p.name: p.quotes for p in people}
    assert lines["Eaglet"] < lines["Lory"]
    with serve_fake_chat(FakeChat(answer=_aliases_then_labels(("Lory", "Eaglet")))) as url:
        run = join_aliases(book, ChatClient(url), people, mine)
    assert run.joined == (("Lory", "Eaglet"),)
    assert dict(run.edits.merges) == {"Crab": "Eaglet", "Lory": "Eaglet"}
    paths = DataPaths(tmp_path)
    path = saved_cast_path(paths, book)
    edit_characters(CastFile(book="Alice"), hide="Five").save(path)
    with serve_fake_chat(FakeChat(answer=_aliases_then_labels(("Five", "Seven")))) as url:
        run = run_llm_pass(paths, book, Settings(llm_url=url))
    assert run.joined == () and load_cast_file(path).edits == CastEdits(hidden=("Five",))


@pytest.mark.parametrize(
    "answer",
    [
        lambda user: "I think the Footman and the Frog-Footman are one.",
        lambda user: json.dumps({"same": [["C1", "C77"]]}),
        lambda user: '{"same": [["C16", "C24"]',
    ],
)
def test_a_malformed_answer_changes_nothing(alice, tmp_path, answer) -> None:
    book, _ = alice
    paths = DataPaths(tmp_path)
    path = saved_cast_path(paths, book)
    CastFile(book="Alice", characters={"Alice": VoiceSpec(name="Serena")}).save(path)
    before = path.read_bytes()

    def labelled(user: str) -> str:
        return labels_answer("UNKNOWN")(user) if "Label these quotes" in user else answer(user)

    with serve_fake_chat(FakeChat(answer=labelled)) as url:
        run = run_llm_pass(paths, book, Settings(llm_url=url))
    assert run.joined == () and path.read_bytes() == before


def test_an_endpoint_that_is_down_changes_nothing(alice) -> None:
    book, people = alice
    with serve_fake_chat(FakeChat(answer=lambda user: "{}")) as url:
        pass  # stopped: nothing listens there now
    run = join_aliases(book, ChatClient(url, timeout_s=5), people, CastEdits())
    assert run.joined == () and run.edits == CastEdits() and run.usage.failures == 1
    assert "Cannot reach the chat endpoint" in run.error


def test_a_cast_of_hundreds_sends_the_ones_with_most_lines(alice) -> None:
    book, _ = alice
    crowd = [Character(f"Guest {n}", n + 1, 10, "Hello.", 1) for n in range(400)]
    groups = (("Guest 399", "Guest 398"), ("Guest 0", "Guest 397"))  # Guest 0 is not listed
    fake = FakeChat(answer=lambda user: alias_groups(user, *groups))
    with serve_fake_chat(fake) as url:
        run = join_aliases(book, ChatClient(url), crowd, CastEdits())
    user = fake.received[0]["messages"][1]["content"]
    listed = re.findall(r"^C\d+: (Guest \d+);", user, flags=re.M)
    assert len(listed) == MAX_LISTED and listed[0] == "Guest 399" and "Guest 0" not in listed
    assert run.joined == (("Guest 398", "Guest 399"),)
