"""Benchmark: who speaks each quote, graded on novels whose every quote was annotated by hand.

The corpus is the Project Dialogism Novel Corpus (28 public-domain novels, 35,000+ quotes; see
tests/cast_corpus.py), cloned once into a cache (``--source`` may name a local copy of its git
repository). Each novel is read the product's way (``load_book`` -> ``book_roster`` ->
``chapter_dialogue``) and graded: quotes found as speech, named (a speaker at or above the floor),
accuracy (right speaker among all quotes), precision (right among named), by tag kind (explicit:
"said Ahab"; pronoun/noun: "he said", "his wife cried"; none: no tag), the first-person narrator's
quotes, and characters named under two or more names. ``--llm URL`` runs the LLM pass on the
quotes the rules leave below the floor first (``omni_web.cast.labeller``), after its question of
which characters are listed twice (``omni_web.cast.alias_llm``), and grades the result.
``--alias-oracle`` asks that question of an answerer that knows the annotation (in-process, no
LLM): the ceiling the alias pass can reach with every answer right, which measures what the
prompt lists and the merges do, not any model.

    .venv/bin/python bench/bench_cast_accuracy.py [--novels Emma,Persuasion] [--set tune|held-out|all]
        [--cache DIR] [--source URL_OR_PATH] [--floor 0.6] [--calibration] [--llm URL --llm-model NAME]
        [--alias-oracle]
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import re
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from omni_web.book import load_book  # noqa: E402
from omni_web.cast import BookLabels, CastEdits, book_roster, find_characters  # noqa: E402
from omni_web.cast.alias_llm import join_aliases  # noqa: E402
from omni_web.cast.characters import Character  # noqa: E402
from omni_web.cast.labeller import label_book  # noqa: E402
from omni_web.llm import ChatClient, LlmUsage  # noqa: E402
from tests.cast_corpus import (  # noqa: E402
    HELD_OUT,
    PDNC_URL,
    Gold,
    NovelScore,
    characters_of,
    ensure_corpus,
    found_quotes,
    novel_dirs,
    read_gold,
    score_novel,
)

KIND_ORDER = ("all", "explicit", "pronoun/noun", "none")


def _first_person(data: Path) -> dict[str, bool]:
    """Folder name -> whether the corpus index calls the novel first-person."""
    index = data.parent / "PDNC-Novel-Index.csv"
    if not index.is_file():
        return {}
    with index.open(encoding="utf-8") as handle:
        return {row["Folder Name"]: row["Narrative Person"].startswith("1") for row in csv.DictReader(handle)
                if row.get("Folder Name")}


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f} %" if whole else "    - "


def _table(title: str, score: NovelScore) -> None:
    print(f"\n{title}")
    print(f"{'kind':<14} {'quotes':>7} {'found':>8} {'named':>8} {'accuracy':>9} {'precision':>10}")
    for kind in KIND_ORDER:
        total = score.quotes[kind]
        print(
            f"{kind:<14} {total:>7} {_pct(score.found[kind], total):>8} {_pct(score.named[kind], total):>8} "
            f"{_pct(score.right[kind], total):>9} {_pct(score.right[kind], score.named[kind]):>10}"
        )
    print(
        f"first-person narrator: {score.narrator_right}/{score.narrator_quotes} right "
        f"({_pct(score.narrator_right, score.narrator_quotes).strip()})"
    )
    print(f"characters named right: {score.characters}; under 2+ names: {len(score.split_characters)}")
    print(
        f"merges offered on the cast screen: {score.hints}, {score.hints_right} of them one person "
        f"({_pct(score.hints_right, score.hints).strip()}); "
        f"characters under 2+ names with the merge offered: {len(score.hinted_splits)}"
    )
    print(
        f"speakers with a merge set for them when picked: {score.offers}, "
        f"{score.offers_right} of them to the same person ({_pct(score.offers_right, score.offers).strip()})"
    )


def _calibration(score: NovelScore) -> None:
    print("\ncalibration (every guess, right share by confidence; by rule)")
    for confidence in sorted({c for c, _ in score.by_confidence}, reverse=True):
        right, wrong = score.by_confidence[(confidence, True)], score.by_confidence[(confidence, False)]
        print(f"  conf {confidence:4.2f}: {right + wrong:6} guesses, {_pct(right, right + wrong)} right")
    for rule in sorted({r for r, _ in score.by_rule}):
        right, wrong = score.by_rule[(rule, True)], score.by_rule[(rule, False)]
        print(f"  {rule:<40} {right + wrong:6} guesses, {_pct(right, right + wrong)} right")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--novels", default="", help="comma-separated folder names (default: the set)")
    parser.add_argument(
        "--set",
        choices=("tune", "held-out", "all"),
        default="all",
        help=f"tune: all but the held-out novels; held-out: {', '.join(HELD_OUT)}",
    )
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "omni-web" / "pdnc")
    parser.add_argument(
        "--source", default=PDNC_URL, help="where to clone the corpus from (URL or local repo)"
    )
    parser.add_argument("--floor", type=float, default=0.6, help="the cast's min_confidence")
    parser.add_argument(
        "--calibration", action="store_true", help="also print right share by confidence and rule"
    )
    parser.add_argument("--per-novel", action="store_true", help="a line per novel")
    parser.add_argument(
        "--llm", metavar="URL", help="run the LLM pass against this OpenAI-compatible endpoint"
    )
    parser.add_argument("--llm-model", default="", help="the model name the endpoint serves")
    parser.add_argument("--llm-concurrency", type=int, default=4, help="LLM requests at once")
    parser.add_argument(
        "--alias-oracle", action="store_true", help="the alias question answered from the annotation"
    )
    parser.add_argument("--split-names", action="store_true", help="list the characters under 2+ names")
    args = parser.parse_args()
    if args.llm:
        print(f"LLM pass against {args.llm} ({args.llm_model or 'the server default model'})")
    data = ensure_corpus(args.cache, args.source)
    first_person = _first_person(data)
    names = [n for n in args.novels.split(",") if n]
    folders = novel_dirs(data, names)
    if not names and args.set != "all":
        folders = [f for f in folders if (f.name in HELD_OUT) == (args.set == "held-out")]
    total, held = NovelScore(), NovelScore()
    usage = LlmUsage()
    started = time.perf_counter()
    for folder in folders:
        gold = read_gold(folder, first_person=first_person.get(folder.name))
        labels, edits = None, CastEdits()
        if args.llm or args.alias_oracle:
            labels, edits, cost = _llm_pass(folder / "novel_text.txt", args, gold)
            usage = usage.plus(cost)
        roster_of = functools.partial(book_roster, edits=edits)
        score = score_novel(
            folder / "novel_text.txt",
            gold,
            min_confidence=args.floor,
            found=found_quotes(folder / "novel_text.txt", labels=labels, roster_of=roster_of),
        )
        total.add(score)
        if folder.name in HELD_OUT:
            held.add(score)
        if args.per_novel:
            q = score.quotes["all"]
            print(
                f"{folder.name:<32} {q:>6} quotes  accuracy {_pct(score.right['all'], q)}  precision "
                f"{_pct(score.right['all'], score.named['all'])}  narrator {score.narrator_right}/"
                f"{score.narrator_quotes}  split {len(score.split_characters)}"
            )
        if args.split_names:
            for main, used in score.split_characters:
                offered = "  (merge offered)" if main in score.hinted_splits else ""
                print(f"  {folder.name}: {main} <- {', '.join(used)}{offered}")
    print(f"\n{len(folders)} novels in {time.perf_counter() - started:.0f} s, floor {args.floor}")
    _table(f"all {len(folders)} novels", total)
    if held.quotes["all"] and held.quotes["all"] != total.quotes["all"]:
        _table(f"held-out novels ({', '.join(f.name for f in folders if f.name in HELD_OUT)})", held)
    if args.calibration:
        _calibration(total)
    if args.llm:
        print(f"\nLLM cost: {usage.summary}")


def _llm_pass(
    path: Path, args: argparse.Namespace, gold: Gold
) -> tuple[BookLabels | None, CastEdits, LlmUsage]:
    """The LLM pass over one novel, as the product runs it (the rules' characters, the floor): the
    characters listed twice merged, then the unsure quotes labelled (not with the oracle)."""
    book = load_book(path)
    people = find_characters(book, min_confidence=args.floor, min_quotes=1)
    if args.alias_oracle:
        client = ChatClient("http://oracle", transport=httpx.MockTransport(_oracle(book, people, gold)))
    else:
        client = ChatClient(args.llm, model=args.llm_model, timeout_s=300)
    aliases = join_aliases(book, client, people, CastEdits())
    if args.per_novel and aliases.joined:
        print(f"  {path.parent.name}: joined " + "; ".join(f"{a} = {b}" for a, b in aliases.joined))
    if args.alias_oracle:
        return None, aliases.edits, aliases.usage
    run = label_book(
        book,
        client,
        [c.name for c in find_characters(book, min_confidence=args.floor, edits=aliases.edits)],
        min_confidence=args.floor,
        concurrency=args.llm_concurrency,
        edits=aliases.edits,
    )
    if args.per_novel:
        print(
            f"  {path.parent.name}: LLM {run.usage.summary}; {run.fell_back}/{run.windows} windows fell back"
        )
    return run.labels, aliases.edits, aliases.usage.plus(run.usage)


def _oracle(book, people: list[Character], gold: Gold):
    """A chat endpoint, in-process, that answers the alias question from the annotation: the listed
    characters that stand for one annotated speaker, grouped."""
    chapters = list(book.chapters)
    roster = book_roster(book, chapters)
    by_speaker: dict[str, list[str]] = {}
    for n, person in enumerate(people, start=1):
        found = characters_of(person.name, roster, gold)
        if len(found) == 1:
            by_speaker.setdefault(found.pop(), []).append(f"C{n}")

    def answer(request: httpx.Request) -> httpx.Response:
        user = json.loads(request.content)["messages"][1]["content"]
        listed = set(re.findall(r"^(C\d+): ", user, flags=re.M))
        groups = [ids for ids in by_speaker.values() if len(ids) > 1 and set(ids) <= listed]
        content = json.dumps({"same": groups})
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}], "usage": {}})

    return answer


if __name__ == "__main__":
    main()
