"""Normalisation per language: each case is an input sentence and the exact spoken form."""

from __future__ import annotations

import logging

import pytest

from omni_web.book import Book, BookMetadata, Chapter, TextBlock
from omni_web.book.model import BlockKind
from omni_web.catalog import get_entry
from omni_web.settings import Settings
from omni_web.text import (
    language_code,
    normalization_applies,
    normalize_for_speech,
    rules_for,
    spoken_form,
    supported_languages,
)
from omni_web.text.roman import int_to_roman, roman_to_int

ENGLISH = [
    # A number run into capitals is said apart (it was "threeD", one made-up word); MP3 and H2O stay.
    ("A 3D printer, a 4K screen and 5G, MP3 files and H2O.",
     "A three D printer, a four K screen and five G, MP3 files and H2O."),
    ("CHAPTER XIV", "CHAPTER fourteen"),
    ("Chapter ii. The Pool", "Chapter two. The Pool"),
    ("XIV.", "Fourteen."),
    ("I. Down the Rabbit-Hole", "One. Down the Rabbit-Hole"),
    ("I. M. Pei built it.", "I. M. Pei built it."),
    ("I think I can, said Elizabeth I.", "I think I can, said Elizabeth the First."),
    ("Henry VIII's wives; World War II ended.", "Henry the Eighth's wives; World War two ended."),
    (
        "Louis XIV and Pope Pius XII met Malcolm X.",
        "Louis the Fourteenth and Pope Pius the Twelfth met Malcolm X.",
    ),
    ("He DID MIX it.", "He DID MIX it."),
    (
        "Book I. In the letter I wrote, the book I read, the part I liked.",
        "Book one. In the letter I wrote, the book I read, the part I liked.",
    ),
    ("After World War I came World War II.", "After World War one came World War two."),
    ("Act V, Scene ii; Part I: Beginnings", "Act five, Scene two; Part one: Beginnings"),
    ("In 1851 it cost £3 10s.", "In eighteen fifty-one it cost three pounds ten shillings."),
    ("£3 10s. 6d. each", "three pounds ten shillings and six pence each"),
    ("She paid 10s. 6d. for it.", "She paid ten shillings and six pence for it."),
    ("£1 and 1p and $1 and 5¢", "one pound and one penny and one dollar and five cents"),
    ("He had $3.50 and €20.", "He had three dollars and fifty cents and twenty euros."),
    ("It raised $1.5 million.", "It raised one point five million dollars."),
    ("He came 3rd, then 21st.", "He came third, then twenty-first."),
    ("The 19th-century house, pp. 12-14.", "The nineteenth-century house, pages twelve to fourteen."),
    (
        "Dr. Watson and Mrs. Hudson lived in Baker St.",
        "Doctor Watson and Missus Hudson lived in Baker Street.",
    ),
    ("St. Paul's, e.g. the dome, etc. Then", "Saint Paul's, for example the dome, et cetera. Then"),
    ("Apples, pears, etc.", "Apples, pears, et cetera."),
    (
        "Leland Stanford Jr. University, by John Smith Jr.",
        "Leland Stanford Junior University, by John Smith Junior.",
    ),
    ("See No. 5 and fig. 3.", "See Number five and figure three."),
    (
        "It was 10:30 p.m. on 12 March 1851.",
        "It was ten thirty PM on the twelfth of March eighteen fifty-one.",
    ),
    ("At 7 a.m. and 10:05 and 9:00 and 00:00.", "At seven AM and ten oh five and nine o'clock and midnight."),
    ("March 12, 1851 was cold.", "March twelfth, eighteen fifty-one was cold."),
    ("Born 1851-03-12.", "Born March twelfth, eighteen fifty-one."),
    ("Prices rose 50% in the 1850s.", "Prices rose fifty percent in the eighteen fifties."),
    ("In the '60s and the 1900s.", "In the sixties and the nineteen hundreds."),
    ("He had 1851 sheep.", "He had one thousand eight hundred and fifty-one sheep."),
    (
        "The war of 1914-1918 and 1914-18.",
        "The war of nineteen fourteen to nineteen eighteen and nineteen fourteen to eighteen.",
    ),
    ("It ended 3-2.", "It ended three-two."),
    ("It is 3.14 or -5 or 007.", "It is three point one four or minus five or zero zero seven."),
    ("A crowd of 12,000 people.", "A crowd of twelve thousand people."),
    ("Smith & Co. at 20°C.", "Smith and Co. at twenty degrees Celsius."),
    ("In 2005 and 2024.", "In two thousand and five and twenty twenty-four."),
    ("In 1066 and all that; 1000 men.", "In ten sixty-six and all that; one thousand men."),
    ("No. I won't go. See No. 7 and Vol. II.", "No. I won't go. See Number seven and Volume two."),
    ("Call 555-1234.", "Call five five five, one two three four."),
    (
        "Add 1/2 cup, 2 3/4 pints and ½ pound; open 24/7.",
        "Add one half cup, two and three quarters pints and one half pound; open twenty-four/seven.",
    ),
]

