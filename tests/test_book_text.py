"""Text for speech: normalisation, word counts and sentence splitting."""

from __future__ import annotations

import pytest

from omni_web.book.text import (
    count_words,
    join_text,
    normalize_text,
    pack_pieces,
    split_long_text,
    split_sentences,
    text_key,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  many \n\t spaces\u00a0here  ", "many spaces here"),
        ("\u201cCurly\u201d and \u2018single\u2019 quotes", "\"Curly\" and 'single' quotes"),
        ("It's \u201cdone\u201d \u2014 he said", "It's \"done\", he said"),
        ("word\u2014word", "word, word"),
        ("\u2015Yet when we came back", "Yet when we came back"),
        ("pages 3\u20135 and 1914\u20131918", "pages 3-5 and 1914-1918"),
        ("spaced \u2013 en dash", "spaced, en dash"),
        ("old -- style", "old, style"),
        ("\u201cWell\u2014\u201d she said", "\"Well,\" she said"),
        ("and then\u2026", "and then..."),
        ("wait . . . what", "wait... what"),
        ("e\ufb03cient \ufb01sh", "efficient fish"),
        ("soft\u00adhyphen zero\u200bwidth", "softhyphen zerowidth"),
        ("Quoi ? Non !", "Quoi? Non!"),
        ("* * *", ""),
        ("\u2014", ""),
        ("", ""),
    ],
)
def test_normalize_text(raw: str, expected: str) -> None:
    assert normalize_text(raw) == expected


def test_normalize_keeps_non_latin_scripts() -> None:
    assert normalize_text("ما هو السرطان؟") == "ما هو السرطان؟"
    assert normalize_text("我们走吧。") == "我们走吧。"
    assert normalize_text("«يعمل»") == "«يعمل»"


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Mr. Smith went home. He slept.", ["Mr. Smith went home.", "He slept."]),
        (
            "Mrs. Jones and Dr. Who met at St. Paul's. Then rain.",
            ["Mrs. Jones and Dr. Who met at St. Paul's.", "Then rain."],
        ),
        ("Fruit, e.g. apples, i.e. red ones. Done.", ["Fruit, e.g. apples, i.e. red ones.", "Done."]),
        ("Apples, pears, etc. The end.", ["Apples, pears, etc. The end."]),
        ("Cats vs. Dogs is a film. Good.", ["Cats vs. Dogs is a film.", "Good."]),
        ("J. R. R. Tolkien wrote it. Yes.", ["J. R. R. Tolkien wrote it.", "Yes."]),
        ("Pi is 3.14 or so. Right.", ["Pi is 3.14 or so.", "Right."]),
        ("CHAPTER I. Down the Rabbit-Hole", ["CHAPTER I. Down the Rabbit-Hole"]),
        ("Really? Yes! Fine.", ["Really?", "Yes!", "Fine."]),
        (
            '"Who is it?" asked Alice. "Me!" The Rabbit ran.',
            ['"Who is it?" asked Alice.', '"Me!"', "The Rabbit ran."],
        ),
        ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
        ("(It was late.) She slept.", ["(It was late.)", "She slept."]),
        (
            '"I shall be late!" (when she thought it over) fine.',
            ['"I shall be late!" (when she thought it over) fine.'],
        ),
        ("Wait... What happened?", ["Wait...", "What happened?"]),
        ("trailing words without a stop", ["trailing words without a stop"]),
        ("ما هو السرطان؟ من أين تأتي الحياة. هذا نص.", ["ما هو السرطان؟", "من أين تأتي الحياة.", "هذا نص."]),
        ("我们走吧。你好！他说什么？好", ["我们走吧。", "你好！", "他说什么？", "好"]),
        ("「走吧。」他说。", ["「走吧。」", "他说。"]),
        ("यह एक वाक्य है। यह दूसरा है।", ["यह एक वाक्य है।", "यह दूसरा है।"]),
    ],
)
def test_split_sentences(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


def test_split_sentences_loses_nothing() -> None:
    text = normalize_text("One. Two? \u201cThree!\u201d Four\u2026 Five. Mr. Six. 7.5 seven.")
    assert " ".join(split_sentences(text)) == text


def test_count_words() -> None:
    assert count_words("Hello, world - it's 3.14!") == 4
    assert count_words("我们走吧。") == 4  # each ideograph is a word
    assert count_words("ما هو السرطان؟") == 3
    assert count_words(" , . ; ") == 0


def test_split_long_text_prefers_clauses_then_words() -> None:
    clauses = ", ".join(" ".join(f"w{i}x{j}" for j in range(15)) for i in range(10))
    parts = split_long_text(clauses, max_words=40, max_chars=None)
    assert [count_words(p) for p in parts] == [30, 30, 30, 30, 30]
    assert all(p.endswith(",") for p in parts[:-1])
    words = " ".join(f"w{i}" for i in range(81))
    assert [count_words(p) for p in split_long_text(words, max_words=80, max_chars=None)] == [41, 40]
    assert split_long_text("short one", max_words=5, max_chars=None) == ["short one"]


def test_split_long_text_respects_characters_and_huge_words() -> None:
    text = "a" * 50 + " " + "b" * 10
    parts = split_long_text(text, max_words=40, max_chars=20)
    assert all(len(p) <= 20 for p in parts)
    assert "".join(parts) == text.replace(" ", "")
    cjk = "我们走吧" * 3
    assert split_long_text(cjk, max_words=5, max_chars=None) == ["我们走吧", "我们走吧", "我们走吧"]


def test_pack_pieces_and_join() -> None:
    assert pack_pieces(["a b.", "c d.", "e f g."], target_words=4, max_chars=None) == ["a b. c d.", "e f g."]
    assert pack_pieces(["a b.", "c d."], target_words=10, max_chars=6) == ["a b.", "c d."]
    assert join_text("我们。", "你好。") == "我们。你好。"
    assert join_text("One.", "Two.") == "One. Two."


def test_text_key_ignores_case_and_punctuation() -> None:
    assert text_key("CHAPTER I.\nDown the Rabbit-Hole") == text_key("Chapter I: down the rabbit hole")
