"""Union-find over the forms of characters' names, with the checks that keep two people apart.

:class:`NameGroups` holds which forms are one person and the joins :func:`group_names` runs on
them: forms with the same words, titled surnames, given names, bare titles, and the joins the
book's own pairs of words show (a given name written with its surname; the eldest daughter is in
:mod:`.name_daughters`).
"""

from __future__ import annotations

from collections.abc import Mapping

from omni_web.cast.given_names import given_name_gender, patronymic_gender
from omni_web.cast.names import GIVEN_NAME_TITLES, KIN_TITLES, Gender, name_words, title_gender, title_key

__all__ = ["NameGroups", "titles_gender"]


class NameGroups:
    """Union-find over name forms, with the gender checks of :func:`group_names`."""

    def __init__(
        self, counts: Mapping[str, int], genders: Mapping[str, Gender], pairs: Mapping[tuple[str, str], int]
    ) -> None:
        self.counts = counts
        self.genders = genders
        self.pairs = pairs
        self.parent = {name: name for name in counts}

    def find(self, name: str) -> str:
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def gender(self, name: str) -> Gender:
        """A form's gender by its title, else a full name's by its given name, which outweighs the
        pronouns after it, often another's ("Fanny Price ... he", her brother), else by those
        pronouns: a word alone may be a surname ("Bertram ... she", Lady Bertram)."""
        known = self._firm_gender(name)
        return known if known is not Gender.UNKNOWN else self.genders.get(name, Gender.UNKNOWN)

    def group_gender(self, root: str) -> set[Gender]:
        """The group's genders: its titles' and full names', else the pronouns after its forms
        ("Matthew ... she" does not make "Mr. Matthew Pocket" a woman)."""
        members = [n for n in self.counts if self.find(n) == root]
        firm = {self._firm_gender(n) for n in members} - {Gender.UNKNOWN}
        return firm or {self.gender(n) for n in members} - {Gender.UNKNOWN}

    @staticmethod
    def _firm_gender(name: str) -> Gender:
        """A form's gender by its title, else a full name's by its given name ("Mrs. Henry van der
        Luyden": her title's)."""
        known = title_gender(name)
        if known is Gender.UNKNOWN and len(name_words(name)) > 1:
            # "Pulcheria Alexandrovna": her patronymic, where the given name says nothing.
            known = given_name_gender(name)
            known = known if known is not Gender.UNKNOWN else patronymic_gender(name)
        return known

    def union(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)

    def join_same_words(self, forms: list[str]) -> None:
        """ "Darcy" and "Mr. Darcy" are one; "Mr. Bennet" and "Mrs. Bennet" are two, and a bare
        "Darcy" beside "Mr./Miss/Mrs. Darcy" joins the one its gender, else its dominance, picks."""
        titled: dict[tuple[str, ...], list[str]] = {}
        bare = [f for f in forms if not title_key(f)]
        for form in forms:
            if title_key(form):
                titled.setdefault(_rank_key(form), []).append(form)
        for same in titled.values():
            for form in same[1:]:
                self.union(form, same[0])
        self._join_rank(titled)
        people = [same[0] for same in titled.values() if self.find(same[0]) == same[0]]
        if not bare:
            return
        for form in bare[1:]:
            self.union(form, bare[0])
        if len(people) == 1 and self._compatible(bare[0], people[0]):
            self.union(bare[0], people[0])
        elif len(people) > 1:
            mine = self.gender(bare[0])
            fitting = [
                p for p in people if mine is Gender.UNKNOWN or self.gender(p) in (mine, Gender.UNKNOWN)
            ]
            fitting.sort(key=lambda p: (-sum(self.counts[f] for f in titled[_rank_key(p)]), p))
            # Its gender picks, else it is a man's, as a bare surname is in these novels ("Willoughby":
            # Mr., not Mrs.), else a title used five times as often.
            # A man named far less than a woman of the name ("Mr. Sparsit", long dead) is not it.
            men = [p for p in fitting if title_gender(p) is Gender.MALE]
            if men and not self._dominates(titled[_rank_key(fitting[0])], titled[_rank_key(men[0])], 5):
                fitting = men if mine is Gender.UNKNOWN else fitting
            else:
                men = []
            ratio = 3 if mine is not Gender.UNKNOWN or men else 5
            if len(fitting) == 1 or (
                len(fitting) > 1
                and self._dominates(titled[_rank_key(fitting[0])], titled[_rank_key(fitting[1])], ratio)
            ):
                self.union(bare[0], fitting[0])

    def _join_rank(self, titled: Mapping[tuple[str, ...], list[str]]) -> None:
        """A rank and the plain address of its gender on one name are one person ("Countess
        Olenska", "Madame Olenska"), where the name has one of each; with no such address, the
        English one ("Marchioness Manson", "Mrs. Manson")."""
        ranked = [t for t in titled if len(t) == 1 and t[0] in _RANKS]
        for rank in ranked:
            gender = title_gender(rank[0])
            of_gender = [t for t in titled if len(t) == 1 and title_gender(t[0]) is gender]
            same = [t for t in of_gender if t[0] in _PLAIN_ADDRESS] or [
                t for t in of_gender if t[0] in ("mr", "mrs")
            ]
            if len(same) == 1 and sum(title_gender(t[0]) is gender for t in ranked) == 1:
                self.union(titled[rank][0], titled[same[0]][0])
        # A doctor or professor is "Mr." in talk ("Professor Bhaer", "Mr. Bhaer").
        if ("dr",) in titled and ("mr",) in titled:
            self.union(titled[("dr",)][0], titled[("mr",)][0])
        self._join_kin(titled)

    def _join_kin(self, titled: Mapping[tuple[str, ...], list[str]]) -> None:
        """An uncle or aunt of a surname no one of the family carries with a given name is its one
        "Mr." or "Mrs." ("Uncle Pumblechook"; not "Aunt March" beside Amy March's mother)."""
        surname = name_words(next(iter(titled.values()))[0]) if titled else ()
        if len(surname) != 1 or any(
            len(words := name_words(n)) > 1 and words[-1] == surname[0] for n in self.counts
        ):
            return
        for kin in (t for t in titled if len(t) == 1 and t[0] in ("uncle", "aunt")):
            plain = ("mr",) if kin == ("uncle",) else ("mrs",)
            if plain in titled:
                self.union(titled[kin][0], titled[plain][0])

    @staticmethod
    def _given_gender(form: str) -> bool:
        return given_name_gender(form) is not Gender.UNKNOWN

    def _given_name_of(self, form: str, target: str) -> bool:
        """``form`` is a given name alone, of the target's gender, that begins the forms making at
        least half of the target's uses: "Frances" is "Frances Clyne" though the narration's "he"
        after "Frances" is mostly the man she talks to ("John" is not "Mr. Knightley")."""
        words = name_words(form)
        gender = given_name_gender(form)
        return (
            len(words) == 1
            and not title_key(form)
            and gender is not Gender.UNKNOWN
            and gender in self.group_gender(target)
            and 2 * sum(self.counts[n] for n in self._begun(words, target)) >= self._weight(target)
        )

    def _given_name_word(self, form: str, target: str) -> bool:
        """``form``'s word begins one of the target's full names ("Miss Rose" of "Rose Maylie")."""
        given = {name_words(n)[0] for n in self.counts if self.find(n) == target and len(name_words(n)) > 1}
        return name_words(form)[:1] != () and name_words(form)[0] in given

    def _begun(self, words: tuple[str, ...], target: str) -> list[str]:
        """The target's forms that begin with ``words`` ("Frances Clyne" for "Frances")."""
        return [n for n in self.counts if self.find(n) == target and name_words(n)[: len(words)] == words]

    def _dominates(self, first: list[str], second: list[str], ratio: int = 3) -> bool:
        return sum(self.counts[f] for f in first) >= ratio * sum(self.counts[f] for f in second)

    def _compatible(self, form: str, other: str) -> bool:
        mine = self.group_gender(self.find(form))
        theirs = self.group_gender(self.find(other))
        return not (mine and theirs and mine != theirs)

    def join_shorter(self, forms: list[str], target: str) -> None:
        """Join the shorter ``forms`` to the longer name's group ``target`` where one person."""
        target_titles = {title_key(n) for n in self.counts if self.find(n) == target} - {()}
        # An aunt of the name is not her niece: "Aunt March" is not "Amy March".
        kin = any(set(t) & KIN_TITLES for t in target_titles)
        forms = [f for f in forms if kin or not self._kin_surname(self.find(f))]
        if not forms:
            return
        roots = {self.find(f) for f in forms}
        if len(roots) == 1:
            # "Mr. Beebe" is not "Minnie Beebe": a titled surname joins a full name when the book
            # gives that name the same title ("Mr. Fitzwilliam Darcy") or the same gender.
            root = next(iter(roots))
            titles = {title_key(n) for n in self.counts if self.find(n) == root} - {()}
            same = bool(self.group_gender(target)) and self.group_gender(target) == self.group_gender(root)
            given = all(set(t) <= GIVEN_NAME_TITLES for t in titles)  # "Miss Rose" is "Rose Maylie"
            # Pronouns alone, after either form, do not keep a word from the one name it is part of
            # ("Rabbit ... she", "White Rabbit ... he"); a given name or a title does.
            loose = not (titles or self.sure_gender(target)) and not self._given_gender(forms[0])
            fits = self._compatible(forms[0], target) or self._given_name_of(forms[0], target) or loose
            # "Miss Bennet" is not Elizabeth Bennet, whom the book calls "Miss Elizabeth".
            younger = self._miss_given(target, titles) and not self._given_name_word(forms[0], target)
            wed = self._wed(root, target)
            if (not titles or given or titles & target_titles or same) and fits and not younger and not wed:
                self.union(forms[0], target)
            return
        # Two titled people share the word ("Miss Miller", "Mrs. Miller"): the title the longer
        # name carries ("Miss Daisy Miller") picks one.
        for form in forms:
            if title_key(form) in target_titles and self._compatible(form, target):
                self.union(form, target)
                return
        # No title on the longer name ("Fitzwilliam Darcy"): its gender, else the most used, picks.
        # A bare surname names no one in particular: a titled form of the right gender alone
        # ("Miss Woodhouse" beside "Mr." and "Woodhouse") is the full name's.
        # A titled one only where the full name's gender is unknown or its titles or given name show
        # it, or they are a man or woman the book names often beside the others of the name ("Mr.
        # Thorpe" is "John Thorpe"; "Mr. Welland", named 4 times beside "Mrs. Welland" 88 times,
        # is not "May Welland", however often the narration's "he" follows her name).
        sure = self.sure_gender(target) if self.group_gender(target) else set()
        if any(("miss",) in self.titles(r) for r in roots):
            # A daughter of the name ("Miss Welland") is the one her given name is written with,
            # not her mother ("May Welland" is not "Mrs. Welland").
            roots = {r for r in roots if ("mrs",) not in self.titles(r)}
        roots = {r for r in roots if not self._wed(r, target)}
        fitting = sorted(
            (
                r for r in roots
                if (self._compatible(r, target) or self._given_name_of(r, target))
                and (
                    not self.titles(r)
                    or not self.group_gender(target)
                    or self.group_gender(r) == sure
                    or not any(self._weight(o) >= 3 * self._weight(r) for o in roots - {r})
                )
            ),
            key=lambda r: (-self._weight(r), r),
        )
        titled = [r for r in fitting if self.titles(r)]
        if self.group_gender(target) and len(titled) == 1 and self.group_gender(titled[0]):
            fitting = titled
        if len(fitting) == 1 or (
            len(fitting) > 1 and self._weight(fitting[0]) >= 3 * self._weight(fitting[1])
        ):
            self.union(fitting[0], target)

    def join_titled(self, forms: list[str], targets: list[str], *, given: bool = False) -> None:
        """A titled surname shared by several full names joins one of them, where one fits.

        One person under the word: the full name of their gender used three times as often as the
        rest ("Mr. Sikes" -> "Bill Sikes", not the once-named "William Sikes"). Several ("Mr.",
        "Mrs.", "Miss Crawford"): each joins the one full name that carries their title too ("Mrs.
        Lynde" -> "Mrs. Rachel Lynde"), or, for "Mr." and "Miss", the only one of their gender
        ("Miss Crawford" -> "Mary Crawford"); a father and son or two sisters ("Mr. Gradgrind",
        "Tom Gradgrind", "Thomas Gradgrind") leave it alone, and a wife is never guessed by gender
        ("Mrs. Bennet" is not "Elizabeth Bennet"). A given name that begins them all (``given``: "John"
        of John Silver, John Trelawney and John Hunter) is no one's surname, nor anyone's "Mr."."""
        roots = {self.find(f) for f in forms}
        if len(roots) == 1 and any(title_key(f) for f in forms):
            self._join_dominant(forms, targets)
            return
        for root in sorted(roots - set(targets)):  # not one who has joined a full name already
            titles = {title_key(f) for f in forms if self.find(f) == root} - {()}
            if not titles and not given and self.group_gender(root) <= {Gender.MALE}:
                titles = {("mr",)}  # a bare surname is a man's ("Tilney" -> "Henry Tilney")
            fitting = [
                t for t in sorted(set(targets))
                if t != root
                and self._compatible(root, t)
                and not self._other_titles(t, titles)
                and not self._wed(root, t)
            ]
            same = [t for t in fitting if titles & self.titles(t)]
            gender = self.group_gender(root)
            if titles and not titles & {("miss",)} and len(same) == 1 and not self._his(same[0], titles):
                self.union(root, same[0])
            elif titles and not titles - self._by_gender(forms) and len(gender | titles_gender(titles)) == 1:
                gender = gender | titles_gender(titles)
                # Only theirs where none of the others might be of their gender too.
                maybe = [t for t in fitting if not self.sure_gender(t) and self.group_gender(t) <= gender]
                fitting = [t for t in fitting if self.sure_gender(t) == gender]
                if len(fitting) == 1 and not maybe and not self._miss_given(fitting[0], titles):
                    self.union(root, fitting[0])
                elif not self.titles(root) and titles == {("mr",)} and not self._given_gender(root):
                    self._join_most_written_man(root, fitting + maybe)

    def _join_most_written_man(self, root: str, men: list[str]) -> None:
        """A bare surname is the man whose full name the book writes three times as often as the
        other men's of the name ("Oakley": Maurice Oakley 24 times, Frank twice). Not its "Mr.":
        the father the book never names in full ("Mr. Wilcox", not his son Charles Wilcox)."""
        surname = name_words(root)[-1:]
        written = {
            man: sum(
                self.pairs.get((given, surname[0]), 0)
                for given in {name_words(n)[0] for n in self.counts if self.find(n) == man}
            )
            for man in set(men)
        }
        ranked = sorted(written, key=lambda man: (-written[man], man))
        if surname and ranked and written[ranked[0]] >= 3 * max(1, sum(written[m] for m in ranked[1:])):
            self.union(root, ranked[0])

    def join_bare_titles(self) -> None:
        """A title alone ("the Colonel", "Mademoiselle") is the one named person who carries it
        ("Colonel Fussell"), where the book names only one, or one ten times as often as the others
        ("the Doctor": Dr. Bull, not Dr. Renard named four times)."""
        for form in self.counts:
            title = title_key(form)
            if name_words(form) or len(title) != 1:
                continue
            holders = sorted(
                {self.find(n) for n in self.counts if name_words(n) and title[0] in title_key(n)}
                - {self.find(form)},
                key=lambda root: (-self._weight(root), root),
            )
            others = sum(self._weight(root) for root in holders[1:])
            if holders and self._weight(holders[0]) >= 10 * others and self._compatible(form, holders[0]):
                self.union(form, holders[0])

    def join_given_and_surname(self) -> None:
        """A given name and a surname, each a character of its own with no full name, are one where
        the book writes them together and each with no other of that sex ("Cyril Fielding" once
        in its talk: "Cyril" is Mr. Fielding). A "Mrs." or "Miss" is left to the rules above, and an
        aunt is not her niece ("Amy March" is not Aunt March)."""
        alone = self._single_word_groups()
        given = {
            r: words
            for r, words in alone.items()
            if given_name_gender(words[0]) is not Gender.UNKNOWN and not self.titles(r)
        }
        surnames = {
            r: words
            for r, words in alone.items()
            if r not in given and not self._kin_or_wed(r) and len(set(words)) == 1
        }

        def gender(root: str) -> set[Gender]:
            return {given_name_gender(given[root][0])} if root in given else self.group_gender(root)

        def matches(root: str, others: Mapping[str, tuple[str, ...]], first: bool) -> list[str]:
            word = alone[root][0]
            return [
                o for o, words in others.items()
                if ((word, words[0]) if first else (words[0], word)) in self.pairs
                and gender(o) == gender(root)
            ]

        for root in list(given):
            found = matches(root, surnames, first=True)
            if len(found) == 1 and matches(found[0], given, first=False) == [root]:
                self.union(root, found[0])

    def _single_word_groups(self) -> dict[str, tuple[str, ...]]:
        """Each group named by one word only ("Cyril", "Fielding" with "Mr. Fielding"): its words."""
        words: dict[str, set[str]] = {}
        for name in self.counts:
            words.setdefault(self.find(name), set()).update(
                name_words(name) if len(name_words(name)) == 1 else ("", "")
            )
        return {r: tuple(sorted(w)) for r, w in words.items() if len(w) == 1 and "" not in w}

    def _join_dominant(self, forms: list[str], targets: list[str]) -> None:
        if not any(title_key(f) for f in forms):
            return
        fitting = sorted(
            (t for t in set(targets) if self._compatible(forms[0], t) and self.group_gender(t)),
            key=lambda t: (-self._weight(t), t),
        )
        rest = sum(self._weight(t) for t in set(targets)) - (self._weight(fitting[0]) if fitting else 0)
        if fitting and self._weight(fitting[0]) >= 3 * rest:
            self.union(forms[0], fitting[0])

    def join_most_written(
        self, forms: list[str], uses: Mapping[str, int], *, ends_only: bool = False
    ) -> None:
        """A bare given name shared by several full names joins the one the book writes three times
        as often as the rest ("Jane" -> "Jane Fairfax" 50 times, not "Miss Jane Bates" once).

        A word that only ends the longer names ("Bear": "Pooh Bear", "Edward Bear", "Floating
        Bear") may also join the one whose character the book names three times as often as the
        others' in all ("Pooh"); a given name may not ("John" of "John Beaver", the man the book
        calls "Beaver", is "John Andrew")."""
        roots = {self.find(f) for f in forms}
        if len(roots) != 1 or self.titles(next(iter(roots))):
            return
        root = next(iter(roots))
        candidates = [t for t in uses if t != root and self._compatible(root, t)]
        weights = [uses] + ([{t: self._weight(t) for t in uses}] if ends_only else [])
        for weight in weights:
            fitting = sorted(candidates, key=lambda t: (-weight[t], t))
            if fitting and weight[fitting[0]] >= 3 * sum(weight[t] for t in uses if t != fitting[0]):
                self.union(root, fitting[0])
                return

    @staticmethod
    def _by_gender(forms: list[str]) -> set[tuple[str, ...]]:
        """The titles a full name's gender alone may give: "Mr." and "Miss", and "Mrs." where the
        name has no "Miss" (no daughter she might be: "Mrs. Cavendish" is Mary Cavendish, "Mrs.
        Bennet" is not Elizabeth Bennet, Miss Bennet's sister)."""
        if any(title_key(f) == ("miss",) for f in forms):
            return {("mr",), ("miss",)}
        return {("mr",), ("miss",), ("mrs",)}

    def _other_titles(self, target: str, titles: set[tuple[str, ...]]) -> bool:
        """The target carries a title other than ``titles`` ("Admiral Crawford", "Sir Walter Elliot"
        for "Mr."); a clergyman is "Mr." too ("Reverend Wyndham Datchet")."""
        clergy = {("reverend",), ("rev",)} if ("mr",) in titles else set()
        return bool(self.titles(target) - titles - clergy)

    def _his(self, target: str, titles: set[tuple[str, ...]]) -> bool:
        """A "Mrs." full name with a man's given name is his wife ("Mrs. John Dashwood", beside
        "Mrs. Dashwood" his stepmother)."""
        given = {name_words(n)[0] for n in self.counts if self.find(n) == target and len(name_words(n)) > 1}
        return ("mrs",) in titles and any(
            g in self.counts and self.group_gender(self.find(g)) == {Gender.MALE} for g in given
        )

    def _miss_given(self, target: str, titles: set[tuple[str, ...]]) -> bool:
        """The target's given name is also written after "Miss" alone ("Miss Marianne"): a younger
        sister, not "Miss Dashwood". Not where the book writes the full name after "Miss" too ("Miss
        Daisy Miller"): that is the title of the only daughter, given name or not."""
        full = [n for n in self.counts if self.find(n) == target and len(name_words(n)) > 1]
        given = {name_words(n)[0] for n in full} - {name_words(n)[0] for n in full if title_key(n) == ("miss",)}
        return ("miss",) in titles and any(
            title_key(n) == ("miss",) and name_words(n)[:1] == (g,) and len(name_words(n)) == 1
            for n in self.counts
            for g in given
        )

    def sure_gender(self, root: str) -> set[Gender]:
        """A group's gender from its titles and its given name alone ("Mary": she), not from the
        pronouns after a full name, which are often someone else's ("Ellen Mingott ... he"), or
        from a patronymic ("Pulcheria Alexandrovna Raskolnikov" is her son's mother)."""
        members = [n for n in self.counts if self.find(n) == root]
        alone = {self._alone_gender(n) for n in members if title_key(n) or len(name_words(n)) == 1}
        return (alone | {patronymic_gender(n) for n in members}) - {Gender.UNKNOWN}

    def _alone_gender(self, name: str) -> Gender:
        """A form's gender by its title, else by its given name ("Janey", though "he" follows her
        name where she talks to her brother), else by the pronouns after it."""
        by_name = given_name_gender(name) if not title_key(name) else Gender.UNKNOWN
        return by_name if by_name is not Gender.UNKNOWN else self.gender(name)

    def _wed(self, root: str, target: str) -> bool:
        """A "Mrs." and a "Miss" are two women: "Mrs. Walton" is not Allison Walton, the girl the
        book calls "Miss Allison", her daughter, whichever joins the full name first."""
        given = {name_words(n)[0] for n in self.counts if self.find(n) == target and len(name_words(n)) > 1}
        theirs = {t for key in self.titles(target) for t in key}
        theirs |= {"miss"} if any(("Miss", g) in self.pairs for g in given) else set()
        mine = {t for key in self.titles(root) for t in key}
        return ("mrs" in mine and "miss" in theirs) or ("miss" in mine and "mrs" in theirs)

    def _kin_surname(self, root: str) -> bool:
        """The group has a kin title before a surname ("Aunt March"), not a given name ("Uncle
        Reggie", whom the book calls "Reggie St Cloud")."""
        firsts = {name_words(n)[0] for n in self.counts if len(name_words(n)) > 1}
        return any(
            set(title_key(n)) & KIN_TITLES
            and given_name_gender(word := name_words(n)[-1]) is Gender.UNKNOWN
            and word not in firsts
            for n in self.counts
            if self.find(n) == root and name_words(n)
        )

    def _kin_or_wed(self, root: str) -> bool:
        """A "Mrs.", a "Miss" or an aunt: a surname that names one of a family, not the family."""
        return any(title in {("mrs",), ("miss",)} or set(title) & KIN_TITLES for title in self.titles(root))

    def titles(self, root: str) -> set[tuple[str, ...]]:
        """The titles the group's forms carry ({("mr",), ("captain",)})."""
        return {title_key(n) for n in self.counts if self.find(n) == root} - {()}

    def _weight(self, root: str) -> int:
        return sum(count for name, count in self.counts.items() if self.find(name) == root)

    def canonical(self) -> dict[str, str]:
        members: dict[str, list[str]] = {}
        for name in self.counts:
            members.setdefault(self.find(name), []).append(name)
        result: dict[str, str] = {}
        for forms in members.values():
            # The most used form, or a fuller one used nearly as often ("Fir Tree" over "Tree").
            top = max(self.counts[f] for f in forms)
            best = max(
                (f for f in forms if 3 * self.counts[f] >= top),
                key=lambda f: (len(name_words(f)), self.counts[f], len(f), f),
            )
            for form in forms:
                result[form] = best
        return result


# Ranks of the nobility, and the addresses that stand for them in talk ("Madame" for a countess).
_RANKS = frozenset(
    """count countess duke duchess baron baroness marquis marquess marchioness viscount viscountess
    prince princess""".split()
)
_PLAIN_ADDRESS = frozenset("mme monsieur m lady lord".split())


_ACADEMIC = {("professor",): ("dr",)}


def _rank_key(form: str) -> tuple[str, ...]:
    """A form's titles, one person's alike: "Dr. Van Helsing" is "Professor Van Helsing"."""
    return _ACADEMIC.get(title_key(form), title_key(form))


def titles_gender(titles: set[tuple[str, ...]]) -> set[Gender]:
    """The genders ``titles`` show ({("mr",)} -> male)."""
    return {title_gender(" ".join(t)) for t in titles} - {Gender.UNKNOWN}