FRENCH = [
    (
        "M. Dupont est né le 1er mai 1851.",
        "Monsieur Dupont est né le premier mai mille huit cent cinquante et un.",
    ),
    (
        "Au XIXe siècle, Louis XIV et François Ier.",
        "Au dix-neuvième siècle, Louis quatorze et François premier.",
    ),
    ("Henri IV et Élisabeth Ire.", "Henri quatre et Élisabeth première."),
    ("Chapitre XIV", "Chapitre quatorze"),
    ("Ça coûte 3,50 € ou 1 €.", "Ça coûte trois euros cinquante ou un euro."),
    ("Il est 10h30, ou 14:05, ou 1 h.", "Il est dix heures trente, ou quatorze heures cinq, ou une heure."),
    (
        "Voir p. 12-14, p. ex. le n° 5, etc.",
        "Voir page douze à quatorze, par exemple le numéro cinq, et cetera.",
    ),
    ("Un drôle de Dr Martin.", "Un drôle de Docteur Martin."),
    ("La 2e fois, 50 % de 1 000 personnes.", "La deuxième fois, cinquante pour cent de mille personnes."),
    ("Il a 3,14 ou 3,05 ou -5.", "Il a trois virgule quatorze ou trois virgule zéro cinq ou moins cinq."),
    ("Me voici, dit Me Durand.", "Me voici, dit Maître Durand."),
    ("M. le maire et C. Dupont.", "Monsieur le maire et C. Dupont."),
    ("Le chat De Gaulle, Ve République.", "Le chat De Gaulle, cinquième République."),
    ("Né le 1851-03-12.", "Né le douze mars mille huit cent cinquante et un."),
]

GERMAN = [
    (
        "Dr. Müller kam am 3. Mai 1851 an.",
        "Doktor Müller kam am dritten Mai achtzehnhunderteinundfünfzig an.",
    ),
    ("Heinrich VIII. war König. Ludwig XIV.", "Heinrich der Achte war König. Ludwig der Vierzehnte."),
    (
        "Im XIX. Jahrhundert, z. B. im 19. Jahrhundert.",
        "Im neunzehnten Jahrhundert, zum Beispiel im neunzehnten Jahrhundert.",
    ),
    ("Kapitel XIV", "Kapitel vierzehn"),
    ("Es kostet 3,50 € oder 1 €.", "Es kostet drei Euro fünfzig oder ein Euro."),
    ("Um 10:30 Uhr oder 1 Uhr.", "Um zehn Uhr dreißig oder ein Uhr."),
    ("Siehe S. 12-14, Nr. 5 usw.", "Siehe Seite zwölf bis vierzehn, Nummer fünf und so weiter."),
    ("Er hatte 1851 Schafe.", "Er hatte eintausendachthunderteinundfünfzig Schafe."),
    ("Er kam 1851. Dann ging er.", "Er kam achtzehnhunderteinundfünfzig. Dann ging er."),
    (
        "Der 2. Weltkrieg dauerte 1939-1945.",
        "Der zweite Weltkrieg dauerte neunzehnhundertneununddreißig bis neunzehnhundertfünfundvierzig.",
    ),
    (
        "50 % von 1.000 Leuten, 3,14 und -5.",
        "fünfzig Prozent von eintausend Leuten, drei Komma eins vier und minus fünf.",
    ),
    ("3. Mai 1851", "dritter Mai achtzehnhunderteinundfünfzig"),
    ("Die Drüse, d. h. das Organ.", "Die Drüse, das heißt das Organ."),
]

SPANISH = [
    (
        "El Sr. García llegó el 1 de mayo de 1851.",
        "El Señor García llegó el uno de mayo de mil ochocientos cincuenta y uno.",
    ),
    ("Felipe II e Isabel II; Alfonso XIII.", "Felipe segundo e Isabel segunda; Alfonso trece."),
    ("En el siglo XIX, Capítulo XIV.", "En el siglo diecinueve, Capítulo catorce."),
    ("Cuesta 3,50 € o 1 €.", "Cuesta tres euros con cincuenta céntimos o un euro."),
    ("A las 10:30 o 1:15 o 9:00.", "A las diez y media o una y cuarto o nueve en punto."),
    (
        "Véase pág. 12-14, p. ej. el núm. 5, etc.",
        "Véase página doce a catorce, por ejemplo el número cinco, etcétera.",
    ),
    ("Tenía 21 años y 1 libro.", "Tenía veintiún años y un libro."),
    ("El 1.º y la 2.ª, el 1.er piso.", "El primero y la segunda, el primer piso."),
    (
        "50 % de 1.000 personas, 3,14 y -5.",
        "cincuenta por ciento de mil personas, tres coma catorce y menos cinco.",
    ),
]


@pytest.mark.parametrize(
    ("language", "written", "spoken"),
    [
        *(("en", w, s) for w, s in ENGLISH),
        *(("fr", w, s) for w, s in FRENCH),
        *(("de", w, s) for w, s in GERMAN),
        *(("es", w, s) for w, s in SPANISH),
    ],
)
def test_spoken_form(language: str, written: str, spoken: str) -> None:
    assert normalize_for_speech(written, language) == spoken


def test_languages_and_pass_through() -> None:
    assert set(supported_languages()) >= {"en", "fr", "de", "es"}
    assert language_code("English") == "en"
    assert language_code("auto", "fr-CA") == "fr"
    assert language_code(None, "") == ""
    assert rules_for("German").code == "de"
    # A language without rules passes through unchanged, numbers and all.
    assert normalize_for_speech("في عام 1851 Chapter XIV", "ar") == "في عام 1851 Chapter XIV"
    assert normalize_for_speech("1851", None) == "1851"


def test_the_pronoun_i_is_never_a_number() -> None:
    for text in ("I", "And I said I would.", "Then I. Then you.", "Was it I?"):
        assert normalize_for_speech(text, "en") == (text if text != "I" else "One")


def test_roman_parsing_is_strict() -> None:
    assert roman_to_int("XIV") == 14 and roman_to_int("mcmxciv") == 1994
    assert roman_to_int("IIII") is None and roman_to_int("IC") is None and roman_to_int("MIXED") is None
    assert all(roman_to_int(int_to_roman(n)) == n for n in range(1, 4000))


def _book(language: str) -> Book:
    chapter = Chapter(
        0, "Chapter XIV", (TextBlock(BlockKind.PARAGRAPH, "In 1851 Dr. Smith came."),), 5, True, "", "c.xhtml"
    )
    return Book(
        BookMetadata(title="T", language=language),
        None,
        (chapter,),
        source_path=__import__("pathlib").Path("t.epub"),
    )


def test_per_model_switch_and_setting_override(caplog: pytest.LogCaptureFixture) -> None:
    qwen, zonos = get_entry("qwen3_tts_0_6b_customvoice"), get_entry("zonos2")
    assert normalization_applies(qwen, Settings()) and not normalization_applies(zonos, Settings())
    assert normalization_applies(zonos, Settings(text_normalization="on"))
    assert not normalization_applies(qwen, Settings(text_normalization="off"))
    book = _book("en")
    on = spoken_form(book, entry=qwen, settings=Settings())
    assert on.chapter(book.chapters[0]).blocks[0].text == "In eighteen fifty-one Doctor Smith came."
    assert on.chapter(book.chapters[0]).title == "Chapter fourteen"
    off = spoken_form(book, entry=zonos, settings=Settings())
    assert off.chapter(book.chapters[0]).blocks[0].text == "In 1851 Dr. Smith came."
    # The user's language choice wins over the book's.
    assert spoken_form(book, entry=qwen, settings=Settings(), language="French").language == "fr"
    with caplog.at_level(logging.INFO, logger="omni_web.text.speech"):
        unknown = spoken_form(_book("sw"), entry=qwen, settings=Settings())
    assert unknown.rules is None
    assert (
        sum("No number/abbreviation rules for language 'sw'" in r.getMessage() for r in caplog.records) == 1
    )
